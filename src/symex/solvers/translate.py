"""Translation of expressions into the core language of a solver session.

A :class:`Translator` turns hash-consed :class:`~symex.expr.Expr` DAGs into terms of one
:class:`~symex.encodings.core.TermBuilder` (a backend), lowering array reads through an
:class:`~symex.encodings.base.Encoding`. Everything it remembers -- terms per expression,
declared arrays, the encoding's update-list memo -- lives in ``immutables.Map``s, so a
session can snapshot it in O(1) on push and restore it on pop: the translator then stays in
step with the solver context (an array first declared in a popped level is declared again,
with its set-up assertions, when next used).

Width-1 expressions are kept as booleans where that is natural (comparisons, the connectives
and ite on width 1, constants) and converted with ``bool_to_bv``/``bv_to_bool`` only where
the other kind is needed; solvers reason better about real booleans.
"""

from __future__ import annotations

from typing import Any, cast
from collections.abc import Callable, Sequence

import attrs
from immutables import Map, MapMutation

from symex.encodings.base import Encoding
from symex.encodings.core import COMPARE_OPS, TermBuilder
from symex.expr.float_theory import FloatTermBuilder
from symex.errors import SolverError
from symex.expr import FLOAT_OPS, Array, Expr, Op, UpdateNode
from symex.expr.float_theory import FloatTerms

__all__ = ["FloatLogicNeeded", "Translator", "TranslatorState"]

_CONST = Op.CONST
_READ = Op.READ
_SELECT = Op.SELECT
_EXTRACT = Op.EXTRACT
_EQ = Op.EQ
_NOT = Op.NOT
_COMPARISONS = frozenset(COMPARE_OPS)
_FLOAT_COMPARISONS = frozenset({Op.FOEQ, Op.FOLT, Op.FOLE})
_FLOAT_OPS = FLOAT_OPS
# Width-1 nodes of these kinds are translated as booleans; other width-1 nodes (extracts,
# 1-bit arithmetic) are bit-vectors.
_BOOLEAN_WHEN_WIDTH_1 = frozenset({Op.AND, Op.OR, Op.XOR, Op.NOT, Op.SELECT, Op.CONST})
_CONNECTIVES = frozenset({Op.AND, Op.OR, Op.XOR})
_BV_OPS = frozenset({
    Op.CONCAT, Op.ZEXT, Op.SEXT, Op.NOT, Op.ADD, Op.SUB, Op.MUL, Op.UDIV, Op.SDIV, Op.UREM,
    Op.SREM, Op.AND, Op.OR, Op.XOR, Op.SHL, Op.LSHR, Op.ASHR,
})
_MISSING = object()


class FloatLogicNeeded(Exception):
    """A query has floating-point nodes but the context's logic has no floating point (the
    session sets the logic with ``FP`` and asks again: z3 answers floats in a logic without
    them as uninterpreted functions, wrongly)."""


def _is_boolean(e: Expr) -> bool:
    """Whether ``e`` is translated as a boolean (else as a bit-vector)."""
    op = e.op
    return (op in _COMPARISONS or op in _FLOAT_COMPARISONS
            or (e.width == 1 and op in _BOOLEAN_WHEN_WIDTH_1))


@attrs.frozen(eq=False)
class TranslatorState:
    """A snapshot of everything a :class:`Translator` remembers (all persistent maps)."""

    terms: Map[Expr, Any]
    """Each translated expression's term, of its natural kind (boolean or bit-vector)."""
    converted: Map[Expr, Any]
    """Width-1 expressions' terms of the other kind, built once when first needed."""
    arrays: Map[Array, Any]
    """The encoding's handle of each declared array."""
    memo: Map[Any, Any]
    """The encoding's memo: update-list prefixes, and what it did in this context level."""
    lowered: Map[UpdateNode, bool]
    """Update nodes whose index and value (and those of every older node) are translated."""
    floats: Map[Expr, Any]
    """The float term of each float-valued expression translated (its bits are in ``terms``)."""
    setup: tuple[Any, ...]
    """Set-up assertions not yet taken by the session."""


