"""The members of a portfolio race (:mod:`symex.solvers.portfolio`): one configuration's
session in a thread of this process (:class:`ThreadMember`, the first member whose backend
releases the GIL and can be interrupted) or in a spawned worker process (:class:`ProcessMember`,
which keeps its session between queries and is sent only the constraints it does not hold),
their counters, and the race's timing constants."""

from __future__ import annotations

import marshal
import multiprocessing
import multiprocessing.connection
import queue
import signal
import socket
import threading
import time
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from symex.errors import SolverUnknown
from symex.solvers.config import SolverConfig
from symex.solvers.wire import QueryDecoder, QueryEncoder

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

    from symex.expr import Array, Expr
    from symex.solvers.configured import SessionSolver

__all__ = ["MemberStatistics", "ProcessMember", "ThreadMember"]


# Members report a timeout a little after the race started (they translate first); this much
# slack past the time limit lets their own reasons arrive instead of a generic one.
DEADLINE_SLACK = 0.05
# How long a cancelled thread member may take to stop before it is left to finish on its own
# (it then sits races out until it is idle again).
THREAD_STOP_WAIT = 2.0
INTERRUPT_PERIOD = 0.005
# How long a worker process may go on with a query it lost before it is killed and restarted.
# Restarting costs about 0.25 s of CPU (the interpreter, symex and the solver package), so,
# like renting skis, a loser is given about that long to finish on its own.
LOSER_GRACE = 0.25
# Weight of the newest answer time in a member's pace (an exponential moving average); the
# member with the lowest pace leads the next race.
PACE_WEIGHT = 0.2
# A member that sits a race out has its pace multiplied by this, so one slow first answer
# (a cold start) cannot keep it out for good: it is tried again within a few hundred races.
PACE_DECAY = 0.99
# How often the referee of an in-process leader looks at the race while races come in, and
# after how long without one it sleeps until the next.
REFEREE_POLL = 0.002
REFEREE_IDLE = 0.1

CHECK = 0
MODEL = 1

# Outcomes of one member on one query.
SAT = "sat"
UNSAT = "unsat"
UNKNOWN = "unknown"
READY = "ready"
FAILED = "failed"

Outcome = tuple[str, Any]


@attrs.define
class MemberStatistics:
    """What one member of a portfolio did."""

    config: str
    """The member's configuration string."""
    queries: int = 0
    """Races the member took part in."""
    wins: int = 0
    """Races the member answered first (definitely)."""
    time: float = 0.0
    """Seconds from handing the member a query to its answer or cancellation."""
    cancellations: int = 0
    """Races the member was still running when another member won or time ran out."""
    restarts: int = 0
    """Worker processes started again after being killed or dying (process members only)."""
    resets: int = 0
    """Resets of the member's solver session (fresh contexts, assumption thresholds)."""
    cache_hits: int = 0
    """Terms the member's session reused instead of translating again."""

    def as_dict(self) -> dict[str, float]:
        """The counters as a plain mapping."""
        return {
            "queries": self.queries,
            "wins": self.wins,
            "time": self.time,
            "cancellations": self.cancellations,
            "restarts": self.restarts,
            "resets": self.resets,
            "cache_hits": self.cache_hits,
        }


def session_counters(solver: SessionSolver) -> tuple[int, int]:
    stats = solver.statistics
    return stats.resets, stats.cache_hits


# -- worker process --------------------------------------------------------------------------


