"""The solver interface of symex: queries, validity answers, statistics and a shared base class.

A query is a path condition (``constraints``, all assumed true) plus one expression. Validity
questions ("must / may this branch condition be true?") are all reduced by :class:`SolverBase` to
one satisfiability primitive, so a backend only has to answer "is this conjunction satisfiable?"
and "give me a model of it".
"""

from __future__ import annotations

import abc
import enum
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import attrs

# Imported as a module (not names) so that this interface can be imported while the expression
# layer is still a placeholder; attributes are only looked up when a query is answered.
from symex import expr as _expr
from symex.errors import SolverError, SolverUnknown
from symex.solvers.backend import check_milliseconds

if TYPE_CHECKING:
    from symex.expr import Array, Expr

__all__ = [
    "Query",
    "Solver",
    "SolverBase",
    "SolverStatistics",
    "Validity",
]


class Validity(enum.Enum):
    """The answer to "does the path condition decide this width-1 expression?" (KLEE's Validity)."""

    TRUE = "true"
    """The constraints imply the expression."""
    FALSE = "false"
    """The constraints imply the negation of the expression."""
    UNKNOWN = "unknown"
    """Both values are possible under the constraints (not: the solver gave up)."""


@attrs.frozen
class Query:
    """A question to a solver: ``expr`` under the assumption that every constraint holds."""

    constraints: tuple[Expr, ...]
    """Width-1 expressions, all assumed true (the path condition)."""
    expr: Expr
    """Width-1 for validity questions; any width for :meth:`Solver.get_value`."""

    def negated(self) -> Query:
        """The same constraints with the logical negation of the (width-1) expression."""
        return Query(self.constraints, _expr.bool_not(self.expr))

    def with_expr(self, expr: Expr) -> Query:
        """The same constraints with another expression."""
        return Query(self.constraints, expr)


@attrs.define
class SolverStatistics:
    """Counters of the work a solver handed to its backend."""

    queries: int = 0
    """Satisfiability checks that reached the backend."""
    sat: int = 0
    """Checks answered satisfiable."""
    unsat: int = 0
    """Checks answered unsatisfiable."""
    unknown: int = 0
    """Checks answered unknown (time limit or incompleteness)."""
    time: float = 0.0
    """Seconds spent inside backend check and model calls."""

    def as_dict(self) -> dict[str, float]:
        """The counters as a plain mapping, e.g. for a JSON run summary."""
        return {
            "queries": self.queries,
            "sat": self.sat,
            "unsat": self.unsat,
            "unknown": self.unknown,
            "time": self.time,
        }


@runtime_checkable
class Solver(Protocol):
    """What the interpreter needs from a constraint solver.

    Every method may raise :class:`symex.errors.SolverUnknown` when the backend answers unknown
    (usually its time limit). The constraints of a query are assumed satisfiable: validity answers
    for unsatisfiable constraints are unspecified, while :meth:`get_value` and
    :meth:`get_initial_values` raise :class:`symex.errors.SolverError` for them.

    A solver may also have ``set_deadline(deadline)`` and ``past_deadline()`` (every
    :class:`SolverBase` does): a run's time limit then cuts a query still running at the
    limit instead of waiting for it.
    """

    statistics: SolverStatistics

    def check(self, constraints: Sequence[Expr], query: Expr) -> Validity:
        """Validity of ``query`` under ``constraints`` (the same as ``evaluate``)."""
        ...

    def evaluate(self, query: Query) -> Validity:
        """Whether the constraints imply ``query.expr`` (TRUE), its negation (FALSE), or neither."""
        ...

    def must_be_true(self, query: Query) -> bool:
        """True iff the constraints imply ``query.expr``."""
        ...

    def must_be_false(self, query: Query) -> bool:
        """True iff the constraints imply the negation of ``query.expr``."""
        ...

    def may_be_true(self, query: Query) -> bool:
        """True iff ``query.expr`` can hold together with the constraints."""
        ...

    def may_be_false(self, query: Query) -> bool:
        """True iff ``query.expr`` can be false together with the constraints."""
        ...

    def get_value(self, query: Query) -> int:
        """Some unsigned value ``query.expr`` can take under the constraints."""
        ...

    def get_range(self, query: Query) -> tuple[int, int]:
        """The least and greatest unsigned value ``query.expr`` can take under the constraints."""
        ...

    def get_initial_values(
        self, constraints: tuple[Expr, ...], arrays: Sequence[Array]
    ) -> list[bytes]:
        """A model of the constraints: for each array, ``array.size`` bytes, in order."""
        ...

    def close(self) -> None:  # noqa: B027 - a solver holding nothing has nothing to release
        """Release the backend; the solver must not be used afterwards."""
        ...


def _const_truth(e: Expr) -> bool | None:
    """The truth value of a constant width-1 expression, or None when it is not constant."""
    if e.op is _expr.Op.CONST:
        return e.value != 0
    return None


