"""A discrete-event simulation of parallel exploration: the real coordinator and N simulated
workers exploring a real, recorded execution tree, for N = 1 .. 256.

    python benchmarks/parallel_simulation.py --validate  # docs/benchmarks.md's run (~4.5 min)
    python benchmarks/parallel_simulation.py --quick     # small programs, fewer N: a smoke run
    python benchmarks/parallel_simulation.py --coreutils /tmp/src/coreutils-9.1 --no-what-if
    python benchmarks/parallel_simulation.py --coreutils /tmp/src/coreutils-9.1 \
        --trees /tmp/memo600 --no-what-if   # the 10-minute trees coreutils_memo.py recorded

What it does:

1. **Records real trees.** Each program is explored to the end by the real engine in one
   process (``symex.explore(..., record_tree=...)``, dfs, the default solver and chain), and
   its ``tree.db`` is read back with sqlite3: one node per segment of a path between two
   forks, with the segment's ``instructions``, ``solver_us`` and the answers in its ``log``.
2. **Calibrates costs on this machine, in this run** (printed at the start):

   - ``c_instr``: seconds per interpreted instruction, from a concrete run with no solver
     and no fork (``benchmarks/programs/sort.c``, one round, best of 2).
   - ``c_node`` (per program): what a segment costs besides its instructions and its solver
     time (fork, state copies, symbolic expressions, the path's end and its test):
     ``(W - T_rec - S - I * c_instr) / M`` where W is the recording run's wall time, T_rec
     the recorder's own upkeep (``statistics.memo.tree_time``), S the sum of ``solver_us``,
     I the instructions and M the nodes. A node then costs ``c_node + instructions * c_instr
     + solver_us``, so the nodes' costs add up to the single-process run without recording.
   - Rebuild by replay (per program), measured as ``benchmarks/parallel_benchmarks.py`` does
     it: a real :class:`~symex.parallel.worker.Worker` explores breadth-first for a moment
     and hands its states over as jobs; ``c_export`` is the time per job of that hand-over,
     ``c_job`` the time per job of starting them on a fresh worker, and ``c_event`` the time
     per replayed event (fork or answer) of the replay itself once the instructions it
     re-executed are taken out: ``(T_replay - I_replay * c_instr) / E_replay``. The rebuild
     of a job at node v costs ``c_job + instructions above v * c_instr + events above v *
     c_event``: replay re-executes every instruction of the path and skips only the solver.
   - Cold caches (per program): a moved job's subtree asks the core solver more than the
     same subtree did in the single process, whose query and counter-example caches were
     warm (a job starts a fresh initial state, with input arrays of its own, which the
     worker's caches have never seen). ``cold`` is measured on a real parallel run of 4
     workers in one process (``parallel_backend="in-process"``: the real coordinator,
     balancing, jobs and replay, the steps taken in turn), stopped after 10 s: its
     core-solver time minus the single run's for as many instructions, over the jobs
     moved. Every rebuilt job pays it once, when its rebuild ends, but no more than its
     subtree can ask: ``queries_per_fork`` (the single run's chain queries over its forks)
     times the forks below the job, each at ``cold`` over the extra core queries per job.
   - Messages: the round trip of an empty order to a real worker process
     (:class:`~symex.parallel.pools.ProcessPool`, one worker), halved for each direction
     (``--latency-ms`` overrides it, e.g. for a cluster's network).
   - The coordinator's own time (it is one process): the real :class:`Coordinator`'s
     handling of real pickled :class:`WorkerReport` objects (unpickling, ``_arrived``) per
     report with no new coverage, and per test in it, and of one loop round (``_balance``
     and ``_dispatch``, an order pickled) for 16, 64 and 256 workers, fitted as ``b0 + b1 *
     N``; a job moved costs the coordinator a pickle round trip of a real job, twice (in a
     report, in an order). Message and coordinator figures are the smallest of 3 medians
     (the machine may be shared).

3. **Simulates.** The coordinator is the real one (:class:`symex.parallel.coordinator.
   Coordinator`, with its STEP_SECONDS, SHORT_STEP_SECONDS and WAIT_SECONDS, and the real
   :class:`~symex.parallel.balancing.LoadBalancer`), run over a simulated
   :class:`~symex.parallel.pools.WorkerPool` whose clock is virtual: ``send`` runs the
   worker's step at once in virtual time and puts its report on a heap of events (arrival
   time, sequence); ``receive`` moves the coordinator's clock to the next arrival (or by its
   timeout) and adds the coordinator's modelled processing time, so that a busy coordinator
   delays every order that follows. A worker has the default searcher's order: a stack of
   states (tree nodes), the newest explored first; a fork pushes its children in child order.
   A step starts the jobs given (each pays ``c_job``), hands over the ``give`` shallowest
   states (ties by state age, as ``Exploration.take_states``), rebuilds its received jobs
   first (replaying states come first, as in the engine), then explores until the step's
   time is used. The clock is looked at between time slices, as the engine does: after each
   node, or after each TIME_SLICE instructions of a long one, and after each replayed segment
   of a rebuild. Nothing runs in real threads; the result is deterministic for a ``--seed``
   (the seed draws a +-``--jitter`` spread of each message's latency).

4. **Prints** per program and worker count: the simulated makespan (from the root job sent
   to the last report handled), speed-up over the simulated single worker, efficiency
   (speed-up / N), balancing moves and jobs moved (the coordinator's own counters), the
   shares of all workers' time spent rebuilding jobs, paying cold caches, and idle, the
   coordinator's busy share, and the bound of the tree itself (the serial work over N or
   the costliest root-to-leaf path, whichever is longer). The target is efficiency >= 0.8
   at 64 workers. Then, for the largest tree, what-if rows at 64 and 256 workers (a free
   coordinator, free rebuilds, no cold caches, a 1 ms network, other step lengths, another
   balance ratio, and other policies: Cloud9's half the difference per move, a give
   answered after a step of exploring, a rebuild from the deepest common ancestor), and
   every program at 64 workers with the changes that together remove the limits.
   ``--large`` records trees of 1-3 minutes of serial work instead, the size a run on 64
   workers is for; ``--coreutils DIR`` records ten real tools instead (cat, cut, echo, fold,
   head, nl, od, paste, seq, wc of a coreutils tree built by ``benchmarks/coreutils.py``,
   KLEE's arguments), each for ``--record-time`` seconds (default 60): such a tree is what
   one process explored in that time, and every worker count is timed exploring those same
   paths. ``--trees DIR`` takes the trees of ``benchmarks/coreutils_memo.py --results DIR``
   instead (``DIR/TOOL-record``: MoKlee's 10-minute recordings, by ``symex run`` with its
   default searchers, its tests written; the recording's wall time, solver figures and
   recorder upkeep come from its info file and run.stats). ``--only TEXT`` keeps the
   programs whose name holds TEXT. ``--validate`` adds real runs
   with 2 worker processes beside the simulated 2 workers.

What it does not model: process or actor start-up (forking 256 processes, a solver each);
workers that differ in speed, or share cores with the coordinator (this machine has two);
memory; how the cold-cache cost of a job depends on its subtree's size beyond a bound (one
average per program, measured on the first, shallowest jobs moved, and capped for a job by what
its subtree can ask: the single run's chain queries per fork times the subtree's forks, at the
measured cost of a cold core query); coverage-guided searchers (dfs only); lost workers; tests'
sizes (every test costs the coordinator what an average one from the calibration did). The tree
is the same whatever the number of workers, which holds for a run explored to the end (the same
paths), not for time-limited runs. The node costs are the recording run's: its solver times
(including the outliers of a shared machine) are replayed as they were.
"""

