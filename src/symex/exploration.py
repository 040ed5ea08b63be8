"""The exploration loop: :class:`Exploration` runs one program's paths in this process
(the searcher picks a state, the executor runs it until it forks, ends or uses its time
slice; forks go back to the searcher; every path that ends becomes a :class:`TestCase`, every
error site a :class:`ProgramError`), in steps a parallel worker can drive, and
:func:`explore_alone` assembles what one run in this process needs around it (the solver
and its chain, the query log, the execution-tree recorder). :func:`symex.explore`, above
:mod:`symex.parallel`, chooses between this and workers."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any
from collections.abc import Mapping, Sequence


from symex.core.interpreter.collection import fewer_collections
from symex.core.interpreter.executor import Executor
from symex.core.memory.models import make_memory_model
from symex.core.outcome import TIME_LIMIT_REASON, Forked, PathStatus, PathTerminated, ProgramError, TestCase
from symex.core.search.searchers import BatchingSearcher, ExecutionTree, Searcher, make_searcher
from symex.core.search.seeding import SeededSearcher, SeedFollowing
from symex.core.site_budgets import SiteBudgets
from symex.core.search.seeding import refresh as refresh_seeds
from symex.core.state import State
from symex.core.interpreter.machine import ExternalHandler, StateView
from symex.env import default_externals
from symex.description import RunDescription, error_kinds_to_exit_on
from symex.env.printed_values import printed_value_hooks
from symex.env.world import PosixSetup, install_world
from symex.env.posix_args import build_argv_strings, place_environment, pointer_array
from symex.ir.program import SEGMENT_SHIFT, Function, Program
from symex.ir.musl import LIBC_START
from symex.memory_cap import MEMORY_CAP_REASON, MemoryCap, resident_mb
from symex.solvers.assembly import assemble_solver
from symex.solvers.base import Solver
from symex.solvers.chain import ChainStatistics
from symex.results import (Coverage, Hooks, PathCounts, ProgressSnapshot,
                           Result, Statistics)
from symex.run_limits import RunLimits
from symex.symargs import ArgvSpec

if TYPE_CHECKING:  # the memo package is imported by a run that records or replays a tree only
    from symex.memo.opening import TreeIdentity
    from symex.memo.path_memo import PathMemo

#: instructions a state may run before the engine checks limits and asks the searcher again
TIME_SLICE = 10_000

#: seconds between two looks at the resident set size when ``max_memory`` is set
MEMORY_CHECK_INTERVAL = 0.1

#: seconds the solver may spend on the inputs of the paths a time limit or Ctrl-C cut (their
#: tests); a path whose inputs are not solved by then ends without a test, and the run says so
HALT_SOLVING_GRACE = 0.5
#: seconds making (and writing) those paths' tests may take in all: 17,500 paths of 7,000
#: inputs each took minutes past a time limit (SV-COMP's divmul_diverge); the rest end untested
HALT_TESTS_GRACE = 5.0


class ErrorSites:
    """The errors a run reports: the first at each site (KLEE's default), or every one with
    ``emit_all``. One rule for a single process and for a parallel run's coordinator."""

    __slots__ = ("emit_all", "sites", "errors")

    def __init__(self, emit_all: bool) -> None:
        self.emit_all = emit_all
        self.sites: set[tuple[Any, ...]] = set()
        self.errors: list[ProgramError] = []

    def add(self, error: ProgramError) -> None:
        """A path ended in ``error``: report it unless its site was reported before."""
        if self.emit_all or error.site not in self.sites:
            self.sites.add(error.site)
            self.errors.append(error)


class Exploration:
    """One run of :func:`explore` (kept as an object so the loop stays readable)."""

    def __init__(self, program: Program, solver: Solver, description: RunDescription, *,
                 hooks: Hooks, memo: PathMemo | None = None,
                 searcher: Searcher | None = None,
                 externals: Mapping[str, ExternalHandler] | None = None) -> None:
        """``searcher``: a searcher object instead of ``description.search.searcher``'s
        names; ``externals``: handlers of external functions besides (or instead of) the
        environment's own, by name."""
        self.program = program
        self.solver = solver
        self.description = description
        self.hooks = hooks
        limits, output, search = description.limits, description.output, description.search
        self.max_depth = limits.max_depth
        self.max_states = limits.max_states
        #: the run's memory cap (symex.memory_cap): no forks near it, states shed above it
        self.memory_cap = MemoryCap(limits.max_memory) if limits.max_memory else None
        self.exit_kinds = error_kinds_to_exit_on(output.exit_on_error)
        self.only_new = output.only_output_states_covering_new
        self.no_tests = output.write_no_tests
        self.track_test_coverage = output.track_test_coverage
        self.progress_interval = description.progress_interval
        last = max([g.address for g in program.globals.values()]
                   + [f.address for f in program.functions.values()] + [0])
        self.executor = Executor(program, solver, {**default_externals(), **(externals or {})},
                                 first_segment=(last >> SEGMENT_SHIFT) + 1,
                                 max_stack_frames=limits.max_stack_frames,
                                 max_forks=limits.max_forks,
                                 track_path_blocks=output.track_test_coverage,
                                 memory_model=make_memory_model(description.memory_model))
        self.executor.schedule_forks = search.schedule_forks
        self.executor.max_idle_time_outs = limits.max_idle_time_outs
        self.executor.max_sym_array_size = limits.max_sym_array_size
        self.executor.max_input = description.inputs.max_input
        if limits.concretize_printed:
            self.executor.entry_hooks.update(printed_value_hooks(program))
        if description.solver.site_budgets and description.solver.timeout:
            self.executor.site_budgets = SiteBudgets(description.solver.timeout)
        #: the limits of the whole run (max_time, max_instructions, stop_at, should_stop)
        self.run_limits = RunLimits(limits, self.executor.coverage_map, hooks.should_stop)
        self.tree = ExecutionTree()
        self.searcher = searcher if searcher is not None else make_searcher(
            search.searcher, seed=search.seed, tree=self.tree, coverage=self.executor.coverage)
        if search.batch_instructions:
            self.searcher = BatchingSearcher(self.searcher, search.batch_instructions,
                                             search.batch_time)
        if search.seeds:
            self.searcher = SeededSearcher(self.searcher)
        #: the recorded tree (None: the run records none); states replaying it are chosen by
        #: their own searcher, before any state that explores beyond it
        self.memo = memo
        self.replay_searcher = None
        if memo is not None:
            memo.attach(self.executor)
            self.replay_searcher = make_searcher(search.replay_searcher, seed=search.seed,
                                                 tree=self.tree,
                                                 coverage=self.executor.coverage)
        self.replaying: set[int] = set()
        self.executor.on_fork = self._forked
        if hooks.on_new_coverage is not None:
            self.executor.on_new_coverage = self._new_coverage
        self.tests: list[TestCase] = []
        self.errors = ErrorSites(output.emit_all_errors)
        self.counts = {PathStatus.COMPLETED: 0, PathStatus.ERROR: 0, PathStatus.PARTIAL: 0}
        self.peak = 0
        #: the live states by id
        self.states: dict[int, State] = {}
        self.start = time.monotonic()
        self.entry: Function | None = None
        self.args = ArgvSpec(())
        self.posix = PosixSetup()
        self.environment: tuple[str, ...] = ()
        self.next_progress = 0.0
        self.next_memory_check = 0.0
        #: tests that went through on_path_end (so an interrupt can deliver the rest)
        self.delivered = 0
        #: set when a path ends in an error of an exit_on_error kind
        self.stop_reason: str | None = None
        #: paths a limit ended while open, and those of them left without a test
        self.halted_paths = 0
        #: paths the memory cap ended while they waited
        self.shed_paths = 0
        self.untested_paths = 0
        #: sides of forks left unchecked off seeds' paths that turned out infeasible
        self.infeasible_unchecked = 0

    def _forked(self, parent: State, child: State) -> None:
        self.tree.split(parent, child)
        if self.hooks.on_fork is not None:
            self.hooks.on_fork(parent, child)

    def _new_coverage(self, state: State, fn: Function, block: int) -> None:
        instructions = fn.blocks[block].instructions
        line = next((i.location.line for i in instructions if i.location is not None), None)
        on_new_coverage = self.hooks.on_new_coverage
        assert on_new_coverage is not None  # installed only with the hook
        on_new_coverage(fn.name, line)

    # -- the loop -----------------------------------------------------------------------

    def run(self) -> Result:
        """Explore from the entry until no state is left or a limit halts exploration."""
        self.begin()
        self.start_paths()
        try:
            halted = self.advance()
        except KeyboardInterrupt:
            # Ctrl-C: keep everything found so far; the paths still open end as partial
            halted = "interrupted"
            self._deliver_pending()
        return self.conclude(halted)

    def begin(self) -> None:
        """Set what every path starts from: the description's inputs (the clock of the run
        starts here)."""
        self.start = time.monotonic()
        self.next_progress = self.start + self.progress_interval
        # a query still running when the time is up is cut there (a limit: resumable); a
        # solver object used before may hold an earlier run's deadline: this run's replaces it
        max_time = self.run_limits.max_time
        self.set_solver_deadline(self.start + max_time if max_time is not None
                                 else None)
        inputs = self.description.inputs
        self.entry = self.program.functions[inputs.entry]
        start = self.program.functions.get(LIBC_START)
        if inputs.entry == "main" and start is not None and not start.is_declaration:
            # a program linked with musl starts as a C library starts it: environment,
            # then exit(main(...)), so atexit handlers run and stdio is flushed
            self.entry = start
        self.args = inputs.argv
        self.posix = inputs.posix
        self.environment = inputs.environment

    def start_paths(self) -> list[State]:
        """Start the program once more from its entry: one initial state (one per argument
        count with ``--sym-args``), handed to the searchers after the memo (a recorded tree,
        or a parallel worker's job) placed it. The states started."""
        entry = self.entry
        assert entry is not None, "begin() sets the entry"
        state = self.executor.initial_state(entry, [])
        self.tree.add_root(state)
        if self.memo is not None and not self.memo.start(state):
            self.executor.messages.append(
                "symex: the recorded tree is fully explored: nothing is left to explore "
                "(replay it with restart_all_states / --restart-all-states)")
            states = []
        else:
            states = self._main_arguments(state, entry, self.args)
        if self.memo is not None:
            pruned = self.memo.take_pruned()
            for s in pruned:
                self.tree.remove(s)
            states = [s for s in states if s not in pruned]
        seeds = self.description.search.seeds
        for s in states:
            # after the arguments: KLEE makes the files' and stdin's objects in this order
            install_world(StateView(self.executor, s), self.args, self.posix)
            if seeds:
                s.seeds = SeedFollowing(seeds, 0)
        self._add_states(None, states)
        for s in states:
            self.states[s.id] = s
        self.peak = max(self.peak, self.live)
        return states

    def advance(self, until: float | None = None, live: int | None = None) -> str | None:
        """Run time slices until no state is left or a limit halts exploration (then why,
        else None), or until the monotonic clock passes ``until`` or there are ``live``
        live states (None, states left). Garbage is collected less often meanwhile
        (core.collection)."""
        with fewer_collections():
            while not self._all_done():
                halted = self._limit_reached(self.start)
                if halted:
                    return halted
                self._step()
                if until is not None and time.monotonic() >= until:
                    return None
                if live is not None and self.live >= live:
                    return None
        return None

    @property
    def live(self) -> int:
        """Live states."""
        return len(self.states)

    @property
    def finished(self) -> bool:
        """Whether no state is left to run."""
        return self._all_done()

    def conclude(self, halted: str | None) -> Result:
        """End the run: paths still open end as partial when ``halted`` says why; the
        result (and the last progress report)."""
        if halted is None:
            # an exit-on-error error on the last path still names why the run stopped
            halted = self.stop_reason
        if halted:
            self.halt_remaining(halted)
        elif self.memo is not None:
            self.memo.run_completed()
        if self.infeasible_unchecked:
            self.executor.messages.append(
                f"symex: {self.infeasible_unchecked} sides of forks off the seeds' paths were "
                "infeasible when picked: dropped, no paths")
        result = self._result(self.start, halted)
        self.set_solver_deadline(None)  # the solver may serve another run
        if self.hooks.on_progress is not None:
            self.hooks.on_progress(self._snapshot(time.monotonic(), final=True))
        return result

    def take_states(self, count: int) -> list[State]:
        """Remove up to ``count`` live states that explore (none that replays), the
        shallowest first (the cheapest to rebuild elsewhere), and return them; they are no
        longer this run's."""
        candidates = [s for s in self.states.values() if s.id not in self.replaying]
        candidates.sort(key=lambda s: (s.depth, s.id))
        taken = candidates[:count]
        if taken:
            self._add_states(None, [], taken)
            for s in taken:
                self.tree.remove(s)
                del self.states[s.id]
        return taken

    def _all_done(self) -> bool:
        """Whether no state is left (or, with stop_after_replay, none replaying)."""
        if self.replay_searcher is not None and not self.replay_searcher.empty():
            return False
        if self.memo is not None and self.memo.stop_after_replay and not self.searcher.empty():
            self.stop_reason = self.stop_reason or "stop-after-replay"
            return False
        return self.searcher.empty()

    def _select(self) -> State:
        """The state to run next: replaying ones first, in the replay searcher's order."""
        if self.replay_searcher is not None and not self.replay_searcher.empty():
            return self.replay_searcher.select()
        return self.searcher.select()

    def _add_states(self, current: State | None, added: list[State],
                    removed: Sequence[State] = ()) -> None:
        """Hand new states to the searcher of their kind (replaying or exploring), and the
        news about ``current`` and ``removed`` to the searchers that hold them; a state that
        stopped replaying moves to the exploring searcher."""
        if self.replay_searcher is None:
            self.searcher.update(current, added, removed)
            return
        replaying = self.replaying
        # the common case, past the recorded tree: nothing replays
        if not replaying and all(s.memo.recorded is None for s in added):
            self.searcher.update(current, added, removed)
            return
        to_replay = [s for s in added if s.memo.recorded is not None]
        to_explore = [s for s in added if s.memo.recorded is None]
        gone_replay = [s for s in removed if s.id in replaying]
        gone_explore = [s for s in removed if s.id not in replaying]
        moved: list[State] = []
        if current is not None and current.id in replaying and current not in removed \
                and current.memo.recorded is None:
            moved.append(current)
        in_replay = current is not None and current.id in replaying
        self.replay_searcher.update(current if in_replay else None, to_replay,
                                    gone_replay + moved)
        self.searcher.update(None if in_replay else current, to_explore + moved, gone_explore)
        for s in to_replay:
            replaying.add(s.id)
        for s in gone_replay + moved:
            replaying.discard(s.id)

    def _step(self) -> None:
        """Run one state for a time slice and hand the outcome to the searcher."""
        ex = self.executor
        current = self._select()
        if current.unchecked is not None and not self._check(current):
            return
        removed: list[State] = []
        budget = TIME_SLICE
        memo = self.memo
        try:
            if memo is not None and current.id in self.replaying:
                left = memo.replay_budget(current)
                if left == 0:
                    stopped = memo.reach_frontier(current)
                    if stopped is not None:
                        raise stopped
                elif left is not None:
                    budget = min(budget, left)
            ex.run(current, budget)
        except Forked:
            pass
        except PathTerminated as ended:
            self._finish(current, ended)
            removed.append(current)
        except (RecursionError, MemoryError, ArithmeticError, LookupError, TypeError,
                ValueError, AttributeError, AssertionError) as exc:
            # a bug in symex on one path must not lose the whole run: report it on that path
            self._finish(current, PathTerminated(
                PathStatus.PARTIAL, f"internal error: {type(exc).__name__}: {exc}"))
            removed.append(current)
        added = ex.new_states
        ex.new_states = []
        if (not removed and not ex.ended and memo is None and self.max_depth is None
                and self.max_states is None):
            # the common step (a fork, or a slice's end) with nothing to drop or cut
            self._keep(current, added)
            return
        pruned = memo.take_pruned() if memo is not None else []
        for other, end in ex.ended:  # error siblings forked during the slice (already in the tree)
            if other not in pruned:
                self._finish(other, end)
            self.tree.remove(other)
        ex.ended = []
        if pruned:
            # states of a recorded subtree that is fully explored: no paths of this run
            for s in pruned:
                if s in added:
                    added.remove(s)
                    self.tree.remove(s)
                elif s is current and current not in removed:
                    removed.append(current)
        live = len(self.states) + len(added)
        if self.max_depth is not None:
            for s in [current] + added:
                if s not in removed and s.depth > self.max_depth:
                    self._finish(s, PathTerminated(PathStatus.PARTIAL, "max-depth reached",
                                                   limit=True))
                    removed.append(s)
        if self.max_states is not None and live - len(removed) > self.max_states:
            for s in reversed(added):
                if live - len(removed) <= self.max_states:
                    break
                if s not in removed:
                    self._finish(s, PathTerminated(PathStatus.PARTIAL, "max-states reached",
                                                   limit=True))
                    removed.append(s)
        added_live = [s for s in added if s not in removed]
        for s in added_live:
            ex.park(s)  # it waits in the searcher: keep only its live registers
        if current not in removed:
            ex.park(current)  # so does the state that ran, until selected again
        removed_known = [s for s in removed if s is current or s not in added]
        self._add_states(current, added_live, removed_known)
        states = self.states
        for s in added_live:
            states[s.id] = s
        for s in removed:
            self.tree.remove(s)
            states.pop(s.id, None)
        self.peak = max(self.peak, self.live)

    def _keep(self, current: State, added: list[State]) -> None:
        """Hand the state that ran and the states it forked to the searcher, parked."""
        park = self.executor.park
        for s in added:
            park(s)  # it waits in the searcher: keep only its live registers
        park(current)  # so does the state that ran, until selected again
        self._add_states(current, added)
        states = self.states
        for s in added:
            states[s.id] = s
        if len(states) > self.peak:
            self.peak = len(states)

    def _check(self, state: State) -> bool:
        """Check a state picked to run that left a seed's path unchecked (``State.unchecked``);
        one whose path is infeasible is dropped: it was never a path."""
        try:
            if self.executor.checked(state):
                return True
        except PathTerminated as ended:
            self._finish(state, ended)  # the solver could not say: a partial path, as any
        else:
            self.infeasible_unchecked += 1
        self._add_states(None, [], [state])
        self.tree.remove(state)
        del self.states[state.id]
        return False

    def _limit_reached(self, start: float) -> str | None:
        """Why exploration must halt now, or None; also the place of progress reports (once
        per time slice, so the interpreter loop itself never looks at the clock)."""
        if self.stop_reason is not None:
            return self.stop_reason
        if self.memo is not None:
            self.memo.tick()
        now = time.monotonic()
        halt = self.run_limits.halt_reason(now - start, self.executor.instructions,
                                           self.executor.coverage_map.blocks)
        if halt is not None:
            return halt
        if self.memory_cap is not None and now >= self.next_memory_check:
            # near the cap, every slice looks (a statm read is ~20 us): a state can take
            # many megabytes in 0.1 s
            self.next_memory_check = now + (0.0 if self.memory_cap.inhibited
                                            else MEMORY_CHECK_INTERVAL)
            verdict = self.memory_cap.check(now, resident_mb(), max(0, self.live - 1))
            self.executor.memory_inhibited = verdict.inhibit_forks
            if verdict.shed:
                self._shed(verdict.shed)
            if verdict.halt:
                return "max-memory reached"
        if self.hooks.on_progress is not None and now >= self.next_progress:
            self.next_progress = now + self.progress_interval
            self.hooks.on_progress(self._snapshot(now))
        return None

    def _snapshot(self, now: float, final: bool = False) -> ProgressSnapshot:
        coverage = self.executor.coverage_map
        queries, solver_time = self.core_solver_counts()
        return ProgressSnapshot(
            elapsed=now - self.start, instructions=self.executor.instructions,
            live_states=self.live, completed=self.counts[PathStatus.COMPLETED],
            errors=self.counts[PathStatus.ERROR], partial=self.counts[PathStatus.PARTIAL],
            tests=len(self.tests),
            covered_lines=len(coverage.lines), total_lines=len(coverage.total_lines),
            covered_branches=len(coverage.branches), total_branches=len(coverage.total_branches),
            covered_instructions=coverage.instructions,
            total_instructions=coverage.total_instructions,
            solver_queries=queries, solver_time=solver_time, forks=self.executor.forks,
            memory_mb=resident_mb(), shed_paths=self.shed_paths, final=final,
            replaying_states=len(self.replaying),
            memo=(self.memo.statistics(self.executor.instructions, final=final)
                  if self.memo is not None else None))

    def core_solver_counts(self) -> tuple[int, float]:
        """Queries and seconds of the core solver (behind the chain, if any)."""
        stats = self.solver.statistics
        # behind a chain, count what reached the core solver
        return getattr(stats, "core_queries", stats.queries), getattr(stats, "core_time", stats.time)

    def halt_remaining(self, reason: str) -> None:
        """End every live state as partial, ``reason`` being why (a limit). After a time limit
        or Ctrl-C, solving the inputs of their tests gets HALT_SOLVING_GRACE seconds in all:
        the states whose inputs are known go first, and those still unsolved then end
        without a test (counted in ``untested_paths``)."""
        pressed = reason in (TIME_LIMIT_REASON, "interrupted")
        if pressed:
            self.set_solver_deadline(time.monotonic() + HALT_SOLVING_GRACE)
        # every live state, replaying ones first; not drawn through the searchers, whose
        # select may cost a pass over all states (nurs:covnew weighs each: a time limit with
        # 11,000 states waiting took a minute to halt)
        live = list(self.states.values())
        replaying = [s for s in live if s.id in self.replaying]
        exploring = [s for s in live if s.id not in self.replaying]
        if reason != "interrupted":
            # a Ctrl-C may land between the engine's bookkeeping and a searcher's (a state
            # added to one, not yet to the other): then the searchers, which nothing asks
            # again, are not told; every live state ends below either way
            if self.replay_searcher is not None and replaying:
                self.replay_searcher.update(None, [], replaying)
            # the newest first: a depth-first searcher pops them from its end
            self.searcher.update(None, [], exploring[::-1])
        halted = replaying + exploring
        for state in halted:
            self.tree.remove(state)
        unchecked = [s for s in halted if s.unchecked is not None]
        if unchecked:
            # sides of branches off a seed's path that never ran: maybe no paths at all
            halted = [s for s in halted if s.unchecked is None]
            self.executor.messages.append(
                f"symex: {reason}: {len(unchecked)} sides of forks off the seeds' paths "
                "were never picked, so never checked: not counted as paths")
        if pressed:
            halted.sort(key=lambda s: s.model is None and bool(s.symbolics))  # stable
        cutoff = time.monotonic() + HALT_TESTS_GRACE if pressed else None
        for state in halted:
            self._finish(state, PathTerminated(PathStatus.PARTIAL, reason, limit=True),
                         untested_if_unsolved=pressed,
                         untested=cutoff is not None and time.monotonic() > cutoff)
        self.halted_paths += len(halted)
        if self.untested_paths:
            self.executor.messages.append(
                f"symex: {reason}: {self.untested_paths} of the {self.halted_paths} paths still "
                f"open ended without a test (no time was left to solve their inputs or make "
                f"their tests)")
        self.replaying.clear()
        self.states.clear()

    def _shed(self, count: int) -> None:
        """End ``count`` waiting states, the deepest first, over the memory cap: partial, with
        a test, and open in a recorded tree (``--continue-with`` explores them later)."""
        shed = sorted((s for s in self.states.values() if s.id not in self.replaying),
                      key=lambda s: (-s.depth, -s.id))[:count]
        self.searcher.update(None, [], shed)
        for state in shed:
            self.tree.remove(state)
            del self.states[state.id]
            self._finish(state, PathTerminated(PathStatus.PARTIAL, MEMORY_CAP_REASON, limit=True),
                         untested_if_unsolved=True)
        self.shed_paths += len(shed)

    def set_solver_deadline(self, deadline: float | None) -> None:
        """Cut the solver's checks at ``deadline`` (a solver object a user passed may not
        know deadlines: its checks then run to their end)."""
        set_deadline = getattr(self.solver, "set_deadline", None)
        if set_deadline is not None:
            set_deadline(deadline)

    def _main_arguments(self, state: State, entry: Function, args: ArgvSpec) -> list[State]:
        """Set argc/argv (and envp) of main: the program name and the arguments of ``args``;
        symbolic arguments as KLEE's POSIX runtime makes them (``SymArgs`` fork the initial
        state once per argument count). The states to start from."""
        if not entry.params and not args.is_symbolic and not self.environment:
            return [state]
        name = self.program.path.rsplit("/", 1)[-1].encode()
        built = build_argv_strings(StateView(self.executor, state), name, args)
        # the forks are handed to the searcher by run(), not by the loop
        self.executor.new_states = []
        for s, pointers in built:
            envp = self._environment(s)
            if not entry.params:
                continue
            values: list[Any] = [len(pointers), pointer_array(s, pointers, "argv"), envp]
            s.frame.regs[:len(entry.params)] = values[:len(entry.params)]
        return [s for s, _ in built]

    def _environment(self, state: State) -> int:
        """The environment's strings and ``envp`` array in ``state``'s memory (and
        ``__environ``: :func:`~symex.env.posix_args.place_environment`); its address."""
        return place_environment(StateView(self.executor, state),
                                 [v.encode("utf-8", "surrogateescape") for v in self.environment])

    # -- path ends ----------------------------------------------------------------------

    def _finish(self, state: State, end: PathTerminated, *, untested_if_unsolved: bool = False,
                untested: bool = False) -> None:
        """Count the end of a path and make its test (``untested_if_unsolved``: a path cut
        by a time limit whose inputs the solver cannot give in time gets none; ``untested``:
        none either way)."""
        memo = self.memo
        recorded: dict[str, bytes] | None = None
        if memo is not None:
            recorded = memo.path_ended(state, end)
            if not memo.counts(state):
                return  # a replayed path that turned out to be no path
        self.counts[end.status] += 1
        if end.limit and end.reason == TIME_LIMIT_REASON and not untested_if_unsolved:
            # a solver query the deadline cut: the run is out of time, whatever is left
            self.stop_reason = self.stop_reason or TIME_LIMIT_REASON
            self.halted_paths += 1
        if not end.emit_test:
            if memo is not None:
                memo.leaf_written(state, None)
            return
        if untested:
            self.untested_paths += 1
            if memo is not None:
                memo.leaf_written(state, None)
            return
        covers_new = state.claim_new_coverage()
        if self.no_tests or (self.only_new and not covers_new and end.status is not PathStatus.ERROR):
            if memo is not None:
                memo.leaf_written(state, None)
            if self.no_tests and end.error is not None:
                self._count_error(end.error, None)
            return
        objects: dict[str, bytes] = {}
        reason = end.reason
        if recorded is not None:
            objects = recorded
        elif state.symbolics:
            if state.seeds is not None:
                refresh_seeds(state)  # a path that kept a seed to its end: its inputs
            model = state.model
            if model is None:
                try:
                    model = self.executor.solve(state, ())
                except PathTerminated as unknown:
                    if untested_if_unsolved and unknown.limit:
                        self.untested_paths += 1
                        if memo is not None:
                            memo.leaf_written(state, None)
                        return
                    reason = f"{reason}; no test inputs: {unknown.reason}"
            if model is not None:
                objects = {s.name: bytes(model.get(s.array, bytes(s.array.size)))
                           for s in state.symbolics}
            elif not reason.endswith("inputs"):
                reason = f"{reason}; no test inputs: the path condition is unsatisfiable"
        if memo is not None:
            memo.leaf_written(state, objects if objects or not state.symbolics else None)
        test = TestCase(objects=objects, status=end.status, error=end.error, reason=reason,
                        exit_code=end.exit_code, path=state.decisions(),
                        stdout=state.stdout, stderr=state.stderr,
                        instructions=state.instructions,
                        covered_lines=(self.executor.coverage_map.lines_of(state.blocks)
                                       if state.blocks is not None else None),
                        covers_new=covers_new, threads=end.threads)
        self.tests.append(test)
        if end.error is not None:
            self._count_error(end.error, test)
        # counted before the call: a test whose hook was interrupted is not delivered twice
        self.delivered += 1
        if self.hooks.on_path_end is not None:
            self.hooks.on_path_end(test)

    def _count_error(self, error: ProgramError, test: TestCase | None) -> None:
        """An error path: in the run's errors, halting it if asked, to the error hook with
        its test (none under ``write_no_tests``: the hook is not called)."""
        self.errors.add(error)
        if self.exit_kinds is not None and error.kind in self.exit_kinds \
                and self.stop_reason is None:
            self.stop_reason = f"exit-on-error ({error.kind.value})"
        if test is not None and self.hooks.on_error is not None:
            self.hooks.on_error(error, test)

    def _deliver_pending(self) -> None:
        """After Ctrl-C: hand tests that were recorded but not yet announced to on_path_end."""
        while self.delivered < len(self.tests):
            test = self.tests[self.delivered]
            self.delivered += 1
            if self.hooks.on_path_end is not None:
                self.hooks.on_path_end(test)

    def _result(self, start: float, halted: str | None) -> Result:
        coverage = self.executor.coverage_map
        stats = self.solver.statistics
        queries, solver_time = self.core_solver_counts()
        return Result(
            paths=PathCounts(self.counts[PathStatus.COMPLETED], self.counts[PathStatus.ERROR],
                             self.counts[PathStatus.PARTIAL]),
            tests=tuple(self.tests),
            errors=tuple(self.errors.errors),
            coverage=Coverage(frozenset(coverage.lines), coverage.total_lines,
                              frozenset(coverage.branches), coverage.total_branches,
                              coverage.instructions, coverage.total_instructions),
            statistics=Statistics(self.executor.instructions, time.monotonic() - start,
                                  self.executor.forks, self.peak, queries, solver_time,
                                  stats.as_dict() if isinstance(stats, ChainStatistics) else {},
                                  memo=(self.memo.statistics(self.executor.instructions,
                                                             final=True)
                                        if self.memo is not None else None),
                                  halted_paths=self.halted_paths,
                                  untested_paths=self.untested_paths,
                                  shed_paths=self.shed_paths),
            halted=halted,
            messages=tuple(self.executor.messages) + (
                tuple(self.memo.messages) if self.memo is not None else ()),
            shortfalls=self.executor.shortfalls.items(),
        )


def tree_identity(program: Program, description: RunDescription) -> TreeIdentity:
    """What an execution tree recorded by this run belongs to: the program and its inputs
    spec (entry, command line in KLEE's syntax, stdin, host files, environment, a fuzz
    target's longest input), and the memory model, which decides where paths fork."""
    from symex.memo.opening import TreeIdentity, describe_inputs  # noqa: PLC0415 (see the imports)
    inputs = description.inputs
    posix = inputs.posix
    return TreeIdentity.of(program.path, program.ir_text,
                           describe_inputs(inputs.entry, inputs.argv.words(), posix.stdin,
                                           posix.host_files, inputs.environment,
                                           inputs.max_input if inputs.fuzz_target else None,
                                           description.memory_model))


def explore_alone(program: Program, description: RunDescription, *,
                  hooks: Hooks, solver: Solver | None = None,
                  searcher: Searcher | None = None,
                  externals: Mapping[str, ExternalHandler] | None = None) -> Result:
    """Explore ``program`` as ``description`` says, in this process (no workers).
    ``solver``: a solver object to use instead of building ``description.solver.config``
    (not closed here); ``searcher``: a searcher object instead of the description's names;
    ``externals``: handlers of external functions besides the environment's own."""
    _inputs, spec, tree = description.inputs, description.solver, description.tree
    stack = assemble_solver(spec.config, timeout=spec.timeout, chain=spec.chain,
                            write_queries=spec.write_queries, core=solver,
                            float_config=spec.float_config)
    recorder = None
    try:
        if tree.used:
            from symex.memo.opening import open_recorder  # noqa: PLC0415 (see the imports)
            recorder, memo_messages = open_recorder(
                tree_identity(program, description),
                record_tree=tree.record_tree, continue_with=tree.continue_with,
                hash_constants=tree.hash_constants, restart_all_states=tree.restart_all_states,
                stop_after_replay=tree.stop_after_replay)
            recorder.messages[:0] = memo_messages
        run = Exploration(program, stack.solver, description, hooks=hooks, memo=recorder,
                          searcher=searcher, externals=externals)
        return run.run()
    finally:
        if recorder is not None:
            recorder.close()
        stack.close()
