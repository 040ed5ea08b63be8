"""One bottom-up fold over expression DAGs (pySMT's ``DagWalker``), with an explicit stack.

Many passes over expressions compute one value per node from the values of its operands: a
hash, a translation into a solver's terms, text. :class:`DagFold` walks the DAG once for
them, children before parents, each distinct node once (memoized: path conditions share
most of their nodes), without recursion (a path's expressions grow without bound in depth).

A READ is where the passes differ most, and where they went wrong most: its update list (the
writes to an array, newest first, sharing their older writes with other lists) is folded
oldest write first into one value, ``write(before, index, value)`` per write starting from
``array(array)``, and memoized per write node, so a long history shared by many reads is
folded once; ``read(expr, updates, index)`` then makes the read's value. A write is memoized
with its list's array (the same write nodes may end lists of two arrays: a decoded query
shares equal writes), since a fold's value of a list usually starts from the array's. A
subclass says what each node computes; the walk is written here once.
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence
from typing import Any, Generic, TypeVar

from symex.expr.nodes import Array, Expr, Op, UpdateNode

__all__ = ["DagFold"]

R = TypeVar("R")

# what a stack entry asks: expand a node (push its operands), emit it (its operands are
# done), or fold one write of an update list (its index and value are done)
_EXPAND, _EMIT, _WRITE = 0, 1, 2


class DagFold(Generic[R]):
    """A value per expression node, computed from its operands' values (module docstring).

    Subclasses implement :meth:`node`, :meth:`array`, :meth:`write` and :meth:`read`.
    ``memo`` keeps each node's value between calls (a ``WeakKeyDictionary`` lets values go
    with their expressions); ``update_memo`` each ``(write node, array)``'s folded list (write
    nodes are not weakly referable: :meth:`__call__` empties it past ``update_limit``
    entries)."""

    __slots__ = ("memo", "update_memo", "update_limit")

    def __init__(self, memo: MutableMapping[Expr, R] | None = None,
                 update_memo: MutableMapping[tuple[UpdateNode, Array], R] | None = None,
                 update_limit: int = 200_000) -> None:
        self.memo: MutableMapping[Expr, R] = {} if memo is None else memo
        self.update_memo: MutableMapping[tuple[UpdateNode, Array], R] = (
            {} if update_memo is None else update_memo)
        self.update_limit = update_limit

    # -- what a subclass computes -------------------------------------------------------------

    def node(self, e: Expr, args: Sequence[R]) -> R:
        """The value of ``e`` (any op but READ) from its operands' values, in order."""
        raise NotImplementedError

    def array(self, array: Array) -> R:
        """The value of ``array`` before any write (the start of each update list's fold)."""
        raise NotImplementedError

    def write(self, before: R, index: R, value: R) -> R:
        """The value of an update list after one more write, from its value ``before`` and
        the write's index and value."""
        raise NotImplementedError

    def read(self, e: Expr, updates: R, index: R) -> R:
        """The value of the READ ``e`` from its update list's folded value and its index's."""
        raise NotImplementedError

    # -- the walk ---------------------------------------------------------------------------------

    def __call__(self, root: Expr) -> R:
        """The value of ``root``."""
        memo, writes = self.memo, self.update_memo
        if root in memo:
            return memo[root]
        if len(writes) > self.update_limit:
            writes.clear()
        read_op = Op.READ
        node, read, array, fold_write = self.node, self.read, self.array, self.write
        stack: list[tuple[int, Any]] = [(_EXPAND, root)]
        pop, push = stack.pop, stack.append
        while stack:
            kind, item = pop()
            if kind == _EXPAND:
                if item in memo:
                    continue
                if item.op is read_op:
                    push((_EMIT, item))
                    index = item.args[0]
                    if index not in memo:
                        push((_EXPAND, index))
                    updates = item.updates
                    arr = updates.array
                    # newest first from the head, down to a write already folded; pushed so
                    # that the oldest of them is folded first
                    write = updates.head
                    while write is not None and (write, arr) not in writes:
                        push((_WRITE, (write, arr)))
                        if write.value not in memo:
                            push((_EXPAND, write.value))
                        if write.index not in memo:
                            push((_EXPAND, write.index))
                        write = write.next
                    continue
                args = item.args
                if not args:
                    # a leaf (a constant): its value now, without a second visit
                    memo[item] = node(item, ())
                    continue
                push((_EMIT, item))
                for i in range(len(args) - 1, -1, -1):
                    if args[i] not in memo:
                        push((_EXPAND, args[i]))
            elif kind == _EMIT:
                if item in memo:
                    continue  # reached twice before its first emission
                if item.op is read_op:
                    updates = item.updates
                    head = updates.head
                    folded = array(updates.array) if head is None else writes[head, updates.array]
                    memo[item] = read(item, folded, memo[item.args[0]])
                else:
                    # the operands' values without a comprehension's frame (most have 1 or 2)
                    args = item.args
                    arity = len(args)
                    if arity == 2:
                        memo[item] = node(item, (memo[args[0]], memo[args[1]]))
                    elif arity == 1:
                        memo[item] = node(item, (memo[args[0]],))
                    else:
                        memo[item] = node(item, tuple(map(memo.__getitem__, args)))
            else:
                if item in writes:
                    continue
                write, arr = item
                before = array(arr) if write.next is None else writes[write.next, arr]
                writes[item] = fold_write(before, memo[write.index], memo[write.value])
        return memo[root]