def worker_main(config: SolverConfig, timeout: float | None, conn: Connection) -> None:
    """Body of a worker process: answer queries with one SessionSolver until the pipe closes."""
    # Ctrl-C reaches the whole process group; the parent decides what an interrupt means.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from symex.solvers.configured import SessionSolver

    try:
        solver = SessionSolver(config, timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - reported to the parent as the member's reason
        conn.send_bytes(marshal.dumps((0, FAILED, f"{type(exc).__name__}: {exc}")))
        return
    conn.send_bytes(marshal.dumps((0, READY, None)))
    decoder = QueryDecoder()
    last = session_counters(solver)
    # None after a message could not be decoded: the sender's idea of what this worker holds
    # is then wrong, so only a message that resends everything (kept == 0) is answered.
    held: tuple[Expr, ...] | None = ()
    while True:
        try:
            message = conn.recv_bytes()
        except (EOFError, OSError):
            break
        seq, kind, kept, data = marshal.loads(message)
        if held is None and kept:
            outcome: Outcome = (UNKNOWN, "lost track of the path condition after a bad message")
        else:
            outcome, held = answer_query(solver, decoder, kind, (held or ())[:kept], data)
        # the session's counters travel with each answer, as the change since the last one
        now = session_counters(solver)
        delta = (now[0] - last[0], now[1] - last[1])
        last = now
        try:
            conn.send_bytes(marshal.dumps((seq, *outcome, delta)))
        except OSError:
            break
    solver.close()


def answer_query(
    solver: SessionSolver, decoder: QueryDecoder, kind: int, held: tuple[Expr, ...], data: bytes
) -> tuple[Outcome, tuple[Expr, ...] | None]:
    """Answer one message: ``held`` is the prefix of the previous constraints the sender kept,
    ``data`` the new constraints and the question. Returns the outcome and the constraints
    the worker now holds (None when the message could not be decoded)."""
    try:
        fresh, exprs, arrays = decoder.decode(data)
    except Exception as exc:  # noqa: BLE001 - any failure is this member's unknown
        return (UNKNOWN, f"{type(exc).__name__}: {exc}"), None
    constraints = held + fresh
    try:
        return solve_query(solver, kind, constraints, exprs, arrays), constraints
    except Exception as exc:  # noqa: BLE001 - any failure is this member's unknown
        return (UNKNOWN, f"{type(exc).__name__}: {exc}"), constraints


def solve_query(
    solver: SessionSolver,
    kind: int,
    constraints: tuple[Expr, ...],
    exprs: Sequence[Expr],
    arrays: Sequence[Array],
) -> Outcome:
    """One member's answer in the race protocol's terms (never raises SolverUnknown)."""
    try:
        if kind == CHECK:
            sat = solver._check(constraints, exprs[0] if exprs else None)
            return (SAT, None) if sat else (UNSAT, None)
        model = solver._model(constraints, exprs, arrays)
    except SolverUnknown as exc:
        return UNKNOWN, exc.reason
    if model is None:
        return UNSAT, None
    return SAT, model


# -- members ---------------------------------------------------------------------------------


class ThreadMember:
    """A member answering in a thread of this process (its backend releases the GIL)."""

    __slots__ = ("label", "stats", "solver", "jobs", "results", "wake", "thread",
                 "outstanding", "started", "closed", "idle", "lost_at", "sent", "pace",
                 "answers")

    def __init__(
        self,
        label: str,
        stats: MemberStatistics,
        solver: SessionSolver,
        results: queue.SimpleQueue[tuple[ThreadMember, int, Outcome]],
        wake: socket.socket,
    ) -> None:
        self.label = label
        self.stats = stats
        self.solver = solver
        self.jobs: queue.SimpleQueue[tuple[int, int, tuple[Any, ...]] | None] = queue.SimpleQueue()
        self.results = results
        self.wake = wake
        self.outstanding = 0
        """Queries handed to the thread and not answered yet (lost ones included)."""
        self.sent: deque[float] = deque()
        """When each unanswered query was handed over, oldest first."""
        self.pace = 0.0
        """Recent seconds per answer (moving average)."""
        self.answers = 0
        """Answers folded into the pace (the first is a cold start and left out)."""
        self.started = 0.0
        self.closed = False
        self.idle = threading.Event()
        self.idle.set()
        self.lost_at: float | None = None
        """When the member lost a race it is still working on, or None."""
        # The thread holds this member, never the portfolio, so the portfolio can be collected.
        self.thread = threading.Thread(target=self._run, name=f"symex-portfolio-{label}", daemon=True)
        self.thread.start()

    @property
    def busy(self) -> bool:
        """Whether the thread has a query to finish (it takes them in order)."""
        return self.outstanding > 0

    def submit(self, seq: int, kind: int, query: tuple[Any, ...]) -> None:
        """Queue a query: a member still finishing a lost one takes it next."""
        self.outstanding += 1
        self.started = time.perf_counter()
        self.sent.append(self.started)
        self.jobs.put((seq, kind, query))

    def _run(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            seq, kind, (constraints, exprs, arrays) = job
            before = session_counters(self.solver)
            try:
                outcome = solve_query(self.solver, kind, constraints, exprs, arrays)
            except Exception as exc:  # noqa: BLE001 - any failure is this member's unknown
                outcome = (UNKNOWN, f"{type(exc).__name__}: {exc}")
            after = session_counters(self.solver)
            self.stats.resets += after[0] - before[0]
            self.stats.cache_hits += after[1] - before[1]
            self.results.put((self, seq, outcome))
            self.idle.set()
            try:
                self.wake.send(b"\0")
            except OSError:
                pass

    def cancel(self) -> None:
        """Interrupt the running check until the thread reports back (or give up waiting)."""
        give_up = time.perf_counter() + THREAD_STOP_WAIT
        # An interrupt that arrives before the backend started checking is lost, so it is
        # repeated until the thread is done.
        while self.busy and time.perf_counter() < give_up:
            self.interrupt()
            # wakes the moment a query is done: most losers stop within a millisecond
            self.idle.wait(INTERRUPT_PERIOD)
            self.idle.clear()
            drain_thread_results(self.results)

    def interrupt(self) -> None:
        try:
            self.solver.interrupt()
        except Exception:  # noqa: BLE001 - best effort: z3 can report the checking thread's
            # own pending error ("push canceled") to the interrupting thread; the check still
            # stops or finishes, and cancel() keeps waiting for that.
            pass

    def stop(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.busy:
            self.interrupt()
        self.jobs.put(None)
        self.thread.join(THREAD_STOP_WAIT)
        if not self.thread.is_alive():
            self.solver.close()


def note_answer(member: ThreadMember | ProcessMember) -> None:
    """Fold the time the member took for its oldest unanswered query into its pace."""
    if member.sent:
        fold_pace(member, time.perf_counter() - member.sent.popleft())


def fold_pace(member: ThreadMember | ProcessMember, seconds: float) -> None:
    """Update the member's pace with one answer time. The first answer of a member (or of a
    restarted worker) is a cold start -- imports, a first context -- and would keep it from
    leading for hundreds of races, so it is left out; the second sets the pace."""
    member.answers += 1
    if member.answers == 2:
        member.pace = seconds
    elif member.answers > 2:
        member.pace += PACE_WEIGHT * (seconds - member.pace)


def drain_thread_results(
    results: queue.SimpleQueue[tuple[ThreadMember, int, Outcome]],
) -> list[tuple[ThreadMember, int, Outcome]]:
    """Take every reported thread outcome, marking its member idle."""
    taken: list[tuple[ThreadMember, int, Outcome]] = []
    while True:
        try:
            item = results.get_nowait()
        except queue.Empty:
            return taken
        member, _, _ = item
        member.outstanding -= 1
        note_answer(member)
        if not member.outstanding:
            member.lost_at = None
        member.stats.time += time.perf_counter() - member.started
        taken.append(item)


class ProcessMember:
    """A member answering in a worker process, restarted whenever it is killed."""

    __slots__ = ("label", "stats", "config", "timeout", "context", "process", "conn", "ready",
                 "busy", "started", "failure", "outstanding", "lost_at", "held", "sent",
                 "pace", "answers")

    def __init__(
        self,
        label: str,
        stats: MemberStatistics,
        config: SolverConfig,
        timeout: float | None,
        context: multiprocessing.context.SpawnContext,
    ) -> None:
        self.label = label
        self.stats = stats
        self.config = config
        self.timeout = timeout
        self.context = context
        self.process: BaseProcess | None = None
        self.conn: Connection | None = None
        self.ready = False
        self.busy = False
        self.started = 0.0
        self.failure: str | None = None
        self.outstanding = 0
        """Queries sent and not answered yet (lost ones included)."""
        self.lost_at: float | None = None
        """When the worker lost a race it is still working on, or None."""
        self.held: tuple[Expr, ...] = ()
        """The constraints of the last query sent: the worker holds them too."""
        self.sent: deque[float] = deque()
        """When each unanswered query was sent, oldest first."""
        self.pace = 0.0
        """Recent seconds per answer (moving average)."""
        self.answers = 0
        """Answers folded into the pace (the first is a cold start and left out)."""
        self.start()

    def start(self) -> None:
        receive, send = self.context.Pipe(duplex=True)
        process = self.context.Process(
            target=worker_main,
            args=(self.config, self.timeout, send),
            name=f"symex-portfolio-{self.label}",
            daemon=True,
        )
        process.start()
        send.close()
        self.process, self.conn = process, receive
        self.ready = False
        self.busy = False
        self.outstanding = 0
        self.lost_at = None
        self.held = ()
        # a killed worker's unanswered queries count as answered now (a lower bound); the
        # new process starts cold again
        while self.sent:
            note_answer(self)
        self.answers = 0

    def kill(self) -> None:
        process, conn = self.process, self.conn
        self.process = self.conn = None
        self.ready = self.busy = False
        if process is not None:
            process.kill()
            process.join()
            process.close()
        if conn is not None:
            conn.close()

    def restart(self) -> None:
        self.kill()
        self.stats.restarts += 1
        self.start()

    def send(self, seq: int, kind: int, constraints: tuple[Expr, ...], encoder: QueryEncoder,
             exprs: tuple[Expr, ...], arrays: tuple[Array, ...]) -> None:
        """Hand the worker a query: the length of the constraint prefix it already holds,
        then the rest (raises OSError when the worker is gone)."""
        held = self.held
        kept = 0
        limit = min(len(held), len(constraints))
        while kept < limit and held[kept] is constraints[kept]:
            kept += 1
        data = encoder.encode(constraints[kept:], exprs, arrays)
        assert self.conn is not None
        self.conn.send_bytes(marshal.dumps((seq, kind, kept, data)))
        self.held = constraints
        self.outstanding += 1
        self.sent.append(time.perf_counter())

    def catch_up(self) -> None:
        """Before a race: start a worker that is gone (unless it cannot start), read the
        start-up message it already sent, and settle lost queries."""
        if self.process is None and self.failure is None:
            self.restart()
        while not self.ready and self.conn is not None and self.conn.poll(0):
            self.receive()
        if self.ready:
            self.settle_lost()

    def settle_lost(self) -> None:
        """Take the answers to lost queries that arrived; restart a worker that has gone on
        with a lost query for longer than ``LOSER_GRACE``."""
        while self.outstanding and self.conn is not None and self.conn.poll(0):
            self.receive()
        if self.lost_at is not None and time.perf_counter() - self.lost_at > LOSER_GRACE:
            self.restart()

    def receive(self) -> tuple[int, str, Any]:
        """The worker's next message ``(seq, status, payload)``; when the worker died, an
        UNKNOWN outcome with sequence number -1 (and the worker is restarted)."""
        assert self.conn is not None
        try:
            message = marshal.loads(self.conn.recv_bytes())
        except (EOFError, OSError):
            exitcode = self.process.exitcode if self.process is not None else None
            self.restart()
            return (-1, UNKNOWN, f"worker process died (exit code {exitcode})")
        seq, status, payload = message[:3]
        if seq > 0:
            self.outstanding -= 1
            note_answer(self)
            if self.outstanding == 0:
                self.lost_at = None
            if status == UNKNOWN:
                # the worker may not hold what was sent (a bad message): resend everything
                self.held = ()
        if len(message) > 3:
            resets, hits = message[3]
            self.stats.resets += resets
            self.stats.cache_hits += hits
        if status == READY:
            self.ready = True
            self.failure = None
        elif status == FAILED:
            # A member that cannot even start (missing package) is not restarted in a loop.
            self.failure = payload
            self.kill()
        return seq, status, payload


def label_members(configs: Sequence[SolverConfig]) -> list[str]:
    labels: list[str] = []
    counts: dict[str, int] = {}
    for config in configs:
        text = str(config)
        counts[text] = counts.get(text, 0) + 1
        labels.append(text if counts[text] == 1 else f"{text}#{counts[text]}")
    return labels


def runs_in_thread(config: SolverConfig) -> bool:
    """True when the member's backend releases the GIL and can be interrupted (a thread)."""
    import importlib

    from symex.solvers.backends import BACKENDS

    entry = BACKENDS.get(config.backend.partition("-")[0])
    if entry is None:
        return False
    try:
        cls = getattr(importlib.import_module(entry[0]), entry[1])
    except (ImportError, AttributeError):
        # The worker will report the missing package as this member's reason.
        return False
    return bool(getattr(cls, "releases_gil", False) and getattr(cls, "can_interrupt", False))
