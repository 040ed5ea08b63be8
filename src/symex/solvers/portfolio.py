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
import multiprocessing
import multiprocessing.connection
import queue
import time
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import attrs

from symex.errors import SolverError, SolverUnknown
from symex.solvers.base import SolverBase, SolverStatistics
from symex.solvers.config import DEFAULT_STAGGER, SolverConfig, parse_config
from symex.solvers.portfolio_members import (
    CHECK,
    DEADLINE_SLACK,
    INTERRUPT_PERIOD,
    LOSER_GRACE,
    MODEL,
    PACE_DECAY,
    SAT,
    UNKNOWN,
    UNSAT,
    MemberStatistics,
    Outcome,
    ProcessMember,
    ThreadMember,
    drain_thread_results,
    fold_pace,
    label_members,
    runs_in_thread,
    solve_query,
)
from symex.solvers.portfolio_referee import Members
from symex.solvers.wire import QueryEncoder

if TYPE_CHECKING:

    from symex.expr import Array, Expr

__all__ = ["MemberStatistics", "PortfolioSolver", "PortfolioStatistics"]

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
        self._results: queue.SimpleQueue[tuple[ThreadMember, int, Outcome]] = queue.SimpleQueue()
        self.members = Members()
        self._by_stats: dict[int, ThreadMember | ProcessMember] = {}
        self._finalizer = weakref.finalize(self, self.members.stop)
        from symex.solvers.configured import SessionSolver

        context = multiprocessing.get_context("spawn")
        try:
            for label, config in zip(label_members(configs), configs):
                stats = MemberStatistics(label)
                self.statistics.members[label] = stats
                member: ThreadMember | ProcessMember
                # One thread member at most: two translating under this process's GIL stall
                # each other (measured: two z3 threads were slower than either alone).
                if not self.members.threads and runs_in_thread(config):
                    solver = SessionSolver(config, timeout=timeout)
                    member = ThreadMember(
                        label, stats, solver, self._results, self.members.wake_writer)
                    self.members.threads.append(member)
                else:
                    member = ProcessMember(label, stats, config, timeout, context)
                    self.members.processes.append(member)
                self._by_stats[id(stats)] = member
        except BaseException:
            self._finalizer()
            raise

    # -- primitives ----------------------------------------------------------------------

    def _check(self, constraints: tuple[Expr, ...], extra: Expr | None) -> bool:
        """Whether ``constraints`` and ``extra`` are satisfiable together (first answer)."""
        status, _ = self._race(CHECK, constraints, () if extra is None else (extra,), ())
        return status == SAT

    def _model(
        self, constraints: tuple[Expr, ...], exprs: Sequence[Expr], arrays: Sequence[Array]
    ) -> tuple[list[int], list[bytes]] | None:
        """Values of ``exprs`` and contents of ``arrays`` from the first member's model."""
        status, payload = self._race(MODEL, constraints, tuple(exprs), tuple(arrays))
        if status == UNSAT:
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
    ) -> Outcome:
        if not self._finalizer.alive:
            raise SolverError("this solver was closed; create a new one with create_solver()")
        members = self.members
        stats = self.statistics
        stats.queries += 1
        started = time.perf_counter()
        deadline = None if self.timeout is None else started + self.timeout + DEADLINE_SLACK
        if self.deadline is not None:
            # the run's time limit, on this race's clock
            left = self.time_left(None)
            assert left is not None
            deadline = started + left if deadline is None else min(deadline, started + left)
        seq = next(self._seq)
        reasons: dict[str, str] = {}
        running_threads: list[ThreadMember] = []
        running_workers: list[ProcessMember] = []
        query = (constraints, exprs, arrays)
        won = False
        try:
            drain_thread_results(self._results)
            for member in members.threads:
                if member.busy and member.lost_at is not None \
                        and started - member.lost_at > LOSER_GRACE:
                    member.cancel()
            leader = self._pick_leader() if self.stagger > 0 else None
            first = [leader] if leader is not None and self._can_start(leader) else None
            if isinstance(leader, ThreadMember) and first is not None:
                outcome, winner = self._race_inline(leader, seq, kind, query, running_workers,
                                                    reasons, deadline)
            elif first is not None:
                self._launch(seq, kind, query, first, running_threads, running_workers,
                             reasons, deadline)
                join_at = time.perf_counter() + self.stagger
                until = join_at if deadline is None else min(join_at, deadline)
                outcome, winner = self.collect(seq, running_threads, running_workers, reasons,
                                                until, final=until == deadline)
                if outcome is None and until != deadline:
                    others: list[ThreadMember | ProcessMember] = [
                        m for m in members.threads if m is not leader]
                    others += [m for m in members.processes if m is not leader]
                    self._launch(seq, kind, query, others, running_threads, running_workers,
                                 reasons, deadline)
                    outcome, winner = self.collect(seq, running_threads, running_workers,
                                                    reasons, deadline)
            else:
                self._launch(seq, kind, query, [*members.threads, *members.processes],
                             running_threads, running_workers, reasons, deadline)
                outcome, winner = self.collect(seq, running_threads, running_workers, reasons,
                                                deadline)
            won = outcome is not None
            for sitting in self._by_stats.values():
                if sitting not in running_threads and sitting not in running_workers:
                    sitting.pace *= PACE_DECAY
        finally:
            # Losers of a won race may finish within LOSER_GRACE. Whatever else ended the race
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
        if outcome[0] == SAT:
            stats.sat += 1
        else:
            stats.unsat += 1
        return outcome

    def _race_inline(
        self,
        leader: ThreadMember,
        seq: int,
        kind: int,
        query: tuple[tuple[Expr, ...], tuple[Expr, ...], tuple[Array, ...]],
        running_workers: list[ProcessMember],
        reasons: dict[str, str],
        deadline: float | None,
    ) -> tuple[Outcome | None, MemberStatistics | None]:
        """The in-process leader answers in this thread; the referee brings in the workers
        when its head start ends and stops it if one of them wins."""
        referee = self.members.referee
        wake = self.members.wake_writer
        started = time.perf_counter()
        referee.start_round(weakref.ref(self), leader, started + self.stagger, seq, kind,
                            query, running_workers, reasons, deadline)
        leader.stats.queries += 1
        outcome: Outcome = (UNKNOWN, "no answer")
        try:
            outcome = solve_query(leader.solver, kind, *query)
        except Exception as exc:  # noqa: BLE001 - any failure is this member's unknown
            outcome = (UNKNOWN, f"{type(exc).__name__}: {exc}")
        finally:
            worker_win = referee.finish(wake)
            seconds = time.perf_counter() - started
            leader.stats.time += seconds
            fold_pace(leader, seconds)
        if worker_win is not None:
            return worker_win
        if referee.interrupted:
            # past the time limit: whatever the leader said may rest on a dropped assertion
            outcome = (UNKNOWN, f"no answer within {self.timeout} s")
        if outcome[0] != UNKNOWN:
            return outcome, leader.stats
        reasons[leader.label] = str(outcome[1])
        if not running_workers:
            # the leader gave up within its head start: the others have not been asked yet
            self._launch(seq, kind, query, self.members.processes, [], running_workers,
                         reasons, deadline)
        return self.collect(seq, [], running_workers, reasons, deadline)

    def _pick_leader(self) -> ThreadMember | ProcessMember | None:
        """The member with the lowest recent pace that can start now (the first listed
        among equals, so a fresh portfolio is led by its first configuration)."""
        candidates = [m for m in self._by_stats.values() if self._can_start(m)]
        return min(candidates, key=lambda m: m.pace, default=None)

    @staticmethod
    def _can_start(member: ThreadMember | ProcessMember) -> bool:
        """Whether ``member`` could take a query right now (to run alone first)."""
        if isinstance(member, ThreadMember):
            return not member.busy
        if member.ready and member.conn is not None:
            member.settle_lost()
        return member.ready and member.conn is not None and not member.outstanding

    def _launch(
        self,
        seq: int,
        kind: int,
        query: tuple[tuple[Expr, ...], tuple[Expr, ...], tuple[Array, ...]],
        launching: Sequence[ThreadMember | ProcessMember],
        running_threads: list[ThreadMember],
        running_workers: list[ProcessMember],
        reasons: dict[str, str],
        deadline: float | None,
    ) -> None:
        """Hand the query to ``launching`` (threads first: they start at once)."""
        for member in launching:
            if not isinstance(member, ThreadMember):
                continue
            member.stats.queries += 1
            member.submit(seq, kind, query)
            running_threads.append(member)
        workers = [m for m in launching if isinstance(m, ProcessMember)]
        self.start_workers(seq, kind, *query, workers, running_threads, running_workers,
                            reasons, deadline)

    def start_workers(
        self,
        seq: int,
        kind: int,
        constraints: tuple[Expr, ...],
        exprs: tuple[Expr, ...],
        arrays: tuple[Array, ...],
        workers: list[ProcessMember],
        running_threads: list[ThreadMember],
        running_workers: list[ProcessMember],
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
        workers = self.members.processes
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

    def collect(
        self,
        seq: int,
        running_threads: list[ThreadMember],
        running_workers: list[ProcessMember],
        reasons: dict[str, str],
        deadline: float | None,
        final: bool = True,
        stop: Callable[[], bool] | None = None,
    ) -> tuple[Outcome | None, MemberStatistics | None]:
        """Wait for the first definite answer; None when everybody gave up or ``deadline``
        passed (which, unless ``final``, is only the end of the leader's head start)."""
        wake = self.members.wake_reader
        while True:
            for member, got_seq, (status, payload) in drain_thread_results(self._results):
                if got_seq != seq:
                    continue
                if status == UNKNOWN:
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
                    if status == UNKNOWN:
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
        for member in self.members.threads:
            while member.busy:
                drain_thread_results(self._results)
                if not member.busy:
                    break
                lost = member.lost_at if member.lost_at is not None else time.perf_counter()
                if time.perf_counter() - lost > LOSER_GRACE:
                    member.cancel()
                    break
                member.idle.wait(INTERRUPT_PERIOD)
                member.idle.clear()
        workers = self.members.processes
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
                remaining = LOSER_GRACE if remaining is None else min(remaining, LOSER_GRACE)
            multiprocessing.connection.wait([w.conn for w in pending if w.conn is not None],
                                            remaining)

    def close(self) -> None:
        """Stop every member thread and kill every worker process."""
        self._finalizer()

    def __repr__(self) -> str:
        """Name the members."""
        members = ", ".join(str(c) for c in self.configs)
        return f"PortfolioSolver([{members}], timeout={self.timeout!r})"

