"""The bitwuzla backend (package ``bitwuzla``): the core language on bitwuzla's Python API.

Bitwuzla is QF_ABV-native: it has no logic to set, and its options are fixed when a solver
instance is made, so time limits and interrupts go through its termination callback, which
bitwuzla polls during search. The callback is Python code, so ``check`` holds the GIL except
while the callback runs: other threads make (slow) progress, enough for :meth:`interrupt`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import bitwuzla
from bitwuzla import Kind

from symex.expr.float_theory import FloatKind, FloatTest
from symex.errors import SolverError
from symex.expr import Op
from symex.solvers.backend import CheckResult, ModelReading

__all__ = ["BitwuzlaBackend"]

_BV_BINARY: dict[Op, Kind] = {
    Op.ADD: Kind.BV_ADD,
    Op.SUB: Kind.BV_SUB,
    Op.MUL: Kind.BV_MUL,
    Op.UDIV: Kind.BV_UDIV,
    Op.SDIV: Kind.BV_SDIV,
    Op.UREM: Kind.BV_UREM,
    Op.SREM: Kind.BV_SREM,
    Op.AND: Kind.BV_AND,
    Op.OR: Kind.BV_OR,
    Op.XOR: Kind.BV_XOR,
    Op.SHL: Kind.BV_SHL,
    Op.LSHR: Kind.BV_SHR,
    Op.ASHR: Kind.BV_ASHR,
    Op.CONCAT: Kind.BV_CONCAT,
}
_COMPARE: dict[Op, Kind] = {
    Op.EQ: Kind.EQUAL,
    Op.ULT: Kind.BV_ULT,
    Op.ULE: Kind.BV_ULE,
    Op.SLT: Kind.BV_SLT,
    Op.SLE: Kind.BV_SLE,
}
_FP_TERMS: dict[FloatKind, tuple[Kind, str | None]] = {
    FloatKind.ADD: (Kind.FP_ADD, "RNE"), FloatKind.SUB: (Kind.FP_SUB, "RNE"),
    FloatKind.MUL: (Kind.FP_MUL, "RNE"), FloatKind.DIV: (Kind.FP_DIV, "RNE"),
    FloatKind.REM: (Kind.FP_REM, None), FloatKind.SQRT: (Kind.FP_SQRT, "RNE"),
    FloatKind.FMA: (Kind.FP_FMA, "RNE"), FloatKind.ROUND_FLOOR: (Kind.FP_RTI, "RTN"),
    FloatKind.ROUND_CEIL: (Kind.FP_RTI, "RTP"), FloatKind.ROUND_TRUNC: (Kind.FP_RTI, "RTZ"),
    FloatKind.ROUND_EVEN: (Kind.FP_RTI, "RNE"), FloatKind.ROUND_AWAY: (Kind.FP_RTI, "RNA"),
    FloatKind.NEG: (Kind.FP_NEG, None), FloatKind.ABS: (Kind.FP_ABS, None),
    FloatKind.ITE: (Kind.ITE, None),
}
_FP_TESTS: dict[FloatTest, Kind] = {
    FloatTest.EQ: Kind.FP_EQUAL, FloatTest.LT: Kind.FP_LT, FloatTest.LEQ: Kind.FP_LEQ,
    FloatTest.IS_NAN: Kind.FP_IS_NAN, FloatTest.IS_ZERO: Kind.FP_IS_ZERO,
    FloatTest.IS_NEGATIVE: Kind.FP_IS_NEG, FloatTest.SAME: Kind.EQUAL,
}
#: (exponent bits, significand bits) of each float width
_FP_FORMATS = {32: [8, 24], 64: [11, 53]}
_BOOL: dict[Op, Kind] = {
    Op.AND: Kind.AND,
    Op.OR: Kind.OR,
    Op.XOR: Kind.XOR,
    Op.NOT: Kind.NOT,
    Op.EQ: Kind.EQUAL,
    Op.SELECT: Kind.ITE,
}


class _Terminator:
    """bitwuzla's termination callback: True once the deadline passed or an interrupt came."""

    __slots__ = ("deadline", "interrupted")

    def __init__(self) -> None:
        """No deadline, not interrupted."""
        self.deadline: float | None = None
        self.interrupted = False

    def __call__(self) -> bool:
        """Whether bitwuzla should give up now."""
        if self.interrupted:
            return True
        return self.deadline is not None and time.monotonic() > self.deadline


