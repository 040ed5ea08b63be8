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
from collections.abc import Sequence

from symex import expr as E
from symex.expr.fold import DagFold

__all__ = ["MASK64", "StructureHasher", "mix", "mix_words", "name_hash"]

MASK64 = (1 << 64) - 1
_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3

#: update nodes remembered before their memo is emptied (they are not weakly referable)
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


def _header(e: E.Expr) -> int:
    """The hash of a node's operation and width, before its operands."""
    return mix(mix(_FNV_OFFSET, e.op), e.width)


class StructureHasher(DagFold[int]):
    """Hashes expressions by structure (and constants, if asked): a memoized
    :class:`~symex.expr.fold.DagFold`, so deep expressions are fine."""

    __slots__ = ("hash_constants", "_arrays")

    def __init__(self, hash_constants: bool = True) -> None:
        super().__init__(weakref.WeakKeyDictionary(), {}, UPDATE_MEMO_LIMIT)
        self.hash_constants = hash_constants
        self._arrays: weakref.WeakKeyDictionary[E.Array, int] = weakref.WeakKeyDictionary()

    def expr(self, root: E.Expr) -> int:
        """The hash of ``root``."""
        return self(root)

    def node(self, e: E.Expr, args: Sequence[int]) -> int:
        h = _header(e)
        op = e.op
        if op is E.Op.CONST:
            if self.hash_constants:
                h = mix(h, e.value)
                h = mix(h, e.value >> 64) if e.value >> 64 else h
        elif op is E.Op.EXTRACT:
            h = mix(h, e.value)
        for child in args:
            h = mix(h, child)
        return h

    def write(self, before: int, index: int, value: int) -> int:
        return mix(mix(mix(before, 0x5752), index), value)

    def read(self, e: E.Expr, updates: int, index: int) -> int:
        # the array's own hash joins every list: the same writes to another array differ
        array = self.array(e.updates.array)  # type: ignore[union-attr]  # a read has its list
        return mix(mix(_header(e), index), mix(updates, array))

    def array(self, array: E.Array) -> int:
        known = self._arrays.get(array)
        if known is None:
            known = mix(name_hash(array.name), array.size)
            if array.initial is not None and self.hash_constants:
                known = mix(known, name_hash(array.initial.hex()))
            self._arrays[array] = known
        return known
