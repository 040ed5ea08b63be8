"""Iterative traversals of expression DAGs (explicit stacks: path-grown depth is unbounded)."""

from __future__ import annotations

from collections.abc import Iterable

from symex.expr.nodes import Array, Expr, Op, UpdateNode

__all__ = ["postorder", "arrays_in", "is_const", "children"]


def is_const(e: Expr) -> bool:
    """True when ``e`` is a constant node."""
    return e.op is Op.CONST


def children(e: Expr) -> list[Expr]:
    """Direct operands of ``e``; for a READ the index/value of every write, oldest first, then the index."""
    if e.op is not Op.READ:
        return list(e.args)
    result: list[Expr] = []
    updates = e.updates
    assert updates is not None
    nodes: list[UpdateNode] = list(updates)
    for node in reversed(nodes):
        result.append(node.index)
        result.append(node.value)
    result.append(e.args[0])
    return result


def postorder(roots: Iterable[Expr]) -> list[Expr]:
    """Every distinct node reachable from ``roots``, each once, children before parents.

    The index and value expressions of the writes in a READ's update list come before the
    READ (older writes first). The order depends only on the structure of the roots.
    """
    order: list[Expr] = []
    seen: set[Expr] = set()
    # Update lists share their older writes between forked states; visiting each write once
    # keeps the walk linear in the size of the DAG.
    seen_writes: set[UpdateNode] = set()
    read_op = Op.READ
    for root in roots:
        if root in seen:
            continue
        # Entries are (expr, expanded): expanded entries are emitted, others get expanded.
        stack: list[tuple[Expr, bool]] = [(root, False)]
        while stack:
            e, expanded = stack.pop()
            if expanded:
                order.append(e)
                continue
            if e in seen:
                continue
            seen.add(e)
            stack.append((e, True))
            if e.op is read_op:
                index = e.args[0]
                if index not in seen:
                    stack.append((index, False))
                # Newest first from the head, stopping at writes already handled; pushed newest
                # first so that the oldest new write is expanded first.
                node = e.updates.head  # type: ignore[union-attr]
                while node is not None and node not in seen_writes:
                    seen_writes.add(node)
                    value = node.value
                    if value not in seen:
                        stack.append((value, False))
                    idx = node.index
                    if idx not in seen:
                        stack.append((idx, False))
                    node = node.next
            else:
                args = e.args
                for i in range(len(args) - 1, -1, -1):
                    child = args[i]
                    if child not in seen:
                        stack.append((child, False))
    return order


def arrays_in(roots: Iterable[Expr]) -> list[Array]:
    """Distinct arrays read anywhere in ``roots``, in the order :func:`postorder` meets their READs."""
    found: dict[Array, None] = {}
    for e in postorder(roots):
        if e.op is Op.READ:
            found.setdefault(e.updates.array, None)  # type: ignore[union-attr]
    return list(found)
