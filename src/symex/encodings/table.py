"""Reads of a constant array at a symbolic index as an if-then-else over its distinct values.

A program's constant tables (glibc's ctype classes, a CRC table, a jump table) are read at
symbolic indices. Pinning such a table with one ``select(A, i) = v`` assertion per byte costs
the solver every byte on every query that touches it: 776 assertions for a tokenizer query
over one input byte, 24-28 ms in z3 (docs/benchmarks.md). Most tables hold few distinct
values, so the read is written instead as one if-then-else per distinct value, its condition
the index ranges that hold it (KLEE's value-based array optimisation,
``--optimize-array=value``)::

    ite(j in ranges(v1), v1, ite(j in ranges(v2), v2, ... default))

``default`` is the table's most common byte. Indices past the table's end read 0
(:class:`symex.expr.Assignment`'s rule), so a non-zero default is guarded by ``j < size``.
Bytes at one stride apart (the low bytes of a ``short`` table) form one range with a
residue condition on the index's low bits, so a table of 16-bit classes costs about as much
as its 8-bit equivalent.
"""

from __future__ import annotations

from typing import Any, Protocol

import attrs

from symex.encodings.core import TermBuilder
from symex.expr import ELEMENT_WIDTH, INDEX_WIDTH, Op

__all__ = ["IndexRun", "TableLayout", "cached_layout", "table_layout", "table_read"]

#: Strides a run of equal bytes may have: 1 (consecutive bytes), and the element sizes of
#: tables of 16-, 32- and 64-bit values (powers of two, so the residue is a low-bit extract).
RUN_STRIDES: tuple[int, ...] = (1, 2, 4, 8)


@attrs.frozen
class IndexRun:
    """The indices ``first, first + stride, ..., last`` of a table."""

    first: int
    """The lowest index."""
    last: int
    """The highest index (``first`` plus a multiple of ``stride``)."""
    stride: int
    """The distance between two indices of the run: one of :data:`RUN_STRIDES`."""


@attrs.frozen
class TableLayout:
    """A constant table as its most common byte and the runs of indices holding each other
    byte value."""

    size: int
    """The table's length in bytes."""
    default: int
    """The most common byte (the smallest of them on a tie): the chain's last branch."""
    groups: tuple[tuple[int, tuple[IndexRun, ...]], ...]
    """``(value, runs)`` for every other value present, in increasing order of value."""


def _runs(indices: list[int]) -> tuple[IndexRun, ...]:
    """Cover ascending ``indices`` with few runs: greedily, from the lowest index left, the
    stride of :data:`RUN_STRIDES` that gives the longest run (the smallest on a tie)."""
    members = set(indices)
    taken: set[int] = set()
    runs: list[IndexRun] = []
    for first in indices:
        if first in taken:
            continue
        best_last, best_stride = first, 1
        for stride in RUN_STRIDES:
            last = first
            while last + stride in members and last + stride not in taken:
                last += stride
            if last > best_last:
                best_last, best_stride = last, stride
        runs.append(IndexRun(first, best_last, best_stride))
        taken.update(range(first, best_last + 1, best_stride))
    return tuple(runs)


def table_layout(initial: bytes) -> TableLayout:
    """The layout of a constant table (O(size), done once per declared array)."""
    positions: dict[int, list[int]] = {}
    for index, byte in enumerate(initial):
        positions.setdefault(byte, []).append(index)
    default = 0
    if positions:
        default = min(positions, key=lambda value: (-len(positions[value]), value))
    groups = tuple((value, _runs(positions[value]))
                   for value in sorted(positions) if value != default)
    return TableLayout(len(initial), default, groups)


class _TableHandle(Protocol):
    """An encoding's handle of a constant array: its bytes and their layout, once made."""

    @property
    def initial(self) -> bytes | None:
        """The array's bytes."""
        ...

    layout: TableLayout | None


def cached_layout(handle: _TableHandle) -> TableLayout:
    """The layout of a constant array's handle, made at the first call (once per declaration
    in a solver context, not per read)."""
    layout = handle.layout
    if layout is None:
        assert handle.initial is not None
        layout = handle.layout = table_layout(handle.initial)
    return layout


def _in_run(run: IndexRun, j: Any, builder: TermBuilder) -> Any:
    """The boolean ``j`` is one of ``run``'s indices."""
    if run.first == run.last:
        return builder.compare(Op.EQ, j, builder.bv_const(run.first, INDEX_WIDTH))
    parts = []
    if run.first > 0:
        parts.append(builder.compare(Op.ULE, builder.bv_const(run.first, INDEX_WIDTH), j))
    parts.append(builder.compare(Op.ULE, j, builder.bv_const(run.last, INDEX_WIDTH)))
    if run.stride > 1:
        bits = run.stride.bit_length() - 1
        low = builder.bv_op(Op.EXTRACT, (j,), bits, 0)
        parts.append(builder.compare(Op.EQ, low, builder.bv_const(run.first % run.stride, bits)))
    return parts[0] if len(parts) == 1 else builder.bool_op(Op.AND, parts)


def table_read(layout: TableLayout, j: Any, builder: TermBuilder) -> Any:
    """The 8-bit term of the table's byte at the 32-bit index term ``j`` (0 past the end)."""
    term = builder.bv_const(layout.default, ELEMENT_WIDTH)
    if layout.default != 0:
        inside = builder.compare(Op.ULT, j, builder.bv_const(layout.size, INDEX_WIDTH))
        term = builder.bv_op(Op.SELECT, (inside, term, builder.bv_const(0, ELEMENT_WIDTH)),
                             ELEMENT_WIDTH)
    for value, runs in layout.groups:
        hits = [_in_run(run, j, builder) for run in runs]
        hit = hits[0] if len(hits) == 1 else builder.bool_op(Op.OR, hits)
        term = builder.bv_op(Op.SELECT, (hit, builder.bv_const(value, ELEMENT_WIDTH), term),
                             ELEMENT_WIDTH)
    return term
