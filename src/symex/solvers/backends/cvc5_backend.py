"""The cvc5 backend (package ``cvc5``): the core language on cvc5's Python API.

One cvc5 ``TermManager`` per backend keeps terms valid across :meth:`Cvc5Backend.reset`, which
only replaces the ``Solver``. cvc5 has no interrupt in its Python API and its ``checkSat``
holds the GIL, so a portfolio must race it in a separate process.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import cvc5
from cvc5 import Kind

from symex.expr.float_theory import FloatKind, FloatTest
from symex.errors import SolverError
from symex.expr import Op
from symex.solvers.backend import CheckResult, ModelReading, check_milliseconds

__all__ = ["Cvc5Backend", "stores_of"]

_BV_BINARY: dict[Op, Kind] = {
    Op.ADD: Kind.BITVECTOR_ADD,
    Op.SUB: Kind.BITVECTOR_SUB,
    Op.MUL: Kind.BITVECTOR_MULT,
    Op.UDIV: Kind.BITVECTOR_UDIV,
    Op.SDIV: Kind.BITVECTOR_SDIV,
    Op.UREM: Kind.BITVECTOR_UREM,
    Op.SREM: Kind.BITVECTOR_SREM,
    Op.AND: Kind.BITVECTOR_AND,
    Op.OR: Kind.BITVECTOR_OR,
    Op.XOR: Kind.BITVECTOR_XOR,
    Op.SHL: Kind.BITVECTOR_SHL,
    Op.LSHR: Kind.BITVECTOR_LSHR,
    Op.ASHR: Kind.BITVECTOR_ASHR,
    Op.CONCAT: Kind.BITVECTOR_CONCAT,
}
_COMPARE: dict[Op, Kind] = {
    Op.EQ: Kind.EQUAL,
    Op.ULT: Kind.BITVECTOR_ULT,
    Op.ULE: Kind.BITVECTOR_ULE,
    Op.SLT: Kind.BITVECTOR_SLT,
    Op.SLE: Kind.BITVECTOR_SLE,
}
_NEAREST = cvc5.RoundingMode.ROUND_NEAREST_TIES_TO_EVEN
_FP_TERMS: dict[FloatKind, tuple[Kind, Any]] = {
    FloatKind.ADD: (Kind.FLOATINGPOINT_ADD, _NEAREST),
    FloatKind.SUB: (Kind.FLOATINGPOINT_SUB, _NEAREST),
    FloatKind.MUL: (Kind.FLOATINGPOINT_MULT, _NEAREST),
    FloatKind.DIV: (Kind.FLOATINGPOINT_DIV, _NEAREST),
    FloatKind.REM: (Kind.FLOATINGPOINT_REM, None),
    FloatKind.SQRT: (Kind.FLOATINGPOINT_SQRT, _NEAREST),
    FloatKind.FMA: (Kind.FLOATINGPOINT_FMA, _NEAREST),
    FloatKind.ROUND_FLOOR: (Kind.FLOATINGPOINT_RTI, cvc5.RoundingMode.ROUND_TOWARD_NEGATIVE),
    FloatKind.ROUND_CEIL: (Kind.FLOATINGPOINT_RTI, cvc5.RoundingMode.ROUND_TOWARD_POSITIVE),
    FloatKind.ROUND_TRUNC: (Kind.FLOATINGPOINT_RTI, cvc5.RoundingMode.ROUND_TOWARD_ZERO),
    FloatKind.ROUND_EVEN: (Kind.FLOATINGPOINT_RTI, _NEAREST),
    FloatKind.ROUND_AWAY: (Kind.FLOATINGPOINT_RTI, cvc5.RoundingMode.ROUND_NEAREST_TIES_TO_AWAY),
    FloatKind.NEG: (Kind.FLOATINGPOINT_NEG, None),
    FloatKind.ABS: (Kind.FLOATINGPOINT_ABS, None),
    FloatKind.ITE: (Kind.ITE, None),
}
_FP_TESTS: dict[FloatTest, Kind] = {
    FloatTest.EQ: Kind.FLOATINGPOINT_EQ, FloatTest.LT: Kind.FLOATINGPOINT_LT,
    FloatTest.LEQ: Kind.FLOATINGPOINT_LEQ, FloatTest.IS_NAN: Kind.FLOATINGPOINT_IS_NAN,
    FloatTest.IS_ZERO: Kind.FLOATINGPOINT_IS_ZERO, FloatTest.IS_NEGATIVE: Kind.FLOATINGPOINT_IS_NEG,
    FloatTest.SAME: Kind.EQUAL,
}
#: (exponent bits, significand bits) of each float width
_FP_FORMATS = {32: (8, 24), 64: (11, 53)}
_BOOL: dict[Op, Kind] = {
    Op.AND: Kind.AND,
    Op.OR: Kind.OR,
    Op.XOR: Kind.XOR,
    Op.NOT: Kind.NOT,
    Op.EQ: Kind.EQUAL,
    Op.SELECT: Kind.ITE,
}


class Cvc5Backend(ModelReading):
    """One cvc5 solver implementing :class:`symex.solvers.backend.Backend`."""

    __slots__ = ("_tm", "_solver", "_sat", "_sorts", "_array_sort", "_vars", "_one1", "_zero1",
                 "_last_reason", "_timeout_set")

    name: str = "cvc5"
    can_interrupt: bool = False
    releases_gil: bool = False

    def __init__(self) -> None:
        """A fresh backend with its own term manager."""
        self._tm = cvc5.TermManager()
        self._sorts: dict[int, Any] = {}
        self._array_sort = self._tm.mkArraySort(self._sort(32), self._sort(8))
        # cvc5 makes a new constant on every mkConst, so "same name, same variable" is ours
        self._vars: dict[tuple[str, int], Any] = {}
        self._one1 = self.bv_const(1, 1)
        self._zero1 = self.bv_const(0, 1)
        self._last_reason = ""
        self._sat = False
        self._timeout_set: int | None = None
        self._solver = self._new_solver()

    def _new_solver(self) -> Any:
        """A cvc5 solver over this backend's terms, incremental and producing models."""
        solver = cvc5.Solver(self._tm)
        solver.setOption("incremental", "true")
        solver.setOption("produce-models", "true")
        self._timeout_set = None
        self._sat = False
        return solver

    # -- terms -----------------------------------------------------------------------------

    def _sort(self, width: int) -> Any:
        """The sort of ``width``-bit vectors."""
        sort = self._sorts.get(width)
        if sort is None:
            sort = self._tm.mkBitVectorSort(width)
            self._sorts[width] = sort
        return sort

    def bv_const(self, value: int, width: int) -> Any:
        """A bit-vector constant."""
        return self._tm.mkBitVector(width, str(value), 10)

    def bool_const(self, value: bool) -> Any:
        """``true`` or ``false``."""
        return self._tm.mkBoolean(value)

    def _var(self, name: str, kind: int, sort: Any) -> Any:
        """The constant named ``name`` of ``sort`` (``kind`` tells sorts apart in the cache)."""
        key = (name, kind)
        term = self._vars.get(key)
        if term is None:
            term = self._tm.mkConst(sort, name)
            self._vars[key] = term
        return term

    def bv_var(self, name: str, width: int) -> Any:
        """The bit-vector constant named ``name``."""
        return self._var(name, width, self._sort(width))

    def bool_var(self, name: str) -> Any:
        """The boolean constant named ``name``."""
        return self._var(name, 0, self._tm.getBooleanSort())

    def array_var(self, name: str) -> Any:
        """The 32->8 array constant named ``name``."""
        return self._var(name, -1, self._array_sort)

    def const_array(self, value: int) -> Any:
        """The 32->8 array holding byte ``value`` at every index."""
        return self._tm.mkConstArray(self._array_sort, self.bv_const(value, 8))

    def select(self, array: Any, index: Any) -> Any:
        """``array[index]``."""
        return self._tm.mkTerm(Kind.SELECT, array, index)

    def store(self, array: Any, index: Any, value: Any) -> Any:
        """``array`` with ``value`` at ``index``."""
        return self._tm.mkTerm(Kind.STORE, array, index, value)

    def bv_op(self, op: Op, args: Sequence[Any], width: int, offset: int = 0) -> Any:
        """A bit-vector operation (SMT-LIB semantics, cvc5's native ones)."""
        tm = self._tm
        kind = _BV_BINARY.get(op)
        if kind is not None:
            return tm.mkTerm(kind, args[0], args[1])
        if op is Op.NOT:
            return tm.mkTerm(Kind.BITVECTOR_NOT, args[0])
        if op is Op.EXTRACT:
            return tm.mkTerm(tm.mkOp(Kind.BITVECTOR_EXTRACT, offset + width - 1, offset), args[0])
        if op is Op.ZEXT or op is Op.SEXT:
            extra = width - args[0].getSort().getBitVectorSize()
            if extra == 0:
                return args[0]
            kind = Kind.BITVECTOR_ZERO_EXTEND if op is Op.ZEXT else Kind.BITVECTOR_SIGN_EXTEND
            return tm.mkTerm(tm.mkOp(kind, extra), args[0])
        if op is Op.SELECT:
            return tm.mkTerm(Kind.ITE, args[0], args[1], args[2])
        raise SolverError(f"{op!r} is not a bit-vector operation of the core language; "
                          "this is a symex bug")

    def compare(self, op: Op, a: Any, b: Any) -> Any:
        """A comparison of two bit-vectors."""
        kind = _COMPARE.get(op)
        if kind is None:
            raise SolverError(f"{op!r} is not a comparison of the core language; this is a symex bug")
        return self._tm.mkTerm(kind, a, b)

    def bool_op(self, op: Op, args: Sequence[Any]) -> Any:
        """A boolean connective (EQ is iff, SELECT is if-then-else)."""
        kind = _BOOL.get(op)
        if kind is None:
            raise SolverError(f"{op!r} is not a boolean operation of the core language; "
                              "this is a symex bug")
        if not args:
            return self.bool_const(op is Op.AND)  # empty conjunction/disjunction
        if len(args) == 1 and kind is not Kind.NOT:
            return args[0]  # a one-argument and/or is its argument; cvc5 wants two
        return self._tm.mkTerm(kind, *args)

    def bool_to_bv(self, term: Any) -> Any:
        """``ite(term, #b1, #b0)``."""
        return self._tm.mkTerm(Kind.ITE, term, self._one1, self._zero1)

    def bv_to_bool(self, term: Any) -> Any:
        """``term = #b1``."""
        return self._tm.mkTerm(Kind.EQUAL, term, self._one1)

    # -- floating point ----------------------------------------------------------------------

    def fp_from_bits(self, bits: Any, width: int) -> Any:
        """The float whose IEEE bits are ``bits``."""
        op = self._tm.mkOp(Kind.FLOATINGPOINT_TO_FP_FROM_IEEE_BV, *_FP_FORMATS[width])
        return self._tm.mkTerm(op, bits)

    def fp_term(self, kind: FloatKind, args: Sequence[Any], width: int) -> Any:
        """A float operation (rounding to nearest even)."""
        operation, mode = _FP_TERMS[kind]
        if mode is None:
            return self._tm.mkTerm(operation, *args)
        return self._tm.mkTerm(operation, self._tm.mkRoundingMode(mode), *args)

    def fp_test(self, kind: FloatTest, args: Sequence[Any]) -> Any:
        """A predicate on floats."""
        return self._tm.mkTerm(_FP_TESTS[kind], *args)

    def fp_convert(self, term: Any, width: int) -> Any:
        """``term`` as a ``width``-bit float."""
        op = self._tm.mkOp(Kind.FLOATINGPOINT_TO_FP_FROM_FP, *_FP_FORMATS[width])
        return self._tm.mkTerm(op, self._tm.mkRoundingMode(_NEAREST), term)

    def fp_from_integer(self, bits: Any, width: int, signed: bool) -> Any:
        """The integer ``bits`` as a ``width``-bit float."""
        kind = (Kind.FLOATINGPOINT_TO_FP_FROM_SBV if signed
                else Kind.FLOATINGPOINT_TO_FP_FROM_UBV)
        op = self._tm.mkOp(kind, *_FP_FORMATS[width])
        return self._tm.mkTerm(op, self._tm.mkRoundingMode(_NEAREST), bits)

    def fp_to_signed(self, term: Any, width: int) -> Any:
        """``term`` truncated to a signed ``width``-bit integer."""
        op = self._tm.mkOp(Kind.FLOATINGPOINT_TO_SBV, width)
        return self._tm.mkTerm(op, self._tm.mkRoundingMode(cvc5.RoundingMode.ROUND_TOWARD_ZERO),
                               term)

    # -- solving ---------------------------------------------------------------------------

    def set_logic(self, logic: str) -> None:
        """Set ``logic`` on a fresh solver (cvc5 accepts a logic only before any assertion)."""
        if self._solver.isLogicSet():
            self._solver = self._new_solver()
        self._solver.setLogic(logic)

    def assert_(self, term: Any) -> None:
        """Assert a boolean term."""
        self._solver.assertFormula(term)

    def push(self) -> None:
        """Open a context level."""
        self._solver.push()

    def pop(self, levels: int = 1) -> None:
        """Drop ``levels`` context levels."""
        self._solver.pop(levels)
        self._sat = False

    def check(self, assumptions: Sequence[Any] = (), timeout: float | None = None) -> CheckResult:
        """Check satisfiability; cvc5's per-check time limit gives UNKNOWN."""
        solver = self._solver
        ms = check_milliseconds(timeout) or 0  # 0: no limit
        if ms != self._timeout_set:
            solver.setOption("tlimit-per", str(ms))
            self._timeout_set = ms
        self._sat = False
        try:
            result = solver.checkSatAssuming(*assumptions) if assumptions else solver.checkSat()
        except RuntimeError as exc:
            self._last_reason = f"cvc5 failed: {exc}"
            return CheckResult.UNKNOWN
        if result.isSat():
            self._sat = True
            return CheckResult.SAT
        if result.isUnsat():
            return CheckResult.UNSAT
        self._last_reason = str(result.getUnknownExplanation()) or "cvc5 gave no reason"
        return CheckResult.UNKNOWN

    def _model_value(self, term: Any) -> Any:
        return self._solver.getValue(term)

    def _boolean_of(self, value: Any) -> bool | None:
        return bool(value.getBooleanValue()) if value.isBooleanValue() else None

    def _integer_of(self, value: Any) -> int:
        return int(value.getBitVectorValue(10))

    def _stores_of(self, value: Any) -> tuple[list[tuple[int, int]], int] | None:
        return stores_of(value)

    def interrupt(self) -> None:
        """No-op: cvc5's Python API cannot stop a running check."""

    def reset(self) -> None:
        """Forget every assertion and level (terms stay valid: the term manager is kept)."""
        self._solver = self._new_solver()
        self._last_reason = ""

    def close(self) -> None:
        """Drop the solver; the term manager goes with the backend."""
        self._solver = self._new_solver()


def stores_of(value: Any) -> tuple[list[tuple[int, int]], int] | None:
    """A cvc5 array model value as (stores, newest first; the default byte), or None for
    another shape (also for pySMT driving cvc5, which cannot convert these values back)."""
    writes: list[tuple[int, int]] = []
    while value.getKind() == Kind.STORE:
        writes.append((int(value[1].getBitVectorValue(10)), int(value[2].getBitVectorValue(10))))
        value = value[0]
    if value.getKind() != Kind.CONST_ARRAY:
        return None
    return writes, int(value.getConstArrayBase().getBitVectorValue(10))
