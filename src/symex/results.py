"""What a run gives back and tells as it goes: :class:`Result` (paths, tests, errors,
coverage, statistics), :class:`ProgressSnapshot` for progress reports, and the
:class:`Hooks` a library user installs. Values only: every layer that runs explorations (the
loop, parallel workers and their coordinator, the command line, the service) shares them."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from symex.core.outcome import ProgramError, TestCase
from symex.core.shortfalls import Shortfall
from symex.core.state import State

if TYPE_CHECKING:  # a run that records no tree does not import the memo package
    from symex.memo.recorder import MemoStatistics

__all__ = ["Coverage", "Hooks", "ParallelStatistics", "PathCounts", "ProgressSnapshot", "Result",
           "Statistics", "StrategyRow", "WorkerRow"]


@attrs.frozen
class PathCounts:
    """How many explored paths ended each way."""

    completed: int = 0
    errors: int = 0
    partial: int = 0

    @property
    def total(self) -> int:
        """All explored paths."""
        return self.completed + self.errors + self.partial


@attrs.frozen
class Coverage:
    """Coverage of the program under test (instructions with a debug location not inlined
    from elsewhere): source lines, branch outcomes and instructions some path executed.

    A branch outcome is ``(file, line of the branch, index)``: one successor of a conditional
    ``br`` (0 true, 1 false) or of a ``switch`` with at least two distinct successors (0 the
    default, then the case targets in case order, each target once)."""

    covered_lines: frozenset[tuple[str, int]]
    total_lines: frozenset[tuple[str, int]]
    covered_branches: frozenset[tuple[str, int, int]] = frozenset()
    total_branches: frozenset[tuple[str, int, int]] = frozenset()
    covered_instructions: int = 0
    total_instructions: int = 0

    @property
    def percent(self) -> float:
        """Line coverage in percent."""
        return 100.0 * len(self.covered_lines) / len(self.total_lines) if self.total_lines else 0.0

    @property
    def branch_percent(self) -> float:
        """Branch-outcome coverage in percent."""
        if not self.total_branches:
            return 0.0
        return 100.0 * len(self.covered_branches) / len(self.total_branches)

    @property
    def instruction_percent(self) -> float:
        """Instruction coverage in percent."""
        if not self.total_instructions:
            return 0.0
        return 100.0 * self.covered_instructions / self.total_instructions


@attrs.frozen
class WorkerRow:
    """One worker's counters at the end of a run (run.stats has a row per worker)."""

    worker: int
    instructions: int
    completed: int
    errors: int
    partial: int
    jobs: int
    """Jobs it was given (the root counts)."""
    solver_queries: int
    solver_time: float
    replayed_events: int
    searcher: str = ""
    shared_hits: int = 0
    """Queries its shared solution cache answered with models other workers found."""


@attrs.frozen
class StrategyRow:
    """What the workers of one search strategy did together (a portfolio has several)."""

    searcher: str
    workers: int
    instructions: int
    completed: int
    errors: int
    partial: int
    covered_lines: int
    """Source lines this strategy's workers reached first (the others learn of a line once
    it is reached and do not count it again)."""


@attrs.frozen
class ParallelStatistics:
    """How the work was split."""

    workers: int
    backend: str
    """"in-process", "processes" or "ray"."""
    jobs: int = 0
    """Jobs started on workers (the root, moved ones, re-issued ones)."""
    balancing_moves: int = 0
    """Times work moved from a loaded worker to a less loaded one."""
    jobs_moved: int = 0
    jobs_in_flight: int = 0
    """Jobs taken from a worker and not yet started on another."""
    lost_workers: int = 0
    reissued_jobs: int = 0
    duplicate_paths: int = 0
    """Paths reported twice (after a lost worker) and dropped."""
    replayed_events: int = 0
    """Answers and forks that rebuilt moved states without the solver."""
    shared_solutions: int = 0
    """Models workers' solvers found and offered to the others."""
    shared_cache_hits: int = 0
    """Queries answered by models another worker found (Cloud9's distributed cache)."""
    per_worker: tuple[WorkerRow, ...] = ()
    per_strategy: tuple[StrategyRow, ...] = ()


