"""Sessions: how one backend context is reused between queries (the seed's incrementality).

* :class:`FreshSession` (``none``) -- a fresh context per query: reset, set the logic, assert
  everything, check. No history, nothing to keep in step.
* :class:`PushPopSession` (``pushpop``) -- the context follows the path: one context level
  per constraint; a query keeps the longest common prefix (by identity) of the constraints
  already asserted, pops the rest and pushes its new ones. The query's own condition lives in
  one more level that is popped right after the check.
* :class:`AssumptionSession` (``assumptions(N)``) -- each formula is asserted once as
  ``guard -> formula`` with a fresh boolean guard, and each check is made under the guards of
  the query's formulas. After ``N`` guards the context (and translation cache) is reset, since
  an ever-growing history slows every check down.

The translator's cache (expression -> term) must always be in step with the context: a term
built inside a popped level may refer to declarations the solver forgot. It is snapshotted
before every push and restored on every pop (O(1): immutable maps) and cleared on every reset.
"""

from __future__ import annotations

import abc
import weakref
from collections.abc import Sequence
from typing import Any

import attrs

from symex.encodings.base import Encoding
from symex.expr import Array, Expr, Op, postorder
from symex.solvers.backend import Backend, CheckResult
from symex.solvers.translate import FloatLogicNeeded, Translator

__all__ = [
    "AssumptionSession",
    "FreshSession",
    "LOGIC_ARRAYS",
    "LOGIC_BV",
    "PushPopSession",
    "Session",
    "SessionAnswer",
]

LOGIC_ARRAYS = "QF_ABV"
"""The logic of contexts that may see array terms."""
LOGIC_BV = "QF_BV"
"""The logic of contexts without array terms (the ``ite`` encoding, or no reads at all)."""

RETAINED_TERMS_LIMIT = 500_000
"""A long-lived context is reset before a query once its backend has kept this many terms
alive (a backend that keeps every term until its context ends, as z3's does so that its
answers do not depend on the order Python frees terms in, says how many in
``retained_terms``). A count, not a size or a time, so every run resets at the same query."""


@attrs.frozen
class SessionAnswer:
    """The outcome of one check: the result and, for a SAT check that asked for it, a model."""

    result: CheckResult
    """SAT, UNSAT or UNKNOWN."""
    values: tuple[int, ...] = ()
    """Unsigned values of the requested expressions (SAT with a model only)."""
    contents: tuple[bytes, ...] = ()
    """``array.size`` bytes per requested array (SAT with a model only)."""
    reason: str = ""
    """The backend's reason for UNKNOWN."""


