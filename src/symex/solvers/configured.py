"""``SessionSolver``: the :class:`~symex.solvers.base.Solver` of one configuration
(backend x encoding x session), answering :class:`SolverBase`'s two primitives through a
:mod:`session <symex.solvers.sessions>`."""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from symex.errors import SolverError, SolverUnknown, SymexError
from symex.solvers.backend import CheckResult
from symex.solvers.base import SolverBase, SolverStatistics
from symex.solvers.config import SessionKind, SolverConfig, parse_config

if TYPE_CHECKING:
    from symex.expr import Array, Expr
    from symex.solvers.sessions import Session, SessionAnswer

__all__ = ["ABANDON_GRACE", "DeadlineGuard", "SessionSolver", "SessionStatistics", "WATCHDOG_GRACE"]

#: seconds past a query's limit before the backend is interrupted (its own timeout, where it
#: applies, comes first and keeps the context)
WATCHDOG_GRACE = 0.2
#: seconds an interrupted backend gets to stop before its query is abandoned
ABANDON_GRACE = 2.0


class _Abandoned(Exception):
    """The backend went on past its interrupt: the call was left running."""


class _Job:
    """One call run by a :class:`DeadlineGuard`'s thread, and its outcome."""

    __slots__ = ("call", "done", "value", "error")

    def __init__(self, call: Callable[[], Any]) -> None:
        self.call = call
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.value = self.call()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller as it is
            self.error = exc
        finally:
            self.done.set()

    def outcome(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.value


class DeadlineGuard:
    """Runs a session's queries on a thread of its own, so the caller gets control back at the
    query's limit whatever the backend does. z3 answers an interrupt in most places, but not
    while its incremental core bit-blasts the assertions a push hands it (coreutils' base32
    and sha512sum sat in ``Z3_solver_push`` for minutes past the run's end): such a call is
    left running on its thread, and the solver goes on with a fresh session. (Not a
    ``ThreadPoolExecutor``: its threads are joined when the interpreter exits, so one stuck
    in z3 would keep the process from ending; this thread is a daemon.)"""

    __slots__ = ("_jobs", "_thread", "pid")

    def __init__(self) -> None:
        self.pid = os.getpid()
        """The process whose thread this is (a forked child must make its own guard)."""
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name="symex-solver", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            job.run()

    def call(self, call: Callable[[], Any], wait: float, interrupt: Callable[[], None]) -> Any:
        """``call()``'s result (or exception); after ``wait`` seconds ``interrupt()``, and
        after :data:`ABANDON_GRACE` more :class:`_Abandoned`."""
        job = _Job(call)
        self._jobs.put(job)
        if not job.done.wait(wait):
            interrupt()
            if not job.done.wait(ABANDON_GRACE):
                raise _Abandoned()
        return job.outcome()

    def close(self) -> None:
        """Let the thread end (after the call it runs, if any)."""
        self._jobs.put(None)


@attrs.define
class SessionStatistics(SolverStatistics):
    """:class:`SolverStatistics` plus what incrementality did."""

    resets: int = 0
    """Times the backend context was reset (every query of a ``none`` session is one)."""
    cache_hits: int = 0
    """Expressions whose solver terms were reused instead of translated again: translation
    cache hits, plus (incremental sessions) constraints already asserted in the context."""
    fresh_checks: int = 0
    """Checks a backend's incremental solver gave up on and a fresh one answered (z3's
    ``FRESH_AFTER_WORK``; other backends make none)."""

    def as_dict(self) -> dict[str, float]:
        """The counters as a plain mapping, e.g. for a JSON run summary."""
        counters = super().as_dict()
        counters["resets"] = self.resets
        counters["cache_hits"] = self.cache_hits
        counters["fresh_checks"] = self.fresh_checks
        return counters


def _make_session(config: SolverConfig) -> Session:
    # Imported here so that parsing a configuration loads no solver package.
    from symex.encodings import get_encoding
    from symex.solvers.backends import make_backend
    from symex.solvers.sessions import AssumptionSession, FreshSession, PushPopSession

    encoding = get_encoding(config.encoding)
    backend = make_backend(config.backend)
    if config.session is SessionKind.PUSHPOP:
        return PushPopSession(backend, encoding)
    if config.session is SessionKind.ASSUMPTIONS:
        return AssumptionSession(backend, encoding, config.threshold)
    return FreshSession(backend, encoding)


class SessionSolver(SolverBase):
    """A solver of one configuration, e.g. ``SessionSolver("z3:array-assert:pushpop")``.

    ``timeout`` limits every satisfiability check (seconds; None: no limit). An ``unknown``
    answer, and any failure of the backend package, raise :class:`symex.errors.SolverUnknown`
    with the reason (the engine ends that path as partial) and leave the solver usable.
    """

    config: SolverConfig
    """The configuration this solver runs."""
    statistics: SessionStatistics
    timeout: float | None
    """Seconds per check, or None."""

    def __init__(self, config: str | SolverConfig = "z3", *, timeout: float | None = None) -> None:
        """Build the backend, encoding and session that ``config`` names."""
        parsed = parse_config(config)
        if not isinstance(parsed, SolverConfig):
            raise SolverError(f"SessionSolver runs one configuration, not {parsed}; "
                              "use symex.solvers.create_solver for a portfolio")
        if timeout is not None and not timeout > 0:
            raise SolverError(f"solver timeout must be positive seconds, got {timeout!r}")
        super().__init__()
        self.statistics = SessionStatistics()
        self.config = parsed
        self.timeout = timeout
        self._session: Session | None = _make_session(parsed)
        self._interrupted = False
        self._guard: DeadlineGuard | None = None
        #: sessions left running a query past its limit (kept: their thread still uses them)
        self._abandoned: list[tuple[Session, DeadlineGuard]] = []

    # -- primitives ----------------------------------------------------------------------

    def _check(self, constraints: tuple[Expr, ...], extra: Expr | None) -> bool:
        """Whether ``constraints`` and ``extra`` are satisfiable together."""
        return self._solve(constraints, extra, (), (), False).result is CheckResult.SAT

    def _model(
        self, constraints: tuple[Expr, ...], exprs: Sequence[Expr], arrays: Sequence[Array]
    ) -> tuple[list[int], list[bytes]] | None:
        """Values of ``exprs`` and contents of ``arrays`` in one model of ``constraints``."""
        answer = self._solve(constraints, None, exprs, arrays, True)
        if answer.result is CheckResult.UNSAT:
            return None
        return list(answer.values), list(answer.contents)

    def _solve(self, constraints: Sequence[Expr], extra: Expr | None, exprs: Sequence[Expr],
               arrays: Sequence[Array], model: bool) -> SessionAnswer:
        session = self._session
        if session is None:
            raise SolverError("this solver was closed; create a new one with create_solver()")
        if self._interrupted:
            # An interrupt can outlive the check it was meant for (z3 keeps the request in
            # its context), and a context that saw one may have dropped an assertion
            # half-way: measured as a wrong "sat" in a racing portfolio. Start afresh.
            self._interrupted = False
            self.reset()
        stats = self.statistics
        stats.queries += 1
        resets, hits = session.resets, session.cache_hits
        fresh = getattr(session.backend, "fresh_checks", 0)
        started = time.perf_counter()
        limit = self.time_left(self.timeout)
        try:
            if limit is not None and session.backend.can_interrupt:
                # the backend's own timeout covers its checks only: z3 internalizes assertions
                # (bit-blasting them) at push, which a hash function's query can keep busy for
                # minutes; past the limit it is interrupted, and abandoned if it goes on
                if self._guard is None or self._guard.pid != os.getpid():
                    self._guard = DeadlineGuard()
                answer = self._guard.call(
                    lambda: session.solve(constraints, extra, exprs, arrays, model=model, timeout=limit),
                    limit + WATCHDOG_GRACE, self.interrupt)
            else:
                answer = session.solve(constraints, extra, exprs, arrays, model=model, timeout=limit)
        except _Abandoned:
            stats.unknown += 1
            self._abandon()
            raise SolverUnknown(f"{self.config} did not stop at the time limit (abandoned; "
                                f"the next query starts a fresh context)") from None
        except SymexError as exc:
            stats.unknown += 1
            if isinstance(exc, SolverUnknown):
                raise
            raise SolverUnknown(f"{self.config} failed: {exc}") from exc
        except Exception as exc:  # noqa: BLE001 - a package error must end a path, not the run
            stats.unknown += 1
            raise SolverUnknown(
                f"{self.config} failed: {type(exc).__name__}: {exc}") from exc
        finally:
            stats.time += time.perf_counter() - started
            stats.resets += session.resets - resets
            stats.cache_hits += session.cache_hits - hits
            stats.fresh_checks += getattr(session.backend, "fresh_checks", 0) - fresh
        result = answer.result
        if result is CheckResult.SAT:
            stats.sat += 1
        elif result is CheckResult.UNSAT:
            stats.unsat += 1
        else:
            stats.unknown += 1
            raise SolverUnknown(answer.reason)
        return answer

    # -- control -------------------------------------------------------------------------

    def interrupt(self) -> None:
        """Stop a check running in another thread, if the backend allows it (it then raises
        SolverUnknown in that thread). The next query starts from a fresh context."""
        session = self._session
        if session is not None:
            self._interrupted = True
            session.backend.interrupt()

    @property
    def can_interrupt(self) -> bool:
        """True when :meth:`interrupt` really stops a running check."""
        session = self._session
        return session is not None and session.backend.can_interrupt

    @property
    def releases_gil(self) -> bool:
        """True when a check releases the GIL (racing it in a thread makes sense)."""
        session = self._session
        return session is not None and session.backend.releases_gil

    def reset(self) -> None:
        """Drop the session's incremental state (assertions, guards, translation cache)."""
        if self._session is not None:
            self._session.reset()
            self.statistics.resets += 1

    def _abandon(self) -> None:
        """Leave the session running its query on its guard's thread; go on with new ones."""
        assert self._session is not None and self._guard is not None
        self._abandoned.append((self._session, self._guard))
        self._session = _make_session(self.config)
        self._guard = None
        self._interrupted = False
        self.statistics.resets += 1

    def close(self) -> None:
        """Release the backend; the solver must not be used afterwards."""
        session, self._session = self._session, None
        if self._guard is not None:
            self._guard.close()
            self._guard = None
        if session is not None:
            session.close()

    def __repr__(self) -> str:
        """Name the configuration."""
        return f"SessionSolver({str(self.config)!r}, timeout={self.timeout!r})"
