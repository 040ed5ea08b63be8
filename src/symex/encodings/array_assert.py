"""The ``array-assert`` encoding: arrays are solver arrays, constant contents are asserted.

Every array (symbolic or constant) is one solver array variable. A constant array's bytes
are given by set-up assertions ``select(A, i) = v``; the seed measured z3 far faster with
these than with the equivalent chain of stores. Writes of an update list are ``store``s.

A constant array that is only read, never written (a program's lookup tables), needs no
array at all: such a read is an if-then-else over the table's distinct values
(:mod:`symex.encodings.table`), and the set-up assertions are made only when a read goes
through writes over the constant array, once per solver context level.

A constant array that is mostly one byte (a program's 16 KB read buffer, zeros but for what
arrived) is instead, where the backend has constant arrays, that byte everywhere with a
``store`` for each other byte: memcached's queries pinned 16,384 bytes each (7 s in z3)
where a few stores say the same.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable, MutableMapping

from collections import Counter

from symex.encodings.core import TermBuilder
from symex.encodings.table import TableLayout, cached_layout, table_read
from symex.expr import ELEMENT_WIDTH, INDEX_WIDTH, Array, Expr, Op, UpdateNode

__all__ = ["ArrayAssertEncoding", "ConstantArray", "UNIFORM_SHARE", "read_through_stores"]

#: a constant array whose bytes other than its commonest are at most this share of it is
#: encoded over a constant array (see the module docstring)
UNIFORM_SHARE = 0.25

_CONST = Op.CONST


def read_through_stores(read: Expr, handle: Any, lower: Callable[[Expr], Any],
                        builder: TermBuilder, memo: MutableMapping[Any, Any]) -> Any:
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


class ConstantArray:
    """The handle of a constant array under ``array-assert``: its table layout for reads that
    no write touches, and the array variable the set-up assertions pin for reads through
    writes."""

    __slots__ = ("term", "initial", "layout")

    term: Any
    """The array variable (pinned only once a read goes through writes)."""
    initial: bytes
    """The array's bytes."""
    layout: TableLayout | None
    """The table layout, made at the first read that needs it."""

    def __init__(self, term: Any, initial: bytes) -> None:
        """The handle of a constant array of bytes ``initial`` named by variable ``term``."""
        self.term = term
        self.initial = initial
        self.layout = None

    def read_table(self, j: Any, builder: TermBuilder) -> Any:
        """The table's byte at the 32-bit index term ``j`` (0 past the end): one ``select``
        of the table as an array lambda where the backend has them (built once per
        context, keyed by the bytes), else the if-then-else itself."""
        array_lambda = getattr(builder, "array_lambda", None)
        if array_lambda is not None:
            table = array_lambda(self.initial,
                                 lambda i: table_read(cached_layout(self), i, builder))
            return builder.select(table, j)
        return table_read(cached_layout(self), j, builder)

    def base(self, builder: TermBuilder, uniform: bool = True) -> tuple[Any, list[Any]]:
        """The term reads through writes start from, and the assertions it needs: the
        commonest byte everywhere with stores of the others where the backend has constant
        arrays and the others are few (unless ``uniform`` is off), else the variable pinned
        byte by byte."""
        const_array = getattr(builder, "const_array", None) if uniform else None
        initial = self.initial
        if const_array is not None and initial:
            common = Counter(initial).most_common(1)[0][0]
            others = [(i, byte) for i, byte in enumerate(initial) if byte != common]
            if len(others) <= UNIFORM_SHARE * len(initial):
                term = const_array(common)
                for i, byte in others:
                    term = builder.store(term, builder.bv_const(i, INDEX_WIDTH),
                                         builder.bv_const(byte, ELEMENT_WIDTH))
                return term, []
        return self.term, self.setup(builder)

    def setup(self, builder: TermBuilder) -> list[Any]:
        """The assertions ``select(A, i) = v`` pinning every byte of the variable."""
        term = self.term
        return [builder.compare(Op.EQ, builder.select(term, builder.bv_const(i, INDEX_WIDTH)),
                                builder.bv_const(byte, ELEMENT_WIDTH))
                for i, byte in enumerate(self.initial)]


class ArrayAssertEncoding:
    """Solver arrays; constant arrays read as tables, or pinned by one ``select(A, i) = v``
    assertion per byte once a read goes through writes over them."""

    __slots__ = ("table_reads", "uniform_arrays")

    name: str = "array-assert"
    """The configuration name."""
    uses_arrays: bool = True
    """Array terms are emitted for every array read."""
    table_reads: bool
    """Whether unwritten constant arrays are read as tables (False: the seed's encoding, every
    constant array pinned when declared; kept for benchmarks/table_reads.py)."""

    uniform_arrays: bool
    """Whether a mostly-uniform constant array read through writes is a constant array with
    stores (False: pinned like any other; kept for benchmarks/uniform_arrays.py)."""

    def __init__(self, table_reads: bool = True, uniform_arrays: bool = True) -> None:
        """The encoding, reading unwritten constant arrays as tables and mostly-uniform ones
        as constant arrays unless told not to."""
        self.table_reads = table_reads
        self.uniform_arrays = uniform_arrays

    def declare(self, array: Array, builder: TermBuilder) -> tuple[Any, list[Any]]:
        """An array variable (a :class:`ConstantArray` for a constant array); no set-up yet,
        unless table reads are off."""
        term = builder.array_var(array.name)
        initial = array.initial
        if initial is None:
            return term, []
        handle = ConstantArray(term, initial)
        if not self.table_reads:
            return term, handle.setup(builder)
        return handle, []

    def read(self, read: Expr, handle: Any, lower: Callable[[Expr], Any],
             builder: TermBuilder, memo: MutableMapping[Any, Any], setup: list[Any]) -> Any:
        """A table read of an unwritten constant array; otherwise a ``select`` from the update
        list's stores over the array variable (pinned first, if it is a constant array's)."""
        if type(handle) is not ConstantArray:
            return read_through_stores(read, handle, lower, builder, memo)
        updates = read.updates
        assert updates is not None
        index = read.args[0]
        if updates.head is None:
            if index.op is _CONST:
                i = index.value
                byte = handle.initial[i] if i < len(handle.initial) else 0
                return builder.bv_const(byte, ELEMENT_WIDTH)
            return handle.read_table(lower(index), builder)
        # The memo follows the solver context's levels: after a pop below the level the
        # assertions were made in, they are made again.
        base = memo.get(handle)
        if base is None:
            base, assertions = handle.base(builder, self.uniform_arrays)
            setup.extend(assertions)
            memo[handle] = base
        return read_through_stores(read, base, lower, builder, memo)

    def model(self, array: Array, handle: Any, builder: Any) -> bytes:
        """The array variable's value in the model."""
        if array.initial is not None:
            return array.initial
        return builder.array_value(handle, array.size)