class BitwuzlaBackend(ModelReading):
    """One bitwuzla solver implementing :class:`symex.solvers.backend.Backend`."""

    __slots__ = ("_tm", "_solver", "_sat", "_sorts", "_array_sort", "_bool_sort", "_vars",
                 "_one1", "_zero1", "_last_reason", "_terminator")

    name: str = "bitwuzla"
    can_interrupt: bool = True
    releases_gil: bool = False

    def __init__(self) -> None:
        """A fresh backend with its own term manager."""
        self._tm = bitwuzla.TermManager()
        self._sorts: dict[int, Any] = {}
        self._array_sort = self._tm.mk_array_sort(self._sort(32), self._sort(8))
        self._bool_sort = self._tm.mk_bool_sort()
        # bitwuzla makes a new constant on every mk_const, so "same name, same variable" is ours
        self._vars: dict[tuple[str, int], Any] = {}
        self._one1 = self.bv_const(1, 1)
        self._zero1 = self.bv_const(0, 1)
        self._last_reason = ""
        self._terminator = _Terminator()
        self._sat = False
        self._solver = self._new_solver()

    def _new_solver(self) -> Any:
        """A bitwuzla instance over this backend's terms, producing models."""
        options = bitwuzla.Options()
        options.set(bitwuzla.Option.PRODUCE_MODELS, True)
        solver = bitwuzla.Bitwuzla(self._tm, options)
        solver.configure_terminator(self._terminator)
        self._sat = False
        return solver

    # -- terms -----------------------------------------------------------------------------

    def _sort(self, width: int) -> Any:
        """The sort of ``width``-bit vectors."""
        sort = self._sorts.get(width)
        if sort is None:
            sort = self._tm.mk_bv_sort(width)
            self._sorts[width] = sort
        return sort

    def bv_const(self, value: int, width: int) -> Any:
        """A bit-vector constant."""
        return self._tm.mk_bv_value(self._sort(width), str(value), 10)

    def bool_const(self, value: bool) -> Any:
        """``true`` or ``false``."""
        return self._tm.mk_true() if value else self._tm.mk_false()

    def _var(self, name: str, kind: int, sort: Any) -> Any:
        """The constant named ``name`` of ``sort`` (``kind`` tells sorts apart in the cache)."""
        key = (name, kind)
        term = self._vars.get(key)
        if term is None:
            term = self._tm.mk_const(sort, name)
            self._vars[key] = term
        return term

    def bv_var(self, name: str, width: int) -> Any:
        """The bit-vector constant named ``name``."""
        return self._var(name, width, self._sort(width))

    def bool_var(self, name: str) -> Any:
        """The boolean constant named ``name``."""
        return self._var(name, 0, self._bool_sort)

    def array_var(self, name: str) -> Any:
        """The 32->8 array constant named ``name``."""
        return self._var(name, -1, self._array_sort)

    def const_array(self, value: int) -> Any:
        """The 32->8 array holding byte ``value`` at every index."""
        return self._tm.mk_const_array(self._array_sort, self.bv_const(value, 8))

    def select(self, array: Any, index: Any) -> Any:
        """``array[index]``."""
        return self._tm.mk_term(Kind.ARRAY_SELECT, [array, index])

    def store(self, array: Any, index: Any, value: Any) -> Any:
        """``array`` with ``value`` at ``index``."""
        return self._tm.mk_term(Kind.ARRAY_STORE, [array, index, value])

    def bv_op(self, op: Op, args: Sequence[Any], width: int, offset: int = 0) -> Any:
        """A bit-vector operation (SMT-LIB semantics, bitwuzla's native ones)."""
        tm = self._tm
        kind = _BV_BINARY.get(op)
        if kind is not None:
            return tm.mk_term(kind, [args[0], args[1]])
        if op is Op.NOT:
            return tm.mk_term(Kind.BV_NOT, [args[0]])
        if op is Op.EXTRACT:
            return tm.mk_term(Kind.BV_EXTRACT, [args[0]], [offset + width - 1, offset])
        if op is Op.ZEXT or op is Op.SEXT:
            extra = width - args[0].sort().bv_size()
            if extra == 0:
                return args[0]
            kind = Kind.BV_ZERO_EXTEND if op is Op.ZEXT else Kind.BV_SIGN_EXTEND
            return tm.mk_term(kind, [args[0]], [extra])
        if op is Op.SELECT:
            return tm.mk_term(Kind.ITE, [args[0], args[1], args[2]])
        raise SolverError(f"{op!r} is not a bit-vector operation of the core language; "
                          "this is a symex bug")

    def compare(self, op: Op, a: Any, b: Any) -> Any:
        """A comparison of two bit-vectors."""
        kind = _COMPARE.get(op)
        if kind is None:
            raise SolverError(f"{op!r} is not a comparison of the core language; this is a symex bug")
        return self._tm.mk_term(kind, [a, b])

    def bool_op(self, op: Op, args: Sequence[Any]) -> Any:
        """A boolean connective (EQ is iff, SELECT is if-then-else)."""
        kind = _BOOL.get(op)
        if kind is None:
            raise SolverError(f"{op!r} is not a boolean operation of the core language; "
                              "this is a symex bug")
        if not args:
            return self.bool_const(op is Op.AND)  # empty conjunction/disjunction
        if len(args) == 1 and kind is not Kind.NOT:
            return args[0]  # a one-argument and/or is its argument; bitwuzla wants two
        return self._tm.mk_term(kind, list(args))

    def bool_to_bv(self, term: Any) -> Any:
        """``ite(term, #b1, #b0)``."""
        return self._tm.mk_term(Kind.ITE, [term, self._one1, self._zero1])

    def bv_to_bool(self, term: Any) -> Any:
        """``term = #b1``."""
        return self._tm.mk_term(Kind.EQUAL, [term, self._one1])

    # -- floating point ----------------------------------------------------------------------

    def _rounding(self, mode: str) -> Any:
        return self._tm.mk_rm_value(getattr(bitwuzla.RoundingMode, mode))

    def fp_from_bits(self, bits: Any, width: int) -> Any:
        """The float whose IEEE bits are ``bits``."""
        return self._tm.mk_term(Kind.FP_TO_FP_FROM_BV, [bits], _FP_FORMATS[width])

    def fp_term(self, kind: FloatKind, args: Sequence[Any], width: int) -> Any:
        """A float operation (rounding to nearest even)."""
        operation, mode = _FP_TERMS[kind]
        operands = list(args) if mode is None else [self._rounding(mode), *args]
        return self._tm.mk_term(operation, operands)

    def fp_test(self, kind: FloatTest, args: Sequence[Any]) -> Any:
        """A predicate on floats."""
        return self._tm.mk_term(_FP_TESTS[kind], list(args))

    def fp_convert(self, term: Any, width: int) -> Any:
        """``term`` as a ``width``-bit float."""
        return self._tm.mk_term(Kind.FP_TO_FP_FROM_FP, [self._rounding("RNE"), term],
                                _FP_FORMATS[width])

    def fp_from_integer(self, bits: Any, width: int, signed: bool) -> Any:
        """The integer ``bits`` as a ``width``-bit float."""
        kind = Kind.FP_TO_FP_FROM_SBV if signed else Kind.FP_TO_FP_FROM_UBV
        return self._tm.mk_term(kind, [self._rounding("RNE"), bits], _FP_FORMATS[width])

    def fp_to_signed(self, term: Any, width: int) -> Any:
        """``term`` truncated to a signed ``width``-bit integer."""
        return self._tm.mk_term(Kind.FP_TO_SBV, [self._rounding("RTZ"), term], [width])

    # -- solving ---------------------------------------------------------------------------

    def set_logic(self, logic: str) -> None:
        """Accept ``QF_ABV``/``QF_BV`` (and with ``FP``): bitwuzla has no logic to set."""
        if logic not in ("QF_ABV", "QF_BV", "QF_AUFBV", "QF_UFBV", "QF_ABVFP", "QF_BVFP"):
            raise SolverError(f"bitwuzla cannot decide logic {logic}; use QF_ABV or QF_BV")

    def assert_(self, term: Any) -> None:
        """Assert a boolean term."""
        self._solver.assert_formula(term)

    def push(self) -> None:
        """Open a context level."""
        self._solver.push(1)

    def pop(self, levels: int = 1) -> None:
        """Drop ``levels`` context levels."""
        self._solver.pop(levels)
        self._sat = False

    def check(self, assumptions: Sequence[Any] = (), timeout: float | None = None) -> CheckResult:
        """Check satisfiability; the deadline or an interrupt gives UNKNOWN."""
        terminator = self._terminator
        terminator.deadline = None if timeout is None else time.monotonic() + timeout
        # an interrupt aimed at an earlier check must not cancel this one
        terminator.interrupted = False
        self._sat = False
        try:
            result = self._solver.check_sat(*assumptions)
        except bitwuzla.BitwuzlaException as exc:
            self._last_reason = f"bitwuzla failed: {exc}"
            return CheckResult.UNKNOWN
        finally:
            terminator.deadline = None
        if result == bitwuzla.Result.SAT:
            self._sat = True
            return CheckResult.SAT
        if result == bitwuzla.Result.UNSAT:
            return CheckResult.UNSAT
        self._last_reason = ("interrupted" if terminator.interrupted
                             else "timeout" if timeout is not None else "bitwuzla gave no reason")
        return CheckResult.UNKNOWN

    def _model_value(self, term: Any) -> Any:
        return self._solver.get_value(term)

    def _boolean_of(self, value: Any) -> bool | None:
        return bool(value.is_true()) if value.sort().is_bool() else None

    def _integer_of(self, value: Any) -> int:
        return int(value.value(10))

    def _stores_of(self, value: Any) -> tuple[list[tuple[int, int]], int] | None:
        writes: list[tuple[int, int]] = []
        while value.kind() == Kind.ARRAY_STORE:
            _, index, byte = value.children()
            writes.append((int(index.value(10)), int(byte.value(10))))
            value = value.children()[0]
        if value.kind() != Kind.CONST_ARRAY:
            return None
        return writes, int(value.children()[0].value(10))

    def interrupt(self) -> None:
        """Make a check running in another thread give up at bitwuzla's next poll."""
        self._terminator.interrupted = True

    def reset(self) -> None:
        """Forget every assertion and level (terms stay valid: the term manager is kept)."""
        self._solver = self._new_solver()
        self._last_reason = ""

    def close(self) -> None:
        """Drop the solver; the term manager goes with the backend."""
        self._solver = self._new_solver()