class Session(abc.ABC):
    """One backend context, one translator and the policy that reuses them between queries."""

    __slots__ = ("backend", "encoding", "translator", "resets", "reuses", "_reads_memo",
                 "_untouched", "_with_floats", "__weakref__")

    backend: Backend
    encoding: Encoding
    translator: Translator
    resets: int
    """Times the context was reset (including the fresh context of every ``none`` query)."""
    reuses: int
    """Formulas of a query whose terms were already in the context from an earlier query."""

    def __init__(self, backend: Backend, encoding: Encoding) -> None:
        """Take ownership of ``backend`` (a fresh context) and translate with ``encoding``."""
        self.backend = backend
        self.encoding = encoding
        self.translator = Translator(backend, encoding)
        self.resets = 0
        self.reuses = 0
        # Per-expression "does it read an array?", for choosing a fresh context's logic before
        # any term is built. Path conditions repeat across queries, so the walk is paid once.
        self._reads_memo: weakref.WeakKeyDictionary[Expr, bool] = weakref.WeakKeyDictionary()
        #: the backend's context is still the fresh one it came with (its first reset need
        #: not make another: a z3 context costs about 9 ms, a run's fixed cost)
        self._untouched = True
        #: the logics have floating point: set, for good, by the first query with floats
        self._with_floats = False

    @abc.abstractmethod
    def solve(self, constraints: Sequence[Expr], extra: Expr | None, exprs: Sequence[Expr] = (),
              arrays: Sequence[Array] = (), *, model: bool = False,
              timeout: float | None = None) -> SessionAnswer:
        """Check ``constraints`` and ``extra`` (width-1, all assumed true) within ``timeout``
        seconds; with ``model``, a SAT answer carries the values of ``exprs`` and the contents
        of ``arrays``. Any exception leaves the session reset, never half-updated."""

    @property
    def cache_hits(self) -> int:
        """Formulas and sub-expressions whose terms were reused rather than translated again:
        the translator's cache hits plus formulas already asserted in the context."""
        return self.reuses + self.translator.cache_hits

    def reset(self) -> None:
        """Forget every assertion and term: a fresh context with the incremental logic."""
        self._fresh_context(self._incremental_logic())

    def close(self) -> None:
        """Release the backend; the session must not be used afterwards."""
        self.translator.clear()
        self.backend.close()

    # -- shared steps --------------------------------------------------------------------

    def _incremental_logic(self) -> str:
        # A long-lived context may see arrays in any later query, so it cannot be QF_BV
        # unless the encoding never emits them.
        return LOGIC_ARRAYS if self.encoding.uses_arrays else LOGIC_BV

    def _fresh_context(self, logic: str) -> None:
        if self._with_floats:
            logic += "FP"
        # the old terms first, so that the old context can go before the new one is made
        self.translator.clear()
        if not self._untouched:
            self.backend.reset()
        self._untouched = False
        self.backend.set_logic(logic)
        self.translator.floats_allowed = self._with_floats
        self.resets += 1

    def _reads_arrays(self, roots: Sequence[Expr]) -> bool:
        memo = self._reads_memo
        for root in roots:
            known = memo.get(root)
            if known is None:
                known = any(e.op is Op.READ for e in postorder((root,)))
                memo[root] = known
            if known:
                return True
        return False

    def _assert_formula(self, e: Expr) -> None:
        """Assert ``e`` and the set-up its translation needed, in the current level."""
        translator = self.translator
        term = translator.boolean(e)
        assert_ = self.backend.assert_
        for setup in translator.take_setup():
            assert_(setup)
        assert_(term)

    def _value_terms(self, exprs: Sequence[Expr]) -> list[Any]:
        """Bit-vector terms of ``exprs``, their set-up asserted (a constant array only read by
        an expression still needs its contents pinned for the value to be right)."""
        translator = self.translator
        terms = [translator.bitvector(e) for e in exprs]
        for setup in translator.take_setup():
            self.backend.assert_(setup)
        return terms

    def _answer(self, result: CheckResult, value_terms: list[Any], arrays: Sequence[Array],
                model: bool) -> SessionAnswer:
        backend = self.backend
        if result is CheckResult.SAT:
            if not model:
                return SessionAnswer(result)
            values = tuple(backend.bv_value(t) for t in value_terms)
            return SessionAnswer(result, values, tuple(self.translator.model(arrays)))
        if result is CheckResult.UNKNOWN:
            return SessionAnswer(result, reason=backend.reason_unknown() or
                                 f"{backend.name} gave no reason")
        return SessionAnswer(result)


class FreshSession(Session):
    """``none``: every query gets a fresh context (reset, logic, assertions, check)."""

    __slots__ = ()

    def solve(self, constraints: Sequence[Expr], extra: Expr | None, exprs: Sequence[Expr] = (),
              arrays: Sequence[Array] = (), *, model: bool = False,
              timeout: float | None = None) -> SessionAnswer:
        """Check in a fresh context; the logic is QF_ABV only if the query reads arrays."""
        roots = list(constraints)
        if extra is not None:
            roots.append(extra)
        uses_arrays = self.encoding.uses_arrays and self._reads_arrays((*roots, *exprs))
        while True:
            self._fresh_context(LOGIC_ARRAYS if uses_arrays else LOGIC_BV)
            try:
                for c in roots:
                    self._assert_formula(c)
                value_terms = self._value_terms(exprs)
            except FloatLogicNeeded:
                self._with_floats = True
                continue
            result = self.backend.check((), timeout)
            return self._answer(result, value_terms, arrays, model)


class _IncrementalSession(Session):
    """A session whose context outlives one query: reset first when the context cannot be
    trusted (never set up, or a query was interrupted half-way) or when the subclass says so."""

    __slots__ = ("_ready",)

    def __init__(self, backend: Backend, encoding: Encoding) -> None:
        super().__init__(backend, encoding)
        self._ready = False

    def reset(self) -> None:
        """Forget every level, assertion and term."""
        super().reset()
        self._ready = True

    def _must_reset(self) -> bool:
        return False

    def solve(self, constraints: Sequence[Expr], extra: Expr | None, exprs: Sequence[Expr] = (),
              arrays: Sequence[Array] = (), *, model: bool = False,
              timeout: float | None = None) -> SessionAnswer:
        """Answer in the long-lived context (see the subclass for how it follows the path)."""
        if (not self._ready or self._must_reset()
                or getattr(self.backend, "retained_terms", 0) >= RETAINED_TERMS_LIMIT):
            self.reset()
        try:
            try:
                return self._solve(constraints, extra, exprs, arrays, model, timeout)
            except FloatLogicNeeded:
                # the first query with floats: a context whose logic has them, for good
                self._with_floats = True
                self.reset()
                return self._solve(constraints, extra, exprs, arrays, model, timeout)
        except BaseException:
            # Interrupted half-way (backend failure, Ctrl-C): levels and cache may disagree.
            self._ready = False
            raise

    @abc.abstractmethod
    def _solve(self, constraints: Sequence[Expr], extra: Expr | None, exprs: Sequence[Expr],
               arrays: Sequence[Array], model: bool, timeout: float | None) -> SessionAnswer:
        """One query in the current context."""