from __future__ import annotations

import argparse
import contextlib
import heapq
import json
import math
import os
import pickle
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from collections.abc import Iterator, Sequence

import attrs

import symex
from symex.core.outcome import TIME_LIMIT_REASON
from symex.description import Limits
from symex.exploration import TIME_SLICE
from symex.results import Hooks
from symex.ir.program import Program
from symex.memo.format import NodeStatus, decode_varints, encode_varints
from symex.output.directory import read_info
from symex.output.runstats import read_run_stats
from symex.parallel import coordinator as coordinator_module
from symex.parallel.balancing import (DEFAULT_BALANCE_RATIO, LOW_WATER, MAX_JOBS_PER_MOVE,
                                      LoadBalancer)
from symex.parallel.coordinator import SHORT_STEP_SECONDS, STEP_SECONDS, WAIT_SECONDS, \
    Coordinator
from symex.parallel.jobs import ROOT_JOB, Job
from symex.parallel.pools import Arrival, ProcessPool
from symex.parallel.worker import StepOrder, Worker, WorkerReport
from symex.symargs import ArgvItem, ArgvSpec, SymStdin

sys.path.insert(0, str(Path(__file__).resolve().parent))
from coreutils import KLEE_ARGUMENTS  # noqa: E402
from coreutils_memo import TOOLS as MEMO_TOOLS  # noqa: E402

try:
    from symex.description import RunDescription
except ImportError:  # the library before RunDescription: workers took WorkerSettings
    RunDescription = None  # type: ignore[assignment, misc]

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests" / "programs"

#: worker counts of a full run and of --quick
FULL_WORKERS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
QUICK_WORKERS = (1, 4, 16, 64)
#: the efficiency the parallel-exploration issue asks for at TARGET_WORKERS
TARGET_EFFICIENCY = 0.8
TARGET_WORKERS = 64
#: states handed over in the rebuild measurement
SAMPLE_JOBS = 300
#: how long a built program's breadth-first worker explores before it hands over its states
REAL_SAMPLE_SECONDS = 3.0
#: the real parallel run that measures the cold-cache cost of a moved job: workers, seconds
COLD_WORKERS = 4
COLD_WINDOW = 10.0


# -- workloads --------------------------------------------------------------------------------


@attrs.frozen
class Workload:
    """A program to record: its source, compile flags and exploration inputs."""

    name: str
    source: Path
    flags: tuple[str, ...] = ()
    argv: tuple[ArgvItem, ...] = ()
    """Symbolic inputs given to ``explore`` and to the calibration workers."""
    built: bool = False
    """``source`` is a program built with ``symex cc`` (loaded, not compiled)."""
    words: tuple[str, ...] = ()
    """Symbolic inputs as ``symex run`` takes them (``--sym-args 0 2 2 --sym-files 1 8``)."""
    record_time: float | None = None
    """The recording's time limit (a real tool is not explored to the end): the tree is what
    one process explored in that time, and every worker count explores those paths."""
    recorded: Path | None = None
    """A ``symex run --record-tree`` output directory to take the tree and the recording
    run's figures from instead of recording again (``--trees``)."""

    def explore_options(self) -> dict[str, Any]:
        """The keyword arguments of ``symex.explore`` for these inputs."""
        options: dict[str, Any] = {}
        for item in self.argv:
            if isinstance(item, SymStdin):
                options["sym_stdin"] = item.size
        if self.words:
            options["sym_args"] = ArgvSpec.parse(self.words)
        return options

    def program(self) -> Program:
        """The program: compiled from C, or loaded from its ``symex cc`` build."""
        if self.built:
            return symex.load(self.source)
        return symex.compile(self.source, list(self.flags))


def programs(quick: bool, large: bool = False, coreutils: Path | None = None,
             record_time: float = 60.0, trees: Path | None = None) -> list[Workload]:
    """The recorded workloads: every one is explored to the end (same paths at any N).
    ``large``: trees of 1-3 minutes of serial work, the size a run on 64 workers is for.
    ``coreutils``: a coreutils tree built by ``benchmarks/coreutils.py``: the ten tools of
    ``benchmarks/coreutils_memo.py`` with KLEE's arguments, each recorded for
    ``record_time`` seconds, or, given ``trees`` (a ``coreutils_memo.py --results``
    directory), the tools whose ``TOOL-record`` run is there, with that run's tree."""
    if coreutils is not None:
        if trees is not None:
            return [Workload(tool, coreutils / "src" / tool, built=True, words=KLEE_ARGUMENTS,
                             recorded=trees / f"{tool}-record")
                    for tool in MEMO_TOOLS if (trees / f"{tool}-record" / "tree.db").is_file()]
        return [Workload(tool, coreutils / "src" / tool, built=True, words=KLEE_ARGUMENTS,
                         record_time=record_time)
                for tool in MEMO_TOOLS]
    neighbours = ROOT / "benchmarks" / "programs" / "neighbours.c"
    tokens = TESTS / "posix" / "tokens.c"
    if large:
        return [Workload("neighbours N=16", neighbours, ("-DN=16",)),
                Workload("regexp (10-byte pattern)", TESTS / "regexp.c", ("-DSIZE=10",)),
                Workload("tokens --sym-stdin 5", tokens, argv=(SymStdin(5),))]
    if quick:
        return [Workload("neighbours N=8", neighbours, ("-DN=8",)),
                Workload("branches N=8", TESTS / "branches.c", ("-DN=8",)),
                Workload("tokens --sym-stdin 3", tokens, argv=(SymStdin(3),))]
    return [Workload("neighbours N=12", neighbours, ("-DN=12",)),
            Workload("regexp (7-byte pattern)", TESTS / "regexp.c"),
            Workload("tokens --sym-stdin 4", tokens, argv=(SymStdin(4),)),
            Workload("tokens --sym-stdin 5", tokens, argv=(SymStdin(5),))]


# -- the recorded tree ------------------------------------------------------------------------


