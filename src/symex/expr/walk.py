"""Iterative traversals of expression DAGs (explicit stacks: path-grown depth is unbounded)."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from symex.expr.nodes import Array, Expr, Op, UpdateNode

__all__ = ["OpFinder", "postorder", "arrays_in", "is_const", "children", "node_count"]


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


def node_count(e: Expr, limit: int) -> int:
    """The distinct operation and read nodes reachable from ``e`` (constants not counted),
    counting no further than ``limit + 1``: the walk stops there, so a big DAG costs no
    more than a small one."""
    seen: set[Expr] = set()
    stack = [e]
    while stack:
        node = stack.pop()
        if node in seen or node.op is Op.CONST:
            continue
        seen.add(node)
        if len(seen) > limit:
            break
        stack.extend(children(node))
    return len(seen)


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


class OpFinder:
    """Whether expressions contain a node of some operations (e.g. the floating-point ones),
    update lists included, remembering what it has walked: a query repeats its path's
    constraints, so each is walked once, and so is an update list's older history.

    What it remembers is dropped past ``limit`` entries, so it holds expressions alive for a
    while only (as a solver's translation cache does)."""

    __slots__ = ("ops", "limit", "_clean", "_clean_writes", "_found")

    def __init__(self, ops: Collection[Op], limit: int = 1 << 18) -> None:
        """Look for nodes whose op is in ``ops``."""
        self.ops = frozenset(ops)
        self.limit = limit
        self._clean: set[Expr] = set()
        self._clean_writes: set[UpdateNode] = set()
        self._found: set[Expr] = set()

    def found_in(self, roots: Iterable[Expr]) -> bool:
        """True when a node reachable from ``roots`` has one of the operations."""
        clean, found = self._clean, self._found
        if len(clean) + len(self._clean_writes) + len(found) > self.limit:
            clean.clear()
            self._clean_writes.clear()
            found.clear()
        for root in roots:
            if root in clean:
                continue
            if root in found or self._search(root):
                found.add(root)
                return True
        return False

    def _search(self, root: Expr) -> bool:
        """Walk the part of ``root`` not yet known clean; mark what turns out clean."""
        ops, clean, clean_writes = self.ops, self._clean, self._clean_writes
        read_op = Op.READ
        # entries (node or write, expanded): an expanded entry's children are all clean
        stack: list[tuple[Expr | UpdateNode, bool]] = [(root, False)]
        while stack:
            item, expanded = stack.pop()
            if isinstance(item, UpdateNode):
                if expanded:
                    clean_writes.add(item)
                    continue
                if item in clean_writes:
                    continue
                stack.append((item, True))
                older = item.next
                if older is not None and older not in clean_writes:
                    stack.append((older, False))
                for part in (item.index, item.value):
                    if part not in clean:
                        stack.append((part, False))
                continue
            if expanded:
                clean.add(item)
                continue
            if item in clean:
                continue
            if item.op in ops:
                return True
            stack.append((item, True))
            if item.op is read_op:
                head = item.updates.head  # type: ignore[union-attr]
                if head is not None and head not in clean_writes:
                    stack.append((head, False))
            for child in item.args:
                if child not in clean:
                    stack.append((child, False))
        return False