class SolverBase(abc.ABC):
    """Implements the :class:`Solver` questions on top of two backend primitives.

    Subclasses implement :meth:`_check` (satisfiability) and :meth:`_model` (a satisfying
    assignment); everything else is derived here, so every backend answers the same way and
    constant questions never reach a backend.
    """

    statistics: SolverStatistics
    deadline: float | None
    """When the run's time is up (``time.monotonic()``; None: never): a check still running
    then is cut (:class:`~symex.errors.SolverUnknown`), so a time limit holds whatever the
    query."""

    def __init__(self) -> None:
        """Start with zeroed statistics."""
        self.statistics = SolverStatistics()
        self.deadline = None

    def set_deadline(self, deadline: float | None) -> None:
        """Cut every check at ``deadline`` (``time.monotonic()``), or never (None); a solver
        wrapping another passes it on."""
        self.deadline = deadline

    def past_deadline(self) -> bool:
        """Whether the deadline has passed (an unknown answer then means: no time left)."""
        return self.deadline is not None and time.monotonic() >= self.deadline

    def time_left(self, timeout: float | None) -> float | None:
        """The limit for one check: ``timeout`` (seconds or None), or less where the deadline
        comes first; SolverUnknown if it has passed. A limit longer than any solver package
        or thread wait can hold (``--max-time 1e10``) is none."""
        left = None if self.deadline is None else self.deadline - time.monotonic()
        if left is not None and left <= 0:
            raise SolverUnknown("the run's time limit was reached")
        limit = left if timeout is None else timeout if left is None else min(timeout, left)
        return None if check_milliseconds(limit) is None else limit

    # -- primitives ---------------------------------------------------------------------------

    @abc.abstractmethod
    def _check(self, constraints: tuple[Expr, ...], extra: Expr | None) -> bool:
        """Whether ``constraints`` together with ``extra`` (if given) are satisfiable.

        Raises SolverUnknown when the backend cannot decide.
        """

    @abc.abstractmethod
    def _model(
        self, constraints: tuple[Expr, ...], exprs: Sequence[Expr], arrays: Sequence[Array]
    ) -> tuple[list[int], list[bytes]] | None:
        """Values of ``exprs`` and contents of ``arrays`` in one model of ``constraints``.

        Returns None when the constraints are unsatisfiable; raises SolverUnknown when the
        backend cannot decide. Each array's contents are exactly ``array.size`` bytes.
        """

    # -- validity -----------------------------------------------------------------------------

    def may_be_true(self, query: Query) -> bool:
        """True iff ``query.expr`` can hold together with the constraints."""
        truth = _const_truth(query.expr)
        if truth is not None:
            return truth
        return self._check(query.constraints, query.expr)

    def may_be_false(self, query: Query) -> bool:
        """True iff ``query.expr`` can be false together with the constraints."""
        truth = _const_truth(query.expr)
        if truth is not None:
            return not truth
        return self._check(query.constraints, _expr.bool_not(query.expr))

    def must_be_true(self, query: Query) -> bool:
        """True iff the constraints imply ``query.expr``."""
        return not self.may_be_false(query)

    def must_be_false(self, query: Query) -> bool:
        """True iff the constraints imply the negation of ``query.expr``."""
        return not self.may_be_true(query)

    def check(self, constraints: Sequence[Expr], query: Expr) -> Validity:
        """Validity of ``query`` under ``constraints``: TRUE if they imply it, FALSE if they
        imply its negation, UNKNOWN if both are possible."""
        return self.evaluate(Query(tuple(constraints), query))

    def evaluate(self, query: Query) -> Validity:
        """Whether the constraints imply ``query.expr`` (TRUE), its negation (FALSE), or neither."""
        truth = _const_truth(query.expr)
        if truth is not None:
            return Validity.TRUE if truth else Validity.FALSE
        if not self._check(query.constraints, _expr.bool_not(query.expr)):
            return Validity.TRUE
        if not self._check(query.constraints, query.expr):
            return Validity.FALSE
        return Validity.UNKNOWN

    # -- values -------------------------------------------------------------------------------

    def get_value(self, query: Query) -> int:
        """Some unsigned value ``query.expr`` can take under the constraints.

        Raises SolverError when the constraints are unsatisfiable.
        """
        e = query.expr
        if e.op is _expr.Op.CONST:
            return e.value
        model = self._model(query.constraints, (e,), ())
        if model is None:
            raise SolverError(
                "cannot pick a value: the constraints are unsatisfiable "
                "(check the path condition for feasibility before asking for values)"
            )
        return model[0][0]

    def get_range(self, query: Query) -> tuple[int, int]:
        """The least and greatest unsigned value ``query.expr`` can take under the constraints.

        Found by binary search from one model value, so it costs about ``2 * width`` checks.
        """
        e = query.expr
        if e.op is _expr.Op.CONST:
            return e.value, e.value
        seed = self.get_value(query)
        constraints = query.constraints
        width = e.width

        low, high = 0, seed
        while low < high:
            mid = (low + high) // 2
            if self._check(constraints, _expr.ule(e, _expr.const(mid, width))):
                high = mid
            else:
                low = mid + 1
        minimum = low

        low, high = seed, (1 << width) - 1
        while low < high:
            mid = (low + high + 1) // 2
            if self._check(constraints, _expr.uge(e, _expr.const(mid, width))):
                low = mid
            else:
                high = mid - 1
        return minimum, low

    def get_initial_values(
        self, constraints: tuple[Expr, ...], arrays: Sequence[Array]
    ) -> list[bytes]:
        """A model of the constraints: for each array, ``array.size`` bytes, in order.

        Constant arrays yield their initial contents. Raises SolverError when the constraints are
        unsatisfiable.
        """
        model = self._model(tuple(constraints), (), tuple(arrays))
        if model is None:
            raise SolverError(
                "cannot build a test case: the constraints are unsatisfiable "
                "(the path is infeasible; check feasibility before generating inputs)"
            )
        return model[1]

    def close(self) -> None:  # noqa: B027 - a solver holding nothing has nothing to release
        """Release the backend; the solver must not be used afterwards."""
