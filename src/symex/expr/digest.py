"""Deterministic 64-bit hashes of expressions, the same in every process.

Two users: the memo's divergence detection (:mod:`symex.memo.recorder`) and the parallel
workers' shared solutions (:mod:`symex.solvers.shared`), which key a query by the digests of
its constraints. A recorded segment keeps a digest of what decided it: the kinds and structure of the
conditions the path was decided on, the constraints it gained, where it forked or ended.
Replaying the segment computes the digest again; a different one means the program or its
environment changed (MoKlee's divergence). Python's ``hash`` of strings changes from process
to process and expression nodes hash by address, so the hashes here are FNV-1a over 64-bit
words, and names go through BLAKE2b; the same expression hashes the same in every process.

Constants are part of an expression's hash when ``hash_constants`` is set (the default:
symex's addresses are the same in every run, so constants are stable, unlike KLEE's); without
it, a changed constant in a condition goes unnoticed (MoKlee's ``-hash-constants`` off).
"""

from __future__ import annotations

import hashlib
import weakref

from symex import expr as E
from symex.expr.nodes import UpdateNode

__all__ = ["MASK64", "StructureHasher", "mix", "mix_words", "name_hash"]

MASK64 = (1 << 64) - 1
_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3

#: update nodes remembered before the memo is cleared (they are not weakly referenceable)
UPDATE_MEMO_LIMIT = 200_000


def mix(h: int, word: int) -> int:
    """One FNV-1a step over a 64-bit word."""
    return ((h ^ (word & MASK64)) * _FNV_PRIME) & MASK64


def mix_words(h: int, words: tuple[int, ...]) -> int:
    """FNV-1a steps over several words (one call: segments mix a handful per event)."""
    for word in words:
        h = ((h ^ (word & MASK64)) * _FNV_PRIME) & MASK64
    return h


def name_hash(text: str) -> int:
    """A 64-bit hash of a string, the same in every process."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogateescape"),
                                          digest_size=8).digest(), "little")


class StructureHasher:
    """Hashes expressions by structure (and constants, if asked); memoized, iterative."""

    __slots__ = ("hash_constants", "_exprs", "_updates", "_arrays")

    def __init__(self, hash_constants: bool = True) -> None:
        self.hash_constants = hash_constants
        self._exprs: weakref.WeakKeyDictionary[E.Expr, int] = weakref.WeakKeyDictionary()
        self._updates: dict[UpdateNode, int] = {}
        self._arrays: weakref.WeakKeyDictionary[E.Array, int] = weakref.WeakKeyDictionary()

    def expr(self, root: E.Expr) -> int:
        """The hash of ``root`` (explicit stack: deep expressions are fine)."""
        memo = self._exprs
        known = memo.get(root)
        if known is not None:
            return known
        stack: list[tuple[E.Expr, bool]] = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if node in memo:
                continue
            if not expanded:
                stack.append((node, True))
                for child in node.args:
                    if child not in memo:
                        stack.append((child, False))
                continue
            h = mix(mix(_FNV_OFFSET, node.op), node.width)
            op = node.op
            if op is E.Op.CONST:
                if self.hash_constants:
                    h = mix(h, node.value)
                    h = mix(h, node.value >> 64) if node.value >> 64 else h
            elif op is E.Op.EXTRACT:
                h = mix(h, node.value)
            for child in node.args:
                h = mix(h, memo[child])
            if op is E.Op.READ:
                h = mix(h, self._update_list(node.updates))  # type: ignore[arg-type]
            memo[node] = h
        return memo[root]

    def _update_list(self, updates: E.UpdateList) -> int:
        """The hash of an array with its writes (newest first), memoized per write node."""
        base = self._array(updates.array)
        pending: list[UpdateNode] = []
        node = updates.head
        known = self._updates
        while node is not None and node not in known:
            pending.append(node)
            node = node.next
        h = base if node is None else known[node]
        if len(known) + len(pending) > UPDATE_MEMO_LIMIT:
            known.clear()
        for write in reversed(pending):
            h = mix(mix(mix(h, 0x5752), self.expr(write.index)), self.expr(write.value))
            known[write] = h
        # the array's own hash joins every list: the same writes to another array differ
        return mix(h, base)

    def _array(self, array: E.Array) -> int:
        known = self._arrays.get(array)
        if known is None:
            known = mix(name_hash(array.name), array.size)
            if array.initial is not None and self.hash_constants:
                known = mix(known, name_hash(array.initial.hex()))
            self._arrays[array] = known
        return known
