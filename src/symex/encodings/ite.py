"""The ``ite`` encoding: no array theory at all.

Every byte of a symbolic array is an 8-bit variable (``name[i]``); a constant array's bytes
are constants. A read is the array axiom spelled out: an if-then-else chain over the writes
of the update list (newest first) ending in the array's bytes, themselves an if-then-else
chain over the index when it is symbolic (over the distinct values for a constant array:
:mod:`symex.encodings.table`). Reads past an array's end are 0, as
:class:`symex.expr.Assignment` reads them. The logic is QF_BV.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable, MutableMapping

from symex.encodings.core import TermBuilder
from symex.encodings.table import TableLayout, cached_layout, table_read
from symex.expr import ELEMENT_WIDTH, INDEX_WIDTH, Array, Expr, Op, UpdateNode

__all__ = ["IteEncoding", "IteArray", "ite_read"]

_CONST = Op.CONST


class IteArray:
    """The handle of an array under the ``ite`` encoding: one 8-bit term per byte."""

    __slots__ = ("terms", "initial", "layout")

    terms: tuple[Any, ...]
    """The term of each byte (variables, or constants for a constant array)."""
    initial: bytes | None
    """A constant array's bytes (read at a symbolic index as a table)."""
    layout: TableLayout | None
    """A constant array's table layout, made at the first read that needs it."""

    def __init__(self, terms: tuple[Any, ...], initial: bytes | None) -> None:
        """Hold the byte terms (and the constant bytes, if any)."""
        self.terms = terms
        self.initial = initial
        self.layout = None


def ite_read(read: Expr, lower: Callable[[Expr], Any], builder: TermBuilder,
             initial_byte: Callable[[Expr, Any], Any]) -> Any:
    """A READ as the array axiom spelled out: ``ite(i_n = j, v_n, ... ite(i_1 = j, v_1,
    initial_byte(index, j)))`` over its update list (newest write outermost), with writes at
    another concrete index left out and the chain cut at a write at the same concrete index.
    ``initial_byte`` gives the array's own byte at the read's index expression and term."""
    updates = read.updates
    assert updates is not None
    index = read.args[0]
    concrete = index.value if index.op is _CONST else None
    relevant: list[UpdateNode] = []
    base = None
    node = updates.head
    while node is not None:
        node_index = node.index
        if concrete is not None and node_index.op is _CONST:
            if node_index.value == concrete:
                base = lower(node.value)
                break
        else:
            relevant.append(node)
        node = node.next
    j = lower(index)
    if base is None:
        base = initial_byte(index, j)
    term = base
    for node in reversed(relevant):
        hit = builder.compare(Op.EQ, lower(node.index), j)
        term = builder.bv_op(Op.SELECT, (hit, lower(node.value), term), ELEMENT_WIDTH)
    return term


class IteEncoding:
    """Bytes as variables, reads as if-then-else chains: QF_BV only."""

    __slots__ = ("table_reads",)

    name: str = "ite"
    """The configuration name."""
    uses_arrays: bool = False
    """No array term is ever emitted."""
    table_reads: bool
    """Whether a constant array is read over its distinct values (False: one if-then-else
    per non-zero byte, as before; kept for benchmarks/table_reads.py)."""

    def __init__(self, table_reads: bool = True) -> None:
        """The encoding, reading constant arrays as tables unless told not to."""
        self.table_reads = table_reads

    def declare(self, array: Array, builder: TermBuilder) -> tuple[IteArray, list[Any]]:
        """A variable per symbolic byte, a constant per constant byte; never any set-up."""
        initial = array.initial
        if initial is None:
            name = array.name
            terms = tuple(builder.bv_var(f"{name}[{i}]", ELEMENT_WIDTH) for i in range(array.size))
        else:
            terms = tuple(builder.bv_const(byte, ELEMENT_WIDTH) for byte in initial)
        return IteArray(terms, initial), []

    def read(self, read: Expr, handle: IteArray, lower: Callable[[Expr], Any],
             builder: TermBuilder, memo: MutableMapping[Any, Any], setup: list[Any]) -> Any:
        """``ite(i_n = j, v_n, ... ite(i_1 = j, v_1, byte(j)))`` with writes at a different
        concrete index left out and the chain cut at a write at the same concrete index."""
        table_reads = self.table_reads
        return ite_read(read, lower, builder,
                        lambda index, j: self._initial_byte(handle, index, j, builder, table_reads))

    @staticmethod
    def _initial_byte(handle: IteArray, index: Expr, j: Any, builder: TermBuilder,
                      table_reads: bool) -> Any:
        """The array's own byte at ``index`` (term ``j``), 0 past the end."""
        terms = handle.terms
        if index.op is _CONST:
            i = index.value
            return terms[i] if i < len(terms) else builder.bv_const(0, ELEMENT_WIDTH)
        initial = handle.initial
        if initial is not None and table_reads:
            return table_read(cached_layout(handle), j, builder)
        term = builder.bv_const(0, ELEMENT_WIDTH)
        for i in range(len(terms) - 1, -1, -1):
            if initial is not None and initial[i] == 0:
                continue  # the chain's default is 0 already
            hit = builder.compare(Op.EQ, j, builder.bv_const(i, INDEX_WIDTH))
            term = builder.bv_op(Op.SELECT, (hit, terms[i], term), ELEMENT_WIDTH)
        return term

    def model(self, array: Array, handle: IteArray, builder: Any) -> bytes:
        """The byte variables' values in the model (a constant array is its bytes)."""
        if array.initial is not None:
            return array.initial
        return bytes(builder.bv_value(term) & 0xFF for term in handle.terms)
