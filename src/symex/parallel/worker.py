"""A worker: one exploration over the jobs it is given, run in steps the coordinator orders.

Each step takes a :class:`StepOrder` (jobs to add, how many jobs to hand back for other
workers, how long to explore, or a halt) and answers a :class:`WorkerReport` (the paths that
ended, new coverage, the load). The same :class:`Worker` runs in the coordinator's process, in
a worker process, or inside a Ray actor: the backends only carry orders and reports.
"""

from __future__ import annotations

import time
from typing import Any

import attrs

from symex.core.outcome import PathStatus, TestCase
from symex.core.shortfalls import Shortfall
from symex.core.state import State
from symex.description import RunDescription
from symex.exploration import Exploration
from symex.memory_cap import resident_mb
from symex.results import Hooks
from symex.expr import Array
from symex.ir.program import Program
from symex.parallel.jobs import Job, JobReplay
from symex.parallel.tree import Row, SegmentLog
from symex.solvers.assembly import assemble_solver
from symex.solvers.chain import ChainSolver
from symex.solvers.shared import Refutation, SharedSolutions, Solution

__all__ = ["HINT_MODELS", "StepOrder", "Worker", "WorkerReport"]

#: models from the giver's counter-example cache sent along with the jobs it hands over
HINT_MODELS = 64


@attrs.frozen
class StepOrder:
    """What a worker does in one step, in this order: take in what the others learnt
    (``solutions``, ``covered``), start the ``jobs`` (id, job), take ``give`` exploring states
    out as jobs for others (the shallowest first), then explore for ``seconds`` (0: not at
    all), or with ``halt`` stop: every exploring state goes back as a job (the frontier;
    the coordinator reports each as a partial path, ``halt`` being the reason) and the
    states still rebuilding a job end as partial."""

    jobs: tuple[tuple[int, Job], ...] = ()
    give: int = 0
    seconds: float = 0.0
    halt: str | None = None
    solutions: tuple[Solution, ...] = ()
    """Models other workers' solvers found (the shared solution cache)."""
    refutations: tuple[Refutation, ...] = ()
    """Constraint sets other workers' solvers found unsatisfiable."""
    covered: tuple[tuple[str, int], ...] = ()
    """Blocks other workers reached (coverage-guided search steers by the run's coverage)."""
    split: int = 0
    """Cloud9's initial static split: explore (at most ``seconds``) until there are this
    many states, then hand all but one back as jobs for the other workers."""
    time_left: float | None = None
    """Seconds until the run's time limit (None: no limit): a solver query still running
    then is cut, so the worker answers in time."""
    checkpoint: bool = False
    """Report the frontier with this step (``WorkerReport.frontier``)."""


@attrs.frozen
class WorkerReport:
    """What a worker answers a step with. Counters are totals since the worker started;
    tests, coverage, jobs and messages are what is new since its last report."""

    worker: int
    tests: tuple[TestCase, ...]
    completed: int
    errors: int
    partial: int
    live: int
    """Live states after the step: the worker's load."""
    exported: tuple[Job, ...]
    """The jobs the order asked for (``give``)."""
    finished_jobs: tuple[int, ...]
    """Jobs whose subtrees this worker has finished (every state ended or handed on)."""
    blocks: frozenset[tuple[str, int]]
    branches: frozenset[tuple[str, int, int]]
    instructions: int
    forks: int
    solver_queries: int
    solver_time: float
    replayed_events: int
    """Answers and forks taken from jobs instead of the solver."""
    memory_mb: float
    stopped: str | None = None
    """Why the worker stopped on its own (exit-on-error, max-memory), which halts the run."""
    messages: tuple[str, ...] = ()
    shortfalls: tuple[Shortfall, ...] = ()
    """The worker's concretizations and unmodelled calls so far (all of them: the
    coordinator keeps each worker's latest)."""
    searcher: str = ""
    """The worker's search strategy (they differ in a portfolio)."""
    solutions: tuple[Solution, ...] = ()
    """Models this worker's solver found, for the others."""
    shared_hits: int = 0
    """Queries answered by models or refutations other workers found."""
    refutations: tuple[Refutation, ...] = ()
    """Constraint sets this worker's solver found unsatisfiable, for the others."""
    tree_rows: tuple[Row, ...] = ()
    """Segments of the run's recorded tree that ended since the last report."""
    frontier: tuple[tuple[int, tuple[Job, ...]], ...] = ()
    """Asked for with ``StepOrder.checkpoint``: for each job this worker holds whose states
    all explore (none is still rebuilding it), those states as jobs, the job's id first. The
    coordinator's journal keeps them in place of the job, so a resumed run starts from
    them; the states stay this worker's."""


