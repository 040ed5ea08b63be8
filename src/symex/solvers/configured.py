"""``SessionSolver``: the :class:`~symex.solvers.base.Solver` of one configuration
(backend x encoding x session), answering :class:`SolverBase`'s two primitives through a
:mod:`session <symex.solvers.sessions>`."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from symex.errors import SolverError, SolverUnknown, SymexError
from symex.solvers.backend import CheckResult
from symex.solvers.base import SolverBase, SolverStatistics
from symex.solvers.config import SessionKind, SolverConfig, parse_config

if TYPE_CHECKING:
    from symex.expr import Array, Expr
    from symex.solvers.sessions import Session, SessionAnswer

__all__ = ["SessionSolver", "SessionStatistics", "WATCHDOG_GRACE"]

#: seconds past a query's limit before the watchdog interrupts the backend (its own timeout,
#: where it applies, comes first and keeps the context)
WATCHDOG_GRACE = 0.2


@attrs.define
class SessionStatistics(SolverStatistics):
    """:class:`SolverStatistics` plus what incrementality did."""

    resets: int = 0
    """Times the backend context was reset (every query of a ``none`` session is one)."""
    cache_hits: int = 0
    """Expressions whose solver terms were reused instead of translated again: translation
    cache hits, plus (incremental sessions) constraints already asserted in the context."""

    def as_dict(self) -> dict[str, float]:
        """The counters as a plain mapping, e.g. for a JSON run summary."""
        counters = super().as_dict()
        counters["resets"] = self.resets
        counters["cache_hits"] = self.cache_hits
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
        started = time.perf_counter()
        limit = self.time_left(self.timeout)
        watchdog = None
        if limit is not None and session.backend.can_interrupt:
            # the backend's own timeout covers its checks only: z3 internalizes assertions
            # (bit-blasting them) at push, which a hash function's query can keep busy for
            # minutes; past the limit the watchdog interrupts whatever z3 is doing
            watchdog = threading.Timer(limit + WATCHDOG_GRACE, self.interrupt)
            watchdog.daemon = True
            watchdog.start()
        try:
            answer = session.solve(constraints, extra, exprs, arrays, model=model, timeout=limit)
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
            if watchdog is not None:
                watchdog.cancel()
            stats.time += time.perf_counter() - started
            stats.resets += session.resets - resets
            stats.cache_hits += session.cache_hits - hits
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

    def close(self) -> None:
        """Release the backend; the solver must not be used afterwards."""
        session, self._session = self._session, None
        if session is not None:
            session.close()

    def __repr__(self) -> str:
        """Name the configuration."""
        return f"SessionSolver({str(self.config)!r}, timeout={self.timeout!r})"
