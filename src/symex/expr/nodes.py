"""Node types of the expression DAG: :class:`Op`, :class:`Expr`, arrays and update lists.

Every :class:`Expr` is hash-consed: the smart constructors in :mod:`symex.expr.build` go through
:func:`intern_expr`, so structurally equal expressions are the same object and equality is
identity (``is``). Booleans are width-1 bit-vectors; values are unsigned ints in ``[0, 2**width)``.
"""

from __future__ import annotations

import enum
import weakref
from collections.abc import Callable
from typing import Any

__all__ = [
    "Op",
    "Expr",
    "Array",
    "UpdateNode",
    "UpdateList",
    "intern_expr",
    "intern_read",
    "live_expr_count",
]

INDEX_WIDTH = 32
"""Width of array indices."""
ELEMENT_WIDTH = 8
"""Width of array elements (bytes)."""


class Op(enum.IntEnum):
    """Kind of an expression node."""

    CONST = 0
    READ = 1
    SELECT = 2
    CONCAT = 3
    EXTRACT = 4
    ZEXT = 5
    SEXT = 6
    NOT = 7
    ADD = 8
    SUB = 9
    MUL = 10
    UDIV = 11
    SDIV = 12
    UREM = 13
    SREM = 14
    AND = 15
    OR = 16
    XOR = 17
    SHL = 18
    LSHR = 19
    ASHR = 20
    EQ = 21
    ULT = 22
    ULE = 23
    SLT = 24
    SLE = 25
    # floating point (symex.expr.float_build): operands and results are IEEE bits
    FADD = 26
    FSUB = 27
    FMUL = 28
    FDIV = 29
    FREM = 30
    FSQRT = 31
    FFMA = 32
    FFLOOR = 33
    FCEIL = 34
    FTRUNC = 35
    FRINT = 36
    FROUND = 37
    FPCONV = 38
    """``fpext``/``fptrunc``: the operand's width is the source format, the node's the target."""
    FPTOSI = 39
    SITOFP = 40
    UITOFP = 41
    FOEQ = 42
    FOLT = 43
    FOLE = 44


class Expr:
    """A hash-consed bit-vector expression node; build one only via :mod:`symex.expr.build`.

    ``args`` holds the children (``()`` for CONST, ``(index,)`` for READ, ``(cond, then, else)``
    for SELECT). ``value`` is the constant for CONST, the lowest extracted bit for EXTRACT and 0
    otherwise. ``updates`` is the update list of a READ and ``None`` otherwise. Instances are
    immutable by convention and compared by identity.
    """

    __slots__ = ("op", "width", "args", "value", "updates", "__weakref__")

    op: Op
    width: int
    args: tuple[Expr, ...]
    value: int
    updates: UpdateList | None

    def __init__(
        self,
        op: Op,
        width: int,
        args: tuple[Expr, ...],
        value: int,
        updates: UpdateList | None,
    ) -> None:
        """Store the fields as given; callers must intern through :func:`intern_expr`."""
        self.op = op
        self.width = width
        self.args = args
        self.value = value
        self.updates = updates

    def __bool__(self) -> bool:
        """Refuse truth testing: a symbolic value has no Python truth value."""
        raise TypeError(
            "an Expr has no truth value; compare with `is`, test `e.op is Op.CONST` "
            "or ask a solver whether it can be true"
        )

    def __repr__(self) -> str:
        """KQuery-like text of the expression, truncated for readability (the printer
        :mod:`symex.expr.printing` installs itself here: it depends on this module)."""
        if _formatter is None:
            return f"Expr({self.op.name}, width={self.width})"
        return _formatter(self, 300)

    # Copying would break the one-object-per-structure invariant that identity equality relies on.
    def __copy__(self) -> Expr:
        """Return self: expressions are immutable and interned."""
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Expr:
        """Return self: expressions are immutable and interned."""
        return self


class Array:
    """A byte array read by READ nodes: symbolic (``initial is None``) or constant.

    Compared by identity: two arrays with the same name are still different arrays.
    Indices are 32 bits wide and elements 8 bits wide.
    """

    __slots__ = ("name", "size", "initial", "__weakref__")

    name: str
    size: int
    initial: bytes | None

    def __init__(self, name: str, size: int, initial: bytes | None = None) -> None:
        """Create an array of ``size`` bytes; ``initial`` (exactly ``size`` bytes) makes it constant."""
        if not isinstance(name, str):
            raise TypeError(f"array name must be a str, got {type(name).__name__}")
        if not isinstance(size, int) or size < 0:
            raise ValueError(f"array size must be a non-negative int, got {size!r}")
        if initial is not None:
            initial = bytes(initial)
            if len(initial) != size:
                raise ValueError(
                    f"constant array {name!r} has size {size} but {len(initial)} initial bytes; "
                    "pass exactly `size` bytes"
                )
        self.name = name
        self.size = size
        self.initial = initial

    @property
    def is_symbolic(self) -> bool:
        """True when the contents are unknown (no initial bytes)."""
        return self.initial is None

    def __repr__(self) -> str:
        """Short description naming the array."""
        kind = "symbolic" if self.initial is None else "constant"
        return f"Array({self.name!r}, size={self.size}, {kind})"

    def __copy__(self) -> Array:
        """Return self: arrays have identity semantics."""
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Array:
        """Return self: arrays have identity semantics."""
        return self


