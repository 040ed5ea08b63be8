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
arrays of the same name, can cost a lookup but never give a wrong answer.

Unsatisfiable constraint sets (*refutations*) are shared too: a query that contains one is
unsatisfiable, as the counter-example cache decides within one worker. Nothing cheap could
confirm such an answer, so a refutation travels as its expressions (the solver wire format,
:mod:`symex.solvers.wire`), not as a digest, and is used only when the query holds those very
expressions: no collision can make a feasible path look infeasible. Every refutation comes
from a worker's core solver, as trustworthy as one's own.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from symex import expr as _expr
from symex.expr.digest import StructureHasher, mix
from symex.solvers.wire import QueryDecoder, QueryEncoder

if TYPE_CHECKING:
    from symex.expr import Array, Expr

__all__ = ["SHARED_REFUTATIONS_LIMIT", "SHARED_SOLUTIONS_LIMIT", "NamedModel", "Refutation",
           "SharedSolutions", "Solution"]

#: models one worker keeps (the oldest is dropped first)
SHARED_SOLUTIONS_LIMIT = 50_000
#: other workers' refutations one worker keeps and tries (each lookup tries them all)
SHARED_REFUTATIONS_LIMIT = 1024
#: the latest models from other workers tried on a query whose digest none was found for
#: (independence slicing leaves queries over a few bytes, which a model found below another
#: path prefix often satisfies)
SHARED_MODELS_TRIED = 8

NamedModel = tuple[tuple[str, bytes], ...]
"""A model as it travels between processes: (array name, contents) pairs."""

Solution = tuple[int, NamedModel]
"""A query's digest and a model that satisfies it."""
Refutation = bytes
"""An unsatisfiable set of constraints, in the solver wire format."""


class SharedSolutions:
    """One worker's view of the run's shared solutions (module docstring)."""

    __slots__ = ("_hasher", "_models", "_found", "limit", "hits", "published", "_refutations",
                 "_refuted", "_encoder", "_decoder", "refutation_hits", "_latest")

    def __init__(self, limit: int = SHARED_SOLUTIONS_LIMIT) -> None:
        self._hasher = StructureHasher(hash_constants=True)
        self._models: OrderedDict[int, NamedModel] = OrderedDict()
        self._found: list[Solution] = []
        self.limit = limit
        self.hits = 0
        """Queries answered by a model another worker found."""
        self.published = 0
        """Models this worker's solver found and offered to the others."""
        self._latest: deque[NamedModel] = deque(maxlen=SHARED_MODELS_TRIED)
        self._refutations: deque[frozenset[Expr]] = deque(maxlen=SHARED_REFUTATIONS_LIMIT)
        self._refuted: list[Refutation] = []
        self._encoder = QueryEncoder()
        self._decoder: QueryDecoder | None = None
        self.refutation_hits = 0
        """Queries found unsatisfiable by another worker's refutation."""

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
        by_name = {array.name: array for array in arrays}
        named = self._models.get(key)
        if named is not None:
            model = _satisfying(named, by_name, constraints)
            if model is not None:
                self.hits += 1
                return model
        for index, named in enumerate(self._latest):
            model = _satisfying(named, by_name, constraints)
            if model is not None:
                if index:  # the most recently useful first
                    del self._latest[index]
                    self._latest.appendleft(named)
                self.hits += 1
                return model
        return None

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
                self._latest.appendleft(named)

    def publish_unsat(self, constraints: Sequence[Expr]) -> None:
        """Offer a set of constraints this worker's solver found unsatisfiable."""
        self._refuted.append(self._encoder.encode(constraints, (), ()))

    def take_refuted(self) -> tuple[Refutation, ...]:
        """The refutations published since the last call (for the coordinator)."""
        found = tuple(self._refuted)
        self._refuted.clear()
        return found

    def add_refutations(self, refutations: Iterable[Refutation],
                        array_of: Callable[[str, int, bytes | None], Array]) -> None:
        """Refutations other workers found; ``array_of`` gives this process's array for a
        name (the same for every path, so that the expressions rebuilt are this worker's)."""
        if self._decoder is None:
            self._decoder = QueryDecoder(array_of)
        decode = self._decoder.decode
        for blob in refutations:
            self._refutations.appendleft(frozenset(decode(blob)[0]))

    def refutes(self, query: frozenset[Expr]) -> bool:
        """Whether another worker found a subset of ``query`` unsatisfiable."""
        for refuted in self._refutations:
            if refuted <= query:
                self.refutation_hits += 1
                return True
        return False

    def __len__(self) -> int:
        """Models known."""
        return len(self._models)

    def _remember(self, key: int, named: NamedModel) -> None:
        self._models[key] = named
        if len(self._models) > self.limit:
            self._models.popitem(last=False)


def _satisfying(named: NamedModel, by_name: dict[str, Array],
                constraints: Sequence[Expr]) -> dict[Array, bytes] | None:
    """``named`` on the query's arrays, if the evaluator confirms it satisfies
    ``constraints``."""
    model: dict[Array, bytes] = {}
    for name, contents in named:
        array = by_name.get(name)
        if array is not None and len(contents) == array.size:
            model[array] = contents
    assignment = _expr.Assignment(model)
    if all(assignment.evaluate(c) for c in constraints):
        return model
    return None
