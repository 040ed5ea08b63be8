"""The z3 backend (package ``z3-solver``): the core language on z3's C API, one z3 context each.

Terms are built through the raw ``Z3_mk_*`` functions and wrapped once, because the z3py
operators re-check sorts and coerce Python values on every call, which dominates the cost of
translating large queries. z3 releases the GIL inside ``check`` and honours
``Context.interrupt`` from another thread, so it is the one backend a portfolio can race in a
thread.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Any
from collections.abc import Hashable

import z3

from symex.expr.float_theory import FloatKind, FloatTest
from symex.errors import SolverError
from symex.expr import Op
from symex.solvers.backend import (MAX_CHECK_MS, CheckResult, ModelReading, array_contents,
                                   check_milliseconds, no_model_error)

__all__ = ["FRESH_AFTER_VARIABLE", "FRESH_AFTER_WORK", "Z3Backend", "Z3_MEMORY_LIMIT_MB",
           "fresh_after_work"]

#: z3's memory cap in megabytes: bit-blasting a deep arithmetic chain can take tens of GB within
#: a second, and the cap turns that into an UNKNOWN/error instead of the machine swapping.
Z3_MEMORY_LIMIT_MB = 6144

#: Work (z3's deterministic resource units, ``rlimit``) an incremental check may spend before
#: the query is asked again of a fresh non-incremental solver. Once a context has seen a
#: ``push`` or assumptions, z3 answers with its incremental SMT core, which does not
#: preprocess and bit-blast as its non-incremental tactics do: on constraint puzzles
#: (SV-COMP's AllInterval: 66 all-different constraints) that core took 1.4-2.0 s where a
#: fresh solver took 0.4-0.5 s. z3's own combined solver can fall back the same way after a
#: time (``solver2_timeout``); a time would make the answering solver, and so the model and
#: the test, differ from run to run, so the budget is counted in work: about 0.5 s of the
#: incremental core's work (a fresh solver also loses where the incremental one was about to
#: finish: at 700,000 units rle_adler, 35 such queries, took 1.25x as long; at 3,000,000 it
#: asked 2 and took 1.03x; expr_parser 0.72x). An easy query takes under 10,000 units.
FRESH_AFTER_WORK = 3_000_000
#: Environment variable overriding :data:`FRESH_AFTER_WORK` for an A/B comparison ("0": never).
FRESH_AFTER_VARIABLE = "SYMEX_Z3_FRESH_AFTER"


def fresh_after_work() -> int:
    """The work budget of an incremental check (``$SYMEX_Z3_FRESH_AFTER``, else the default);
    0: never ask a fresh solver."""
    given = os.environ.get(FRESH_AFTER_VARIABLE, "").strip()
    return int(given) if given.isdigit() else FRESH_AFTER_WORK


_BV_BINARY: dict[Op, Callable[..., Any]] = {
    Op.ADD: z3.Z3_mk_bvadd,
    Op.SUB: z3.Z3_mk_bvsub,
    Op.MUL: z3.Z3_mk_bvmul,
    Op.UDIV: z3.Z3_mk_bvudiv,
    Op.SDIV: z3.Z3_mk_bvsdiv,
    Op.UREM: z3.Z3_mk_bvurem,
    Op.SREM: z3.Z3_mk_bvsrem,
    Op.AND: z3.Z3_mk_bvand,
    Op.OR: z3.Z3_mk_bvor,
    Op.XOR: z3.Z3_mk_bvxor,
    Op.SHL: z3.Z3_mk_bvshl,
    Op.LSHR: z3.Z3_mk_bvlshr,
    Op.ASHR: z3.Z3_mk_bvashr,
    Op.CONCAT: z3.Z3_mk_concat,
}
_COMPARE: dict[Op, Callable[..., Any]] = {
    Op.EQ: z3.Z3_mk_eq,
    Op.ULT: z3.Z3_mk_bvult,
    Op.ULE: z3.Z3_mk_bvule,
    Op.SLT: z3.Z3_mk_bvslt,
    Op.SLE: z3.Z3_mk_bvsle,
}


class Z3Backend(ModelReading):
    """One z3 solver context implementing :class:`symex.solvers.backend.Backend`."""

    __slots__ = ("_ctx", "_ref", "_lambdas", "_solver", "_model", "_sorts", "_array_sort", "_true",
                 "_false", "_one1", "_zero1", "_last_reason", "_retained", "_fp_sorts", "_logic",
                 "_incremental", "_stop_asking", "fresh_after", "fresh_checks")

    name: str = "z3"
    can_interrupt: bool = True
    releases_gil: bool = True

    def __init__(self) -> None:
        """A fresh backend with its own z3 context (terms of two backends never mix)."""
        # z3 catches SIGINT during a check and answers "unknown"; symex handles Ctrl-C itself
        # (the run stops and keeps its results), so z3 must let it through
        z3.set_param("ctrl_c", False)
        z3.set_param("memory_max_size", Z3_MEMORY_LIMIT_MB)
        #: work budget of an incremental check before a fresh solver is asked (0: never)
        self.fresh_after = fresh_after_work()
        #: queries the incremental core gave up on and a fresh solver was asked
        self.fresh_checks = 0
        #: interrupted, or z3 failed: the check is not asked again of a fresh solver
        self._stop_asking = False
        self._new_context()

    def _new_context(self) -> None:
        # A new context, not just a new solver: z3's answers on one query depend on what else
        # its context has seen, so reusing it would make runs differ from one another.
        # The old context goes first: its memory counts against z3's cap, and past the cap
        # z3 makes no context at all, on which z3py's Context() crashes the process (seen
        # after memcached's queries over a 1 MB slab took z3 to its 6 GB)
        self._release()
        held = z3.z3core.Z3_get_estimated_alloc_size() / 2**20
        if held > Z3_MEMORY_LIMIT_MB * 0.95:
            raise SolverError(f"z3 holds {held:.0f} MB, its cap is {Z3_MEMORY_LIMIT_MB} MB: "
                              "a query abandoned past its time limit still runs; this query "
                              "is not asked (the path ends as partial)")
        self._ctx = z3.Context()
        self._ref = self._ctx.ref()
        self._solver = z3.Solver(ctx=self._ctx)
        self._logic = ""
        #: the solver has seen a push (z3 then answers with its incremental core, for good)
        self._incremental = False
        self._array_sort = z3.ArraySort(z3.BitVecSort(32, self._ctx), z3.BitVecSort(8, self._ctx))
        self._true = z3.BoolVal(True, self._ctx)
        self._false = z3.BoolVal(False, self._ctx)
        self._one1 = self.bv_const(1, 1)
        self._zero1 = self.bv_const(0, 1)
        self._last_reason = ""

    # -- terms -----------------------------------------------------------------------------

    def _kept(self, term: Any) -> Any:
        """``term``, kept alive until the context goes.

        z3 numbers its terms and recycles the numbers of freed ones; its rewriter orders
        arguments by those numbers, so the order in which terms are freed changes its models.
        The translator's caches are hash maps keyed by expressions (hashed by address), whose
        release order differs from process to process: without this, one query gave other
        test bytes in another process. Sessions reset a context that has retained
        ``RETAINED_TERMS_LIMIT`` terms (solvers/sessions.py), which bounds the memory. The
        wrapper is kept rather than a raw reference taken: every ctypes call releases the GIL,
        and a second call per term slowed a portfolio's in-thread z3 member 20-fold."""
        self._retained.append(term)
        return term

    def _sort(self, width: int) -> Any:
        """The raw z3 sort of ``width``-bit vectors."""
        sort = self._sorts.get(width)
        if sort is None:
            # the z3py wrapper holds a reference count; a bare Z3_mk_bv_sort would be freed
            sort = z3.BitVecSort(width, self._ctx)
            self._sorts[width] = sort
        return sort.ast

    def bv_const(self, value: int, width: int) -> Any:
        """A bit-vector constant."""
        raw = z3.Z3_mk_numeral(self._ref, str(value), self._sort(width))
        return self._kept(z3.BitVecRef(raw, self._ctx))

    def bool_const(self, value: bool) -> Any:
        """``true`` or ``false``."""
        return self._true if value else self._false

    def bv_var(self, name: str, width: int) -> Any:
        """The bit-vector constant named ``name`` (z3 identifies constants by name and sort)."""
        symbol = z3.Z3_mk_string_symbol(self._ref, name)
        raw = z3.Z3_mk_const(self._ref, symbol, self._sort(width))
        return self._kept(z3.BitVecRef(raw, self._ctx))

    def bool_var(self, name: str) -> Any:
        """The boolean constant named ``name``."""
        return self._kept(z3.Bool(name, self._ctx))

    def array_var(self, name: str) -> Any:
        """The 32->8 array constant named ``name``."""
        symbol = z3.Z3_mk_string_symbol(self._ref, name)
        raw = z3.Z3_mk_const(self._ref, symbol, self._array_sort.ast)
        return self._kept(z3.ArrayRef(raw, self._ctx))

    def const_array(self, value: int) -> Any:
        """The 32->8 array holding byte ``value`` at every index."""
        raw = z3.Z3_mk_const_array(self._ref, z3.BitVecSort(32, self._ctx).ast,
                                   self.bv_const(value, 8).as_ast())
        return self._kept(z3.ArrayRef(raw, self._ctx))

    def array_lambda(self, key: Hashable, body: Callable[[Any], Any]) -> Any:
        """The 32->8 array ``lambda i. body(i)``, the same for the same ``key`` until the
        context is reset (it holds no assertion, so a pop does not undo it): built once,
        each read is one ``select``, which z3 beta-reduces in C++."""
        found = self._lambdas.get(key)
        if found is None:
            index = z3.Const("symex!index", z3.BitVecSort(32, self._ctx))
            found = self._lambdas[key] = self._kept(z3.Lambda([index], body(index)))
        return found

    def select(self, array: Any, index: Any) -> Any:
        """``array[index]``."""
        raw = z3.Z3_mk_select(self._ref, array.as_ast(), index.as_ast())
        return self._kept(z3.BitVecRef(raw, self._ctx))

    def store(self, array: Any, index: Any, value: Any) -> Any:
        """``array`` with ``value`` at ``index``."""
        raw = z3.Z3_mk_store(self._ref, array.as_ast(), index.as_ast(), value.as_ast())
        return self._kept(z3.ArrayRef(raw, self._ctx))

    def bv_op(self, op: Op, args: Sequence[Any], width: int, offset: int = 0) -> Any:
        """A bit-vector operation (SMT-LIB semantics, z3's native ones)."""
        ref = self._ref
        make = _BV_BINARY.get(op)
        if make is not None:
            raw = make(ref, args[0].as_ast(), args[1].as_ast())
        elif op is Op.NOT:
            raw = z3.Z3_mk_bvnot(ref, args[0].as_ast())
        elif op is Op.EXTRACT:
            raw = z3.Z3_mk_extract(ref, offset + width - 1, offset, args[0].as_ast())
        elif op is Op.ZEXT or op is Op.SEXT:
            extra = width - args[0].size()
            if extra == 0:
                return args[0]
            mk = z3.Z3_mk_zero_ext if op is Op.ZEXT else z3.Z3_mk_sign_ext
            raw = mk(ref, extra, args[0].as_ast())
        elif op is Op.SELECT:
            raw = z3.Z3_mk_ite(ref, args[0].as_ast(), args[1].as_ast(), args[2].as_ast())
        else:
            raise SolverError(f"{op!r} is not a bit-vector operation of the core language; "
                              "this is a symex bug")
        return self._kept(z3.BitVecRef(raw, self._ctx))

    def compare(self, op: Op, a: Any, b: Any) -> Any:
        """A comparison of two bit-vectors."""
        make = _COMPARE.get(op)
        if make is None:
            raise SolverError(f"{op!r} is not a comparison of the core language; this is a symex bug")
        return self._kept(z3.BoolRef(make(self._ref, a.as_ast(), b.as_ast()), self._ctx))

    def bool_op(self, op: Op, args: Sequence[Any]) -> Any:
        """A boolean connective (EQ is iff, SELECT is if-then-else)."""
        ref = self._ref
        if op is Op.NOT:
            raw = z3.Z3_mk_not(ref, args[0].as_ast())
        elif op is Op.AND or op is Op.OR:
            n = len(args)
            array = (z3.Ast * n)()
            for i, a in enumerate(args):
                array[i] = a.as_ast()
            raw = (z3.Z3_mk_and if op is Op.AND else z3.Z3_mk_or)(ref, n, array)
        elif op is Op.XOR:
            raw = z3.Z3_mk_xor(ref, args[0].as_ast(), args[1].as_ast())
        elif op is Op.EQ:
            raw = z3.Z3_mk_eq(ref, args[0].as_ast(), args[1].as_ast())
        elif op is Op.SELECT:
            raw = z3.Z3_mk_ite(ref, args[0].as_ast(), args[1].as_ast(), args[2].as_ast())
        else:
            raise SolverError(f"{op!r} is not a boolean operation of the core language; "
                              "this is a symex bug")
        return self._kept(z3.BoolRef(raw, self._ctx))

    def bool_to_bv(self, term: Any) -> Any:
        """``ite(term, #b1, #b0)``."""
        raw = z3.Z3_mk_ite(self._ref, term.as_ast(), self._one1.as_ast(), self._zero1.as_ast())
        return self._kept(z3.BitVecRef(raw, self._ctx))

    def bv_to_bool(self, term: Any) -> Any:
        """``term = #b1``."""
        raw = z3.Z3_mk_eq(self._ref, term.as_ast(), self._one1.as_ast())
        return self._kept(z3.BoolRef(raw, self._ctx))

    # -- floating point ----------------------------------------------------------------------

    def _fp_sort(self, width: int) -> Any:
        sort = self._fp_sorts.get(width)
        if sort is None:
            sort = self._fp_sorts[width] = (z3.Float32(self._ctx) if width == 32
                                            else z3.Float64(self._ctx))
        return sort

    def fp_from_bits(self, bits: Any, width: int) -> Any:
        """The float whose IEEE bits are ``bits``."""
        return self._kept(z3.fpToFP(bits, self._fp_sort(width), ctx=self._ctx))

    def fp_term(self, kind: FloatKind, args: Sequence[Any], width: int) -> Any:
        """A float operation (rounding to nearest even)."""
        ctx = self._ctx
        rne = z3.RNE(ctx)
        if kind is FloatKind.ADD:
            term = z3.fpAdd(rne, args[0], args[1], ctx)
        elif kind is FloatKind.SUB:
            term = z3.fpSub(rne, args[0], args[1], ctx)
        elif kind is FloatKind.MUL:
            term = z3.fpMul(rne, args[0], args[1], ctx)
        elif kind is FloatKind.DIV:
            term = z3.fpDiv(rne, args[0], args[1], ctx)
        elif kind is FloatKind.REM:
            term = z3.fpRem(args[0], args[1], ctx)
        elif kind is FloatKind.SQRT:
            term = z3.fpSqrt(rne, args[0], ctx)
        elif kind is FloatKind.FMA:
            term = z3.fpFMA(rne, args[0], args[1], args[2], ctx)
        elif kind is FloatKind.NEG:
            term = z3.fpNeg(args[0], ctx)
        elif kind is FloatKind.ABS:
            term = z3.fpAbs(args[0], ctx)
        elif kind is FloatKind.ITE:
            term = z3.If(args[0], args[1], args[2], ctx)
        else:
            mode = {FloatKind.ROUND_FLOOR: z3.RTN, FloatKind.ROUND_CEIL: z3.RTP,
                    FloatKind.ROUND_TRUNC: z3.RTZ, FloatKind.ROUND_EVEN: z3.RNE,
                    FloatKind.ROUND_AWAY: z3.RNA}[kind](ctx)
            term = z3.fpRoundToIntegral(mode, args[0], ctx)
        return self._kept(term)

    def fp_test(self, kind: FloatTest, args: Sequence[Any]) -> Any:
        """A predicate on floats."""
        ctx = self._ctx
        if kind is FloatTest.SAME:
            raw = z3.Z3_mk_eq(self._ref, args[0].as_ast(), args[1].as_ast())
            return self._kept(z3.BoolRef(raw, ctx))
        make = {FloatTest.EQ: z3.fpEQ, FloatTest.LT: z3.fpLT, FloatTest.LEQ: z3.fpLEQ,
                FloatTest.IS_NAN: z3.fpIsNaN, FloatTest.IS_ZERO: z3.fpIsZero,
                FloatTest.IS_NEGATIVE: z3.fpIsNegative}[kind]
        return self._kept(make(*args, ctx))

    def fp_convert(self, term: Any, width: int) -> Any:
        """``term`` as a ``width``-bit float."""
        return self._kept(z3.fpToFP(z3.RNE(self._ctx), term, self._fp_sort(width),
                                    ctx=self._ctx))

    def fp_from_integer(self, bits: Any, width: int, signed: bool) -> Any:
        """The integer ``bits`` as a ``width``-bit float."""
        make = z3.fpSignedToFP if signed else z3.fpUnsignedToFP
        return self._kept(make(z3.RNE(self._ctx), bits, self._fp_sort(width), self._ctx))

    def fp_to_signed(self, term: Any, width: int) -> Any:
        """``term`` truncated to a signed ``width``-bit integer."""
        return self._kept(z3.fpToSBV(z3.RTZ(self._ctx), term, z3.BitVecSort(width, self._ctx),
                                     self._ctx))

    @property
    def retained_terms(self) -> int:
        """Terms built in this context, all kept alive until it goes (see ``_kept``)."""
        return len(self._retained)

    # -- solving ---------------------------------------------------------------------------

    def _solver_for(self, logic: str) -> z3.Solver:
        """z3's solver for ``logic`` in this context. Not ``z3.SolverFor``: it makes the
        logic's name in z3's global context, creating that context (8 ms of start-up) in a
        process that never uses it."""
        symbol = z3.Z3_mk_string_symbol(self._ref, logic)
        return z3.Solver(z3.Z3_mk_solver_for_logic(self._ref, symbol), self._ctx)

    def set_logic(self, logic: str) -> None:
        """Replace the (fresh) solver by z3's solver specialised for ``logic``."""
        self._solver = self._solver_for(logic)
        self._logic = logic
        self._incremental = False
        self._model = None

    def assert_(self, term: Any) -> None:
        """Assert a boolean term."""
        z3.Z3_solver_assert(self._ref, self._solver.solver, term.as_ast())

    def push(self) -> None:
        """Open a context level."""
        self._solver.push()
        self._incremental = True

    def pop(self, levels: int = 1) -> None:
        """Drop ``levels`` context levels."""
        self._solver.pop(levels)
        self._model = None

    def check(self, assumptions: Sequence[Any] = (), timeout: float | None = None) -> CheckResult:
        """Check satisfiability; a timeout, interrupt or resource limit gives UNKNOWN. An
        incremental check that spends :attr:`fresh_after` work is asked again of a fresh
        non-incremental solver (see :data:`FRESH_AFTER_WORK`) within what is left of
        ``timeout``."""
        solver = self._solver
        ms = check_milliseconds(timeout)
        budget = self.fresh_after if (self._incremental or assumptions) else 0
        solver.set("timeout", MAX_CHECK_MS if ms is None else ms, "rlimit", budget)
        self._model = None
        self._stop_asking = False
        started = time.monotonic()
        result = self._checked(solver, assumptions)
        if result is None and budget and not self._stop_asking:
            spent_ms = (time.monotonic() - started) * 1000
            if ms is None or spent_ms < ms - 1:  # the work ran out, not the time
                self.fresh_checks += 1
                fresh = self._solver_for(self._logic or "QF_ABV")
                fresh.set("timeout", MAX_CHECK_MS if ms is None else max(1, int(ms - spent_ms)))
                for term in (*solver.assertions(), *assumptions):  # assumptions held as facts
                    z3.Z3_solver_assert(self._ref, fresh.solver, term.as_ast())
                result = self._checked(fresh, ())
        return CheckResult.UNKNOWN if result is None else result

    def _checked(self, solver: Any, assumptions: Sequence[Any]) -> CheckResult | None:
        """One z3 check: SAT (its model kept), UNSAT, or None for unknown."""
        try:
            result = solver.check(*assumptions)
        except z3.Z3Exception as exc:
            # z3 raises for out-of-memory and some cancellations; to the caller both are
            # "could not decide", which a path survives as partial.
            self._last_reason = f"z3 failed: {exc}"
            self._stop_asking = True  # failed: a fresh solver would fail alike
            return None
        if result == z3.sat:
            self._model = solver.model()
            return CheckResult.SAT
        if result == z3.unsat:
            return CheckResult.UNSAT
        self._last_reason = solver.reason_unknown() or "z3 gave no reason"
        return None

    def _require_model(self) -> Any:
        """The model of the last check, or a SolverError if it was not SAT."""
        if self._model is None:
            raise no_model_error()
        return self._model

    def bv_value(self, term: Any) -> int:
        """The unsigned value of ``term`` in the last model (booleans read as 0/1)."""
        value = self._require_model().eval(term, model_completion=True)
        if z3.is_bool(value):
            return 1 if z3.is_true(value) else 0
        return value.as_long()

    def array_value(self, array: Any, size: int) -> bytes:
        """Bytes ``0 .. size-1`` of ``array``, decoding its model value once."""
        model = self._require_model()
        value = model.eval(array, model_completion=True)
        decoded = _decode_array(model, value, size)
        if decoded is not None:
            return decoded
        # An interpretation we cannot read directly (e.g. a lambda): ask per byte.
        return bytes(
            model.eval(self.select(array, self.bv_const(i, 32)), model_completion=True).as_long()
            & 0xFF
            for i in range(size)
        )

    def interrupt(self) -> None:
        """Stop a check running in another thread (it answers UNKNOWN)."""
        self._stop_asking = True
        self._ctx.interrupt()

    def reset(self) -> None:
        """Forget every assertion, level and term: a new context, as the protocol says."""
        self._new_context()

    def close(self) -> None:
        """Drop every term and the context; the backend must not be used afterwards."""
        self._release()

    def _release(self) -> None:
        """Drop every term, then the context. Deleted once its terms are freed, a context
        goes in a tenth of a second; deleted with terms alive (their wrappers freed after it,
        as a garbage cycle's members are, in any order) z3's ``~ast_manager`` took 8-37 s
        over an interrupted nested-write query's 12,000 terms, stalling the thread that
        happened to collect the garbage."""
        self._solver = None
        self._model = None
        self._retained: list[Any] = []
        self._lambdas: dict[Hashable, Any] = {}
        self._sorts: dict[int, Any] = {}
        self._fp_sorts: dict[int, Any] = {}
        self._array_sort = self._true = self._false = self._one1 = self._zero1 = None
        self._ctx = None


