"""The referee of a portfolio race whose leader runs in the caller's thread: it lets the
other members join when the leader's head start ends and interrupts the leader once another
member has won (:mod:`symex.solvers.portfolio`). It works on the race through
:class:`Race`, what it asks of the portfolio."""

from __future__ import annotations

import socket
import threading
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from symex.solvers.portfolio_members import (
    INTERRUPT_PERIOD,
    REFEREE_IDLE,
    REFEREE_POLL,
    MemberStatistics,
    Outcome,
    ProcessMember,
    ThreadMember,
)

if TYPE_CHECKING:

    from symex.expr import Array, Expr

__all__ = ["Members", "Race", "Referee"]


class Race(Protocol):
    """What the referee asks of a portfolio (:class:`~symex.solvers.portfolio.PortfolioSolver`)."""

    @property
    def members(self) -> Members:
        """The race's members."""
        ...

    def start_workers(self, seq: int, kind: int, constraints: tuple[Expr, ...],
                      exprs: tuple[Expr, ...], arrays: tuple[Array, ...],
                      workers: list[ProcessMember], running_threads: list[ThreadMember],
                      running_workers: list[ProcessMember], reasons: dict[str, str],
                      deadline: float | None) -> None:
        """Hand the query to ``workers``."""
        ...

    def collect(self, seq: int, running_threads: list[ThreadMember],
                running_workers: list[ProcessMember], reasons: dict[str, str],
                deadline: float | None, *, final: bool,
                stop: Callable[[], bool] | None = None,
                ) -> tuple[Outcome | None, MemberStatistics | None]:
        """Wait for the members' answers: the winning outcome and its member, if any."""
        ...


class Referee:
    """Watches a race whose leader runs in the caller's thread (the cheapest place: handing a
    query to another thread and back cost a few hundred microseconds).

    The caller only writes a few fields per race: the referee's thread polls them every
    ``REFEREE_POLL`` seconds while races come in, and sleeps when they stop. When a leader's
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
        self.winner: tuple[Outcome, MemberStatistics] | None = None
        self.interrupted = False
        """Whether this round interrupted the leader: its answer can then not be trusted (z3
        drops assertions it is asked to add while an interrupt is pending)."""
        self.closed = False
        self.thread: threading.Thread | None = None

    def start_round(self, portfolio_ref: weakref.ref[Race], leader: ThreadMember,
                    join_at: float, seq: int, kind: int, query: tuple[Any, ...],
                    running_workers: list[ProcessMember], reasons: dict[str, str],
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

    def finish(self, wake: socket.socket) -> tuple[Outcome, MemberStatistics] | None:
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
                    if now - self.last_round > REFEREE_IDLE:
                        self.sleeping = True
                        self.wakeup.wait()
                        self.sleeping = False
                        continue
                elif not self.leader_done and now >= self.join_at:
                    job, self.job = self.job, None
                    self.joined = True
                    self.round_over.clear()
            if job is None:
                time.sleep(REFEREE_POLL)
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

    def _join(self, portfolio: Race, leader: ThreadMember, seq: int, kind: int,
              query: tuple[Any, ...], running_workers: list[ProcessMember],
              reasons: dict[str, str], deadline: float | None) -> None:
        workers = list(portfolio.members.processes)
        constraints, exprs, arrays = query
        portfolio.start_workers(seq, kind, constraints, exprs, arrays, workers, [],
                                 running_workers, reasons, deadline)
        outcome, winner = portfolio.collect(seq, [], running_workers, reasons, deadline,
                                             final=False, stop=lambda: self.leader_done)
        if outcome is not None and winner is not None:
            self.winner = (outcome, winner)

    def _wait_out(self, leader: ThreadMember, deadline: float | None) -> None:
        """Once another member has won or the time limit has passed, interrupt the leader
        until its check returns."""
        with self.wakeup:
            while not self.leader_done:
                if self.winner is not None or (
                        deadline is not None and time.perf_counter() >= deadline):
                    self.interrupted = True
                    leader.interrupt()
                    self.wakeup.wait(INTERRUPT_PERIOD)
                else:
                    # every other member gave up: the leader goes on until its time limit
                    self.wakeup.wait(None if deadline is None
                                     else max(deadline - time.perf_counter(), 0.0))


class Members:
    """Everything that must be stopped when the portfolio goes away (owned by a finalizer)."""

    __slots__ = ("threads", "processes", "wake_reader", "wake_writer", "referee")

    def __init__(self) -> None:
        self.threads: list[ThreadMember] = []
        self.processes: list[ProcessMember] = []
        self.referee = Referee()
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
