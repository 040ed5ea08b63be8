"""``SharedSolutions``: models found by other workers, tried before the core solver.

Cloud9 kept a distributed cache of constraint solutions: a query one worker solved is not
solved again by another. Parallel workers here each hold a :class:`SharedSolutions`; the
chain's counter-example layer publishes every model its core solver finds, the coordinator
passes them on to the other workers, and a query that misses a worker's own caches is looked
up here before its core solver runs.

Expressions are hash-consed per process, so a query is keyed by a digest of its constraint
set that is the same in every process (:class:`~symex.expr.digest.StructureHasher`, order
independent) and a model by array names. Only satisfying models are shared, and a model is
used only after the evaluator confirms it satisfies the query: a digest collision, or two
arrays of the same name, can cost a lookup but never give a wrong answer. Unsatisfiable
answers are not shared, since nothing cheap could confirm them.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from symex import expr as _expr
from symex.expr.digest import StructureHasher, mix

if TYPE_CHECKING:
    from symex.expr import Array, Expr

__all__ = ["SHARED_SOLUTIONS_LIMIT", "NamedModel", "SharedSolutions", "Solution"]

#: models one worker keeps (the oldest is dropped first)
SHARED_SOLUTIONS_LIMIT = 50_000

NamedModel = tuple[tuple[str, bytes], ...]
"""A model as it travels between processes: (array name, contents) pairs."""

Solution = tuple[int, NamedModel]
"""A query's digest and a model that satisfies it."""


class SharedSolutions:
    """One worker's view of the run's shared solutions (module docstring)."""

    __slots__ = ("_hasher", "_models", "_found", "limit", "hits", "published")

    def __init__(self, limit: int = SHARED_SOLUTIONS_LIMIT) -> None:
        self._hasher = StructureHasher(hash_constants=True)
        self._models: OrderedDict[int, NamedModel] = OrderedDict()
        self._found: list[Solution] = []
        self.limit = limit
        self.hits = 0
        """Queries answered by a model another worker found."""
        self.published = 0
        """Models this worker's solver found and offered to the others."""

    def key(self, constraints: Iterable[Expr]) -> int:
        """The digest of a constraint set: the same in every process, whatever the order."""
        digests = sorted({self._hasher.expr(c) for c in constraints})
        h = len(digests)
        for digest in digests:
            h = mix(h, digest)
        return h

    def lookup(self, key: int, constraints: Sequence[Expr],
               arrays: Sequence[Array]) -> dict[Array, bytes] | None:
        """A model of ``constraints`` (over ``arrays``) another worker found, or None."""
        named = self._models.get(key)
        if named is None:
            return None
        by_name = {array.name: array for array in arrays}
        model: dict[Array, bytes] = {}
        for name, contents in named:
            array = by_name.get(name)
            if array is not None and len(contents) == array.size:
                model[array] = contents
        assignment = _expr.Assignment(model)
        if not all(assignment.evaluate(c) for c in constraints):
            return None
        self.hits += 1
        return model

    def publish(self, key: int, model: dict[Array, bytes]) -> None:
        """Offer a model this worker's solver found for the query ``key``."""
        if key in self._models:
            return
        named = tuple((array.name, bytes(contents)) for array, contents in model.items())
        self._remember(key, named)
        self._found.append((key, named))
        self.published += 1

    def take_found(self) -> tuple[Solution, ...]:
        """The models published since the last call (for the coordinator)."""
        found = tuple(self._found)
        self._found.clear()
        return found

    def add(self, solutions: Iterable[Solution]) -> None:
        """Models other workers found (from the coordinator)."""
        for key, named in solutions:
            if key not in self._models:
                self._remember(key, named)

    def __len__(self) -> int:
        """Models known."""
        return len(self._models)

    def _remember(self, key: int, named: NamedModel) -> None:
        self._models[key] = named
        if len(self._models) > self.limit:
            self._models.popitem(last=False)
