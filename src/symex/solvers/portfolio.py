"""``PortfolioSolver``: races several solver configurations on every query.

Each member is a :class:`~symex.solvers.configured.SessionSolver` of one configuration. The
first definite answer (sat with its model, or unsat) wins and the others are cancelled:

* the first member whose backend releases the GIL and can be interrupted (z3) runs in a
  thread of this process. Only one: translating a query is Python code, and two members
  translating under one GIL were slower together than either alone;
* every other member (cvc5, bitwuzla and pySMT hold the GIL, and further z3 members) runs in
  a worker process of the ``spawn`` context, which keeps its session, and so its incremental
  state, between queries. Queries reach workers in the format of :mod:`symex.solvers.wire`,
  and only the constraints a worker does not hold yet are sent (the length of the prefix it
  holds, then the rest).

A member that loses a race is left to finish its query (most losers are a millisecond behind,
and starting a worker costs about a quarter of a second of CPU); the answer is thrown away and
the member takes its next query after it. One still busy ``_LOSER_GRACE`` seconds after losing
is stopped: a thread with ``backend.interrupt()``, which costs it its incremental context (see
:meth:`SessionSolver.interrupt`), a worker by killing it and starting a new one in the
background. Races that end without a winner (time limit, Ctrl-C) stop every member at once.

A worker that is still starting sits races out, unless no member could take part otherwise.
Like every ``multiprocessing`` user, a program that builds a portfolio from a script must do
so under ``if __name__ == "__main__":`` (spawned workers import the main module).

Racing costs: on a two-core machine, a query of a millisecond takes two or three when two
members race it. So the member with the lowest recent time per answer runs alone for ``stagger``
seconds (5 ms by default) and the others join only if it has not answered by then; ``stagger=0`` races every
member from the start.

The time limit applies to the whole race: when it passes (or every member has given up),
:class:`symex.errors.SolverUnknown` is raised with each member's reason. No worker outlives the
solver: :meth:`PortfolioSolver.close`, garbage collection and interpreter exit all stop them.
"""

from __future__ import annotations

import itertools
import marshal
import multiprocessing
import multiprocessing.connection
import queue
import signal
import socket
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from symex.errors import SolverError, SolverUnknown
from symex.solvers.base import SolverBase, SolverStatistics
from symex.solvers.config import DEFAULT_STAGGER, SolverConfig, parse_config
from symex.solvers.wire import QueryDecoder, QueryEncoder

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

    from symex.expr import Array, Expr
    from symex.solvers.configured import SessionSolver

__all__ = ["MemberStatistics", "PortfolioSolver", "PortfolioStatistics"]

# Members report a timeout a little after the race started (they translate first); this much
# slack past the time limit lets their own reasons arrive instead of a generic one.
_DEADLINE_SLACK = 0.05
# How long a cancelled thread member may take to stop before it is left to finish on its own
# (it then sits races out until it is idle again).
_THREAD_STOP_WAIT = 2.0
_INTERRUPT_PERIOD = 0.005
# How long a worker process may go on with a query it lost before it is killed and restarted.
# Restarting costs about 0.25 s of CPU (the interpreter, symex and the solver package), so,
# like renting skis, a loser is given about that long to finish on its own.
_LOSER_GRACE = 0.25
# Weight of the newest answer time in a member's pace (an exponential moving average); the
# member with the lowest pace leads the next race.
_PACE_WEIGHT = 0.2
# A member that sits a race out has its pace multiplied by this, so one slow first answer
# (a cold start) cannot keep it out for good: it is tried again within a few hundred races.
_PACE_DECAY = 0.99
# How often the referee of an in-process leader looks at the race while races come in, and
# after how long without one it sleeps until the next.
_REFEREE_POLL = 0.002
_REFEREE_IDLE = 0.1

_CHECK = 0
_MODEL = 1

# Outcomes of one member on one query.
_SAT = "sat"
_UNSAT = "unsat"
_UNKNOWN = "unknown"
_READY = "ready"
_FAILED = "failed"

_Outcome = tuple[str, Any]


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


def _session_counters(solver: SessionSolver) -> tuple[int, int]:
    stats = solver.statistics
    return stats.resets, stats.cache_hits