class PushPopSession(_IncrementalSession):
    """``pushpop``: one context level per constraint, following the path."""

    __slots__ = ("_stack", "_snapshots")

    def __init__(self, backend: Backend, encoding: Encoding) -> None:
        """Start with an empty stack (the context is set up on the first query)."""
        super().__init__(backend, encoding)
        self._stack: list[Expr] = []
        # _snapshots[k] is the translator state before level k + 1 was pushed.
        self._snapshots: list[Any] = []

    def reset(self) -> None:
        """Forget every level, assertion and term."""
        self._stack.clear()
        self._snapshots.clear()
        super().reset()

    def _solve(self, constraints: Sequence[Expr], extra: Expr | None, exprs: Sequence[Expr],
               arrays: Sequence[Array], model: bool, timeout: float | None) -> SessionAnswer:
        backend = self.backend
        translator = self.translator
        stack = self._stack
        snapshots = self._snapshots
        common = 0
        limit = min(len(stack), len(constraints))
        while common < limit and stack[common] is constraints[common]:
            common += 1
        self.reuses += common
        if common < len(stack):
            backend.pop(len(stack) - common)
            translator.restore(snapshots[common])
            del stack[common:]
            del snapshots[common:]
        for c in constraints[common:]:
            snapshots.append(translator.snapshot())
            backend.push()
            stack.append(c)
            self._assert_formula(c)
        before_query = translator.snapshot()
        backend.push()
        try:
            if extra is not None:
                self._assert_formula(extra)
            value_terms = self._value_terms(exprs)
            result = backend.check((), timeout)
            return self._answer(result, value_terms, arrays, model)
        finally:
            backend.pop(1)
            translator.restore(before_query)


class AssumptionSession(_IncrementalSession):
    """``assumptions(N)``: formulas asserted once behind guards; reset after ``N`` guards."""

    __slots__ = ("threshold", "_guards", "_created", "_next_name")

    threshold: int

    def __init__(self, backend: Backend, encoding: Encoding, threshold: int = 50) -> None:
        """Reset the context once ``threshold`` guards have been created."""
        super().__init__(backend, encoding)
        if threshold < 1:
            raise ValueError(f"assumption threshold must be at least 1, got {threshold}")
        self.threshold = threshold
        self._guards: dict[Expr, Any] = {}
        self._created = 0
        # Names keep growing across resets so a guard name is never reused for another formula.
        self._next_name = 0

    def reset(self) -> None:
        """Forget every guard, assertion and term."""
        self._guards.clear()
        self._created = 0
        super().reset()

    def _must_reset(self) -> bool:
        return self._created >= self.threshold

    def _solve(self, constraints: Sequence[Expr], extra: Expr | None, exprs: Sequence[Expr],
               arrays: Sequence[Array], model: bool, timeout: float | None) -> SessionAnswer:
        backend = self.backend
        translator = self.translator
        guards = self._guards
        assumptions: list[Any] = []
        formulas = list(constraints)
        if extra is not None:
            formulas.append(extra)
        for f in formulas:
            guard = guards.get(f)
            if guard is None:
                term = translator.boolean(f)
                # Set-up assertions pin constant arrays' contents or define a fresh variable
                # (a float node's bits): true in every query, so they need no guard.
                for setup in translator.take_setup():
                    backend.assert_(setup)
                guard = backend.bool_var(f"symex!guard!{self._next_name}")
                self._next_name += 1
                self._created += 1
                backend.assert_(backend.bool_op(Op.OR, (backend.bool_op(Op.NOT, (guard,)), term)))
                guards[f] = guard
            else:
                self.reuses += 1
            assumptions.append(guard)
        value_terms = self._value_terms(exprs)
        result = backend.check(assumptions, timeout)
        return self._answer(result, value_terms, arrays, model)