class Tree:
    """A recorded execution tree as flat arrays indexed by node (0 is the root), children in
    child order. Built and walked with explicit queues: no recursion over the tree."""

    def __init__(self, path: Path) -> None:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = connection.execute(
                "SELECT id, parent, status, instructions, solver_us, log FROM node "
                "ORDER BY id").fetchall()
        finally:
            connection.close()
        index = {row[0]: i for i, row in enumerate(rows)}
        size = len(rows)
        self.size = size
        self.parent: list[int] = [-1] * size
        self.children: list[tuple[int, ...]] = [()] * size
        self.status: list[int] = [0] * size
        self.instructions: list[int] = [0] * size
        self.solver_seconds: list[float] = [0.0] * size
        #: answers the segment took (events of a job besides the forks)
        self.answers: list[int] = [0] * size
        kids: dict[int, list[int]] = {}
        root = -1
        for i, (_, parent, status, instructions, solver_us, log) in enumerate(rows):
            self.status[i] = status
            self.instructions[i] = instructions
            self.solver_seconds[i] = solver_us / 1e6
            self.answers[i] = len(decode_varints(log)) if log else 0
            if parent is None:
                root = i
            else:
                self.parent[i] = index[parent]
                kids.setdefault(index[parent], []).append(i)  # ids ascend in child order
        if root != 0:
            raise ValueError(f"{path}: the root is not the first node")
        for node, children in kids.items():
            self.children[node] = tuple(children)
        # forks, instructions and events above each node (what rebuilding it replays)
        self.depth: list[int] = [0] * size
        self.path_instructions: list[int] = [0] * size
        self.path_events: list[int] = [0] * size
        queue = [0]
        while queue:
            node = queue.pop()
            for child in self.children[node]:
                self.depth[child] = self.depth[node] + 1
                self.path_instructions[child] = (self.path_instructions[node]
                                                 + self.instructions[node])
                # the parent's answers and its fork decision
                self.path_events[child] = self.path_events[node] + self.answers[node] + 1
                queue.append(child)
        self.leaves = sum(1 for c in self.children if not c)
        #: forks in each node's subtree, itself included (children come after their parent
        #: in id order, so one backward pass adds every subtree up)
        self.subtree_forks: list[int] = [1 if c else 0 for c in self.children]
        for node in range(size - 1, 0, -1):
            self.subtree_forks[self.parent[node]] += self.subtree_forks[node]

    def critical_path(self, cost: Sequence[float]) -> float:
        """The costliest root-to-leaf path (no number of workers finishes sooner)."""
        best = 0.0
        total = [0.0] * self.size
        queue = [0]
        total[0] = cost[0]
        while queue:
            node = queue.pop()
            children = self.children[node]
            if not children:
                best = max(best, total[node])
            for child in children:
                total[child] = total[node] + cost[child]
                queue.append(child)
        return best


# -- costs ------------------------------------------------------------------------------------


@attrs.frozen
class MessageCosts:
    """What crossing between processes and the coordinator's own work cost (seconds)."""

    one_way: float
    """An order to a worker, or a report back (half a measured round trip)."""
    round_trip: float
    report: float
    """The coordinator's handling of one report with no test (unpickle, ``_arrived``)."""
    per_test: float
    """Its handling of each test in a report."""
    per_job: float
    """Its handling of a moved job (a pickle round trip in the report and in the order)."""
    round_fixed: float
    """One round of the coordinator's loop (``_balance``, ``_dispatch``): b0 + b1 * N."""
    round_per_worker: float
    rounds_measured: tuple[tuple[int, float], ...] = ()


@attrs.frozen
class ProgramCosts:
    """The per-node model of one program (seconds; see the module docstring)."""

    instruction: float
    node: float
    event: float
    job_start: float
    job_export: float
    # what they came from, for the printout
    wall: float = 0.0
    recorder: float = 0.0
    solver: float = 0.0
    rebuild_jobs: int = 0
    rebuild_events: int = 0
    rebuild_seconds: float = 0.0
    rebuild_instructions: int = 0
    cold: float = 0.0
    """Extra core-solver seconds per moved job: a rebuilt state's subtree misses the caches
    the single process had warm (see measure_cold)."""
    cold_queries: float = 0.0
    cold_jobs: int = 0
    cold_window: float = 0.0
    queries_per_fork: float = 0.0
    """Queries the solver chain answered per fork in the single run: a moved job's subtree
    of F forks asks the chain about this times F queries, and can send no more than those
    to the core solver (0: no bound)."""
    replay_instruction: float = 0.0
    """Seconds per instruction a rebuild replays (0: ``instruction``). A real tool's
    instructions cost far more than sort.c's concrete ones (musl's start, symbolic bytes):
    charged at ``instruction``, the difference fell on ``event`` (2-9 ms an event on
    coreutils), which then overcharged every deep job. For built programs, the rebuild
    sample's seconds over its replayed instructions, events included (``event`` 0)."""


@attrs.frozen
class Variant:
    """A what-if: the same model with one thing changed (``--`` rows: as measured)."""

    name: str
    coordinator_scale: float = 1.0
    rebuild_scale: float = 1.0
    one_way: float | None = None
    step: float | None = None
    short_step: float | None = None
    ratio: float = DEFAULT_BALANCE_RATIO
    max_jobs: int | None = MAX_JOBS_PER_MOVE
    """The balancer's cap on the jobs of one move (None: Cloud9's half the difference)."""
    low_water: int = LOW_WATER
    """A worker with at most this many states counts as idle."""
    shared_prefix: bool = False
    """Rebuild the jobs of one order from their deepest common ancestor, as Cloud9 does
    (symex rebuilds each job from the root): a job pays only for the segments below the
    deepest node an earlier job of the same order already replayed, and one job start."""
    cold_scale: float = 1.0
    """Scale of the cold-cache cost of a moved job (0: caches that hold across jobs)."""
    explore_before_give: bool = False
    """A worker told to give explores a short step before it reports the jobs (symex before
    commit 2244453; a worker now reports them at once, as ``Worker.step`` does)."""


def _timed_explore(program: Program, **options: Any) -> tuple[float, symex.Result]:
    started = time.perf_counter()
    result = symex.explore(program, searcher="dfs", seed=0, **options)
    return time.perf_counter() - started, result


def measure_instruction_cost() -> float:
    """Seconds per instruction of a concrete run (no fork, no solver), best of 2."""
    program = symex.compile(ROOT / "benchmarks" / "programs" / "sort.c")
    best = math.inf
    for _ in range(2):
        seconds, result = _timed_explore(program, args=["1"])
        best = min(best, seconds / max(result.statistics.instructions, 1))
    return best


def worker_settings(spec: Workload, searcher: str = "dfs") -> Any:
    """What a worker of ``explore(workers=...)`` gets for ``spec``: its run description."""
    if RunDescription is not None:
        return RunDescription.build(searcher=searcher, **spec.explore_options())
    from symex.engine import WorkerSettings  # type: ignore[attr-defined]
    from symex.env.world import PosixSetup
    from symex.symargs import ArgvSpec
    return WorkerSettings(entry="main", argv=ArgvSpec(spec.argv),  # type: ignore[arg-type]
                          posix=PosixSetup.make(None, None), searcher=searcher)


def measure_rebuild(program: Program, spec: Workload, instruction: float,
                    ) -> tuple[float, float, float, int, int, float, int]:
    """Hand-over and rebuild of real jobs: (c_event, c_job, c_export, jobs, events,
    replay seconds, replayed instructions)."""
    source = Worker(0, program, worker_settings(spec, "bfs"))
    source.step(StepOrder(jobs=((0, ROOT_JOB),)))
    # breadth-first in short steps until it holds enough states (small trees end soon)
    # (or until the front stops growing: past the widest level). A real tool runs its C
    # library's start and its option parsing without a fork for many steps: its front is
    # not past its widest there, so it gets REAL_SAMPLE_SECONDS and no such stop
    deadline = time.monotonic() + (REAL_SAMPLE_SECONDS if spec.built else 1.0)
    run = source.exploration
    widest = 0
    while (0 < run.live < SAMPLE_JOBS if spec.built else widest <= run.live < SAMPLE_JOBS) \
            and time.monotonic() < deadline:
        widest = run.live
        source.step(StepOrder(seconds=0.002))
    started = time.perf_counter()
    jobs = source.step(StepOrder(give=SAMPLE_JOBS)).exported
    export = (time.perf_counter() - started) / max(len(jobs), 1)
    source.close()
    target = Worker(1, program, worker_settings(spec))
    started = time.perf_counter()
    target.step(StepOrder(jobs=tuple(enumerate(jobs))))
    job_start = (time.perf_counter() - started) / max(len(jobs), 1)
    run = target.exploration
    before = run.executor.instructions
    started = time.perf_counter()
    while run.replaying:
        run._step()
    elapsed = time.perf_counter() - started
    replayed = run.executor.instructions - before
    events = target.replay.replayed_events
    target.close()
    event = max(0.0, (elapsed - replayed * instruction) / max(events, 1))
    return event, job_start, export, len(jobs), events, elapsed, replayed


