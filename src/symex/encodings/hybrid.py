"""The ``hybrid`` encoding: small memory objects as ``ite``, the other arrays as
``array-assert``.

A small object of the program written at symbolic indices (a local histogram, a little table
being filled in) becomes an array whose initial bytes are constants; under ``array-assert``
every query on it costs z3 array reasoning, while spelling its few bytes out as if-then-else
chains over the writes keeps that part of the query in plain bit-vectors. A big array read at
symbolic indices is the opposite case (a chain per read grows with the array), and symbolic
inputs read at constant indices gain nothing (measured: a 28-byte input spelled out made the
maze slower). So constant-initial arrays of at most :data:`SMALL_ARRAY_BYTES` bytes are
declared and read as the ``ite`` encoding does, every other array as ``array-assert`` does;
a read goes to the encoding whose handle its array has. Measured in docs/benchmarks.md
("KLEE parity and speed").

A big constant array written at a few places (memcached's 16 KB read buffer, zeros but for
the 128 bytes of two packets) and read at a symbolic index is the third case: through the
array theory z3 took 4-15 s a query (offsets like ``24 + keylen`` into the buffer), while the
read spelled out over its few writes, ending in the table read of the array's own bytes, is
plain bit-vectors. So a read at a symbolic index of a constant array through at most
:data:`FEW_WRITES` writes is an ``ite`` chain whatever the array's size (``few_writes=0``:
off, for benchmarks/few_writes.py).

A symbolic object the program wrote constants into (a table built on the stack, KLEE's PCRE
query log: 150 constant writes over a symbolic array, read at an index computed from the
input) is the fourth case: z3 took 2 to 3.6 s on such queries through the stores. A read at a
symbolic index through at most :data:`FEW_WRITES` writes, each at a constant index, is the
``ite`` chain over them ending in a ``select`` of the array itself (the 400 first PCRE queries:
over 31 s for 294 of them -> 6.5 s for all 400 with z3; the other corpora unchanged within
noise: docs/solver.md). Writes at symbolic indices keep the stores (histogram's buckets were
slower spelled out). ``symbolic_few_writes=False`` turns this case off.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable, MutableMapping

from symex.encodings.array_assert import ArrayAssertEncoding, ConstantArray
from symex.encodings.core import TermBuilder
from symex.encodings.ite import IteArray, IteEncoding, ite_read
from symex.encodings.table import cached_layout, table_read
from symex.expr import Array, Expr, Op

__all__ = ["FEW_WRITES", "SMALL_ARRAY_BYTES", "HybridEncoding"]

#: constant-initial arrays of at most this many bytes are encoded as ``ite``
SMALL_ARRAY_BYTES = 64

#: a symbolic-index read of a bigger constant array through at most this many writes is an
#: ``ite`` chain over them (see the module docstring)
FEW_WRITES = 256


class HybridEncoding:
    """``ite`` for constant-initial arrays of at most ``small`` bytes, ``array-assert`` for
    the others."""

    __slots__ = ("small", "few_writes", "symbolic_few_writes", "_small_arrays", "_arrays")

    name: str = "hybrid"
    """The configuration name."""
    uses_arrays: bool = True
    """Big arrays are solver arrays."""

    def __init__(self, small: int = SMALL_ARRAY_BYTES, uniform_arrays: bool = True,
                 few_writes: int = FEW_WRITES, symbolic_few_writes: bool = True) -> None:
        """The encoding with ``small`` as the largest array spelled out byte by byte
        (``uniform_arrays``: as :class:`ArrayAssertEncoding`'s, for the big ones), and
        symbolic-index reads of the big constant ones through at most ``few_writes`` writes
        spelled out too (0: never), and of symbolic arrays through as many writes at
        constant indices (``symbolic_few_writes``)."""
        self.small = small
        self.few_writes = few_writes
        self.symbolic_few_writes = symbolic_few_writes
        self._small_arrays = IteEncoding()
        self._arrays = ArrayAssertEncoding(uniform_arrays=uniform_arrays)

    def declare(self, array: Array, builder: TermBuilder) -> tuple[Any, list[Any]]:
        """The handle of the encoding the array's kind and size pick."""
        if array.initial is not None and array.size <= self.small:
            return self._small_arrays.declare(array, builder)
        return self._arrays.declare(array, builder)

    def read(self, read: Expr, handle: Any, lower: Callable[[Expr], Any],
             builder: TermBuilder, memo: MutableMapping[Any, Any], setup: list[Any]) -> Any:
        """The read as the encoding of its array's handle makes it."""
        if type(handle) is IteArray:
            return self._small_arrays.read(read, handle, lower, builder, memo, setup)
        if read.args[0].op is not Op.CONST:
            # a symbolic index through few writes: spelled out, ending in the array's own byte
            # (a constant array's table; a symbolic array's select, writes at constants only)
            if type(handle) is ConstantArray:
                if _has_few_writes(read, self.few_writes):
                    layout = cached_layout(handle)
                    return ite_read(read, lower, builder,
                                    lambda index, j: table_read(layout, j, builder))
            elif self.symbolic_few_writes and _has_few_writes(read, self.few_writes,
                                                              constant_indices=True):
                return ite_read(read, lower, builder, lambda index, j: builder.select(handle, j))
        return self._arrays.read(read, handle, lower, builder, memo, setup)

    def model(self, array: Array, handle: Any, builder: Any) -> bytes:
        """The array's bytes in the model, from its encoding."""
        if type(handle) is IteArray:
            return self._small_arrays.model(array, handle, builder)
        return self._arrays.model(array, handle, builder)


def _has_few_writes(read: Expr, limit: int, constant_indices: bool = False) -> bool:
    """Whether the read's update list holds at least one and at most ``limit`` writes (and,
    with ``constant_indices``, each at a constant index)."""
    updates = read.updates
    node = updates.head if updates is not None else None
    if node is None:
        return False
    count = 0
    while node is not None:
        count += 1
        if count > limit or (constant_indices and node.index.op is not Op.CONST):
            return False
        node = node.next
    return True