@attrs.frozen
class Statistics:
    """Counters of one exploration."""

    instructions: int
    time: float
    forks: int
    max_states: int
    solver_queries: int
    solver_time: float
    solver_layers: dict[str, float] = attrs.field(factory=dict)
    """Flat counters of the solver chain (``ChainStatistics.as_dict()``: ``cache_hits``,
    ``cex_time``, ``core_queries``...); empty without a chain."""
    memo: MemoStatistics | None = None
    """MoKlee's counters (replayed, new and lost instructions, divergences, pruned states,
    tree size) when the run recorded or continued an execution tree."""
    parallel: ParallelStatistics | None = None
    """How the work was split, when the run had workers (``explore(workers=N)``)."""
    halted_paths: int = 0
    """Paths a limit (``Result.halted``) ended as partial while still open."""
    untested_paths: int = 0
    """Of those, the ones left without a test: a time limit or Ctrl-C left no time to solve
    their inputs."""
    shed_paths: int = 0
    """Paths the memory cap ended while they waited (partial, reason ``memory cap``; open in
    a recorded tree)."""


@attrs.frozen
class ProgressSnapshot:
    """Counters of a running exploration, handed to ``Hooks.on_progress``."""

    elapsed: float
    """Seconds since explore() started."""
    instructions: int
    live_states: int
    completed: int
    """Paths ended normally."""
    errors: int
    """Paths ended in an error."""
    partial: int
    tests: int
    """Test cases emitted so far."""
    covered_lines: int
    total_lines: int
    covered_branches: int
    total_branches: int
    covered_instructions: int
    total_instructions: int
    solver_queries: int
    """Queries that reached the core solver."""
    solver_time: float
    """Seconds in the core solver."""
    forks: int
    memory_mb: float
    """Resident set size of this process."""
    shed_paths: int = 0
    """Paths the memory cap ended so far (``Statistics.shed_paths``)."""
    final: bool = False
    """True for the last call, made when exploration has ended (also after Ctrl-C)."""
    replaying_states: int = 0
    """Live states following a recorded tree (the rest explore)."""
    memo: MemoStatistics | None = None
    """The recorded tree's counters, when the run has one."""
    parallel: ParallelStatistics | None = None
    """Workers, jobs and balancing moves, when the run has workers."""


@attrs.frozen
class Result:
    """What :func:`explore` found."""

    paths: PathCounts
    tests: tuple[TestCase, ...]
    errors: tuple[ProgramError, ...]
    coverage: Coverage
    statistics: Statistics
    halted: str | None
    """Why exploration stopped before exhausting all paths (a limit), or None."""
    messages: tuple[str, ...] = ()
    shortfalls: tuple[Shortfall, ...] = ()
    """Symbolic values fixed to one value and calls to unmodelled functions, counted by
    program line, the most frequent first."""


@attrs.define
class Hooks:
    """Callbacks for library users; each is optional.

    ``on_fork(parent, child)`` when a state splits; ``on_path_end(test)`` for every emitted
    test, in the order of ``Result.tests``; ``on_error(error, test)`` for every path ending in
    a bug (before its ``on_path_end``); ``on_new_coverage(function, line)`` when a path reaches
    a basic block no path reached before; ``on_progress(snapshot)`` at most every
    ``progress_interval`` seconds of exploration and once more at the end (``final=True``);
    ``should_stop()`` between two time slices."""

    on_fork: Callable[[State, State], None] | None = None
    on_path_end: Callable[[TestCase], None] | None = None
    on_error: Callable[[ProgramError, TestCase], None] | None = None
    on_new_coverage: Callable[[str, int | None], None] | None = None
    on_progress: Callable[[ProgressSnapshot], None] | None = None
    should_stop: Callable[[], str | None] | None = None
    """Asked between two time slices (and by a parallel run's coordinator between two
    arrivals): a reason halts the run with it (``"interrupted"``: as a Ctrl-C does; a full
    disk's). How a front end delivers a Ctrl-C where it cannot be lost (symex run, a
    service job)."""
