"""The ``nested-write`` encoding: a constant array is a chain of stores over a fresh array.

Symbolic arrays are array variables as in ``array-assert``; a constant array of ``n`` bytes
becomes ``store(...store(A, 0, b0)..., n-1, b(n-1))`` and needs no set-up assertion. The seed
measured this much slower than asserting the bytes; it is kept to compare against.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable, MutableMapping

from symex.encodings.array_assert import read_through_stores
from symex.encodings.core import TermBuilder
from symex.expr import ELEMENT_WIDTH, INDEX_WIDTH, Array, Expr

__all__ = ["NestedWriteEncoding"]


class NestedWriteEncoding:
    """Solver arrays; constant arrays are nested ``store``s of their bytes."""

    __slots__ = ()

    name: str = "nested-write"
    """The configuration name."""
    uses_arrays: bool = True
    """Array terms are emitted for every array read."""

    def declare(self, array: Array, builder: TermBuilder) -> tuple[Any, list[Any]]:
        """An array variable, with the constant bytes stored into it; never any set-up."""
        term = builder.array_var(array.name)
        initial = array.initial
        if initial is not None:
            for i, byte in enumerate(initial):
                term = builder.store(term, builder.bv_const(i, INDEX_WIDTH),
                                     builder.bv_const(byte, ELEMENT_WIDTH))
        return term, []

    def read(self, read: Expr, handle: Any, lower: Callable[[Expr], Any],
             builder: TermBuilder, memo: MutableMapping[Any, Any], setup: list[Any]) -> Any:
        """A ``select`` from the update list's stores over the (stored-into) array."""
        return read_through_stores(read, handle, lower, builder, memo)

    def model(self, array: Array, handle: Any, builder: Any) -> bytes:
        """The symbolic array's value in the model (a constant array is its bytes)."""
        if array.initial is not None:
            return array.initial
        return builder.array_value(handle, array.size)