def measure_cold(program: Program, spec: Workload, serial: symex.Result | RecordedRun,
                 window: float) -> tuple[float, float, int]:
    """Extra core-solver time and queries per moved job, from a real parallel run of 4
    workers in one process (``InProcessPool``: the real coordinator, workers, balancing and
    jobs, steps run one after another) stopped after ``window`` seconds: its core-solver
    time minus the single process's for as many instructions, over the jobs moved."""
    run = symex.explore(program, searcher="dfs", seed=0, workers=COLD_WORKERS,
                        parallel_backend="in-process", max_time=window,
                        **spec.explore_options())
    assert run.statistics.parallel is not None
    moved = run.statistics.parallel.jobs_moved
    if not moved:
        return 0.0, 0.0, 0
    share = min(1.0, run.statistics.instructions / max(serial.statistics.instructions, 1))
    extra_time = run.statistics.solver_time - serial.statistics.solver_time * share
    extra_queries = run.statistics.solver_queries - serial.statistics.solver_queries * share
    return max(0.0, extra_time / moved), max(0.0, extra_queries / moved), moved


def calibrate_program(program: Program, spec: Workload, tree: Tree, wall: float,
                      recorder: float, instruction: float, serial: symex.Result | RecordedRun,
                      cold_window: float = COLD_WINDOW) -> ProgramCosts:
    """The per-node model of ``spec`` from its recording run, a rebuild measurement and a
    short real parallel run."""
    solver = sum(tree.solver_seconds)
    instructions = sum(tree.instructions)
    node = max(0.0, (wall - recorder - solver - instructions * instruction) / tree.size)
    event, job_start, export, jobs, events, replay, replayed = measure_rebuild(
        program, spec, instruction)
    replay_instruction = 0.0
    if spec.built and replayed:
        replay_instruction, event = replay / replayed, 0.0
    window = min(cold_window, 1.5 * wall)
    cold, cold_queries, cold_jobs = measure_cold(program, spec, serial, window)
    chain_queries = serial.statistics.solver_layers.get("queries", 0)
    per_fork = chain_queries / serial.statistics.forks if serial.statistics.forks else 0.0
    return ProgramCosts(instruction, node, event, job_start, export, wall, recorder, solver,
                        jobs, events, replay, replayed, cold, cold_queries, cold_jobs, window,
                        per_fork, replay_instruction)


class _CountingPool:
    """A pool that only pickles the orders it is given (the coordinator's cost of sending)."""

    kind = "calibration"

    def __init__(self, size: int) -> None:
        self.size = size
        self.sent = 0

    def send(self, worker: int, order: StepOrder) -> None:
        pickle.dumps(order)
        self.sent += 1

    def receive(self, timeout: float) -> list[Any]:
        return []

    def replace(self, worker: int) -> bool:
        return False

    def close(self) -> None:
        pass


def _median_ns(samples: list[int]) -> float:
    return statistics.median(samples) / 1e9


def measure_messages(program: Program, spec: Workload, rounds: int = 200,
                     repeats: int = 3) -> MessageCosts:
    """Round trip to a worker process, and the real coordinator's time per report, per
    test, per job and per loop round (module docstring). Each figure is the smallest of
    ``repeats`` medians (the machine may be shared: the least disturbed sample)."""
    settings = worker_settings(spec)
    pool = ProcessPool(1, program, settings)
    medians = []
    try:
        pool.send(0, StepOrder())
        while not pool.receive(5.0):
            pass
        for _ in range(repeats):
            trips = []
            for _ in range(rounds):
                started = time.perf_counter_ns()
                pool.send(0, StepOrder())
                while not pool.receive(5.0):
                    pass
                trips.append(time.perf_counter_ns() - started)
            medians.append(_median_ns(trips))
    finally:
        pool.close()
    round_trip = min(medians)
    # real reports: the tests of a short exploration; in the steady state a report brings
    # no new coverage, so none is kept in either
    worker = Worker(0, program, settings)
    with_tests = worker.step(StepOrder(jobs=((0, ROOT_JOB),), seconds=0.2))
    jobs = worker.step(StepOrder(give=20)).exported
    worker.close()
    tests = max(len(with_tests.tests), 1)
    steady = attrs.evolve(with_tests, exported=(), live=7, blocks=frozenset(),
                          branches=frozenset(), messages=())
    blobs = {"none": pickle.dumps(attrs.evolve(steady, tests=())),
             "tests": pickle.dumps(steady)}
    report_time: dict[str, list[float]] = {"none": [], "tests": []}
    round_time: dict[int, list[float]] = {}
    for _ in range(repeats):
        for size in (16, 64, 256):
            coordinator = Coordinator(program, _CountingPool(size), hooks=Hooks(),
                                      limits=Limits(), emit_all_errors=False,
                                      progress_interval=1e9)
            # everyone busy with loads the rule leaves alone; worker 0 reports, again and again
            coordinator.loads = {w: 5 + w % 10 for w in range(size)}
            coordinator.busy = set(range(size))
            for kind in ("none", "tests") if size == 16 else ("none",):
                handle, loop = [], []
                for _ in range(300 if kind == "none" else 40):
                    started = time.perf_counter_ns()
                    coordinator._arrived(pickle.loads(blobs[kind]))
                    middle = time.perf_counter_ns()
                    coordinator._balance()
                    coordinator._dispatch()
                    loop.append(time.perf_counter_ns() - middle)
                    handle.append(middle - started)
                if size == 16:
                    report_time[kind].append(_median_ns(handle))
                if kind == "none":
                    round_time.setdefault(size, []).append(_median_ns(loop))
    report = min(report_time["none"])
    per_test = max(0.0, (min(report_time["tests"]) - report) / tests)
    pickling = []
    for _ in range(repeats):
        started = time.perf_counter_ns()
        for _ in range(50):
            for job in jobs:
                pickle.loads(pickle.dumps(job))
        pickling.append((time.perf_counter_ns() - started) / 1e9 / max(50 * len(jobs), 1))
    per_job = 2 * min(pickling)
    # least squares of the loop round against N
    rounds_measured = tuple((n, min(ts)) for n, ts in sorted(round_time.items()))
    xs = [float(n) for n, _ in rounds_measured]
    ys = [t for _, t in rounds_measured]
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / \
        sum((x - mean_x) ** 2 for x in xs)
    slope = max(slope, 0.0)
    fixed = max(mean_y - slope * mean_x, 0.0)
    return MessageCosts(round_trip / 2, round_trip, report, per_test, per_job, fixed, slope,
                        rounds_measured)


# -- the simulated workers and pool -----------------------------------------------------------


