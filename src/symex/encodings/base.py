"""The ``Encoding`` interface: how symbolic memory becomes solver terms.

Everything in a query maps one to one onto the core language except reads of arrays, and
that is where the three encodings of the seed differ:

* ``array-assert`` -- every array is a solver array; a constant array's bytes are asserted
  (``select(A, i) = v``); writes at symbolic indices are ``store``s; a constant array no
  write touches is read as a table (:mod:`symex.encodings.table`) and needs no assertion;
* ``nested-write`` -- a constant array is a chain of ``store``s over a fresh array;
* ``ite`` -- no array theory: a read is an if-then-else chain over the update list and the
  initial bytes; symbolic input bytes are 8-bit variables.

An encoding is stateless; what it creates per array lives in the ``ArrayHandle`` it returns,
which the translator keeps (per solver session) next to its expression cache.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable
from collections.abc import Callable, MutableMapping

from symex.encodings.core import TermBuilder
from symex.expr import Array, Expr


@runtime_checkable
class Encoding(Protocol):
    """Lowers array declarations and reads to the core language."""

    name: str
    """``array-assert``, ``nested-write`` or ``ite``."""
    uses_arrays: bool
    """False when the encoding never emits array terms (the logic is then QF_BV)."""

    def declare(self, array: Array, builder: TermBuilder) -> tuple[Any, list[Any]]:
        """The handle of ``array`` (an array term, or whatever the encoding needs to read it)
        and the boolean set-up assertions that give a constant array its contents."""
        ...

    def read(self, read: Expr, handle: Any, lower: Callable[[Expr], Any],
             builder: TermBuilder, memo: MutableMapping[Any, Any], setup: list[Any]) -> Any:
        """The 8-bit term of a READ expression. ``lower`` gives the (already built) term of any
        sub-expression (the read's index, the update list's indices and values); ``memo`` is a
        cache the encoding may use for update-list prefixes (keyed by node) or for what it has
        done in the current solver context level (it is restored on pop); set-up assertions
        the read needs are appended to ``setup``."""
        ...

    def model(self, array: Array, handle: Any, builder: Any) -> bytes:
        """``array.size`` bytes of ``array`` in the model of the last SAT check; ``builder`` is
        the backend (it has ``bv_value`` and ``array_value``)."""
        ...
