"""The coordinator: one exploration split over workers, merged into one :class:`Result`.

The whole tree starts as one job (the root) on worker 0. Workers explore in short steps and
report after each; between steps the coordinator moves work by Cloud9's rule
(:mod:`symex.parallel.balancing`): it asks a loaded worker to hand over its shallowest states
as jobs, and starts them on an idle one. Nobody waits for a global barrier: each worker gets
its next order as soon as its report is in.

What a user sees is one run: tests arrive through the same hooks, numbered in arrival order;
errors are de-duplicated by site across workers; coverage is the union. A worker that dies
loses no work: the jobs it held are started again elsewhere, and paths reported twice (once
by the dead worker, once by the job's second run) are dropped by their decision sequence.
"""

from __future__ import annotations

import collections
import os
import signal
import time
from collections.abc import Iterable
from typing import Any

import attrs

from symex.core.coverage import CoverageMap
from symex.core.outcome import PathStatus, TestCase
from symex.core.shortfalls import merge_shortfalls
from symex.description import Limits
from symex.exploration import ErrorSites
from symex.memory_cap import MEMORY_CAP_REASON, resident_mb
from symex.run_limits import RunLimits
from symex.results import (
    Coverage,
    Hooks,
    ParallelStatistics,
    PathCounts,
    ProgressSnapshot,
    Result,
    Statistics,
    StrategyRow,
    WorkerRow,
)
from symex.errors import SymexError
from symex.ir.program import Program
from symex.parallel.balancing import LoadBalancer
from symex.parallel.jobs import ROOT_JOB, Job
from symex.parallel.journal import RunJournal
from symex.parallel.pools import WorkerFailure, WorkerLost, WorkerPool
from symex.parallel.tree import RunTree
from symex.parallel.worker import StepOrder, WorkerReport
from symex.solvers.shared import Refutation, Solution

__all__ = ["Coordinator"]

#: seconds a worker explores between two reports
STEP_SECONDS = 0.03
#: a shorter step while some worker is idle, so work reaches it sooner
SHORT_STEP_SECONDS = 0.02
#: seconds the coordinator waits for reports before it looks at limits and progress again
WAIT_SECONDS = 0.05
#: seconds between two checkpoints of a worker's frontier into the journal (what a killed
#: run's resumption explores again is about what was found since its last one) ...
CHECKPOINT_SECONDS = 0.25
#: ... and more per piece of its last checkpoint, so a wide frontier (thousands of states
#: under bfs) is not described and written four times a second
CHECKPOINT_SECONDS_PER_PIECE = 0.001
#: shared solutions (and refutations, as many) the coordinator passes on; later ones stay with
#: the worker that found them
SHARED_SOLUTIONS_KEPT = 200_000