class Model:
    """One program's tree with its costs, as the simulated workers need them."""

    def __init__(self, tree: Tree, costs: ProgramCosts) -> None:
        self.tree = tree
        self.costs = costs
        c_instr = costs.instruction
        self.cost = [costs.node + i * c_instr + s
                     for i, s in zip(tree.instructions, tree.solver_seconds)]
        self.chunks = [max(1, -(-i // TIME_SLICE)) for i in tree.instructions]
        self.chunk_cost = [c / k for c, k in zip(self.cost, self.chunks)]
        self.serial = sum(self.cost)
        self.critical = tree.critical_path(self.cost)

    def rebuild(self, node: int, done: int, scale: float, above: int = -1,
                ) -> tuple[int, float]:
        """(replayed segments, seconds per segment) of rebuilding a job: every instruction
        above the node (and the part of it already run) at ``c_instr`` (a built program's:
        ``replay_instruction``), every event at
        ``c_event``; the job's start (``c_job``) is paid apart. ``above``: a node on the
        path whose segment is already replayed (-1: none, replay from the root)."""
        tree, costs = self.tree, self.costs
        instructions = tree.path_instructions[node]
        events = tree.path_events[node]
        segments = tree.depth[node]
        if above >= 0:
            instructions -= tree.path_instructions[above] + tree.instructions[above]
            events -= tree.path_events[above] + tree.answers[above] + 1
            segments -= tree.depth[above] + 1
        c_replay = costs.replay_instruction or costs.instruction
        seconds = instructions * c_replay + events * costs.event
        if done:
            seconds += tree.instructions[node] * done / self.chunks[node] * c_replay
            segments += 1
        segments = max(1, segments)
        return segments, seconds * scale / segments


def job_of(node: int, done: int, depth: int) -> Job:
    """A simulated job: the node (and how many chunks of it ran) in the events' place."""
    return Job(encode_varints([node, done]), depth)


def node_of(job: Job) -> tuple[int, int]:
    """The node and done chunks of a simulated job (the root job: node 0)."""
    if not job.events:
        return 0, 0
    node, done = decode_varints(job.events)
    return node, done


class SimWorker:
    """One worker: a dfs stack of states, a stack of states rebuilding jobs, counters."""

    def __init__(self, index: int, model: Model, variant: Variant) -> None:
        self.index = index
        self.model = model
        self.rebuild_scale = variant.rebuild_scale
        self.shared_prefix = variant.shared_prefix
        self.explore_before_give = variant.explore_before_give
        self.cold = model.costs.cold * variant.cold_scale
        self.cold_time = 0.0
        #: exploring states, the newest last: [node, chunks done, state id]
        self.stack: list[list[int]] = []
        #: states rebuilding a job, the newest last: [node, done, segments left, seconds
        #: each, state id, cold-cache seconds its subtree pays once rebuilt]
        self.replay: list[list[Any]] = []
        self.next_id = 0
        self.completed = self.errors = self.partial = 0
        self.instructions = self.forks = self.replayed_events = 0
        self.solver_time = 0.0
        self.busy = 0.0
        self.rebuilding = 0.0
        self.ended_in_step = 0

    def _new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def _cold_of(self, node: int) -> float:
        """The cold-cache cost of a job at ``node``: the measured average per moved job, but
        no more than its subtree can ask (``queries_per_fork`` chain queries per fork, each
        at the measured cost of a cold core query). The average comes from the first jobs
        moved, the shallowest, whose subtrees are large; a deep job's few forks cannot send
        that many queries to the core solver."""
        costs = self.model.costs
        if not costs.queries_per_fork or not costs.cold_queries:
            return self.cold
        per_query = self.cold / costs.cold_queries
        bound = costs.queries_per_fork * self.model.tree.subtree_forks[node] * per_query
        return min(self.cold, bound)

    def step(self, order: StepOrder, now: float) -> tuple[float, tuple[Job, ...]]:
        """Carry out ``order`` from ``now`` (as :meth:`Worker.step`): its end time and the
        jobs handed over."""
        model, tree, costs = self.model, self.model.tree, self.model.costs
        start = now
        self.ended_in_step = 0
        replayed: set[int] = set()
        for index, (_, job) in enumerate(order.jobs):
            node, done = node_of(job)
            if index == 0 or not self.shared_prefix:
                now += costs.job_start * self.rebuild_scale
                self.rebuilding += costs.job_start * self.rebuild_scale
            if node == 0 and done == 0:
                self.stack.append([0, 0, self._new_id()])
                continue
            above = -1
            if self.shared_prefix:
                # from the deepest ancestor an earlier job of this order replayed
                ancestor = tree.parent[node]
                path = []
                while ancestor >= 0 and ancestor not in replayed:
                    path.append(ancestor)
                    ancestor = tree.parent[ancestor]
                replayed.update(path)
                above = ancestor
            segments, each = model.rebuild(node, done, self.rebuild_scale, above)
            events = tree.path_events[node]
            if above >= 0:
                events -= tree.path_events[above] + tree.answers[above] + 1
            self.replay.append([node, done, segments, each, self._new_id(),
                                self._cold_of(node)])
            self.replayed_events += events
        exported: tuple[Job, ...] = ()
        if order.give and self.stack:
            depth = tree.depth
            chosen = sorted(self.stack, key=lambda s: (depth[s[0]], s[2]))[:order.give]
            taken = {id(s) for s in chosen}
            self.stack = [s for s in self.stack if id(s) not in taken]
            exported = tuple(job_of(s[0], s[1], depth[s[0]]) for s in chosen)
            now += costs.job_export * len(chosen)
        if order.halt is None and order.seconds > 0 and (self.explore_before_give
                                                         or not exported):
            now = self._explore(now, now + order.seconds)
        self.busy += now - start
        return now, exported

    def _explore(self, now: float, until: float) -> float:
        model, tree = self.model, self.model.tree
        stack, replay = self.stack, self.replay
        chunks, chunk_cost, children = model.chunks, model.chunk_cost, tree.children
        while stack or replay:
            if replay:
                state = replay[-1]
                now += state[3]
                self.rebuilding += state[3]
                state[2] -= 1
                if state[2] == 0:
                    replay.pop()
                    stack.append([state[0], state[1], state[4]])
                    # the queries its subtree makes before the worker's caches know its
                    # arrays (charged at once: what the subtree adds, not when)
                    now += state[5]
                    self.cold_time += state[5]
            else:
                state = stack[-1]
                node = state[0]
                now += chunk_cost[node]
                state[1] += 1
                if state[1] == chunks[node]:
                    stack.pop()
                    self.instructions += tree.instructions[node]
                    self.solver_time += tree.solver_seconds[node]
                    kids = children[node]
                    if kids:
                        self.forks += 1
                        stack.append([kids[0], 0, state[2]])
                        for kid in kids[1:]:
                            stack.append([kid, 0, self._new_id()])
                    else:
                        self.ended_in_step += 1
                        status = tree.status[node]
                        if status == NodeStatus.COMPLETED:
                            self.completed += 1
                        elif status == NodeStatus.ERROR:
                            self.errors += 1
                        else:
                            self.partial += 1
            if now >= until:
                break
        return now

    def report(self, exported: tuple[Job, ...]) -> WorkerReport:
        """The report of the step just done (no tests, coverage or memory: not modelled)."""
        return WorkerReport(
            worker=self.index, tests=(), completed=self.completed, errors=self.errors,
            partial=self.partial, live=len(self.stack) + len(self.replay), exported=exported,
            finished_jobs=(), blocks=frozenset(), branches=frozenset(),
            instructions=self.instructions, forks=self.forks, solver_queries=0,
            solver_time=self.solver_time, replayed_events=self.replayed_events,
            memory_mb=0.0)


class SimulatedPool:
    """A :class:`~symex.parallel.pools.WorkerPool` in virtual time (module docstring)."""

    kind = "simulated"

    def __init__(self, size: int, model: Model, messages: MessageCosts, variant: Variant,
                 seed: int, jitter: float) -> None:
        self.size = size
        self.workers = [SimWorker(i, model, variant) for i in range(size)]
        self.one_way = messages.one_way if variant.one_way is None else variant.one_way
        self.messages = messages
        self.scale = variant.coordinator_scale
        self.random = random.Random(seed * 1_000_003 + size)
        self.jitter = jitter
        self.now = 0.0
        self.coordinator_busy = 0.0
        self.rounds = 0
        #: reports on their way: (arrival, sequence, report, paths ended, jobs moved)
        self.events: list[tuple[float, int, WorkerReport, int, int]] = []
        self.sequence = 0

    def _latency(self) -> float:
        return self.one_way * (1.0 + self.jitter * (2.0 * self.random.random() - 1.0))

    def send(self, worker: int, order: StepOrder) -> None:
        """The worker runs the order as soon as it arrives; its report is an event."""
        sim = self.workers[worker]
        end, exported = sim.step(order, self.now + self._latency())
        report = sim.report(exported)
        moved = len(order.jobs) + len(exported)
        self.sequence += 1
        heapq.heappush(self.events, (end + self._latency(), self.sequence, report,
                                     sim.ended_in_step, moved))

    def receive(self, timeout: float) -> list[Arrival]:
        """The reports in by the coordinator's clock (waiting up to ``timeout`` for one),
        then the coordinator's time to handle them and to run one round of its loop."""
        self.rounds += 1
        if self.rounds > 50_000_000:
            raise RuntimeError("the simulated coordinator does not end")
        events = self.events
        out: list[Arrival] = []
        cost = 0.0
        if events and events[0][0] <= self.now + timeout:
            self.now = max(self.now, events[0][0])
            messages = self.messages
            while events and events[0][0] <= self.now:
                _, _, report, tests, moved = heapq.heappop(events)
                cost += messages.report + tests * messages.per_test + moved * messages.per_job
                out.append(report)
        elif events:
            self.now += timeout
        cost += self.messages.round_fixed + self.messages.round_per_worker * self.size
        cost *= self.scale
        self.now += cost
        self.coordinator_busy += cost
        return out

    def replace(self, worker: int) -> bool:
        """Simulated workers are never lost."""
        return False

    def close(self) -> None:
        """Nothing to stop."""


@attrs.frozen
class Outcome:
    """One simulated run."""

    workers: int
    makespan: float
    moves: int
    jobs_moved: int
    jobs: int
    rebuild_share: float
    cold_share: float
    idle_share: float
    coordinator_share: float
    paths: int


@contextlib.contextmanager
def step_lengths(step: float | None, short: float | None) -> Iterator[None]:
    """The coordinator's step lengths changed for a what-if (restored after)."""
    saved = coordinator_module.STEP_SECONDS, coordinator_module.SHORT_STEP_SECONDS
    try:
        if step is not None:
            coordinator_module.STEP_SECONDS = step
        if short is not None:
            coordinator_module.SHORT_STEP_SECONDS = short
        yield
    finally:
        coordinator_module.STEP_SECONDS, coordinator_module.SHORT_STEP_SECONDS = saved


def simulate(program: Program, model: Model, messages: MessageCosts, workers: int,
             variant: Variant, seed: int, jitter: float) -> Outcome:
    """One run of the real coordinator over ``workers`` simulated workers."""
    pool = SimulatedPool(workers, model, messages, variant, seed, jitter)
    balancer = LoadBalancer(variant.ratio, max_jobs=variant.max_jobs,
                            low_water=variant.low_water)
    coordinator = Coordinator(program, pool, hooks=Hooks(), limits=Limits(),
                              emit_all_errors=False, progress_interval=1e9, balancer=balancer)
    with step_lengths(variant.step, variant.short_step):
        result = coordinator.run()
    makespan = pool.now
    paths = result.paths.total
    if paths != model.tree.leaves:
        raise AssertionError(f"the simulation ended {paths} paths, the tree has "
                             f"{model.tree.leaves}")
    parallel = result.statistics.parallel
    assert parallel is not None
    capacity = workers * makespan
    busy = sum(w.busy for w in pool.workers)
    rebuilding = sum(w.rebuilding for w in pool.workers)
    cold = sum(w.cold_time for w in pool.workers)
    return Outcome(workers, makespan, parallel.balancing_moves, parallel.jobs_moved,
                   parallel.jobs, rebuilding / capacity, cold / capacity,
                   1.0 - busy / capacity, pool.coordinator_busy / makespan, paths)


# -- the run ----------------------------------------------------------------------------------


@attrs.frozen
class RecordedStatistics:
    """The figures of a recorded ``symex run`` that the calibration reads (its run.stats)."""

    instructions: int
    forks: int
    solver_queries: int
    solver_time: float
    solver_layers: dict[str, float]


@attrs.frozen
class RecordedPaths:
    """Paths of a recorded ``symex run``."""

    total: int


@attrs.frozen
class RecordedRun:
    """A ``symex run --record-tree`` output directory read back: what the calibration takes
    from a ``symex.Result`` (``statistics``, ``paths``)."""

    statistics: RecordedStatistics
    paths: RecordedPaths
    wall: float
    recorder: float
    """The recorder's own upkeep (run.stats's ``PTTime``)."""

    @classmethod
    def read(cls, out: Path) -> RecordedRun:
        """Read ``out``'s info file and run.stats (symex's own readers)."""
        info = read_info(out / "info")
        if "elapsed" not in info or "explored paths" not in info:
            raise RuntimeError(f"{out}: no 'elapsed' or 'explored paths' line in its info file "
                               "(a run that did not finish?)")
        stats = read_run_stats(out / "run.stats")
        last = stats.last
        return cls(RecordedStatistics(int(last["Instructions"]), int(last["Forks"]),
                                      int(last["NumQueries"]), last["SolverTime"],
                                      stats.solver_layers),
                   RecordedPaths(int(info["explored paths"])),
                   float(info["elapsed"].split()[0]), last["PTTime"])


def record(spec: Workload, work: Path) -> tuple[Program, Tree, float, float,
                                                symex.Result | RecordedRun]:
    """Explore ``spec`` to the end in one process, recording its tree (or read the tree of
    ``spec.recorded``)."""
    program = spec.program()
    if spec.recorded is not None:
        recorded = RecordedRun.read(spec.recorded)
        tree = Tree(spec.recorded / "tree.db")
        if tree.leaves != recorded.paths.total:
            raise RuntimeError(f"{spec.name}: {tree.leaves} leaves, {recorded.paths.total} "
                               "paths")
        return program, tree, recorded.wall, recorded.recorder, recorded
    out = work / f"tree-{abs(hash(spec.name))}.db"
    wall, result = _timed_explore(program, record_tree=out, max_time=spec.record_time,
                                  **spec.explore_options())
    if result.halted and not (spec.record_time and result.halted == TIME_LIMIT_REASON):
        raise RuntimeError(f"{spec.name}: the recording stopped early ({result.halted})")
    tree = Tree(out)
    if tree.leaves != result.paths.total:
        raise RuntimeError(f"{spec.name}: {tree.leaves} leaves, {result.paths.total} paths")
    memo = result.statistics.memo
    return program, tree, wall, memo.tree_time if memo is not None else 0.0, result


def print_table(name: str, model: Model, outcomes: list[Outcome]) -> None:
    """The scaling table of one program."""
    base = next(o for o in outcomes if o.workers == 1).makespan
    tree = model.tree
    print(f"\n### {name}: {tree.leaves:,} paths, {tree.size:,} nodes, serial work "
          f"{model.serial:.2f} s, costliest path {model.critical * 1e3:.1f} ms\n")
    print("| workers | makespan (s) | speed-up | efficiency | tree's bound | moves | "
          "jobs moved | rebuild share | cold-cache share | idle share | coordinator busy |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for o in outcomes:
        speed_up = base / o.makespan
        bound = model.serial / (o.workers * max(model.serial / o.workers, model.critical))
        mark = ""
        if o.workers == TARGET_WORKERS:
            mark = " (met)" if speed_up / o.workers >= TARGET_EFFICIENCY else " (missed)"
        print(f"| {o.workers} | {o.makespan:.3f} | {speed_up:.1f}x | "
              f"{speed_up / o.workers:.2f}{mark} | {bound:.2f} | {o.moves} | {o.jobs_moved} | "
              f"{100 * o.rebuild_share:.1f} % | {100 * o.cold_share:.1f} % | "
              f"{100 * o.idle_share:.1f} % | "
              f"{100 * o.coordinator_share:.0f} % |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small programs, fewer N")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jitter", type=float, default=0.1,
                        help="spread of each message's latency, +-fraction (default 0.1)")
    parser.add_argument("--latency-ms", type=float, default=None,
                        help="one-way message latency instead of the measured one")
    parser.add_argument("--large", action="store_true",
                        help="trees of 1-3 minutes of serial work (about 25 minutes in all)")
    parser.add_argument("--only", metavar="TEXT",
                        help="only the programs whose name holds TEXT (the what-if rows are "
                             "for the largest of them)")
    parser.add_argument("--coreutils", type=Path, metavar="DIR",
                        help="simulate the trees of ten coreutils tools (KLEE's arguments) "
                        "from DIR, a coreutils tree built by benchmarks/coreutils.py")
    parser.add_argument("--record-time", type=float, default=60.0, metavar="SECONDS",
                        help="with --coreutils: each tool's recording (default %(default)s s)")
    parser.add_argument("--trees", type=Path, metavar="DIR",
                        help="with --coreutils: take each tool's tree from DIR/TOOL-record, "
                        "a recording of benchmarks/coreutils_memo.py --results DIR, instead of "
                        "recording (the tools without one are left out)")
    parser.add_argument("--workers", type=int, nargs="*", default=None)
    parser.add_argument("--no-what-if", action="store_true", help="skip the what-if rows")
    parser.add_argument("--cold-window", type=float, default=COLD_WINDOW, metavar="SECONDS",
                        help="how long the real 4-worker run that measures the cold-cache "
                        "cost of a moved job explores (default %(default)s s; at most 1.5x "
                        "the recording's wall time, which is long enough to finish the tree: "
                        "a large value averages over the whole run, not its first jobs)")
    parser.add_argument("--validate", action="store_true",
                        help="also time real runs with 2 worker processes (small programs)")
    parser.add_argument("--save-calibration", metavar="JSON",
                        help="write the measured cost constants to this file")
    parser.add_argument("--calibration", metavar="JSON",
                        help="take the cost constants from this file instead of measuring "
                             "(the trees are recorded again: the same paths, with their own "
                             "timings)")
    options = parser.parse_args()
    counts = tuple(options.workers or (QUICK_WORKERS if options.quick else FULL_WORKERS))
    if 1 not in counts:
        counts = (1,) + counts
    if options.trees is not None and options.coreutils is None:
        parser.error("--trees needs --coreutils (the tools' builds)")
    specs = [spec for spec in programs(options.quick, options.large, options.coreutils,
                                       options.record_time, options.trees)
             if options.only is None or options.only in spec.name]
    if not specs:
        if options.only is None:
            parser.error(f"no TOOL-record directory with a tree.db in {options.trees} (run "
                         f"benchmarks/coreutils_memo.py --results {options.trees} first)")
        parser.error(f"no program's name holds {options.only!r}")
    began = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="symex-psim-"))
    try:
        print(f"load average at the start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
        print(f"coordinator: STEP_SECONDS {STEP_SECONDS}, SHORT_STEP_SECONDS "
              f"{SHORT_STEP_SECONDS}, WAIT_SECONDS {WAIT_SECONDS}, balance ratio "
              f"{DEFAULT_BALANCE_RATIO}, engine TIME_SLICE {TIME_SLICE} instructions")
        saved = json.loads(Path(options.calibration).read_text()) if options.calibration \
            else None
        instruction = saved["instruction"] if saved else measure_instruction_cost()
        recorded = []
        for spec in specs:
            program, tree, wall, recorder, serial = record(spec, work)
            if saved:
                costs = ProgramCosts(**saved["programs"][spec.name])
            else:
                costs = calibrate_program(program, spec, tree, wall, recorder, instruction,
                                          serial, options.cold_window)
            recorded.append((spec, program, Model(tree, costs)))
        if saved:
            messages = MessageCosts(**{**saved["messages"], "rounds_measured": tuple(
                tuple(r) for r in saved["messages"]["rounds_measured"])})
        else:
            messages = measure_messages(recorded[0][1], recorded[0][0])
        if options.save_calibration:
            Path(options.save_calibration).write_text(json.dumps({
                "instruction": instruction, "messages": attrs.asdict(messages),
                "programs": {spec.name: attrs.asdict(model.costs)
                             for spec, _, model in recorded}}, indent=1))
        if options.latency_ms is not None:
            messages = attrs.evolve(messages, one_way=options.latency_ms / 1e3)
        print("\n## Calibration (this machine, this run)\n")
        print(f"- c_instr: {instruction * 1e6:.3f} us per instruction (sort.c, concrete)")
        print(f"- messages: round trip of an empty order to a worker process "
              f"{messages.round_trip * 1e6:.0f} us (one way {messages.one_way * 1e6:.0f} us"
              f"{', overridden' if options.latency_ms is not None else ''}); coordinator per "
              f"report {messages.report * 1e6:.1f} us + {messages.per_test * 1e6:.1f} us per "
              f"test + {messages.per_job * 1e6:.1f} us per job moved; per loop round "
              f"{messages.round_fixed * 1e6:.1f} us + {messages.round_per_worker * 1e6:.3f} "
              f"us x N (measured: " + ", ".join(f"N={n}: {t * 1e6:.1f} us" for n, t in
                                                 messages.rounds_measured) + ")")
        print("\n| program | paths | nodes | recording wall (s) | recorder (s) | solver (s) "
              "| c_node (us) | rebuild sample: jobs, events, s | c_event (us) | replayed "
              "instruction (us) | c_job (us) "
              "| c_export (us) | cold sample: window s, jobs moved | cold per job: ms, "
              "core queries | chain queries per fork |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for spec, _, model in recorded:
            c = model.costs
            print(f"| {spec.name} | {model.tree.leaves:,} | {model.tree.size:,} | "
                  f"{c.wall:.2f} | {c.recorder:.2f} | {c.solver:.2f} | {c.node * 1e6:.0f} | "
                  f"{c.rebuild_jobs}, {c.rebuild_events}, {c.rebuild_seconds:.3f} | "
                  f"{c.event * 1e6:.1f} | "
                  f"{(c.replay_instruction or c.instruction) * 1e6:.3f} | "
                  f"{c.job_start * 1e6:.0f} | "
                  f"{c.job_export * 1e6:.0f} | {c.cold_window:.1f}, {c.cold_jobs} | "
                  f"{c.cold * 1e3:.1f}, {c.cold_queries:.1f} | {c.queries_per_fork:.2f} |")
        print(f"\n## Simulated scaling (seed {options.seed}, latency jitter "
              f"+-{100 * options.jitter:.0f} %)")
        plain = Variant("as measured")
        for spec, program, model in recorded:
            outcomes = [simulate(program, model, messages, n, plain, options.seed,
                                 options.jitter) for n in counts]
            print_table(spec.name, model, outcomes)
        if not options.no_what_if:
            spec, program, model = max(recorded, key=lambda r: r[2].serial)
            what_if(spec, program, model, messages, counts, options)
            combined_table(recorded, messages, options)
        if options.validate:
            validate(recorded, messages, options)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n(whole script: {time.perf_counter() - began:.0f} s)")


#: the changes that together remove what limits the efficiency (see what_if)
COMBINED = Variant("no cold-cache cost + free coordinator + steps 0.025 s / 0.005 s",
                   coordinator_scale=0.0, step=0.025, short_step=0.005, cold_scale=0.0)


def what_if_variants() -> list[Variant]:
    """One thing changed at a time, then a few together."""
    return [
        Variant("as measured"),
        Variant("free coordinator (its time per report and per round = 0)",
                coordinator_scale=0.0),
        Variant("free rebuild (c_job, c_event and replayed instructions = 0)",
                rebuild_scale=0.0),
        Variant("half the cold-cache cost", cold_scale=0.5),
        Variant("no cold-cache cost (caches that hold across jobs)", cold_scale=0.0),
        Variant("1 ms one-way latency (a cluster's network)", one_way=1e-3),
        Variant("steps 0.5 s / 0.1 s", step=0.5, short_step=0.1),
        Variant("steps 0.1 s / 0.02 s", step=0.1, short_step=0.02),
        Variant("steps 0.1 s / 0.01 s", step=0.1, short_step=0.01),
        Variant("steps 0.025 s / 0.005 s", step=0.025, short_step=0.005),
        Variant("balance ratio 2", ratio=2.0),
        Variant("low water 2 (a worker with 2 states counts as idle)", low_water=2),
        Variant("low water 4", low_water=4),
        Variant("rebuild from the deepest common ancestor (Cloud9)", shared_prefix=True),
        Variant("a give order answered after a short step of exploring (symex before "
                "commit 2244453)", explore_before_give=True),
        Variant("Cloud9's half the difference per move (no cap)", max_jobs=None),
        Variant("no cold-cache cost + steps 0.025 s / 0.005 s", cold_scale=0.0, step=0.025,
                short_step=0.005),
        COMBINED,
    ]


def what_if(spec: Workload, program: Program, model: Model, messages: MessageCosts,
            counts: Sequence[int], options: argparse.Namespace) -> None:
    """Rows with parts of the model changed, on the largest tree."""
    sizes = [n for n in (TARGET_WORKERS, 256) if n in counts] or [max(counts)]
    print(f"\n### What limits it: {spec.name}, parts of the model changed\n")
    header = " | ".join(f"{n} workers: efficiency (jobs moved, rebuild, cold, idle, "
                        f"coordinator busy)" for n in sizes)
    print(f"| variant | {header} |")
    print("|---|" + "---|" * len(sizes))
    for variant in what_if_variants():
        base = simulate(program, model, messages, 1, variant, options.seed, options.jitter)
        cells = []
        for n in sizes:
            o = simulate(program, model, messages, n, variant, options.seed, options.jitter)
            cells.append(f"{base.makespan / o.makespan / n:.2f} ({o.jobs_moved}, "
                         f"{100 * o.rebuild_share:.0f} %, {100 * o.cold_share:.0f} %, "
                         f"{100 * o.idle_share:.0f} %, "
                         f"{100 * o.coordinator_share:.0f} %)")
        print(f"| {variant.name} | " + " | ".join(cells) + " |")


def combined_table(recorded: list[tuple[Workload, Program, Model]], messages: MessageCosts,
                   options: argparse.Namespace) -> None:
    """Every program at the target size, as measured and with the combined changes."""
    print(f"\n### Every program at {TARGET_WORKERS} workers, with the combined changes\n")
    print("| program | serial work (s) | ideal makespan (s) | as measured: makespan, "
          "efficiency | combined: makespan, efficiency |")
    print("|---|---|---|---|---|")
    for spec, program, model in recorded:
        cells = []
        for variant in (Variant("as measured"), COMBINED):
            base = simulate(program, model, messages, 1, variant, options.seed,
                            options.jitter)
            o = simulate(program, model, messages, TARGET_WORKERS, variant, options.seed,
                         options.jitter)
            cells.append(f"{o.makespan:.3f} s, {base.makespan / o.makespan / o.workers:.2f}")
        ideal = max(model.serial / TARGET_WORKERS, model.critical)
        print(f"| {spec.name} | {model.serial:.2f} | {ideal:.3f} | {cells[0]} | {cells[1]} |")


#: one program timed alone and with 2 worker processes, in a fresh interpreter (a process
#: holding the recorded trees would make every forked worker's garbage collection slower)
_VALIDATE = """
import json, sys, time
import symex
source, flags, options = json.loads(sys.argv[1])
program = symex.compile(source, flags)
times = []
for workers in (1, 2):
    started = time.perf_counter()
    result = symex.explore(program, searcher="dfs", seed=0, workers=workers, **options)
    times.append((time.perf_counter() - started, result.paths.total))
print(json.dumps(times))
"""


def validate(recorded: list[tuple[Workload, Program, Model]], messages: MessageCosts,
             options: argparse.Namespace) -> None:
    """Real runs with 2 worker processes against the simulation's 2 workers (programs
    whose single run takes under 15 s)."""
    print("\n### Check against real runs: 2 worker processes on this machine\n")
    print("| program | 1 process (s) | 2 workers (s) | real speed-up | simulated speed-up |")
    print("|---|---|---|---|---|")
    for spec, program, model in recorded:
        if model.serial > 15 or spec.built:
            continue
        argument = json.dumps([str(spec.source), list(spec.flags), spec.explore_options()])
        out = subprocess.run([sys.executable, "-c", _VALIDATE, argument], check=True,
                             capture_output=True, text=True).stdout
        (one, alone), (two, split) = json.loads(out.strip().splitlines()[-1])
        if split != alone:
            raise AssertionError(f"{spec.name}: {split} paths with workers, {alone} without")
        plain = Variant("as measured")
        base = simulate(program, model, messages, 1, plain, options.seed, options.jitter)
        pair = simulate(program, model, messages, 2, plain, options.seed, options.jitter)
        print(f"| {spec.name} | {one:.2f} | {two:.2f} | {one / two:.2f}x | "
              f"{base.makespan / pair.makespan:.2f}x |")


if __name__ == "__main__":
    main()