class UpdateNode:
    """One write ``array[index] = value`` in an update list; immutable by convention.

    ``next`` is the next older write; ``length`` counts this node and all older ones.
    """

    __slots__ = ("index", "value", "next", "length")

    index: Expr
    value: Expr
    next: UpdateNode | None
    length: int

    def __init__(self, index: Expr, value: Expr, next: UpdateNode | None = None) -> None:
        """Create a write node on top of ``next``; index must be 32 bits, value 8 bits."""
        if index.width != INDEX_WIDTH:
            raise ValueError(f"array index must be {INDEX_WIDTH} bits wide, got {index.width}")
        if value.width != ELEMENT_WIDTH:
            raise ValueError(f"array element must be {ELEMENT_WIDTH} bits wide, got {value.width}")
        self.index = index
        self.value = value
        self.next = next
        self.length = 1 if next is None else next.length + 1

    def __repr__(self) -> str:
        """Describe the write and how many writes it sits on."""
        return f"UpdateNode({self.index!r}={self.value!r}, length={self.length})"

    def __copy__(self) -> UpdateNode:
        """Return self: nodes are immutable and shared between update lists."""
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> UpdateNode:
        """Return self: nodes are immutable and shared between update lists."""
        return self


class UpdateList:
    """A persistent list of writes over an :class:`Array`, newest first.

    :meth:`write` returns a new list and leaves this one valid, so forked states can share
    their common history. Two lists are equal when they have the same array and the same head.
    """

    __slots__ = ("array", "head")

    array: Array
    head: UpdateNode | None

    def __init__(self, array: Array, head: UpdateNode | None = None) -> None:
        """Wrap ``head`` (newest write, or None for no writes) over ``array``."""
        self.array = array
        self.head = head

    def write(self, index: Expr, value: Expr) -> UpdateList:
        """Return a new list with ``array[index] = value`` as its newest write."""
        return UpdateList(self.array, UpdateNode(index, value, self.head))

    def __len__(self) -> int:
        """Number of writes in the list."""
        head = self.head
        return 0 if head is None else head.length

    def __iter__(self) -> Any:
        """Iterate the write nodes from newest to oldest."""
        node = self.head
        while node is not None:
            yield node
            node = node.next

    def __eq__(self, other: object) -> bool:
        """Same array and same head node (by identity)."""
        if not isinstance(other, UpdateList):
            return NotImplemented
        return self.array is other.array and self.head is other.head

    def __hash__(self) -> int:
        """Hash consistent with :meth:`__eq__`."""
        return hash((self.array, self.head))

    def __repr__(self) -> str:
        """Name the array and the number of writes."""
        return f"UpdateList({self.array.name!r}, writes={len(self)})"

    def __copy__(self) -> UpdateList:
        """Return self: update lists are persistent."""
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> UpdateList:
        """Return self: update lists are persistent."""
        return self


#: the printer's ``format_expr(expr, max_chars)``, installed by :mod:`symex.expr.printing`
_formatter: Callable[[Expr, int], str] | None = None


# Keys hold the children themselves (identity-hashed), so a key can never be confused with a
# key of a dead node whose id() was reused; entries vanish when their Expr is collected.
_table: weakref.WeakValueDictionary[tuple[Any, ...], Expr] = weakref.WeakValueDictionary()
# Looking up the underlying dict of weak references skips a Python-level method call on the
# constructors' hot path; stale references (dead targets) are handled by the None check.
_refs: dict[tuple[Any, ...], weakref.ref[Expr]] = _table.data  # type: ignore[attr-defined]


def intern_expr(op: Op, width: int, args: tuple[Expr, ...], value: int = 0) -> Expr:
    """Return the unique Expr for (op, width, args, value), creating it if needed.

    No simplification or checking happens here; use :mod:`symex.expr.build`.
    """
    key = (op, width, value, *args)
    ref = _refs.get(key)
    if ref is not None:
        e = ref()
        if e is not None:
            return e
    e = Expr(op, width, args, value, None)
    _table[key] = e
    return e


def intern_read(updates: UpdateList, index: Expr) -> Expr:
    """Return the unique READ of ``updates`` at ``index`` (no simplification)."""
    key = (Op.READ, updates.array, updates.head, index)
    ref = _refs.get(key)
    if ref is not None:
        e = ref()
        if e is not None:
            return e
    e = Expr(Op.READ, ELEMENT_WIDTH, (index,), 0, updates)
    _table[key] = e
    return e


def live_expr_count() -> int:
    """Number of interned expressions currently alive (for diagnostics and tests)."""
    return len(_table)
