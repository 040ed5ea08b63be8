"""A :class:`~symex.solvers.base.Solver` backed by the Z3 SMT solver (the ``z3-solver`` package).

Expressions are translated to Z3 terms iteratively (never recursively: path conditions of long
programs are deep) and cached per expression object, so the path condition shared by successive
queries is translated once. Width-1 expressions become Z3 Booleans, because that is what Z3 reasons
about best; they are turned into 1-bit vectors only where a bit-vector operation consumes them.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from symex import expr as _expr
from symex.errors import SolverError, SolverUnknown
from symex.solvers.base import SolverBase

try:
    import z3
except ImportError:  # pragma: no cover - z3-solver is a declared dependency
    z3 = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from symex.expr import Array, Expr, UpdateNode

__all__ = ["Z3Solver"]

_LOGIC_BV = "QF_BV"
_LOGIC_ABV = "QF_ABV"

# The translation only keeps this many update-list prefixes pinned; beyond it the cache is
# dropped, trading a rebuild of some Store chains for bounded memory.
_STORE_CACHE_LIMIT = 200_000

_MASK8 = 0xFF


#: z3's memory cap in megabytes (z3 raises "out of memory" past it)
Z3_MEMORY_LIMIT_MB = 6144


class Z3Solver(SolverBase):
    """Answers queries with Z3, using one incremental Z3 solver per logic and push/pop per query.

    ``timeout`` is the time limit of each satisfiability check in seconds (None: no limit); a
    check that runs out of time raises :class:`symex.errors.SolverUnknown`.
    """

    def __init__(self, timeout: float | None = None) -> None:
        """Create a solver with its own Z3 context; ``timeout`` is in seconds per check."""
        if z3 is None:
            raise SolverError("z3 is not installed: pip install z3-solver")
        super().__init__()
        # z3 can bit-blast a deep arithmetic chain into tens of GB within a second; a memory cap
        # turns that into an error (the path ends as partial) instead of the machine swapping
        z3.set_param("memory_max_size", Z3_MEMORY_LIMIT_MB)
        if timeout is not None and timeout <= 0:
            raise SolverError(f"solver timeout must be positive seconds, got {timeout!r}")
        # At least 1 ms: Z3 reads a timeout of 0 as "no limit".
        self._timeout_ms: int | None = None if timeout is None else max(1, int(timeout * 1000))
        # A private context keeps array names and terms of independent solvers apart.
        self._ctx = z3.Context()
        self._ctx_ref = self._ctx.ref()
        self._solvers: dict[str, Any] = {}
        self._terms: weakref.WeakKeyDictionary[Expr, Any] = weakref.WeakKeyDictionary()
        self._bit_terms: weakref.WeakKeyDictionary[Expr, Any] = weakref.WeakKeyDictionary()
        self._root_arrays: weakref.WeakKeyDictionary[Expr, tuple[Array, ...]] = (
            weakref.WeakKeyDictionary()
        )
        self._array_terms: weakref.WeakKeyDictionary[Array, Any] = weakref.WeakKeyDictionary()
        self._const_array_facts: weakref.WeakKeyDictionary[Array, Any] = (
            weakref.WeakKeyDictionary()
        )
        # Update nodes cannot be weakly referenced, so this cache pins them; it is bounded by
        # _STORE_CACHE_LIMIT.
        self._store_terms: dict[UpdateNode, Any] = {}
        self._used_names: set[str] = set()
        self._sorts: dict[int, Any] = {}
        self._one1 = z3.BitVecVal(1, 1, self._ctx)
        self._zero1 = z3.BitVecVal(0, 1, self._ctx)
        op = _expr.Op
        self._bv_binary: dict[Any, Callable[..., Any]] = {
            op.ADD: z3.Z3_mk_bvadd,
            op.SUB: z3.Z3_mk_bvsub,
            op.MUL: z3.Z3_mk_bvmul,
            op.UDIV: z3.Z3_mk_bvudiv,
            op.SDIV: z3.Z3_mk_bvsdiv,
            op.UREM: z3.Z3_mk_bvurem,
            op.SREM: z3.Z3_mk_bvsrem,
            op.AND: z3.Z3_mk_bvand,
            op.OR: z3.Z3_mk_bvor,
            op.XOR: z3.Z3_mk_bvxor,
            op.SHL: z3.Z3_mk_bvshl,
            op.LSHR: z3.Z3_mk_bvlshr,
            op.ASHR: z3.Z3_mk_bvashr,
        }
        self._comparisons: dict[Any, Callable[..., Any]] = {
            op.ULT: z3.Z3_mk_bvult,
            op.ULE: z3.Z3_mk_bvule,
            op.SLT: z3.Z3_mk_bvslt,
            op.SLE: z3.Z3_mk_bvsle,
        }

    # -- backend primitives -------------------------------------------------------------------

    def _check(self, constraints: tuple[Expr, ...], extra: Expr | None) -> bool:
        """Whether the constraints and ``extra`` are satisfiable together."""
        roots = constraints if extra is None else (*constraints, extra)
        solver, facts = self._prepare(roots, ())
        return self._run(solver, facts, lambda _s: True) is not None

    def _model(
        self, constraints: tuple[Expr, ...], exprs: Sequence[Expr], arrays: Sequence[Array]
    ) -> tuple[list[int], list[bytes]] | None:
        """Values of ``exprs`` and contents of ``arrays`` in one model of ``constraints``."""
        solver, facts = self._prepare(constraints, exprs)
        query_arrays = self._arrays_of((*constraints, *exprs))
        value_terms = [self._terms[e] for e in exprs]

        def read_model(s: Any) -> tuple[list[int], list[bytes]]:
            model = s.model()
            values = [self._model_value(model, t) for t in value_terms]
            contents = [self._array_contents(model, a, a in query_arrays) for a in arrays]
            return values, contents

        return self._run(solver, facts, read_model)

    def _run(self, solver: Any, facts: list[Any], on_sat: Callable[[Any], Any]) -> Any:
        """Check ``facts`` in a fresh scope of ``solver``; ``on_sat(solver)`` if sat, else None.

        ``on_sat`` must not return None, which stands for unsat.
        """
        stats = self.statistics
        stats.queries += 1
        started = time.perf_counter()
        try:
            solver.push()
            try:
                solver.add(facts)
                result = solver.check()
                if result == z3.sat:
                    stats.sat += 1
                    return on_sat(solver)
                if result == z3.unsat:
                    stats.unsat += 1
                    return None
                stats.unknown += 1
                raise SolverUnknown(solver.reason_unknown() or "z3 gave no reason")
            finally:
                solver.pop()
        except z3.Z3Exception as exc:
            # A solver in an unknown state after an internal error is dropped and rebuilt.
            self._solvers.clear()
            raise SolverError(f"z3 failed: {exc}; the query was abandoned") from exc
        finally:
            stats.time += time.perf_counter() - started

    def close(self) -> None:
        """Drop all Z3 state; the solver must not be used afterwards."""
        self._solvers.clear()
        self._terms = weakref.WeakKeyDictionary()
        self._bit_terms = weakref.WeakKeyDictionary()
        self._root_arrays = weakref.WeakKeyDictionary()
        self._array_terms = weakref.WeakKeyDictionary()
        self._const_array_facts = weakref.WeakKeyDictionary()
        self._store_terms.clear()

    # -- query assembly -----------------------------------------------------------------------

    def _prepare(
        self, constraints: Sequence[Expr], exprs: Sequence[Expr]
    ) -> tuple[Any, list[Any]]:
        """The solver for the query's logic and the Z3 facts to assert (constraints as Booleans)."""
        arrays = self._arrays_of((*constraints, *exprs))
        facts = [self._terms[c] for c in constraints]
        for array in arrays:
            if not array.is_symbolic:
                facts.append(self._const_array_fact(array))
        return self._solver_for(_LOGIC_ABV if arrays else _LOGIC_BV), facts

    def _arrays_of(self, roots: Sequence[Expr]) -> dict[Array, None]:
        """The arrays read by ``roots`` (ordered, as dict keys), translating roots on the way."""
        found: dict[Array, None] = {}
        cache = self._root_arrays
        for root in roots:
            arrays = cache.get(root)
            if arrays is None:
                arrays = self._translate(root)
                cache[root] = arrays
            for array in arrays:
                found[array] = None
        return found

    def _solver_for(self, logic: str) -> Any:
        """The long-lived Z3 solver for ``logic``, created on first use."""
        solver = self._solvers.get(logic)
        if solver is None:
            solver = z3.SolverFor(logic, ctx=self._ctx)
            if self._timeout_ms is not None:
                solver.set("timeout", self._timeout_ms)
            self._solvers[logic] = solver
        return solver

    # -- translation --------------------------------------------------------------------------

    def _sort(self, width: int) -> Any:
        """The Z3 bit-vector sort of ``width`` bits (raw AST)."""
        sort = self._sorts.get(width)
        if sort is None:
            sort = z3.BitVecSort(width, self._ctx)
            self._sorts[width] = sort
        return sort.ast

    def _bv_term(self, e: Expr) -> Any:
        """The bit-vector term of an already translated ``e`` (width-1 Booleans become 1-bit)."""
        term = self._terms[e]
        if e.width != 1:
            return term
        bit = self._bit_terms.get(e)
        if bit is None:
            bit = z3.If(term, self._one1, self._zero1)
            self._bit_terms[e] = bit
        return bit

    def _translate(self, root: Expr) -> tuple[Array, ...]:
        """Translate every untranslated node under ``root``; return the arrays it reads."""
        ctx = self._ctx
        ref = self._ctx_ref
        terms = self._terms
        op_ = _expr.Op
        arrays: dict[Array, None] = {}
        bool_ref = z3.BoolRef
        bv_ref = z3.BitVecRef
        for e in _expr.postorder((root,)):
            op = e.op
            if op is op_.READ:
                arrays[e.updates.array] = None
            if e in terms:
                continue
            width = e.width
            args = e.args
            if op is op_.CONST:
                if width == 1:
                    term = z3.BoolVal(e.value != 0, ctx)
                else:
                    term = bv_ref(z3.Z3_mk_numeral(ref, str(e.value), self._sort(width)), ctx)
            elif op is op_.READ:
                base = self._update_list_term(e.updates)
                index = self._bv_term(args[0])
                term = bv_ref(z3.Z3_mk_select(ref, base.as_ast(), index.as_ast()), ctx)
            elif op is op_.SELECT:
                cond = terms[args[0]]
                then, else_ = terms[args[1]], terms[args[2]]
                raw = z3.Z3_mk_ite(ref, cond.as_ast(), then.as_ast(), else_.as_ast())
                term = bool_ref(raw, ctx) if width == 1 else bv_ref(raw, ctx)
            elif op in self._comparisons:
                a, b = self._bv_term(args[0]), self._bv_term(args[1])
                term = bool_ref(self._comparisons[op](ref, a.as_ast(), b.as_ast()), ctx)
            elif op is op_.EQ:
                # Both sides are Booleans (width 1) or bit-vectors alike, so Z3 equality fits.
                a, b = terms[args[0]], terms[args[1]]
                term = bool_ref(z3.Z3_mk_eq(ref, a.as_ast(), b.as_ast()), ctx)
            elif width == 1:
                term = self._translate_bool(e)
            elif op is op_.CONCAT:
                a, b = self._bv_term(args[0]), self._bv_term(args[1])
                term = bv_ref(z3.Z3_mk_concat(ref, a.as_ast(), b.as_ast()), ctx)
            elif op is op_.EXTRACT:
                a = self._bv_term(args[0])
                raw = z3.Z3_mk_extract(ref, e.value + width - 1, e.value, a.as_ast())
                term = bv_ref(raw, ctx)
            elif op is op_.ZEXT or op is op_.SEXT:
                term = self._translate_extension(e)
            elif op is op_.NOT:
                term = bv_ref(z3.Z3_mk_bvnot(ref, terms[args[0]].as_ast()), ctx)
            else:
                make = self._bv_binary[op]
                a, b = terms[args[0]], terms[args[1]]
                term = bv_ref(make(ref, a.as_ast(), b.as_ast()), ctx)
            terms[e] = term
        return tuple(arrays)

    def _translate_bool(self, e: Expr) -> Any:
        """The Boolean term of a width-1 ``e`` that is not a constant, read, ite or comparison."""
        op_ = _expr.Op
        op = e.op
        args = e.args
        terms = self._terms
        ctx = self._ctx
        if op is op_.NOT:
            return z3.Not(terms[args[0]])
        if op is op_.AND or op is op_.MUL:
            return z3.And(terms[args[0]], terms[args[1]], ctx)
        if op is op_.OR:
            return z3.Or(terms[args[0]], terms[args[1]], ctx)
        if op is op_.XOR or op is op_.ADD or op is op_.SUB:
            return z3.Xor(terms[args[0]], terms[args[1]], ctx)
        # Everything else (1-bit extracts and rare 1-bit arithmetic) goes through bit-vectors.
        ref = self._ctx_ref
        if op is op_.EXTRACT:
            a = self._bv_term(args[0])
            bit = z3.Z3_mk_extract(ref, e.value, e.value, a.as_ast())
        elif op is op_.ZEXT or op is op_.SEXT:
            return terms[args[0]]
        elif op in self._bv_binary:
            a, b = self._bv_term(args[0]), self._bv_term(args[1])
            bit = self._bv_binary[op](ref, a.as_ast(), b.as_ast())
        else:
            raise SolverError(f"cannot translate {op!r} of width 1 to z3; this is a symex bug")
        return z3.BoolRef(z3.Z3_mk_eq(ref, bit, self._one1.as_ast()), ctx)

    def _translate_extension(self, e: Expr) -> Any:
        """The term of a zero or sign extension of width > 1."""
        arg = e.args[0]
        width = e.width
        ctx = self._ctx
        if arg.width == 1:
            # A Boolean extends to 0/1 (zext) or 0/all-ones (sext).
            high = 1 if e.op is _expr.Op.ZEXT else (1 << width) - 1
            return z3.If(
                self._terms[arg], z3.BitVecVal(high, width, ctx), z3.BitVecVal(0, width, ctx)
            )
        a = self._terms[arg]
        extra = width - arg.width
        if extra == 0:
            return a
        make = z3.Z3_mk_zero_ext if e.op is _expr.Op.ZEXT else z3.Z3_mk_sign_ext
        return z3.BitVecRef(make(self._ctx_ref, extra, a.as_ast()), ctx)

    def _array_term(self, array: Array) -> Any:
        """The Z3 array constant standing for ``array`` (a unique name per context)."""
        term = self._array_terms.get(array)
        if term is None:
            name = array.name
            suffix = 1
            while name in self._used_names:
                suffix += 1
                name = f"{array.name}#{suffix}"
            self._used_names.add(name)
            ctx = self._ctx
            term = z3.Array(name, z3.BitVecSort(32, ctx), z3.BitVecSort(8, ctx))
            self._array_terms[array] = term
        return term

    def _const_array_fact(self, array: Array) -> Any:
        """The conjunction pinning every byte of a constant array to its initial value."""
        fact = self._const_array_facts.get(array)
        if fact is None:
            ctx = self._ctx
            term = self._array_term(array)
            initial = array.initial or b""
            byte_sort = z3.BitVecSort(8, ctx)
            index_sort = z3.BitVecSort(32, ctx)
            fact = z3.And(
                [
                    z3.Select(term, z3.BitVecVal(i, index_sort)) == z3.BitVecVal(v, byte_sort)
                    for i, v in enumerate(initial[: array.size])
                ],
                ctx,
            )
            self._const_array_facts[array] = fact
        return fact

    def _update_list_term(self, updates: Any) -> Any:
        """``Store(...Store(A, i0, v0)..., in, vn)`` for an update list, oldest write innermost."""
        pending: list[UpdateNode] = []
        node = updates.head
        cache = self._store_terms
        term = None
        while node is not None:
            term = cache.get(node)
            if term is not None:
                break
            pending.append(node)
            node = node.next
        if term is None:
            term = self._array_term(updates.array)
        if len(cache) + len(pending) > _STORE_CACHE_LIMIT:
            cache.clear()
        ref = self._ctx_ref
        ctx = self._ctx
        for node in reversed(pending):
            index = self._bv_term(node.index)
            value = self._bv_term(node.value)
            raw = z3.Z3_mk_store(ref, term.as_ast(), index.as_ast(), value.as_ast())
            term = z3.ArrayRef(raw, ctx)
            cache[node] = term
        return term

    # -- models -------------------------------------------------------------------------------

    @staticmethod
    def _model_value(model: Any, term: Any) -> int:
        """The unsigned value of a translated term in ``model`` (Booleans as 0/1)."""
        value = model.eval(term, model_completion=True)
        if z3.is_bool(value):
            return 1 if z3.is_true(value) else 0
        return value.as_long()

    def _array_contents(self, model: Any, array: Array, in_query: bool) -> bytes:
        """``array.size`` bytes of ``array`` in ``model``, decoding its interpretation once."""
        size = array.size
        if not array.is_symbolic:
            initial = bytes(array.initial or b"")[:size]
            return initial + bytes(size - len(initial))
        if not in_query:
            # The constraints do not mention the array: any contents satisfy them.
            return bytes(size)
        term = self._array_term(array)
        value = model.eval(term, model_completion=True)
        decoded = self._decode_array_value(model, value, size)
        if decoded is not None:
            return decoded
        # An interpretation we cannot read directly (e.g. a lambda): ask the model per byte.
        index_sort = z3.BitVecSort(32, self._ctx)
        return bytes(
            model.eval(z3.Select(term, z3.BitVecVal(i, index_sort)), model_completion=True).as_long()
            & _MASK8
            for i in range(size)
        )

    @staticmethod
    def _decode_array_value(model: Any, value: Any, size: int) -> bytes | None:
        """Bytes of an array value made of Store/K/as-array nodes; None for other shapes."""
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
                    # Z3 lets the first matching entry win, and the first-listed write is
                    # applied last below.
                    writes.append((index.as_long(), byte.as_long()))
                else_value = interp.else_value()
                if else_value is not None:
                    if not z3.is_bv_value(else_value):
                        return None
                    default = else_value.as_long()
                break
            else:
                return None
        contents = bytearray([default & _MASK8]) * size
        # ``writes`` lists the newest write first, so apply it last.
        for index, byte in reversed(writes):
            if index < size:
                contents[index] = byte & _MASK8
        return bytes(contents)
