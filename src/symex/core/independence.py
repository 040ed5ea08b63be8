"""A path's constraints in independent groups, kept as the path grows.

KLEE's independence solver partitions a query's constraints by the bytes they read, afresh
for every query. A path asks one query per fork, and its constraints only ever grow, so the
partition is kept with the state instead (:class:`ConstraintGroups`, a persistent value that
forks share) and grown by each new constraint. A branch's question then takes only the
groups its condition reads (:meth:`ConstraintGroups.slice`): a condition on bytes no
constraint reads is asked alone, and its answer is merged into the state's model, whose
other bytes still satisfy every other group (``Executor.split``).

A read at a symbolic index may touch any byte of its array; the groups do not follow such
reads (a path that makes one is no longer *exact*, and its questions take every constraint,
as before). ``$SYMEX_INDEPENDENT_SPLITS=0`` turns the slicing off for an A/B comparison.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Sequence

import immutables

from symex.expr import Array, Expr
from symex.expr.reads import Element, read_elements

__all__ = ["ENABLE_VARIABLE", "ConstraintGroups", "Slice", "splits_enabled"]

ENABLE_VARIABLE = "SYMEX_INDEPENDENT_SPLITS"


def splits_enabled() -> bool:
    """Whether branches ask only the groups their condition reads (default: yes)."""
    return os.environ.get(ENABLE_VARIABLE, "1") != "0"


class _Group:
    """Constraints that share bytes, transitively: ``(position on the path, constraint)``
    pairs in path order, and every element they read."""

    __slots__ = ("entries", "elements", "_constraints", "rewrites")

    def __init__(self, entries: tuple[tuple[int, Expr], ...], elements: frozenset[Element]) -> None:
        self.entries = entries
        self.elements = elements
        self._constraints: tuple[Expr, ...] | None = None
        #: conditions reading this group's bytes (and no other constraint's), rewritten
        #: under the equalities its constraints imply (see ConstraintGroups.rewrites_of)
        self.rewrites: dict[Expr, Expr] | None = None

    @property
    def constraints(self) -> tuple[Expr, ...]:
        """The constraints alone, in path order (made once: a group answers many queries)."""
        found = self._constraints
        if found is None:
            found = self._constraints = tuple(c for _, c in self.entries)
        return found


class Slice:
    """What a question about some elements needs of a path: the constraints of the groups
    that read them (path order) and every element those constraints read."""

    __slots__ = ("constraints", "elements")

    def __init__(self, constraints: tuple[Expr, ...], elements: frozenset[Element]) -> None:
        self.constraints = constraints
        self.elements = elements

    def arrays(self, extra: Sequence[Element]) -> tuple[Array, ...]:
        """The arrays of the slice's elements and ``extra``'s (``extra``'s first, then
        those of the constraints in path order: the same in every process)."""
        found: dict[Array, None] = dict.fromkeys(a for a, _ in extra)
        for c in self.constraints:
            for array, _ in read_elements(c):
                found[array] = None
        return tuple(found)


class ConstraintGroups:
    """A path's constraints partitioned by the elements they read (see the module
    docstring). Immutable: :meth:`add` returns the grown partition."""

    __slots__ = ("owner", "ground", "count", "exact")

    EMPTY: ConstraintGroups

    def __init__(self, owner: immutables.Map[Element, _Group], ground: tuple[tuple[int, Expr], ...],
                 count: int, exact: bool) -> None:
        #: the group each element read by some constraint belongs to
        self.owner = owner
        #: constraints that read no symbolic byte (every question takes them)
        self.ground = ground
        #: constraints added so far (the next one's position)
        self.count = count
        #: False once a constraint read at a symbolic index: the groups are not kept then
        self.exact = exact

    def add(self, condition: Expr, elements: Sequence[Element]) -> ConstraintGroups:
        """The partition with ``condition`` (which reads ``elements``) added."""
        position = self.count
        if not self.exact:
            return ConstraintGroups(self.owner, self.ground, position + 1, False)
        if not elements:
            return ConstraintGroups(self.owner, self.ground + ((position, condition),), position + 1, True)
        for _, index in elements:
            if index is None:
                # a symbolic index may touch any byte: from now on questions take everything
                return ConstraintGroups(immutables.Map(), (), position + 1, False)
        owner = self.owner
        merged: list[_Group] = []
        for element in elements:
            group = owner.get(element)
            if group is not None and not any(group is g for g in merged):
                merged.append(group)
        entry = ((position, condition),)
        if not merged:
            group = _Group(entry, frozenset(elements))
        elif len(merged) == 1:
            only = merged[0]
            group = _Group(only.entries + entry, only.elements.union(elements))
        else:
            entries = tuple(heapq.merge(*(g.entries for g in merged))) + entry
            group = _Group(entries, frozenset().union(elements, *(g.elements for g in merged)))
        with owner.mutate() as changing:
            for element in group.elements:
                changing[element] = group
            owner = changing.finish()
        return ConstraintGroups(owner, self.ground, position + 1, True)

    def independent_of(self, elements: Sequence[Element]) -> bool:
        """Whether no constraint reads any of ``elements`` (and none reads no symbolic byte
        at all): then nothing the path implies says anything about them."""
        if not self.exact or self.ground:
            return False
        owner = self.owner
        for element in elements:
            if element[1] is None or element in owner:
                return False
        return True

    def rewrites_of(self, elements: Sequence[Element]) -> dict[Expr, Expr] | None:
        """Where a condition reading ``elements`` is remembered rewritten under the path's
        equalities: the dictionary of the one group it reads, which every path holding that
        group shares. An equality's left side is in the condition only if it reads none but
        the condition's bytes, so its constraint is in that group: the group's constraints
        decide the rewrite. None where that does not hold (several groups, a symbolic index,
        constraints that read no byte, a partition not kept): rewrite afresh."""
        groups = self._groups_read(elements) if not self.ground else None
        if groups is None or len(groups) != 1:
            return None
        found = groups[0]
        memo = found.rewrites
        if memo is None:
            memo = found.rewrites = {}
        return memo

    def _groups_read(self, elements: Sequence[Element]) -> list[_Group] | None:
        """The groups whose constraints read any of ``elements``, each once, in the order
        the elements meet them; None when the partition is not exact or an element is a read
        at a symbolic index (then every constraint is needed)."""
        if not self.exact:
            return None
        owner = self.owner
        groups: list[_Group] = []
        for element in elements:
            if element[1] is None:
                return None
            group = owner.get(element)
            if group is not None and not any(group is g for g in groups):
                groups.append(group)
        return groups

    def slice(self, elements: Sequence[Element]) -> Slice | None:
        """What a question reading ``elements`` needs (None when the partition is not exact,
        or ``elements`` hold a read at a symbolic index: then it needs every constraint)."""
        groups = self._groups_read(elements)
        if groups is None:
            return None
        if not groups:
            return Slice(tuple(c for _, c in self.ground), frozenset())
        if len(groups) == 1 and not self.ground:
            return Slice(groups[0].constraints, groups[0].elements)
        entries = heapq.merge(self.ground, *(g.entries for g in groups))
        return Slice(tuple(c for _, c in entries), frozenset().union(*(g.elements for g in groups)))


ConstraintGroups.EMPTY = ConstraintGroups(immutables.Map(), (), 0, True)