class _NamingBuilder:
    """The builder handed to ``Encoding.declare``: it makes every variable name unique in the
    solver context. Arrays are distinct objects even with equal names, and after a pop an
    array is declared again; a reused name would make two arrays one solver variable."""

    __slots__ = ("_builder", "_used", "_next_suffix")

    def __init__(self, builder: TermBuilder) -> None:
        """Wrap ``builder``; no name is used yet."""
        self._builder = builder
        self._used: set[str] = set()
        self._next_suffix: dict[str, int] = {}

    def unique(self, name: str) -> str:
        """``name``, or ``name#k`` with the smallest unused ``k >= 2``; marks it used."""
        used = self._used
        if name not in used:
            used.add(name)
            return name
        k = self._next_suffix.get(name, 2)
        while f"{name}#{k}" in used:
            k += 1
        self._next_suffix[name] = k + 1
        unique = f"{name}#{k}"
        used.add(unique)
        return unique

    def forget(self) -> None:
        """Allow every name again (the solver context was reset)."""
        self._used.clear()
        self._next_suffix.clear()

    def bv_var(self, name: str, width: int) -> Any:
        """A fresh bit-vector variable under a unique name."""
        return self._builder.bv_var(self.unique(name), width)

    def bool_var(self, name: str) -> Any:
        """A fresh boolean variable under a unique name."""
        return self._builder.bool_var(self.unique(name))

    def array_var(self, name: str) -> Any:
        """A fresh array variable under a unique name."""
        return self._builder.array_var(self.unique(name))

    def __getattr__(self, name: str) -> Any:
        """Every other TermBuilder method is the wrapped builder's."""
        return getattr(self._builder, name)


