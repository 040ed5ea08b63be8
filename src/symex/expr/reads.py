"""Which bytes of which symbolic arrays an expression reads: what KLEE's independence is
decided on.

An element is ``(array, index)`` for a byte read at a constant index and ``(array, None)``
for a read at a symbolic index, which may touch any byte of the array. As in KLEE, two
constraints are independent unless they share a byte, so ``b[0] > 100`` and ``b[1] > 100``
are solved (and cached) apart although both read array ``b``. Constant arrays (memory
objects with known initial bytes) are not inputs: reads of them count only through the
symbolic indices and values written into them.
"""

from __future__ import annotations

import weakref

from symex.expr.nodes import Array, Expr, Op, UpdateList, UpdateNode

__all__ = ["Element", "read_elements"]

Element = tuple[Array, "int | None"]
"""A byte of a symbolic array (``(array, index)``), or any byte of it (``(array, None)``)."""

# Like the intern table: one entry per live expression, gone with it. Constraints recur in
# every later query of their path (and in the solver chain's), so each is walked once.
_memo: weakref.WeakKeyDictionary[Expr, tuple[Element, ...]] = weakref.WeakKeyDictionary()
_found = _memo.get

_READ = Op.READ
_CONST = Op.CONST


def read_elements(e: Expr) -> tuple[Element, ...]:
    """The elements ``e`` reads, each once, in the order a depth-first walk meets them (the
    same for the same structure in every process)."""
    found = _found(e)
    if found is not None:
        return found
    # a wrapper of one operand (``c == digest_byte``, a cast, a negation) reads what the
    # operand reads, in the same order: the walk from it would be the operand's walk, and
    # the operand's may be remembered (a value fixed, then its equality added)
    node = e
    while node.op is not _READ:
        operands = [a for a in node.args if a.args or a.op is _READ]
        if len(operands) != 1:
            break
        node = operands[0]
        found = _found(node)
        if found is not None:
            _memo[e] = found
            return found
    keys: dict[Element, None] = {}
    seen: set[Expr] = set()
    seen_writes: set[UpdateNode] = set()
    stack = [e]
    while stack:
        node = stack.pop()
        if node.op is _READ:
            updates: UpdateList = node.updates  # type: ignore[assignment]  # a read has its list
            index = node.args[0]
            if updates.array.initial is None:
                keys[(updates.array, index.value if index.op is _CONST else None)] = None
            if index.args and index not in seen:
                seen.add(index)
                stack.append(index)
            write = updates.head
            while write is not None and write not in seen_writes:
                seen_writes.add(write)
                for child in (write.index, write.value):
                    if (child.args or child.op is _READ) and child not in seen:
                        seen.add(child)
                        stack.append(child)
                write = write.next
            continue
        for child in node.args:
            # constants read nothing: only operations and reads are walked
            if (child.args or child.op is _READ) and child not in seen:
                seen.add(child)
                stack.append(child)
    found = tuple(keys)
    _memo[e] = found
    return found