class Worker:
    """One worker's exploration (module docstring)."""

    def __init__(self, index: int, program: Program, description: RunDescription) -> None:
        self.index = index
        description = description.for_worker(index)
        self.searcher = description.search.searcher_name()
        spec = description.solver
        self.shared = SharedSolutions()
        self._stack = assemble_solver(spec.config, timeout=spec.timeout, chain=spec.chain,
                                      shared=self.shared, float_config=spec.float_config)
        solver = self.solver = self._stack.solver
        tree = description.tree
        self.replay = JobReplay(SegmentLog(tree.hash_constants) if tree.record_tree is not None
                                else None)
        self.exploration = Exploration(program, solver, description, hooks=Hooks(),
                                       memo=self.replay)
        self.exploration.begin()
        self._blocks_sent: set[tuple[str, int]] = set()
        self._branches_sent: set[tuple[str, int, int]] = set()
        self._messages_sent = (0, 0)

    def step(self, order: StepOrder) -> WorkerReport:
        """Carry out ``order`` (see :class:`StepOrder`) and report."""
        run = self.exploration
        if order.time_left is not None:
            run.set_solver_deadline(time.monotonic() + order.time_left)
        if order.solutions:
            self.shared.add(order.solutions)
        if order.refutations:
            self.shared.add_refutations(order.refutations, self._array_of)
        if order.covered:
            run.executor.mark_covered_elsewhere(order.covered)
        for job_id, job in order.jobs:
            self._adopt_hints(job)
            self.replay.next_job = (job_id, job)
            run.start_paths()
        exported: tuple[Job, ...] = ()
        if order.give:
            exported = self._hand_over(order.give)
        stopped = None
        finished: list[int] = []
        if order.halt is not None:
            exported += self._halt(order.halt, finished)
        elif order.seconds > 0 and not run.finished and not exported:
            # (a worker that handed work over answers at once: the receiver waits for it)
            stopped = run.advance(until=time.monotonic() + order.seconds,
                                  live=order.split or None)
            if order.split and stopped is None and run.live > 1:
                exported = self._hand_over(min(order.split, run.live) - 1)
            if stopped is None and run.finished:
                stopped = run.stop_reason
            if stopped is not None:
                exported += self._halt(stopped, finished)
        finished += self.replay.take_finished()
        frontier = self._frontier() if order.checkpoint and order.halt is None \
            and stopped is None else ()
        return self._report(exported, stopped, tuple(finished), frontier)

    def _array_of(self, name: str, size: int, initial: bytes | None) -> Array:
        """This worker's array for another worker's (its input arrays are one per name)."""
        if initial is None:
            return self.exploration.executor.input_array(name, size)
        return Array(name, size, initial)

    def _hand_over(self, count: int) -> tuple[Job, ...]:
        """Up to ``count`` exploring states, the shallowest, as jobs for other workers, with
        this worker's recent models as hints."""
        states = self.exploration.take_states(count)
        if not states:
            return ()
        hints = self._hints()
        return tuple(attrs.evolve(self.replay.job_of(s), hints=hints) for s in states)

    def _hints(self) -> tuple[tuple[tuple[str, bytes], ...], ...]:
        """The models this worker's solver chain would try first, by array name."""
        if not isinstance(self.solver, ChainSolver):
            return ()
        return tuple(tuple((array.name, bytes(data)) for array, data in model.items())
                     for model in self.solver.recent_models(HINT_MODELS))

    def _adopt_hints(self, job: Job) -> None:
        """Seed the solver chain with the models a job brought (its inputs, and its
        sender's recent models), on this process's arrays."""
        if not isinstance(self.solver, ChainSolver):
            return
        named = list(reversed(job.hints)) + ([job.inputs] if job.inputs else [])
        arrays = self.exploration.executor.input_array
        self.solver.adopt_models({arrays(name, len(data)): data for name, data in model}
                                 for model in named)

    def _halt(self, reason: str, finished: list[int]) -> tuple[Job, ...]:
        """End the exploration here: the exploring states go back as jobs (the frontier a
        resumed run starts from; the coordinator reports them as partial paths), the ones
        still rebuilding a job end as partial. ``finished`` gets the jobs finished before
        the cut; the jobs the cut ended are not finished, and stay open."""
        run = self.exploration
        frontier = tuple(self.replay.job_of(s) for s in run.take_states(len(run.states)))
        finished += self.replay.take_finished()
        run.halt_remaining(reason)
        self.replay.take_finished()  # cut, not finished
        return frontier

    def _frontier(self) -> tuple[tuple[int, tuple[Job, ...]], ...]:
        """The exploring states of each job held, as jobs (see ``WorkerReport.frontier``)."""
        by_job: dict[int, list[State]] = {}
        rebuilding: set[int] = set()
        for state in self.exploration.states.values():
            cursor = state.memo
            if cursor.recorded is not None:
                rebuilding.add(cursor.job)
            else:
                by_job.setdefault(cursor.job, []).append(state)
        return tuple((job, tuple(self.replay.describe(s) for s in states))
                     for job, states in sorted(by_job.items()) if job not in rebuilding)

    def _report(self, exported: tuple[Job, ...], stopped: str | None,
                finished: tuple[int, ...],
                frontier: tuple[tuple[int, tuple[Job, ...]], ...] = ()) -> WorkerReport:
        run = self.exploration
        tests = tuple(run.tests)
        run.tests.clear()
        run.delivered = 0
        coverage = run.executor.coverage_map
        blocks = frozenset(coverage.blocks - self._blocks_sent)
        self._blocks_sent |= blocks
        branches = frozenset(coverage.branches - self._branches_sent)
        self._branches_sent |= branches
        # two lists that both grow: each is read on from where the last report left it
        engine_messages, replay_messages = run.executor.messages, self.replay.messages
        new_messages = tuple(engine_messages[self._messages_sent[0]:]
                             + replay_messages[self._messages_sent[1]:])
        self._messages_sent = (len(engine_messages), len(replay_messages))
        queries, solver_time = run.core_solver_counts()
        return WorkerReport(
            worker=self.index, tests=tests, completed=run.counts[PathStatus.COMPLETED],
            errors=run.counts[PathStatus.ERROR], partial=run.counts[PathStatus.PARTIAL],
            live=run.live, exported=exported, finished_jobs=finished,
            blocks=blocks, branches=branches, instructions=run.executor.instructions,
            forks=run.executor.forks, solver_queries=queries, solver_time=solver_time,
            replayed_events=self.replay.replayed_events, memory_mb=resident_mb(),
            stopped=stopped, messages=new_messages, searcher=self.searcher,
            shortfalls=run.executor.shortfalls.items(),
            solutions=self.shared.take_found(),
            shared_hits=self.shared.hits + self.shared.refutation_hits,
            refutations=self.shared.take_refuted(),
            tree_rows=self.replay.take_rows(), frontier=frontier)

    def close(self) -> None:
        """Release the solver."""
        self._stack.close()

    def __getstate__(self) -> Any:  # pragma: no cover - a worker lives where it was made
        raise TypeError("a Worker is not sent anywhere: send it orders")
