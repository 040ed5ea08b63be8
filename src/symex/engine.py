"""``explore()``: the one loop that ties program, executor, searcher and solver together.

    program = symex.compile("get_sign.c")
    result = symex.explore(program, searcher="dfs", max_time=60.0, seed=0)

The loop: the searcher picks a state, the executor runs it until it forks, ends, or uses its
time slice; forks go back to the searcher; every path that ends becomes a :class:`TestCase`
(concrete inputs from the solver), and every error site a :class:`ProgramError`.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Sequence

import attrs

from symex.core.executor import DEFAULT_MAX_STACK_FRAMES, Executor
from symex.core.memory import ObjectKind
from symex.core.outcome import Forked, PathStatus, PathTerminated, ProgramError, TestCase
from symex.core.searchers import ExecutionTree, make_searcher
from symex.core.state import State
from symex.env import default_externals
from symex.errors import ConfigError
from symex.ir.program import SEGMENT_SHIFT, Function, Program
from symex.solvers import create_core_solver, with_chain
from symex.solvers.base import Solver, SolverBase

#: the solver chain in front of the solver by default: all of KLEE's layers (with them, the
#: regexp benchmark sends 10 queries to z3 instead of 3,524; see docs/benchmarks.md)
DEFAULT_CHAIN = ("trivial", "independence", "cache", "cex")

#: instructions a state may run before the engine checks limits and asks the searcher again
TIME_SLICE = 10_000


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
    """Source lines of the program under test that some path executed."""

    covered_lines: frozenset[tuple[str, int]]
    total_lines: frozenset[tuple[str, int]]

    @property
    def percent(self) -> float:
        """Line coverage in percent."""
        return 100.0 * len(self.covered_lines) / len(self.total_lines) if self.total_lines else 0.0


@attrs.frozen
class Statistics:
    """Counters of one exploration."""

    instructions: int
    time: float
    forks: int
    max_states: int
    solver_queries: int
    solver_time: float


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


@attrs.define
class Hooks:
    """Callbacks for library users; each is optional.

    ``on_fork(parent, child)`` when a state splits; ``on_path_end(test)`` for every finished
    path; ``on_error(error, test)`` for every path ending in a bug; ``on_new_coverage(function,
    line)`` when a path reaches a basic block no path reached before."""

    on_fork: Callable[[State, State], None] | None = None
    on_path_end: Callable[[TestCase], None] | None = None
    on_error: Callable[[ProgramError, TestCase], None] | None = None
    on_new_coverage: Callable[[str, int | None], None] | None = None


class Exploration:
    """One run of :func:`explore` (kept as an object so the loop stays readable)."""

    def __init__(self, program: Program, solver: Solver, *, searcher: str | Sequence[str],
                 seed: int, max_time: float | None, max_instructions: int | None,
                 max_depth: int | None, max_states: int | None, emit_all_errors: bool,
                 max_stack_frames: int, hooks: Hooks) -> None:
        self.program = program
        self.solver = solver
        self.hooks = hooks
        self.max_time = max_time
        self.max_instructions = max_instructions
        self.max_depth = max_depth
        self.max_states = max_states
        self.emit_all_errors = emit_all_errors
        last = max([g.address for g in program.globals.values()]
                   + [f.address for f in program.functions.values()] + [0])
        self.executor = Executor(program, solver, default_externals(),
                                 first_segment=(last >> SEGMENT_SHIFT) + 1,
                                 max_stack_frames=max_stack_frames)
        self.tree = ExecutionTree()
        self.searcher = make_searcher(searcher, seed=seed, tree=self.tree,
                                      coverage=self.executor.coverage)
        self.executor.on_fork = self._forked
        if hooks.on_new_coverage is not None:
            self.executor.on_new_coverage = self._new_coverage
        self.tests: list[TestCase] = []
        self.errors: list[ProgramError] = []
        self.error_sites: set[tuple[Any, ...]] = set()
        self.counts = {PathStatus.COMPLETED: 0, PathStatus.ERROR: 0, PathStatus.PARTIAL: 0}
        self.live = 0
        self.peak = 0

    def _forked(self, parent: State, child: State) -> None:
        self.tree.split(parent, child)
        if self.hooks.on_fork is not None:
            self.hooks.on_fork(parent, child)

    def _new_coverage(self, state: State, fn: Function, block: int) -> None:
        instructions = fn.blocks[block].instructions
        line = next((i.location.line for i in instructions if i.location is not None), None)
        self.hooks.on_new_coverage(fn.name, line)

    # -- the loop -----------------------------------------------------------------------

    def run(self, entry: Function, args: list[Any] | None) -> Result:
        start = time.monotonic()
        state = self.executor.initial_state(entry, [])
        state.frame.regs[:len(entry.params)] = self._main_arguments(state, entry, args)
        self.tree.add_root(state)
        self.searcher.update(None, [state], [])
        self.live = self.peak = 1
        halted = None
        try:
            while not self.searcher.empty():
                halted = self._limit_reached(start)
                if halted:
                    break
                self._step()
        except KeyboardInterrupt:
            # Ctrl-C: keep everything found so far; the paths still open end as partial
            halted = "interrupted"
        if halted:
            self._halt_remaining(halted)
        return self._result(start, halted)

    def _step(self) -> None:
        """Run one state for a time slice and hand the outcome to the searcher."""
        ex = self.executor
        current = self.searcher.select()
        removed: list[State] = []
        try:
            ex.run(current, TIME_SLICE)
        except Forked:
            pass
        except PathTerminated as end:
            self._finish(current, end)
            removed.append(current)
        except (RecursionError, MemoryError, ArithmeticError, LookupError, TypeError,
                ValueError, AttributeError, AssertionError) as exc:
            # a bug in symex on one path must not lose the whole run: report it on that path
            self._finish(current, PathTerminated(
                PathStatus.PARTIAL, f"internal error: {type(exc).__name__}: {exc}"))
            removed.append(current)
        added = ex.new_states
        ex.new_states = []
        for other, end in ex.ended:  # error siblings forked during the slice (already in the tree)
            self._finish(other, end)
            self.tree.remove(other)
        ex.ended = []
        self.live += len(added)
        if self.max_depth is not None:
            for s in [current] + added:
                if s not in removed and s.depth > self.max_depth:
                    self._finish(s, PathTerminated(PathStatus.PARTIAL, "max-depth reached"))
                    removed.append(s)
        if self.max_states is not None and self.live - len(removed) > self.max_states:
            for s in reversed(added):
                if self.live - len(removed) <= self.max_states:
                    break
                if s not in removed:
                    self._finish(s, PathTerminated(PathStatus.PARTIAL, "max-states reached"))
                    removed.append(s)
        added_live = [s for s in added if s not in removed]
        removed_known = [s for s in removed if s is current or s not in added]
        self.searcher.update(current, added_live, removed_known)
        for s in removed:
            self.tree.remove(s)
        self.live -= len(removed)
        self.peak = max(self.peak, self.live)

    def _limit_reached(self, start: float) -> str | None:
        if self.max_time is not None and time.monotonic() - start > self.max_time:
            return "max-time reached"
        if self.max_instructions is not None and self.executor.instructions >= self.max_instructions:
            return "max-instructions reached"
        return None

    def _halt_remaining(self, reason: str) -> None:
        while not self.searcher.empty():
            state = self.searcher.select()
            self._finish(state, PathTerminated(PathStatus.PARTIAL, reason))
            self.searcher.update(None, [], [state])
            self.tree.remove(state)
        self.live = 0

    def _main_arguments(self, state: State, entry: Function, args: list[Any] | None) -> list[Any]:
        """argc/argv (and envp) for main: the program name and any given arguments."""
        if not entry.params:
            return []
        argv_strings = [self.program.path.rsplit("/", 1)[-1].encode()] + \
            [a.encode() if isinstance(a, str) else bytes(a) for a in (args or [])]
        pointers = []
        for s in argv_strings:
            os = state.allocate(len(s) + 1, ObjectKind.ARGUMENT, "argv")
            os.write_bytes(0, s + b"\0")
            pointers.append(os.obj.address)
        array = state.allocate(8 * (len(pointers) + 1), ObjectKind.ARGUMENT, "argv")
        array.write_bytes(0, b"".join(p.to_bytes(8, "little") for p in pointers) + bytes(8))
        values: list[Any] = [len(pointers), array.obj.address]
        if len(entry.params) >= 3:
            envp = state.allocate(8, ObjectKind.ARGUMENT, "envp")
            values.append(envp.obj.address)
        return values[:len(entry.params)]

    # -- path ends ----------------------------------------------------------------------

    def _finish(self, state: State, end: PathTerminated) -> None:
        self.counts[end.status] += 1
        if not end.emit_test:
            return
        objects: dict[str, bytes] = {}
        reason = end.reason
        if state.symbolics:
            model = state.model
            if model is None:
                try:
                    model = self.executor.solve(state, ())
                except PathTerminated as unknown:
                    reason = f"{reason}; no test inputs: {unknown.reason}"
            if model is not None:
                objects = {s.name: bytes(model.get(s.array, bytes(s.array.size)))
                           for s in state.symbolics}
            elif not reason.endswith("inputs"):
                reason = f"{reason}; no test inputs: the path condition is unsatisfiable"
        test = TestCase(objects=objects, status=end.status, error=end.error, reason=reason,
                        exit_code=end.exit_code, path=state.decisions(),
                        stdout=state.stdout, instructions=state.instructions)
        self.tests.append(test)
        if end.error is not None:
            site = end.error.site
            if self.emit_all_errors or site not in self.error_sites:
                self.error_sites.add(site)
                self.errors.append(end.error)
            if self.hooks.on_error is not None:
                self.hooks.on_error(end.error, test)
        if self.hooks.on_path_end is not None:
            self.hooks.on_path_end(test)

    def _result(self, start: float, halted: str | None) -> Result:
        covered: set[tuple[str, int]] = set()
        total: set[tuple[str, int]] = set()
        for fn in self.program.functions.values():
            blocks = self.executor.coverage.get(fn.name)
            for block in fn.blocks:
                lines = {(i.location.file, i.location.line) for i in block.instructions
                         if i.location is not None and i.location.inlined_at is None}
                total |= lines
                if blocks is not None and blocks[block.index]:
                    covered |= lines
        stats = self.solver.statistics
        return Result(
            paths=PathCounts(self.counts[PathStatus.COMPLETED], self.counts[PathStatus.ERROR],
                             self.counts[PathStatus.PARTIAL]),
            tests=tuple(self.tests),
            errors=tuple(self.errors),
            coverage=Coverage(frozenset(covered), frozenset(total)),
            statistics=Statistics(self.executor.instructions, time.monotonic() - start,
                                  self.executor.forks, self.peak,
                                  # behind a chain, count what reached the core solver
                                  getattr(stats, "core_queries", stats.queries),
                                  getattr(stats, "core_time", stats.time)),
            halted=halted,
            messages=tuple(self.executor.messages),
        )


def explore(program: Program, *, searcher: str | Sequence[str] = "dfs", seed: int = 0,
            max_time: float | None = None, max_instructions: int | None = None,
            max_depth: int | None = None, max_states: int | None = None,
            solver: str | Solver = "z3", solver_timeout: float | None = None,
            write_queries: str | os.PathLike[str] | None = None,
            solver_chain: Sequence[str] = DEFAULT_CHAIN,
            emit_all_errors: bool = False, max_stack_frames: int = DEFAULT_MAX_STACK_FRAMES,
            entry: str = "main", args: Sequence[str] | None = None,
            hooks: Hooks | None = None) -> Result:
    """Explore the paths of ``program`` from ``entry`` and return test cases and errors.

    ``searcher``: ``dfs``, ``bfs``, ``random-state``, ``random-path``, ``nurs:covnew``, or a
    list of them to interleave. Limits: ``max_time`` (seconds), ``max_instructions``,
    ``max_depth`` (symbolic branches on one path), ``max_states`` (live states; states past it
    end as partial). Paths stopped by a limit are reported as partial, with a test case each.
    ``solver``: a configuration string (see docs/usage.md) or a solver object (not closed here).
    ``write_queries``: a directory to log every query that reaches the solver (SMT-LIB2, one file
    per query, and ``index.csv`` with answers and times). ``solver_chain``: KLEE-style layers in
    front of the solver (``trivial``, ``independence``, ``cache``, ``cex``; all by default, ``()``
    for none).
    """
    if entry not in program.functions or program.functions[entry].is_declaration:
        raise ConfigError(f"the program has no function '{entry}' to start from; "
                          f"pass entry=NAME with a defined function")
    owns_solver = isinstance(solver, str)
    core = create_core_solver(solver, timeout=solver_timeout) if isinstance(solver, str) else solver
    backend: Solver = core
    recorder = None
    if write_queries is not None:
        if not isinstance(core, SolverBase):
            raise ConfigError("write_queries needs a solver built by symex (a SolverBase)")
        # imported here: recording pulls in the SMT-LIB writer, which plain runs do not need
        from symex.solvers.recording import QueryRecorder
        # inside the chain: the log holds exactly the queries that reached the core solver
        recorder = backend = QueryRecorder(core, write_queries)
    if solver_chain:
        if not isinstance(backend, SolverBase):
            raise ConfigError("solver_chain needs a solver built by symex (a SolverBase)")
        backend = with_chain(backend, solver_chain)
    try:
        run = Exploration(program, backend, searcher=searcher, seed=seed, max_time=max_time,
                          max_instructions=max_instructions, max_depth=max_depth,
                          max_states=max_states, emit_all_errors=emit_all_errors,
                          max_stack_frames=max_stack_frames, hooks=hooks or Hooks())
        return run.run(program.functions[entry], list(args) if args else None)
    finally:
        if recorder is not None:
            recorder.close_log()
        if owns_solver:
            core.close()
