"""The ``array-assert`` encoding: arrays are solver arrays, constant contents are asserted.

Every array (symbolic or constant) is one solver array variable. A constant array's bytes
are given by set-up assertions ``select(A, i) = v``; the seed measured z3 far faster with
these than with the equivalent chain of stores. Writes of an update list are ``store``s.
"""

from __future__ import annotations

from typing import Any, Callable, MutableMapping

from symex.encodings.core import TermBuilder
from symex.expr import ELEMENT_WIDTH, INDEX_WIDTH, Array, Expr, Op, UpdateNode

__all__ = ["ArrayAssertEncoding", "read_through_stores"]


def read_through_stores(read: Expr, handle: Any, lower: Callable[[Expr], Any],
                        builder: TermBuilder, memo: MutableMapping[UpdateNode, Any]) -> Any:
    """``select(store(...store(handle, i0, v0)..., in, vn), index)`` for a READ, reusing the
    store term of the longest update-list prefix already in ``memo``.

    Memo entries are ``(handle, term)``: an update node is keyed alone, and nothing stops two
    update lists over different arrays from sharing a node, so the base array is checked.
    """
    updates = read.updates
    assert updates is not None
    pending: list[UpdateNode] = []
    node = updates.head
    term = None
    while node is not None:
        hit = memo.get(node)
        if hit is not None and hit[0] is handle:
            term = hit[1]
            break
        pending.append(node)
        node = node.next
    if term is None:
        term = handle
    for node in reversed(pending):
        term = builder.store(term, lower(node.index), lower(node.value))
        memo[node] = (handle, term)
    return builder.select(term, lower(read.args[0]))


class ArrayAssertEncoding:
    """Solver arrays; constant arrays pinned by one ``select(A, i) = v`` assertion per byte."""

    __slots__ = ()

    name: str = "array-assert"
    """The configuration name."""
    uses_arrays: bool = True
    """Array terms are emitted for every array read."""

    def declare(self, array: Array, builder: TermBuilder) -> tuple[Any, list[Any]]:
        """An array variable; for a constant array also the assertions giving its bytes."""
        term = builder.array_var(array.name)
        initial = array.initial
        if initial is None:
            return term, []
        setup = [
            builder.compare(Op.EQ, builder.select(term, builder.bv_const(i, INDEX_WIDTH)),
                            builder.bv_const(byte, ELEMENT_WIDTH))
            for i, byte in enumerate(initial)
        ]
        return term, setup

    def read(self, read: Expr, handle: Any, lower: Callable[[Expr], Any],
             builder: TermBuilder, memo: MutableMapping[UpdateNode, Any]) -> Any:
        """A ``select`` from the update list's stores over the array variable."""
        return read_through_stores(read, handle, lower, builder, memo)

    def model(self, array: Array, handle: Any, builder: Any) -> bytes:
        """The array variable's value in the model."""
        if array.initial is not None:
            return array.initial
        return builder.array_value(handle, array.size)