class Coordinator:
    """Runs one exploration over ``pool`` (module docstring)."""

    def __init__(self, program: Program, pool: WorkerPool, *, hooks: Hooks,
                 limits: Limits,
                 emit_all_errors: bool, progress_interval: float,
                 balancer: LoadBalancer | None = None, journal: RunJournal | None = None,
                 resume: bool = False, tree: RunTree | None = None,
                 stop_at: tuple[str, ...] = ()) -> None:
        self.pool = pool
        #: the run's recorded tree (None: none is recorded)
        self.tree = tree
        #: where open jobs and finished paths are kept (None: nowhere); with ``resume``, the
        #: run goes on from it instead of from the root
        self.journal = journal
        self.resume = resume
        self.hooks = hooks
        self.progress_interval = progress_interval
        self.balancer = balancer or LoadBalancer()
        self.coverage = CoverageMap(program)
        #: the whole run's limits, over the workers' totals (a ``stop_at`` block halts the
        #: run at its first visit by any worker)
        self.run_limits = RunLimits(limits, self.coverage, hooks.should_stop)
        self.size = pool.size
        self.alive = set(range(self.size))
        self.busy: set[int] = set()
        self.loads = dict.fromkeys(range(self.size), 0)
        self.reports: dict[int, WorkerReport] = {}
        #: counters of workers that were lost (their reports until then still count)
        self.retired: list[WorkerReport] = []
        #: jobs each worker holds, by id (re-issued if it dies)
        self.held: dict[int, dict[int, Job]] = {w: {} for w in range(self.size)}
        self.jobs_given = collections.Counter[int]()
        self.pending: collections.deque[tuple[int, Job]] = collections.deque()
        #: jobs on their way to a chosen worker, and how many a worker was asked to give
        self.routed: dict[int, list[tuple[int, Job]]] = collections.defaultdict(list)
        self.giving: dict[int, list[int]] = {}
        #: workers whose give order is out (the report of an earlier order may come first)
        self.give_sent: set[int] = set()
        self.next_job_id = 0
        self.tests: list[TestCase] = []
        self.errors = ErrorSites(emit_all_errors)
        self.seen_paths: set[tuple[int, ...]] = set()
        self.duplicates = collections.Counter[PathStatus]()
        self.blocks: set[tuple[str, int]] = set()
        self.branches: set[tuple[str, int, int]] = set()
        self.messages: list[str] = []
        #: what workers learnt, in arrival order (solutions with the worker that found them),
        #: and how far into each list every worker has been told
        self.solution_log: list[tuple[int, Solution]] = []
        self.refutation_log: list[tuple[int, Refutation]] = []
        self.block_log: list[tuple[str, int]] = []
        self.told: dict[int, tuple[int, int, int]] = dict.fromkeys(range(self.size), (0, 0, 0))
        #: blocks each search strategy's workers reached first
        self.strategy_blocks: dict[str, set[tuple[str, int]]] = collections.defaultdict(set)
        #: each worker's search strategy, as its reports say (balancing keeps to them)
        self.searchers: dict[int, str] = {}
        #: jobs, balancing_moves, jobs_moved, lost_workers, reissued_jobs (ParallelStatistics)
        self.counters = collections.Counter[str]()
        self.halting: str | None = None
        self.halt_sent: set[int] = set()
        #: open paths that were jobs never started when the run halted
        self.unstarted_partial = 0
        #: the most live states of all workers together, as reported
        self.peak = 0
        self.start = time.monotonic()
        #: when each worker's frontier is next asked for (with a journal), and how many
        #: pieces its last one had
        self.next_checkpoint = dict.fromkeys(range(self.size), 0.0)
        self.frontier_size = dict.fromkeys(range(self.size), 0)
        # SYMEX_CHECKPOINT_SECONDS=inf turns checkpoints off (benchmarks compare)
        self.checkpoint_seconds = float(os.environ.get("SYMEX_CHECKPOINT_SECONDS",
                                                      CHECKPOINT_SECONDS))

    # -- the loop -------------------------------------------------------------------------

    def run(self) -> Result:
        """Explore until every job is done or a limit halts the run."""
        previous = self._take_interrupts()
        try:
            return self._run()
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)

    def _take_interrupts(self) -> Any:
        """Make Ctrl-C a request to halt, seen between two arrivals: raised in the middle of
        one, it could cut a message to a worker in half or leave the journal without the
        jobs and paths already announced. The previous handler, to restore (None: not the
        main thread, where Ctrl-C stays an exception)."""
        def halt(signum: int, frame: Any) -> None:
            self.halting = self.halting or "interrupted"

        try:
            return signal.signal(signal.SIGINT, halt)
        except ValueError:
            return None

    def _run(self) -> Result:
        self.start = time.monotonic()
        next_progress = self.start + self.progress_interval
        if self.resume and self.journal is not None:
            self._resume(self.journal)
        else:
            self._record([self._add_pending(ROOT_JOB)], (), ())
        while True:
            try:
                self._check_limits()
                self._dispatch()
                if not self.busy and self._all_done():
                    break
                arrivals = self.pool.receive(WAIT_SECONDS)
                for arrival in arrivals:
                    self._arrived(arrival)
                if self.halting is None:
                    self._balance()
                now = time.monotonic()
                if self.hooks.on_progress is not None and now >= next_progress:
                    next_progress = now + self.progress_interval
                    self.hooks.on_progress(self._snapshot(now))
            except KeyboardInterrupt:
                # Ctrl-C: the workers end their open paths as partial and report them
                self.halting = self.halting or "interrupted"
        self._halt_pending()
        result = self._result()
        if self.hooks.on_progress is not None:
            self.hooks.on_progress(self._snapshot(time.monotonic(), final=True))
        return result

    def _all_done(self) -> bool:
        if self.halting is not None:
            return all(w in self.halt_sent or not self.loads[w] for w in self.alive)
        return not self.pending and not self.giving and not any(self.routed.values()) \
            and not any(self.loads[w] for w in self.alive)

    def _check_limits(self) -> None:
        if self.halting is not None:
            return
        self.halting = self.run_limits.halt_reason(time.monotonic() - self.start,
                                                   self._total("instructions"), self.blocks)

    def _dispatch(self) -> None:
        """Give every worker without an order in progress its next one."""
        someone_idle = any(not self.loads[w] and w not in self.busy for w in self.alive)
        for worker in sorted(self.alive - self.busy):
            jobs = self.routed.pop(worker, [])
            if not self.loads[worker] and not jobs and self.pending and self.halting is None:
                jobs = [self.pending.popleft()]
            if self.halting is not None:
                if jobs:
                    # never started now: they end as partial with the inputs they carry
                    self.pending.extend(jobs)
                if worker in self.halt_sent or not self.loads[worker]:
                    continue
                self.halt_sent.add(worker)
                order = StepOrder(halt=self.halting)
            elif worker in self.giving:
                count = len(self.giving[worker])
                self.give_sent.add(worker)
                # it explores on a moment too: a worker whose states all replay has none
                # to give yet, and must still get on
                order = StepOrder(jobs=self._hand(worker, jobs), give=count,
                                  seconds=SHORT_STEP_SECONDS, time_left=self._time_left(),
                                  **self._news(worker))
            elif jobs and jobs[0][1] is ROOT_JOB and self.size > 1:
                # Cloud9's initial static split: the root's first forks, one per worker
                order = StepOrder(jobs=self._hand(worker, jobs), seconds=STEP_SECONDS,
                                  split=len(self.alive), time_left=self._time_left(),
                                  **self._news(worker))
            elif jobs or self.loads[worker]:
                seconds = SHORT_STEP_SECONDS if someone_idle else STEP_SECONDS
                order = StepOrder(jobs=self._hand(worker, jobs), seconds=seconds,
                                  time_left=self._time_left(),
                                  checkpoint=self._checkpoint(worker), **self._news(worker))
            else:
                continue
            self.busy.add(worker)
            self.pool.send(worker, order)

    def _checkpoint(self, worker: int) -> bool:
        """Whether ``worker``'s next order asks for its frontier (once a CHECKPOINT_SECONDS,
        and only when there is a journal to keep it)."""
        if self.journal is None:
            return False
        now = time.monotonic()
        if now < self.next_checkpoint[worker]:
            return False
        self.next_checkpoint[worker] = now + max(
            self.checkpoint_seconds, self.frontier_size[worker] * CHECKPOINT_SECONDS_PER_PIECE)
        return True

    def _time_left(self) -> float | None:
        """Seconds until the run's time limit, for the workers' solvers (None: no limit)."""
        return self.run_limits.time_left(time.monotonic() - self.start)

    def _hand(self, worker: int, jobs: list[tuple[int, Job]]) -> tuple[tuple[int, Job], ...]:
        for job_id, job in jobs:
            self.held[worker][job_id] = job
            self.jobs_given[worker] += 1
        if jobs:
            self.loads[worker] += len(jobs)
            self.counters["jobs"] += len(jobs)
        return tuple(jobs)

    def _news(self, worker: int) -> dict[str, Any]:
        """What the others learnt since ``worker`` was last told: solutions their solvers
        found, blocks they reached."""
        solutions_told, blocks_told, refutations_told = self.told[worker]
        self.told[worker] = (len(self.solution_log), len(self.block_log),
                             len(self.refutation_log))
        return dict(solutions=tuple(s for origin, s in self.solution_log[solutions_told:]
                                    if origin != worker),
                    refutations=tuple(r for origin, r in self.refutation_log[refutations_told:]
                                      if origin != worker),
                    covered=tuple(self.block_log[blocks_told:]))

    def _resume(self, journal: RunJournal) -> None:
        """Start from a journal: its open jobs are pending, its finished paths are done."""
        jobs = journal.open_jobs()
        finished = journal.finished_paths()
        self.seen_paths.update(finished)
        self.next_job_id = journal.next_job_id()
        self.pending.extend(jobs)
        self.messages.append(f"symex: resuming a parallel run: {len(jobs)} open job(s), "
                             f"{len(finished)} path(s) finished before")
        if not jobs:
            self.messages.append("symex: the run was finished: nothing is left to explore")

    def _record(self, opened: list[tuple[int, Job]], finished: Iterable[int],
                tests: Iterable[TestCase],
                checkpoints: list[tuple[int, list[tuple[int, Job]]]] | None = None) -> None:
        """Tell the journal (if any) about new jobs, finished ones, paths that ended for
        good (not those a halt cut: their jobs stay open) and frontier checkpoints."""
        if self.journal is None:
            return
        halt = self.halting
        self.journal.record(opened, finished, (
            t for t in tests if not (t.status is PathStatus.PARTIAL and halt is not None
                                     and t.reason == halt)), checkpoints or ())

    def _add_pending(self, job: Job) -> tuple[int, Job]:
        entry = (self.next_job_id, job)
        self.next_job_id += 1
        self.pending.append(entry)
        return entry

    def _balance(self) -> None:
        """Cloud9's rule over the workers that are neither giving nor about to receive."""
        if self.pending:
            return  # idle workers get the pending jobs first
        receiving = {t for targets in self.giving.values() for t in targets}
        loads = {w: self.loads[w] for w in self.alive
                 if w not in self.giving and w not in receiving and not self.routed.get(w)}
        for move in self.balancer.moves(loads, self.searchers):
            self.giving[move.source] = [move.target] * move.count
            self.counters["balancing_moves"] += 1

    # -- arrivals ----------------------------------------------------------------------------

    def _arrived(self, arrival: WorkerReport | WorkerLost | WorkerFailure) -> None:
        if isinstance(arrival, WorkerFailure):
            raise SymexError(f"parallel worker {arrival.worker} failed: "
                             f"{arrival.message.strip()}")
        if isinstance(arrival, WorkerLost):
            self._lost(arrival)
            return
        worker = arrival.worker
        self.busy.discard(worker)
        self.reports[worker] = arrival
        self.loads[worker] = arrival.live
        self.peak = max(self.peak, sum(self.loads.values()))
        for job_id in arrival.finished_jobs:
            self.held[worker].pop(job_id, None)
        self.messages.extend(arrival.messages)
        new_blocks = arrival.blocks - self.blocks
        self.blocks |= new_blocks
        self.block_log.extend(sorted(new_blocks))
        self.strategy_blocks[arrival.searcher] |= new_blocks
        self.searchers[worker] = arrival.searcher
        self.branches |= arrival.branches
        room = SHARED_SOLUTIONS_KEPT - len(self.solution_log)
        if room > 0:
            self.solution_log.extend((worker, s) for s in arrival.solutions[:room])
        room = SHARED_SOLUTIONS_KEPT - len(self.refutation_log)
        if room > 0:
            self.refutation_log.extend((worker, r) for r in arrival.refutations[:room])
        targets: list[int] = []
        if worker in self.give_sent:
            self.give_sent.discard(worker)
            targets = self.giving.pop(worker)
        if arrival.exported and worker not in self.halt_sent and arrival.stopped is None:
            self.counters["jobs_moved"] += len(arrival.exported)
        if self.tree is not None:
            self.tree.merge(worker, arrival.tree_rows)
        # the jobs' nodes by their ids in the tree, not the worker's names for them (a moved
        # state's name is used up)
        exported = self._in_tree(worker, arrival.exported, moved=True)
        opened = []
        for index, job in enumerate(exported):
            entry = (self.next_job_id, job)
            opened.append(entry)
            self.next_job_id += 1
            if index < len(targets) and targets[index] in self.alive:
                self.routed[targets[index]].append(entry)
            else:
                self.pending.append(entry)
        if arrival.stopped is not None and self.halting is None:
            # first: the worker cut its open paths for this reason, and the journal must
            # not take them for finished
            self.halting = arrival.stopped
        new_tests = [test for test in arrival.tests if self._test(test)]
        checkpoints = []
        if arrival.frontier:
            self.frontier_size[worker] = sum(len(pieces) for _, pieces in arrival.frontier)
        for job_id, pieces in arrival.frontier:
            if job_id not in self.held[worker]:
                continue  # finished, or re-issued since the worker looked
            pieces = self._in_tree(worker, pieces, moved=False)  # the state stays
            numbered = [(self.next_job_id + k, piece) for k, piece in enumerate(pieces)]
            self.next_job_id += len(pieces)
            checkpoints.append((job_id, numbered))
        if self.tree is not None:
            self.tree.commit(durable=self.journal is not None)
        # after the hooks (the tests' files are written): a kill before this commit costs
        # this report's paths a second exploration on resume, never a lost test
        self._record(opened, arrival.finished_jobs, new_tests, checkpoints)

    def _in_tree(self, worker: int, jobs: tuple[Job, ...], *, moved: bool) -> tuple[Job, ...]:
        """``jobs`` with the worker's names for their tree nodes replaced by the nodes' ids
        (``moved``: the states left the worker, and their names are used up)."""
        if self.tree is None:
            return jobs
        name = self.tree.node_of if moved else self.tree.peek_node
        return tuple(attrs.evolve(job, node=name(worker, job.node)) if job.node else job
                     for job in jobs)

    def _test(self, test: TestCase) -> bool:
        """Take a reported path (False: one seen before, dropped)."""
        if test.path in self.seen_paths:
            self.duplicates[test.status] += 1
            return False
        self.seen_paths.add(test.path)
        self.tests.append(test)
        if test.error is not None:
            self.errors.add(test.error)
            if self.hooks.on_error is not None:
                self.hooks.on_error(test.error, test)
        if self.hooks.on_path_end is not None:
            self.hooks.on_path_end(test)
        return True

    def _lost(self, lost: WorkerLost) -> None:
        """Re-issue what a dead worker held, and replace it if the pool can."""
        worker = lost.worker
        self.busy.discard(worker)
        self.messages.append(f"symex: worker {worker} was lost ({lost.why}); its "
                             f"{len(self.held[worker])} job(s) start again elsewhere")
        self.counters["lost_workers"] += 1
        self.counters["reissued_jobs"] += len(self.held[worker])
        for job_id, job in self.held[worker].items():
            self.pending.append((job_id, job))
        self.held[worker] = {}
        self.pending.extend(self.routed.pop(worker, []))
        self.giving.pop(worker, None)
        self.give_sent.discard(worker)
        if worker in self.reports:
            self.retired.append(self.reports.pop(worker))
        self.loads[worker] = 0
        self.halt_sent.discard(worker)
        self.told[worker] = (0, 0, 0)  # a replacement knows nothing yet
        if self.tree is not None:
            self.tree.forget(worker)
        if not self.pool.replace(worker):
            self.alive.discard(worker)
            if not self.alive:
                raise SymexError("every parallel worker was lost; nothing is left to run "
                                 "the exploration (see the messages above)")

    def _halt_pending(self) -> None:
        """Jobs never started when the run halted are open paths: each ends as partial,
        with the inputs its state had."""
        leftovers = list(self.pending) + [e for es in self.routed.values() for e in es]
        self.pending.clear()
        self.routed.clear()
        for _, job in leftovers:
            self._test(TestCase(objects=dict(job.inputs or ()), status=PathStatus.PARTIAL,
                                reason=self.halting or "halted", path=job.decisions()))
        self.unstarted_partial = len(leftovers)

    # -- counters ----------------------------------------------------------------------------

    def _shed_paths(self) -> int:
        """Paths the workers' memory caps ended (those with tests)."""
        return sum(1 for test in self.tests if test.reason == MEMORY_CAP_REASON)

    def _total(self, name: str) -> Any:
        return sum(getattr(r, name) for r in list(self.reports.values()) + self.retired)

    def _paths(self) -> PathCounts:
        extra = self.unstarted_partial
        return PathCounts(self._total("completed") - self.duplicates[PathStatus.COMPLETED],
                          self._total("errors") - self.duplicates[PathStatus.ERROR],
                          self._total("partial") + extra - self.duplicates[PathStatus.PARTIAL])

    def _parallel_statistics(self) -> ParallelStatistics:
        rows = tuple(WorkerRow(r.worker, r.instructions, r.completed, r.errors, r.partial,
                               self.jobs_given[r.worker], r.solver_queries, r.solver_time,
                               r.replayed_events, r.searcher, r.shared_hits)
                     for r in sorted(self.reports.values(), key=lambda r: r.worker))
        in_flight = len(self.pending) + sum(len(v) for v in self.routed.values())
        return ParallelStatistics(self.size, self.pool.kind, jobs_in_flight=in_flight,
                                  duplicate_paths=sum(self.duplicates.values()),
                                  replayed_events=self._total("replayed_events"),
                                  shared_solutions=len(self.solution_log),
                                  shared_cache_hits=self._total("shared_hits"),
                                  per_worker=rows, per_strategy=self._strategies(),
                                  **self.counters)

    def _strategies(self) -> tuple[StrategyRow, ...]:
        """Per search strategy: its workers' counters summed (lost workers' included)."""
        by_searcher: dict[str, list[WorkerReport]] = collections.defaultdict(list)
        for report in list(self.reports.values()) + self.retired:
            by_searcher[report.searcher].append(report)
        lines_of = self.coverage.lines_of
        return tuple(
            StrategyRow(name, len({r.worker for r in reports}),
                        sum(r.instructions for r in reports), sum(r.completed for r in reports),
                        sum(r.errors for r in reports), sum(r.partial for r in reports),
                        len(lines_of(self.strategy_blocks[name])))
            for name, reports in sorted(by_searcher.items()))

    def _snapshot(self, now: float, final: bool = False) -> ProgressSnapshot:
        paths = self._paths()
        coverage = self.coverage
        return ProgressSnapshot(
            elapsed=now - self.start, instructions=self._total("instructions"),
            live_states=sum(self.loads[w] for w in self.alive), completed=paths.completed,
            errors=paths.errors, partial=paths.partial, tests=len(self.tests),
            covered_lines=len(coverage.lines_of(self.blocks)),
            total_lines=len(coverage.total_lines), covered_branches=len(self.branches),
            total_branches=len(coverage.total_branches),
            covered_instructions=coverage.instructions_in(self.blocks),
            total_instructions=coverage.total_instructions,
            solver_queries=self._total("solver_queries"),
            solver_time=self._total("solver_time"), forks=self._total("forks"),
            memory_mb=resident_mb() + sum(r.memory_mb for r in self.reports.values()
                                          if self.pool.kind != "in-process"),
            shed_paths=self._shed_paths(),
            final=final, parallel=self._parallel_statistics(),
            memo=self.tree.statistics(final) if self.tree is not None else None)

    def _result(self) -> Result:
        coverage = self.coverage
        halted = self.halting
        return Result(
            paths=self._paths(), tests=tuple(self.tests), errors=tuple(self.errors.errors),
            coverage=Coverage(coverage.lines_of(self.blocks), coverage.total_lines,
                              frozenset(self.branches), coverage.total_branches,
                              coverage.instructions_in(self.blocks),
                              coverage.total_instructions),
            statistics=Statistics(
                self._total("instructions"), time.monotonic() - self.start,
                self._total("forks"), self.peak,
                self._total("solver_queries"), self._total("solver_time"),
                parallel=self._parallel_statistics(),
                memo=self.tree.statistics(final=True) if self.tree is not None else None,
                # the workers' frontier and the paths the deadline cut, with their tests
                halted_paths=sum(1 for test in self.tests if halted is not None
                                 and test.status is PathStatus.PARTIAL
                                 and test.reason == halted),
                shed_paths=self._shed_paths()),
            halted=halted, messages=tuple(self.messages),
            shortfalls=merge_shortfalls(s for report in [*self.reports.values(), *self.retired]
                                        for s in report.shortfalls))


