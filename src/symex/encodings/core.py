"""The core language: what an encoding emits and a backend builds.

Encodings (array-assert, nested-write, ite) differ only in how they turn array reads into
this language; every other expression maps one to one. Keeping it a small protocol lets the
encodings be tested without any solver (tests build terms as Python values and evaluate them)
and lets every solver package plug in by implementing it (see symex.solvers.backend).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable
from collections.abc import Callable, Hashable, Sequence

from symex.expr import Op

#: Operations ``bv_op`` accepts (results are bit-vectors).
BV_OPS = frozenset({
    Op.ADD, Op.SUB, Op.MUL, Op.UDIV, Op.SDIV, Op.UREM, Op.SREM, Op.AND, Op.OR, Op.XOR,
    Op.SHL, Op.LSHR, Op.ASHR, Op.NOT, Op.CONCAT, Op.EXTRACT, Op.ZEXT, Op.SEXT, Op.SELECT,
})
#: Operations ``compare`` accepts (results are booleans).
COMPARE_OPS = frozenset({Op.EQ, Op.ULT, Op.ULE, Op.SLT, Op.SLE})
#: Operations ``bool_op`` accepts: AND/OR/XOR/NOT are the connectives, EQ is iff, SELECT is
#: if-then-else between booleans.
BOOL_OPS = frozenset({Op.AND, Op.OR, Op.XOR, Op.NOT, Op.EQ, Op.SELECT})



@runtime_checkable
class TermBuilder(Protocol):
    """Builds terms of the core language (booleans are distinct from 1-bit vectors)."""

    def bv_const(self, value: int, width: int) -> Any:
        """A bit-vector constant (``value`` is unsigned, already masked)."""
        ...

    def bool_const(self, value: bool) -> Any:
        """``true`` or ``false``."""
        ...

    def bv_var(self, name: str, width: int) -> Any:
        """A fresh bit-vector variable; the same name twice gives the same variable."""
        ...

    def bool_var(self, name: str) -> Any:
        """A fresh boolean variable (assumption guards)."""
        ...

    def array_var(self, name: str) -> Any:
        """A fresh array from 32-bit indices to 8-bit values; same name, same array."""
        ...

    def select(self, array: Any, index: Any) -> Any:
        """The 8-bit value of ``array`` at a 32-bit ``index``."""
        ...

    def store(self, array: Any, index: Any, value: Any) -> Any:
        """``array`` with ``value`` written at ``index``."""
        ...

    def bv_op(self, op: Op, args: Sequence[Any], width: int, offset: int = 0) -> Any:
        """A bit-vector operation of :data:`BV_OPS`. ``width`` is the result width; ``offset``
        is the lowest extracted bit for EXTRACT. For SELECT, ``args[0]`` is a boolean."""
        ...

    def compare(self, op: Op, a: Any, b: Any) -> Any:
        """A comparison of :data:`COMPARE_OPS` between two bit-vectors: a boolean."""
        ...

    def bool_op(self, op: Op, args: Sequence[Any]) -> Any:
        """A boolean operation of :data:`BOOL_OPS`."""
        ...

    def bool_to_bv(self, term: Any) -> Any:
        """A boolean as a 1-bit vector (true -> 1)."""
        ...

    def bv_to_bool(self, term: Any) -> Any:
        """A 1-bit vector as a boolean (1 -> true)."""
        ...



@runtime_checkable
class ConstArrayBuilder(Protocol):
    """What a backend may offer beyond :class:`TermBuilder` (z3, bitwuzla and cvc5 do): the
    array with one byte at every index, over which a mostly-uniform constant array is a few
    stores (:mod:`symex.encodings.array_assert`). Others get arrays pinned by assertions."""

    def const_array(self, value: int) -> Any:
        """The 32->8 array holding byte ``value`` at every index."""
        ...


@runtime_checkable
class ArrayLambdaBuilder(Protocol):
    """What a backend may offer beyond :class:`TermBuilder` (z3 does): arrays defined by a
    term over their index, so that a table's if-then-else is built once and each read of it
    is one ``select`` (:mod:`symex.encodings.table`). Others get the body inlined per read."""

    def array_lambda(self, key: Hashable, body: Callable[[Any], Any]) -> Any:
        """The 32->8 array whose byte at ``i`` is ``body(i)`` (``body`` builds it over a
        bound 32-bit index term); the same term for the same ``key`` until a reset, across
        push and pop."""
        ...