@attrs.define
class PortfolioStatistics(SolverStatistics):
    """:class:`SolverStatistics` of the races, plus each member's own counters."""

    members: dict[str, MemberStatistics] = attrs.Factory(dict)
    """Per member, keyed by configuration string (``#2``... for repeated configurations)."""

    def as_dict(self) -> dict[str, float]:
        """The counters as a flat mapping: race counters, then ``member[CONFIG].COUNTER``."""
        counters = super().as_dict()
        for label, member in self.members.items():
            for name, value in member.as_dict().items():
                counters[f"member[{label}].{name}"] = value
        return counters


# -- worker process --------------------------------------------------------------------------


def _worker_main(config: SolverConfig, timeout: float | None, conn: Connection) -> None:
    """Body of a worker process: answer queries with one SessionSolver until the pipe closes."""
    # Ctrl-C reaches the whole process group; the parent decides what an interrupt means.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from symex.solvers.configured import SessionSolver

    try:
        solver = SessionSolver(config, timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - reported to the parent as the member's reason
        conn.send_bytes(marshal.dumps((0, _FAILED, f"{type(exc).__name__}: {exc}")))
        return
    conn.send_bytes(marshal.dumps((0, _READY, None)))
    decoder = QueryDecoder()
    last = _session_counters(solver)
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
            outcome: _Outcome = (_UNKNOWN, "lost track of the path condition after a bad message")
        else:
            outcome, held = _answer(solver, decoder, kind, (held or ())[:kept], data)
        # the session's counters travel with each answer, as the change since the last one
        now = _session_counters(solver)
        delta = (now[0] - last[0], now[1] - last[1])
        last = now
        try:
            conn.send_bytes(marshal.dumps((seq, *outcome, delta)))
        except OSError:
            break
    solver.close()


def _answer(
    solver: SessionSolver, decoder: QueryDecoder, kind: int, held: tuple[Expr, ...], data: bytes
) -> tuple[_Outcome, tuple[Expr, ...] | None]:
    """Answer one message: ``held`` is the prefix of the previous constraints the sender kept,
    ``data`` the new constraints and the question. Returns the outcome and the constraints
    the worker now holds (None when the message could not be decoded)."""
    try:
        fresh, exprs, arrays = decoder.decode(data)
    except Exception as exc:  # noqa: BLE001 - any failure is this member's unknown
        return (_UNKNOWN, f"{type(exc).__name__}: {exc}"), None
    constraints = held + fresh
    try:
        return _solve(solver, kind, constraints, exprs, arrays), constraints
    except Exception as exc:  # noqa: BLE001 - any failure is this member's unknown
        return (_UNKNOWN, f"{type(exc).__name__}: {exc}"), constraints


def _solve(
    solver: SessionSolver,
    kind: int,
    constraints: tuple[Expr, ...],
    exprs: Sequence[Expr],
    arrays: Sequence[Array],
) -> _Outcome:
    """One member's answer in the race protocol's terms (never raises SolverUnknown)."""
    try:
        if kind == _CHECK:
            sat = solver._check(constraints, exprs[0] if exprs else None)
            return (_SAT, None) if sat else (_UNSAT, None)
        model = solver._model(constraints, exprs, arrays)
    except SolverUnknown as exc:
        return _UNKNOWN, exc.reason
    if model is None:
        return _UNSAT, None
    return _SAT, model


# -- members ---------------------------------------------------------------------------------


class _ThreadMember:
    """A member answering in a thread of this process (its backend releases the GIL)."""

    __slots__ = ("label", "stats", "solver", "jobs", "results", "wake", "thread",
                 "outstanding", "started", "closed", "idle", "lost_at", "sent", "pace",
                 "answers")

    def __init__(
        self,
        label: str,
        stats: MemberStatistics,
        solver: SessionSolver,
        results: queue.SimpleQueue[tuple[_ThreadMember, int, _Outcome]],
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
            before = _session_counters(self.solver)
            try:
                outcome = _solve(self.solver, kind, constraints, exprs, arrays)
            except Exception as exc:  # noqa: BLE001 - any failure is this member's unknown
                outcome = (_UNKNOWN, f"{type(exc).__name__}: {exc}")
            after = _session_counters(self.solver)
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
        give_up = time.perf_counter() + _THREAD_STOP_WAIT
        # An interrupt that arrives before the backend started checking is lost, so it is
        # repeated until the thread is done.
        while self.busy and time.perf_counter() < give_up:
            self.interrupt()
            # wakes the moment a query is done: most losers stop within a millisecond
            self.idle.wait(_INTERRUPT_PERIOD)
            self.idle.clear()
            _drain_thread_results(self.results)

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
        self.thread.join(_THREAD_STOP_WAIT)
        if not self.thread.is_alive():
            self.solver.close()


def _note_answer(member: _ThreadMember | _ProcessMember) -> None:
    """Fold the time the member took for its oldest unanswered query into its pace."""
    if member.sent:
        _fold_pace(member, time.perf_counter() - member.sent.popleft())


def _fold_pace(member: _ThreadMember | _ProcessMember, seconds: float) -> None:
    """Update the member's pace with one answer time. The first answer of a member (or of a
    restarted worker) is a cold start -- imports, a first context -- and would keep it from
    leading for hundreds of races, so it is left out; the second sets the pace."""
    member.answers += 1
    if member.answers == 2:
        member.pace = seconds
    elif member.answers > 2:
        member.pace += _PACE_WEIGHT * (seconds - member.pace)


def _drain_thread_results(
    results: queue.SimpleQueue[tuple[_ThreadMember, int, _Outcome]],
) -> list[tuple[_ThreadMember, int, _Outcome]]:
    """Take every reported thread outcome, marking its member idle."""
    taken: list[tuple[_ThreadMember, int, _Outcome]] = []
    while True:
        try:
            item = results.get_nowait()
        except queue.Empty:
            return taken
        member, _, _ = item
        member.outstanding -= 1
        _note_answer(member)
        if not member.outstanding:
            member.lost_at = None
        member.stats.time += time.perf_counter() - member.started
        taken.append(item)


class _ProcessMember:
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
            target=_worker_main,
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
            _note_answer(self)
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
        with a lost query for longer than ``_LOSER_GRACE``."""
        while self.outstanding and self.conn is not None and self.conn.poll(0):
            self.receive()
        if self.lost_at is not None and time.perf_counter() - self.lost_at > _LOSER_GRACE:
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
            return (-1, _UNKNOWN, f"worker process died (exit code {exitcode})")
        seq, status, payload = message[:3]
        if seq > 0:
            self.outstanding -= 1
            _note_answer(self)
            if self.outstanding == 0:
                self.lost_at = None
            if status == _UNKNOWN:
                # the worker may not hold what was sent (a bad message): resend everything
                self.held = ()
        if len(message) > 3:
            resets, hits = message[3]
            self.stats.resets += resets
            self.stats.cache_hits += hits
        if status == _READY:
            self.ready = True
            self.failure = None
        elif status == _FAILED:
            # A member that cannot even start (missing package) is not restarted in a loop.
            self.failure = payload
            self.kill()
        return seq, status, payload


def _label_members(configs: Sequence[SolverConfig]) -> list[str]:
    labels: list[str] = []
    counts: dict[str, int] = {}
    for config in configs:
        text = str(config)
        counts[text] = counts.get(text, 0) + 1
        labels.append(text if counts[text] == 1 else f"{text}#{counts[text]}")
    return labels


def _runs_in_thread(config: SolverConfig) -> bool:
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


class _Members:
    """Everything that must be stopped when the portfolio goes away (owned by a finalizer)."""

    __slots__ = ("threads", "processes", "wake_reader", "wake_writer", "referee")

    def __init__(self) -> None:
        self.threads: list[_ThreadMember] = []
        self.processes: list[_ProcessMember] = []
        self.referee = _Referee()
        self.wake_reader, self.wake_writer = socket.socketpair()
        self.wake_reader.setblocking(False)
        # A wake-up only matters while someone waits; when nobody drains the reader, a full
        # buffer must drop the byte instead of blocking the sender.
        self.wake_writer.setblocking(False)

    def stop(self) -> None:
        self.referee.stop()
        for member in self.threads:
            member.stop()
        for worker in self.processes:
            worker.kill()
        self.wake_reader.close()
        self.wake_writer.close()


class _Referee:
    """Watches a race whose leader runs in the caller's thread (the cheapest place: handing a
    query to another thread and back cost a few hundred microseconds).

    The caller only writes a few fields per race: the referee's thread polls them every
    ``_REFEREE_POLL`` seconds while races come in, and sleeps when they stop. When a leader's
    head start ends, it hands the query to the other members (worker processes) and collects
    their answers; when one of them wins, or the time limit passes, it interrupts the leader
    until the caller's check returns. The caller waits for the referee only if it joined."""

    __slots__ = ("thread", "lock", "wakeup", "job", "join_at", "leader_done", "joined",
                 "sleeping", "last_round", "round_over", "winner", "interrupted", "closed")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.wakeup = threading.Condition(self.lock)
        self.job: tuple[Any, ...] | None = None
        self.join_at = 0.0
        self.leader_done = True
        self.joined = False
        """Whether this round's head start ended (the referee then waits on the workers)."""
        self.sleeping = False
        self.last_round = 0.0
        self.round_over = threading.Event()
        self.round_over.set()
        self.winner: tuple[_Outcome, MemberStatistics] | None = None
        self.interrupted = False
        """Whether this round interrupted the leader: its answer can then not be trusted (z3
        drops assertions it is asked to add while an interrupt is pending)."""
        self.closed = False
        self.thread: threading.Thread | None = None

    def start_round(self, portfolio_ref: weakref.ref[PortfolioSolver], leader: _ThreadMember,
                    join_at: float, seq: int, kind: int, query: tuple[Any, ...],
                    running_workers: list[_ProcessMember], reasons: dict[str, str],
                    deadline: float | None) -> None:
        """Let the referee's thread join the others at ``join_at`` unless finished first."""
        if self.thread is None:
            self.thread = threading.Thread(target=self._run, name="symex-portfolio-referee",
                                           daemon=True)
            self.thread.start()
        with self.lock:
            self.job = (portfolio_ref, leader, seq, kind, query, running_workers, reasons,
                        deadline)
            self.join_at = join_at if deadline is None else min(join_at, deadline)
            self.leader_done = False
            self.joined = False
            self.winner = None
            self.interrupted = False
            self.last_round = time.perf_counter()
            if self.sleeping:
                self.wakeup.notify_all()

    def finish(self, wake: socket.socket) -> tuple[_Outcome, MemberStatistics] | None:
        """The leader's check returned: end the round; a member's winning answer, if any."""
        with self.lock:
            self.leader_done = True
            self.job = None
            if not self.joined:
                return None
            self.wakeup.notify_all()
        try:
            wake.send(b"\0")  # breaks the referee out of waiting for the workers
        except OSError:
            pass
        self.round_over.wait()
        return self.winner

    def stop(self) -> None:
        """End the referee's thread."""
        with self.lock:
            self.closed = True
            self.leader_done = True
            self.wakeup.notify_all()

    def _run(self) -> None:
        while True:
            job = None
            with self.lock:
                if self.closed:
                    return
                now = time.perf_counter()
                if self.job is None:
                    if now - self.last_round > _REFEREE_IDLE:
                        self.sleeping = True
                        self.wakeup.wait()
                        self.sleeping = False
                        continue
                elif not self.leader_done and now >= self.join_at:
                    job, self.job = self.job, None
                    self.joined = True
                    self.round_over.clear()
            if job is None:
                time.sleep(_REFEREE_POLL)
                continue
            portfolio_ref, leader, seq, kind, query, running_workers, reasons, deadline = job
            try:
                portfolio = portfolio_ref()
                if portfolio is not None:
                    self._join(portfolio, leader, seq, kind, query, running_workers, reasons,
                               deadline)
                self._wait_out(leader, deadline)
            except BaseException:  # noqa: BLE001 - the caller must never wait forever
                pass
            finally:
                self.round_over.set()

    def _join(self, portfolio: PortfolioSolver, leader: _ThreadMember, seq: int, kind: int,
              query: tuple[Any, ...], running_workers: list[_ProcessMember],
              reasons: dict[str, str], deadline: float | None) -> None:
        workers = list(portfolio._members.processes)
        constraints, exprs, arrays = query
        portfolio._start_workers(seq, kind, constraints, exprs, arrays, workers, [],
                                 running_workers, reasons, deadline)
        outcome, winner = portfolio._collect(seq, [], running_workers, reasons, deadline,
                                             final=False, stop=lambda: self.leader_done)
        if outcome is not None and winner is not None:
            self.winner = (outcome, winner)

    def _wait_out(self, leader: _ThreadMember, deadline: float | None) -> None:
        """Once another member has won or the time limit has passed, interrupt the leader
        until its check returns."""
        with self.wakeup:
            while not self.leader_done:
                if self.winner is not None or (
                        deadline is not None and time.perf_counter() >= deadline):
                    self.interrupted = True
                    leader.interrupt()
                    self.wakeup.wait(_INTERRUPT_PERIOD)
                else:
                    # every other member gave up: the leader goes on until its time limit
                    self.wakeup.wait(None if deadline is None
                                     else max(deadline - time.perf_counter(), 0.0))


# -- the racer -------------------------------------------------------------------------------


class PortfolioSolver(SolverBase):
    """Races ``members`` on every query; the first definite answer wins.

    ``timeout`` (seconds, None: no limit) bounds each whole race and each member's checks.
    """

    statistics: PortfolioStatistics
    timeout: float | None
    """Seconds per query, or None."""
    configs: tuple[SolverConfig, ...]
    """The members' configurations, in order."""

    def __init__(
        self,
        members: Sequence[SolverConfig | str],
        timeout: float | None = None,
        stagger: float = DEFAULT_STAGGER,
    ) -> None:
        """Start every member: threads at once, worker processes in the background.

        ``stagger``: seconds the recently fastest member runs alone before the others join."""
        configs: list[SolverConfig] = []
        for text in members:
            parsed = parse_config(text)
            if not isinstance(parsed, SolverConfig):
                raise SolverError(f"a portfolio member must be one configuration, not {parsed}; "
                                  "list the configurations directly")
            configs.append(parsed)
        if not configs:
            raise SolverError("a portfolio needs at least one member configuration")
        if timeout is not None and not timeout > 0:
            raise SolverError(f"solver timeout must be positive seconds, got {timeout!r}")
        if not 0 <= stagger < float("inf"):
            raise SolverError(f"portfolio stagger must be seconds >= 0, got {stagger!r}")
        super().__init__()
        self.configs = tuple(configs)
        self.timeout = timeout
        self.stagger = stagger
        self.statistics = PortfolioStatistics()
        self._seq = itertools.count(1)
        self._encoder = QueryEncoder()
        self._results: queue.SimpleQueue[tuple[_ThreadMember, int, _Outcome]] = queue.SimpleQueue()
        self._members = _Members()
        self._by_stats: dict[int, _ThreadMember | _ProcessMember] = {}
        self._finalizer = weakref.finalize(self, self._members.stop)
        from symex.solvers.configured import SessionSolver

        context = multiprocessing.get_context("spawn")
        try:
            for label, config in zip(_label_members(configs), configs):
                stats = MemberStatistics(label)
                self.statistics.members[label] = stats
                member: _ThreadMember | _ProcessMember
                # One thread member at most: two translating under this process's GIL stall
                # each other (measured: two z3 threads were slower than either alone).
                if not self._members.threads and _runs_in_thread(config):
                    solver = SessionSolver(config, timeout=timeout)
                    member = _ThreadMember(
                        label, stats, solver, self._results, self._members.wake_writer)
                    self._members.threads.append(member)
                else:
                    member = _ProcessMember(label, stats, config, timeout, context)
                    self._members.processes.append(member)
                self._by_stats[id(stats)] = member
        except BaseException:
            self._finalizer()
            raise

    # -- primitives ----------------------------------------------------------------------

    def _check(self, constraints: tuple[Expr, ...], extra: Expr | None) -> bool:
        """Whether ``constraints`` and ``extra`` are satisfiable together (first answer)."""
        status, _ = self._race(_CHECK, constraints, () if extra is None else (extra,), ())
        return status == _SAT

    def _model(
        self, constraints: tuple[Expr, ...], exprs: Sequence[Expr], arrays: Sequence[Array]
    ) -> tuple[list[int], list[bytes]] | None:
        """Values of ``exprs`` and contents of ``arrays`` from the first member's model."""
        status, payload = self._race(_MODEL, constraints, tuple(exprs), tuple(arrays))
        if status == _UNSAT:
            return None
        values, contents = payload
        return list(values), list(contents)

    # -- the race ------------------------------------------------------------------------

    def _race(
        self,
        kind: int,
        constraints: tuple[Expr, ...],
        exprs: tuple[Expr, ...],
        arrays: tuple[Array, ...],
    ) -> _Outcome:
        if not self._finalizer.alive:
            raise SolverError("this solver was closed; create a new one with create_solver()")
        members = self._members
        stats = self.statistics
        stats.queries += 1
        started = time.perf_counter()
        deadline = None if self.timeout is None else started + self.timeout + _DEADLINE_SLACK
        if self.deadline is not None:
            # the run's time limit, on this race's clock
            left = self.time_left(None)
            assert left is not None
            deadline = started + left if deadline is None else min(deadline, started + left)
        seq = next(self._seq)
        reasons: dict[str, str] = {}
        running_threads: list[_ThreadMember] = []
        running_workers: list[_ProcessMember] = []
        query = (constraints, exprs, arrays)
        won = False
        try:
            _drain_thread_results(self._results)
            for member in members.threads:
                if member.busy and member.lost_at is not None \
                        and started - member.lost_at > _LOSER_GRACE:
                    member.cancel()
            leader = self._pick_leader() if self.stagger > 0 else None
            first = [leader] if leader is not None and self._can_start(leader) else None
            if isinstance(leader, _ThreadMember) and first is not None:
                outcome, winner = self._race_inline(leader, seq, kind, query, running_workers,
                                                    reasons, deadline)
            elif first is not None:
                self._launch(seq, kind, query, first, running_threads, running_workers,
                             reasons, deadline)
                join_at = time.perf_counter() + self.stagger
                until = join_at if deadline is None else min(join_at, deadline)
                outcome, winner = self._collect(seq, running_threads, running_workers, reasons,
                                                until, final=until == deadline)
                if outcome is None and until != deadline:
                    others: list[_ThreadMember | _ProcessMember] = [
                        m for m in members.threads if m is not leader]
                    others += [m for m in members.processes if m is not leader]
                    self._launch(seq, kind, query, others, running_threads, running_workers,
                                 reasons, deadline)
                    outcome, winner = self._collect(seq, running_threads, running_workers,
                                                    reasons, deadline)
            else:
                self._launch(seq, kind, query, [*members.threads, *members.processes],
                             running_threads, running_workers, reasons, deadline)
                outcome, winner = self._collect(seq, running_threads, running_workers, reasons,
                                                deadline)
            won = outcome is not None
            for sitting in self._by_stats.values():
                if sitting not in running_threads and sitting not in running_workers:
                    sitting.pace *= _PACE_DECAY
        finally:
            # Losers of a won race may finish within _LOSER_GRACE. Whatever else ended the race
            # (the deadline, every member giving up, an exception such as Ctrl-C), nothing may
            # keep running on behalf of it.
            now = time.perf_counter()
            for member in running_threads:
                if member.busy:
                    member.stats.cancellations += 1
                    if won:
                        member.lost_at = now
                    else:
                        member.cancel()
            for worker in running_workers:
                if worker.busy:
                    worker.stats.cancellations += 1
                    worker.stats.time += now - worker.started
                    if won:
                        worker.busy = False
                        if worker.lost_at is None:
                            worker.lost_at = now
                    else:
                        worker.restart()
            stats.time += time.perf_counter() - started
        if outcome is None:
            stats.unknown += 1
            for member in members.threads:
                reasons.setdefault(member.label, "no answer")
            for worker in members.processes:
                reasons.setdefault(worker.label, "no answer")
            raise SolverUnknown("; ".join(f"{label}: {why}" for label, why in reasons.items()))
        assert winner is not None  # an outcome comes from a member
        winner.wins += 1
        if outcome[0] == _SAT:
            stats.sat += 1
        else:
            stats.unsat += 1
        return outcome

    def _race_inline(
        self,
        leader: _ThreadMember,
        seq: int,
        kind: int,
        query: tuple[tuple[Expr, ...], tuple[Expr, ...], tuple[Array, ...]],
        running_workers: list[_ProcessMember],
        reasons: dict[str, str],
        deadline: float | None,
    ) -> tuple[_Outcome | None, MemberStatistics | None]:
        """The in-process leader answers in this thread; the referee brings in the workers
        when its head start ends and stops it if one of them wins."""
        referee = self._members.referee
        wake = self._members.wake_writer
        started = time.perf_counter()
        referee.start_round(weakref.ref(self), leader, started + self.stagger, seq, kind,
                            query, running_workers, reasons, deadline)
        leader.stats.queries += 1
        outcome: _Outcome = (_UNKNOWN, "no answer")
        try:
            outcome = _solve(leader.solver, kind, *query)
        except Exception as exc:  # noqa: BLE001 - any failure is this member's unknown
            outcome = (_UNKNOWN, f"{type(exc).__name__}: {exc}")
        finally:
            worker_win = referee.finish(wake)
            seconds = time.perf_counter() - started
            leader.stats.time += seconds
            _fold_pace(leader, seconds)
        if worker_win is not None:
            return worker_win
        if referee.interrupted:
            # past the time limit: whatever the leader said may rest on a dropped assertion
            outcome = (_UNKNOWN, f"no answer within {self.timeout} s")
        if outcome[0] != _UNKNOWN:
            return outcome, leader.stats
        reasons[leader.label] = str(outcome[1])
        if not running_workers:
            # the leader gave up within its head start: the others have not been asked yet
            self._launch(seq, kind, query, self._members.processes, [], running_workers,
                         reasons, deadline)
        return self._collect(seq, [], running_workers, reasons, deadline)

    def _pick_leader(self) -> _ThreadMember | _ProcessMember | None:
        """The member with the lowest recent pace that can start now (the first listed
        among equals, so a fresh portfolio is led by its first configuration)."""
        candidates = [m for m in self._by_stats.values() if self._can_start(m)]
        return min(candidates, key=lambda m: m.pace, default=None)

    @staticmethod
    def _can_start(member: _ThreadMember | _ProcessMember) -> bool:
        """Whether ``member`` could take a query right now (to run alone first)."""
        if isinstance(member, _ThreadMember):
            return not member.busy
        if member.ready and member.conn is not None:
            member.settle_lost()
        return member.ready and member.conn is not None and not member.outstanding

    def _launch(
        self,
        seq: int,
        kind: int,
        query: tuple[tuple[Expr, ...], tuple[Expr, ...], tuple[Array, ...]],
        launching: Sequence[_ThreadMember | _ProcessMember],
        running_threads: list[_ThreadMember],
        running_workers: list[_ProcessMember],
        reasons: dict[str, str],
        deadline: float | None,
    ) -> None:
        """Hand the query to ``launching`` (threads first: they start at once)."""
        for member in launching:
            if not isinstance(member, _ThreadMember):
                continue
            member.stats.queries += 1
            member.submit(seq, kind, query)
            running_threads.append(member)
        workers = [m for m in launching if isinstance(m, _ProcessMember)]
        self._start_workers(seq, kind, *query, workers, running_threads, running_workers,
                            reasons, deadline)

    def _start_workers(
        self,
        seq: int,
        kind: int,
        constraints: tuple[Expr, ...],
        exprs: tuple[Expr, ...],
        arrays: tuple[Array, ...],
        workers: list[_ProcessMember],
        running_threads: list[_ThreadMember],
        running_workers: list[_ProcessMember],
        reasons: dict[str, str],
        deadline: float | None,
    ) -> None:
        if not workers:
            return
        for worker in workers:
            worker.catch_up()
        if not running_threads and not running_workers and not any(w.ready for w in workers):
            # Nobody else could answer: wait for the first worker to come up.
            self._wait_ready(deadline)
        for worker in workers:
            if worker.failure is not None:
                reasons[worker.label] = f"cannot start: {worker.failure}"
                continue
            if not worker.ready:
                reasons[worker.label] = "worker process still starting"
                continue
            worker.stats.queries += 1
            try:
                worker.send(seq, kind, constraints, self._encoder, exprs, arrays)
            except OSError:
                reasons[worker.label] = "worker process died"
                worker.restart()
                continue
            worker.busy = True
            worker.started = time.perf_counter()
            running_workers.append(worker)

    def _wait_ready(self, deadline: float | None) -> None:
        workers = self._members.processes
        while True:
            pending = [w for w in workers if w.conn is not None and not w.ready]
            if not pending or any(w.ready for w in workers):
                return
            remaining = None if deadline is None else deadline - time.perf_counter()
            if remaining is not None and remaining <= 0:
                return
            for conn in multiprocessing.connection.wait(
                    [w.conn for w in pending if w.conn is not None], remaining):
                for worker in pending:
                    if worker.conn is conn:
                        worker.receive()

    def _collect(
        self,
        seq: int,
        running_threads: list[_ThreadMember],
        running_workers: list[_ProcessMember],
        reasons: dict[str, str],
        deadline: float | None,
        final: bool = True,
        stop: Callable[[], bool] | None = None,
    ) -> tuple[_Outcome | None, MemberStatistics | None]:
        """Wait for the first definite answer; None when everybody gave up or ``deadline``
        passed (which, unless ``final``, is only the end of the leader's head start)."""
        wake = self._members.wake_reader
        while True:
            for member, got_seq, (status, payload) in _drain_thread_results(self._results):
                if got_seq != seq:
                    continue
                if status == _UNKNOWN:
                    reasons[member.label] = payload
                else:
                    return (status, payload), member.stats
            for worker in running_workers:
                if worker.busy and worker.conn is not None and worker.conn.poll(0):
                    got_seq, status, payload = worker.receive()
                    if got_seq not in (seq, -1):
                        continue
                    worker.stats.time += time.perf_counter() - worker.started
                    worker.busy = False
                    if status == _UNKNOWN:
                        reasons[worker.label] = payload
                    else:
                        return (status, payload), worker.stats
            waiting = [w.conn for w in running_workers if w.busy and w.conn is not None]
            if not waiting and not any(m.busy for m in running_threads):
                return None, None
            if stop is not None and stop():
                return None, None
            remaining = None if deadline is None else deadline - time.perf_counter()
            if remaining is not None and remaining <= 0:
                if not final:
                    return None, None
                for member in running_threads:
                    if member.busy:
                        reasons[member.label] = f"no answer within {self.timeout} s"
                for worker in running_workers:
                    if worker.busy:
                        reasons[worker.label] = f"no answer within {self.timeout} s"
                return None, None
            ready = multiprocessing.connection.wait([wake, *waiting], remaining)
            if wake in ready:
                try:
                    wake.recv(4096)
                except BlockingIOError:
                    pass

    # -- control -------------------------------------------------------------------------

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until every member can take queries at once (worker processes started, losers
        of earlier races done or stopped); False if ``timeout`` seconds
        passed first or a worker could not start (its reason then shows in a race's
        SolverUnknown). Races do not need this: it is for measurements and tests that want
        every member to take part from the first query."""
        deadline = None if timeout is None else time.perf_counter() + timeout
        # thread members finishing a lost query: waited for until their grace ends
        for member in self._members.threads:
            while member.busy:
                _drain_thread_results(self._results)
                if not member.busy:
                    break
                lost = member.lost_at if member.lost_at is not None else time.perf_counter()
                if time.perf_counter() - lost > _LOSER_GRACE:
                    member.cancel()
                    break
                member.idle.wait(_INTERRUPT_PERIOD)
                member.idle.clear()
        workers = self._members.processes
        while True:
            for worker in workers:
                worker.catch_up()
            if any(w.failure is not None for w in workers):
                return False
            pending = [w for w in workers
                       if (not w.ready or w.outstanding) and w.conn is not None]
            if not pending:
                return True
            remaining = None if deadline is None else deadline - time.perf_counter()
            if remaining is not None and remaining <= 0:
                return False
            # a worker finishing a lost query is waited for until its grace ends
            if any(w.lost_at is not None for w in pending):
                remaining = _LOSER_GRACE if remaining is None else min(remaining, _LOSER_GRACE)
            multiprocessing.connection.wait([w.conn for w in pending if w.conn is not None],
                                            remaining)

    def close(self) -> None:
        """Stop every member thread and kill every worker process."""
        self._finalizer()

    def __repr__(self) -> str:
        """Name the members."""
        members = ", ".join(str(c) for c in self.configs)
        return f"PortfolioSolver([{members}], timeout={self.timeout!r})"
