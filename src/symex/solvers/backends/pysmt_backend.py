"""The pySMT backend (package ``pysmt``): the core language as pySMT formulas, solved by the
solver pySMT drives (``pysmt`` = z3, ``pysmt-cvc5`` = cvc5).

Each backend has its own pySMT ``Environment`` (formula manager, type checker), so two backends
never share pySMT's global state. pySMT has no time limit or interrupt of its own; both are
reached through the underlying solver object where the package exposes them (z3: yes; cvc5:
time limit yes, interrupt no). pySMT's z3 solver lives in z3's global main context, which is not
safe to drive from two threads, so ``releases_gil`` is False: a portfolio races pySMT in a
process. The translation to the underlying solver happens in Python on every assertion, so this
backend is the slowest; it exists to compare against and to reach solvers through one API.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pysmt.environment import Environment
from pysmt.exceptions import SolverReturnedUnknownResultError
from pysmt.logics import convert_logic_from_string
from pysmt.typing import ArrayType, BOOL, BVType

from symex.errors import SolverError
from symex.expr import Op
from symex.solvers.backends import PYSMT_SOLVERS
from symex.solvers.backend import MAX_CHECK_MS, CheckResult, ModelReading, array_contents, check_milliseconds

__all__ = ["PysmtBackend"]



class PysmtBackend(ModelReading):
    """One pySMT solver implementing :class:`symex.solvers.backend.Backend`."""

    __slots__ = ("name", "can_interrupt", "releases_gil", "_solver_name", "_env", "_mgr",
                 "_solver", "_logic", "_sat", "_array_type", "_one1", "_zero1", "_last_reason",
                 "_bv_binary", "_compare")

    def __init__(self, solver: str = "z3") -> None:
        """A backend over pySMT driving ``solver`` (``z3`` or ``cvc5``)."""
        if solver not in PYSMT_SOLVERS:
            raise SolverError(f"pysmt backend cannot drive '{solver}'; choose "
                              f"{' or '.join(f'pysmt-{s}' for s in PYSMT_SOLVERS)}")
        self.name = "pysmt" if solver == "z3" else f"pysmt-{solver}"
        self.can_interrupt = solver == "z3"
        self.releases_gil = False
        self._solver_name = solver
        self._env = Environment()
        if solver not in self._env.factory.all_solvers():
            raise SolverError(f"pySMT cannot find the {solver} solver; pip install "
                              f"{'z3-solver' if solver == 'z3' else solver}")
        mgr = self._mgr = self._env.formula_manager
        self._array_type = ArrayType(BVType(32), BVType(8))
        self._one1 = mgr.BV(1, 1)
        self._zero1 = mgr.BV(0, 1)
        self._last_reason = ""
        self._sat = False
        self._logic = "QF_ABV"
        self._solver: Any = None
        self._bv_binary: dict[Op, Callable[[Any, Any], Any]] = {
            Op.ADD: mgr.BVAdd, Op.SUB: mgr.BVSub, Op.MUL: mgr.BVMul,
            Op.UDIV: mgr.BVUDiv, Op.SDIV: mgr.BVSDiv, Op.UREM: mgr.BVURem, Op.SREM: mgr.BVSRem,
            Op.AND: mgr.BVAnd, Op.OR: mgr.BVOr, Op.XOR: mgr.BVXor,
            Op.SHL: mgr.BVLShl, Op.LSHR: mgr.BVLShr, Op.ASHR: mgr.BVAShr,
            Op.CONCAT: mgr.BVConcat,
        }
        self._compare: dict[Op, Callable[[Any, Any], Any]] = {
            Op.EQ: mgr.Equals, Op.ULT: mgr.BVULT, Op.ULE: mgr.BVULE,
            Op.SLT: mgr.BVSLT, Op.SLE: mgr.BVSLE,
        }

    # -- terms -----------------------------------------------------------------------------

    def bv_const(self, value: int, width: int) -> Any:
        """A bit-vector constant."""
        return self._mgr.BV(value, width)

    def bool_const(self, value: bool) -> Any:
        """``true`` or ``false``."""
        return self._mgr.Bool(value)

    def bv_var(self, name: str, width: int) -> Any:
        """The bit-vector symbol named ``name`` (pySMT returns the same symbol for a name)."""
        return self._mgr.Symbol(name, BVType(width))

    def bool_var(self, name: str) -> Any:
        """The boolean symbol named ``name``."""
        return self._mgr.Symbol(name, BOOL)

    def array_var(self, name: str) -> Any:
        """The 32->8 array symbol named ``name``."""
        return self._mgr.Symbol(name, self._array_type)

    def select(self, array: Any, index: Any) -> Any:
        """``array[index]``."""
        return self._mgr.Select(array, index)

    def store(self, array: Any, index: Any, value: Any) -> Any:
        """``array`` with ``value`` at ``index``."""
        return self._mgr.Store(array, index, value)

    def bv_op(self, op: Op, args: Sequence[Any], width: int, offset: int = 0) -> Any:
        """A bit-vector operation (SMT-LIB semantics, passed through to the solver)."""
        mgr = self._mgr
        make = self._bv_binary.get(op)
        if make is not None:
            return make(args[0], args[1])
        if op is Op.NOT:
            return mgr.BVNot(args[0])
        if op is Op.EXTRACT:
            return mgr.BVExtract(args[0], offset, offset + width - 1)
        if op is Op.ZEXT or op is Op.SEXT:
            extra = width - args[0].bv_width()
            if extra == 0:
                return args[0]
            return (mgr.BVZExt if op is Op.ZEXT else mgr.BVSExt)(args[0], extra)
        if op is Op.SELECT:
            return mgr.Ite(args[0], args[1], args[2])
        raise SolverError(f"{op!r} is not a bit-vector operation of the core language; "
                          "this is a symex bug")

    def compare(self, op: Op, a: Any, b: Any) -> Any:
        """A comparison of two bit-vectors."""
        make = self._compare.get(op)
        if make is None:
            raise SolverError(f"{op!r} is not a comparison of the core language; this is a symex bug")
        return make(a, b)

    def bool_op(self, op: Op, args: Sequence[Any]) -> Any:
        """A boolean connective (EQ is iff, SELECT is if-then-else)."""
        mgr = self._mgr
        if op is Op.AND:
            return mgr.And(*args)
        if op is Op.OR:
            return mgr.Or(*args)
        if op is Op.NOT:
            return mgr.Not(args[0])
        if op is Op.XOR:
            return mgr.Xor(args[0], args[1])
        if op is Op.EQ:
            return mgr.Iff(args[0], args[1])
        if op is Op.SELECT:
            return mgr.Ite(args[0], args[1], args[2])
        raise SolverError(f"{op!r} is not a boolean operation of the core language; "
                          "this is a symex bug")

    def bool_to_bv(self, term: Any) -> Any:
        """``ite(term, #b1, #b0)``."""
        return self._mgr.Ite(term, self._one1, self._zero1)

    def bv_to_bool(self, term: Any) -> Any:
        """``term = #b1``."""
        return self._mgr.Equals(term, self._one1)

    # -- solving ---------------------------------------------------------------------------

    def _current(self) -> Any:
        """The pySMT solver, made on first use with the last logic set."""
        if self._solver is None:
            self._solver = self._env.factory.Solver(
                name=self._solver_name, logic=convert_logic_from_string(self._logic),
                incremental=True, generate_models=True)
        return self._solver

    def _drop_solver(self) -> None:
        """Release the pySMT solver (the environment and its formulas stay)."""
        if self._solver is not None:
            self._solver.exit()
            self._solver = None
        self._sat = False

    def set_logic(self, logic: str) -> None:
        """Make a fresh pySMT solver for ``logic``."""
        self._drop_solver()
        self._logic = logic
        self._current()

    def assert_(self, term: Any) -> None:
        """Assert a boolean term."""
        self._current().add_assertion(term)

    def push(self) -> None:
        """Open a context level."""
        self._current().push()

    def pop(self, levels: int = 1) -> None:
        """Drop ``levels`` context levels."""
        self._current().pop(levels)
        self._sat = False

    def _set_timeout(self, solver: Any, timeout: float | None) -> None:
        """Put ``timeout`` on the underlying solver object."""
        ms = check_milliseconds(timeout)
        if self._solver_name == "z3":
            solver.z3.set("timeout", MAX_CHECK_MS if ms is None else ms)
        else:
            solver.cvc5.setOption("tlimit-per", str(ms or 0))

    def check(self, assumptions: Sequence[Any] = (), timeout: float | None = None) -> CheckResult:
        """Check satisfiability; a timeout or interrupt gives UNKNOWN."""
        solver = self._current()
        self._set_timeout(solver, timeout)
        self._sat = False
        try:
            sat = solver.solve(list(assumptions) if assumptions else None)
        except SolverReturnedUnknownResultError:
            if self._solver_name == "z3":
                self._last_reason = solver.z3.reason_unknown() or "z3 gave no reason"
            else:
                # pySMT drops cvc5's explanation; the time limit is the usual cause
                self._last_reason = ("cvc5 (through pySMT) answered unknown"
                                     + (f" within the {timeout} s limit" if timeout else ""))
            return CheckResult.UNKNOWN
        except Exception as exc:  # pySMT wraps solver failures in assorted exception types
            self._last_reason = f"{self.name} failed: {exc}"
            return CheckResult.UNKNOWN
        if sat:
            self._sat = True
            return CheckResult.SAT
        return CheckResult.UNSAT

    def _model_value(self, term: Any) -> Any:
        return self._solver.get_value(term)

    def _boolean_of(self, value: Any) -> bool | None:
        return bool(value.is_true()) if value.is_bool_constant() else None

    def _integer_of(self, value: Any) -> int:
        return int(value.constant_value())

    def array_value(self, array: Any, size: int) -> bytes:
        """Bytes ``0 .. size-1`` of ``array`` (pySMT's array value, a default and assigned
        entries, read once; cvc5's own value where pySMT drives cvc5, whose store chains
        pySMT cannot convert back)."""
        if self._solver_name == "cvc5":
            if not self._sat:
                self._value(array)  # raises the no-model error
            # deferred import: only pysmt-cvc5 needs the cvc5 package
            from symex.solvers.backends.cvc5_backend import stores_of  # noqa: PLC0415
            solver = self._solver
            stores = stores_of(solver.cvc5.getValue(solver.converter.convert(array)))
            if stores is None:
                raise SolverError(f"{self.name} gave an array model symex cannot read; use "
                                  "another backend for this query")
            return array_contents(*stores, size)
        return super().array_value(array, size)

    def _stores_of(self, value: Any) -> tuple[list[tuple[int, int]], int] | None:
        if not value.is_array_value():
            return None
        writes = [(int(index.constant_value()), int(byte.constant_value()))
                  for index, byte in value.array_value_assigned_values_map().items()]
        return writes, int(value.array_value_default().constant_value())

    def interrupt(self) -> None:
        """Stop a running check (z3 only; a no-op for cvc5, which pySMT cannot stop)."""
        solver = self._solver
        if self._solver_name == "z3" and solver is not None:
            solver.z3.ctx.interrupt()

    def reset(self) -> None:
        """Forget every assertion and level (formulas stay valid: the environment is kept)."""
        self._drop_solver()
        self._last_reason = ""

    def close(self) -> None:
        """Release the pySMT solver."""
        self._drop_solver()