class Translator:
    """Translates expressions for one solver context (see the module docstring)."""

    __slots__ = ("builder", "encoding", "_naming", "_terms", "_converted", "_arrays", "_memo",
                 "_lowered", "_floats", "_setup", "cache_hits", "floats_allowed")

    builder: TermBuilder
    encoding: Encoding
    cache_hits: int

    def __init__(self, builder: TermBuilder, encoding: Encoding) -> None:
        """A translator building terms with ``builder`` (the backend) through ``encoding``."""
        self.builder = builder
        self.encoding = encoding
        self._naming = _NamingBuilder(builder)
        self.floats_allowed = False
        """Whether the context's logic has floating point (else a float node raises
        :class:`FloatLogicNeeded`)."""
        self.cache_hits = 0
        """Expressions asked for (``boolean``/``bitvector``) that were already translated."""
        self._terms: Map[Expr, Any] = Map()
        self._converted: Map[Expr, Any] = Map()
        self._arrays: Map[Array, Any] = Map()
        self._memo: Map[Any, Any] = Map()
        self._lowered: Map[UpdateNode, bool] = Map()
        self._floats: Map[Expr, Any] = Map()
        self._setup: tuple[Any, ...] = ()

    # -- public interface ----------------------------------------------------------------

    def boolean(self, e: Expr) -> Any:
        """The boolean term of a width-1 expression (for assertions and assumptions)."""
        if e.width != 1:
            raise ValueError(f"only a width-1 expression is a boolean, got width {e.width}")
        term = self._term(e)
        if _is_boolean(e):
            return term
        converted = self._converted.get(e)
        if converted is None:
            converted = self.builder.bv_to_bool(term)
            self._converted = self._converted.set(e, converted)
        return converted

    def bitvector(self, e: Expr) -> Any:
        """The bit-vector term of an expression (width 1 gives a 1-bit vector)."""
        term = self._term(e)
        if not _is_boolean(e):
            return term
        converted = self._converted.get(e)
        if converted is None:
            converted = self.builder.bool_to_bv(term)
            self._converted = self._converted.set(e, converted)
        return converted

    def take_setup(self) -> list[Any]:
        """The set-up assertions produced by array declarations since the last call; the
        session asserts them in the context level of the constraint that needed them."""
        setup = list(self._setup)
        self._setup = ()
        return setup

    def snapshot(self) -> TranslatorState:
        """Everything the translator remembers, in O(1) (take it on push)."""
        return TranslatorState(self._terms, self._converted, self._arrays, self._memo,
                               self._lowered, self._floats, self._setup)

    def restore(self, state: TranslatorState) -> None:
        """Go back to ``state`` (on pop): terms built since are forgotten."""
        self._terms = state.terms
        self._converted = state.converted
        self._arrays = state.arrays
        self._memo = state.memo
        self._lowered = state.lowered
        self._floats = state.floats
        self._setup = state.setup

    def clear(self) -> None:
        """Forget everything (the backend was reset): arrays are declared afresh when used."""
        self._terms = Map()
        self._converted = Map()
        self._arrays = Map()
        self._memo = Map()
        self._lowered = Map()
        self._floats = Map()
        self._setup = ()
        self._naming.forget()

    def model(self, arrays: Sequence[Array]) -> list[bytes]:
        """``array.size`` bytes per array in the model of the last SAT check: the encoding's
        reading for declared arrays, zeros for undeclared symbolic arrays (nothing constrains
        them), the initial bytes for constant arrays."""
        contents: list[bytes] = []
        for array in arrays:
            initial = array.initial
            if initial is not None:
                contents.append(initial)
                continue
            handle = self._arrays.get(array, _MISSING)
            if handle is _MISSING:
                contents.append(bytes(array.size))
            else:
                contents.append(self.encoding.model(array, handle, self.builder))
        return contents

    def uses_arrays(self) -> bool:
        """Whether any array term has been emitted (in the current state): the logic must
        then be QF_ABV rather than QF_BV."""
        return bool(self.encoding.uses_arrays) and len(self._arrays) > 0

    # -- translation ---------------------------------------------------------------------

    def _term(self, root: Expr) -> Any:
        """The natural-kind term of ``root``, translating what is missing."""
        term = self._terms.get(root)
        if term is not None:
            self.cache_hits += 1
            return term
        self._translate(root)
        return self._terms[root]

    def _translate(self, root: Expr) -> None:
        """Translate every node under ``root`` not yet translated, iteratively.

        All changes go to mutations of the maps, committed only when the whole root is done,
        so an exception (e.g. from the solver package) leaves the state as it was.
        """
        builder = self.builder
        terms = self._terms.mutate()
        converted = self._converted.mutate()
        arrays = self._arrays.mutate()
        memo = self._memo.mutate()
        lowered = self._lowered
        new_setup: list[Any] = []
        seen_writes: set[UpdateNode] = set()
        float_terms: FloatTerms | None = None
        is_boolean = _is_boolean

        def bv(x: Expr) -> Any:
            term = terms[x]
            if not is_boolean(x):
                return term
            conv = converted.get(x)
            if conv is None:
                conv = builder.bool_to_bv(term)
                converted[x] = conv
            return conv

        def boolean(x: Expr) -> Any:
            term = terms[x]
            if is_boolean(x):
                return term
            conv = converted.get(x)
            if conv is None:
                conv = builder.bv_to_bool(term)
                converted[x] = conv
            return conv

        # Entries are (expr, expanded). Children are pushed unless translated already; a node
        # pushed twice is skipped once translated. The index and value of an update node are
        # pushed by the first READ that reaches the node; they were built before any later
        # READ through that node can be built, because a node's index and value (and every
        # expression under them) are older than the node, hence than any READ of a list
        # holding it, so they can never sit below such a READ on the stack.
        stack: list[tuple[Expr, bool]] = [(root, False)]
        while stack:
            e, expanded = stack.pop()
            if not expanded:
                if e in terms:
                    continue
                stack.append((e, True))
                if e.op is _READ:
                    index = e.args[0]
                    if index not in terms:
                        stack.append((index, False))
                    node = e.updates.head  # type: ignore[union-attr]
                    while node is not None and node not in seen_writes and node not in lowered:
                        seen_writes.add(node)
                        if node.value not in terms:
                            stack.append((node.value, False))
                        if node.index not in terms:
                            stack.append((node.index, False))
                        node = node.next
                else:
                    for child in reversed(e.args):
                        if child not in terms:
                            stack.append((child, False))
                continue
            if e in terms:
                continue
            op = e.op
            width = e.width
            args = e.args
            if op is _CONST:
                term = (builder.bool_const(e.value != 0) if width == 1
                        else builder.bv_const(e.value, width))
            elif op is _READ:
                term = self._read_term(e, arrays, memo, bv, new_setup)
            elif op is _SELECT:
                cond = boolean(args[0])
                if width == 1:
                    term = builder.bool_op(_SELECT, (cond, boolean(args[1]), boolean(args[2])))
                else:
                    term = builder.bv_op(_SELECT, (cond, bv(args[1]), bv(args[2])), width)
            elif op in _COMPARISONS:
                a, b = args
                if op is _EQ and is_boolean(a) and is_boolean(b):
                    term = builder.bool_op(_EQ, (terms[a], terms[b]))
                else:
                    term = builder.compare(op, bv(a), bv(b))
            elif width == 1 and op in _CONNECTIVES:
                term = builder.bool_op(op, (boolean(args[0]), boolean(args[1])))
            elif width == 1 and op is _NOT:
                term = builder.bool_op(_NOT, (boolean(args[0]),))
            elif op is _EXTRACT:
                term = builder.bv_op(_EXTRACT, (bv(args[0]),), width, e.value)
            elif op in _BV_OPS:
                term = builder.bv_op(op, [bv(a) for a in args], width)
            elif op in _FLOAT_OPS:
                if float_terms is None:
                    float_terms = self._start_floats(bv, new_setup)
                term = float_terms.translate(e)
            else:
                raise SolverError(f"cannot translate {op!r} (width {width}); this is a symex bug")
            terms[e] = term
        self._terms = terms.finish()
        self._converted = converted.finish()
        self._arrays = arrays.finish()
        self._memo = memo.finish()
        if float_terms is not None:
            self._floats = cast("MapMutation[Expr, Any]", float_terms.floats).finish()
        if seen_writes:
            marks = lowered.mutate()
            for node in seen_writes:
                marks[node] = True
            self._lowered = marks.finish()
        if new_setup:
            self._setup = (*self._setup, *new_setup)

    def _start_floats(self, bv: Callable[[Expr], Any], new_setup: list[Any]) -> FloatTerms:
        """The float half of one translation pass, once its first float node is reached."""
        builder = self.builder
        if not isinstance(builder, FloatTermBuilder):
            raise SolverError(
                f"the {getattr(builder, 'name', 'chosen')} backend has no floating-point "
                "theory; solve queries on floats with z3, bitwuzla or cvc5 (--solver)")
        if not self.floats_allowed:
            raise FloatLogicNeeded
        return FloatTerms(builder, self._naming, self._floats.mutate(), bv, new_setup)

    def _read_term(self, e: Expr, arrays: Any, memo: Any, bv: Callable[[Expr], Any],
                   new_setup: list[Any]) -> Any:
        """A ``READ``'s term, its array declared by the encoding the first time it is read."""
        array = e.updates.array  # type: ignore[union-attr]
        handle = arrays.get(array, _MISSING)
        if handle is _MISSING:
            handle, setup = self.encoding.declare(array, self._naming)
            arrays[array] = handle
            new_setup.extend(setup)
        return self.encoding.read(e, handle, bv, self.builder, memo,
                                  new_setup)