def _decode_array(model: Any, value: Any, size: int) -> bytes | None:
    """Bytes of an array model value made of store/const-array/as-array nodes; None for other
    shapes."""
    writes: list[tuple[int, int]] = []
    default = 0
    while True:
        if z3.is_store(value):
            index, byte = value.arg(1), value.arg(2)
            if not (z3.is_bv_value(index) and z3.is_bv_value(byte)):
                return None
            writes.append((index.as_long(), byte.as_long()))
            value = value.arg(0)
        elif z3.is_const_array(value):
            base = value.arg(0)
            if not z3.is_bv_value(base):
                return None
            default = base.as_long()
            break
        elif z3.is_as_array(value):
            interp = model.get_interp(z3.get_as_array_func(value))
            for i in range(interp.num_entries()):
                entry = interp.entry(i)
                index, byte = entry.arg_value(0), entry.value()
                if not (z3.is_bv_value(index) and z3.is_bv_value(byte)):
                    return None
                # the first matching entry wins, and the first-listed write is applied last
                writes.append((index.as_long(), byte.as_long()))
            else_value = interp.else_value()
            if else_value is not None:
                if not z3.is_bv_value(else_value):
                    return None
                default = else_value.as_long()
            break
        else:
            return None
    return array_contents(writes, default, size)
