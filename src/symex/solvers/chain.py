"""``ChainSolver``: KLEE-style query optimisations in front of a core solver.

A chain answers :class:`~symex.solvers.base.SolverBase`'s two primitives itself when it can and
passes the rest, reduced, to an inner :class:`SolverBase`. Layers, in order (each switchable):

``trivial``
    constant conditions and constraints; a condition that is one of the constraints (sat: the
    path condition is assumed feasible) or the negation of one (unsat).
``independence``
    only constraints that share symbolic arrays with the query (transitively) are sent;
    constraints reading no symbolic array are always kept. Models are built per independent
    group, so a group that did not change since an earlier query hits the caches.
``cache``
    the same constraint set (order-independent) and query give the remembered answer.
``cex``
    KLEE's counter-example cache: an unsatisfiable subset makes a superset unsatisfiable, and
    remembered models (most recent first) are tried on the query before the core solver runs;
    a parallel worker's chain also looks up the models other workers found
    (:class:`~symex.solvers.shared.SharedSolutions`).

Like KLEE, the chain relies on the path condition being satisfiable: with an unsatisfiable one,
independence may answer from the part of it that is satisfiable.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import attrs

from symex import expr as _expr
from symex.errors import ConfigError, SolverUnknown
from symex.expr.reads import Element, read_elements
from symex.solvers.base import SolverBase, SolverStatistics

if TYPE_CHECKING:
    from symex.expr import Array, Expr
    from symex.solvers.shared import SharedSolutions

__all__ = [
    "CHAIN_LAYERS",
    "ChainSolver",
    "ChainStatistics",
    "LayerStatistics",
    "build_chain",
]

CHAIN_LAYERS: tuple[str, ...] = ("trivial", "independence", "cache", "cex")

#: values a cached model's evaluator keeps before it starts afresh (memory bound: each value
#: holds its expression alive)
CEX_MEMO_LIMIT = 100_000
"""Every layer name, in the order the chain applies them."""

_Model = dict["Array", bytes]
"""Contents of the symbolic arrays of one model (absent arrays read as zeros)."""


@attrs.define
class LayerStatistics:
    """What one layer of a chain did."""

    hits: int = 0
    """Questions this layer answered (or, for independence, reduced) itself."""
    time: float = 0.0
    """Seconds spent in this layer's own work (not in the layers after it)."""

    def as_dict(self) -> dict[str, float]:
        """The counters as a plain mapping."""
        return {"hits": self.hits, "time": self.time}


@attrs.define
class ChainStatistics(SolverStatistics):
    """:class:`SolverStatistics` of the whole chain (``queries``: satisfiability and model
    questions asked of the chain) plus per-layer counters and the core solver's share."""

    core_queries: int = 0
    """Questions that reached the inner (core) solver."""
    core_time: float = 0.0
    """Seconds spent inside the inner solver."""
    layers: dict[str, LayerStatistics] = attrs.field(factory=dict)
    """Counters per enabled layer, keyed by layer name."""

    def as_dict(self) -> dict[str, float]:
        """The counters as a flat mapping (layer counters as ``LAYER_hits``/``LAYER_time``)."""
        counters = super().as_dict()
        counters["core_queries"] = self.core_queries
        counters["core_time"] = self.core_time
        for name, layer in self.layers.items():
            counters[f"{name}_hits"] = layer.hits
            counters[f"{name}_time"] = layer.time
        return counters


#: What a constraint reads (symex.expr.reads): two constraints are independent unless they
#: share a byte of a symbolic array
_Element = Element


class _ArraySets:
    """Union-find over read elements (independence partitions)."""

    __slots__ = ("parent",)

    def __init__(self) -> None:
        self.parent: dict[_Element, _Element] = {}

    def find(self, a: _Element) -> _Element:
        parent = self.parent
        root = parent.setdefault(a, a)
        while parent[root] is not root:
            root = parent[root]
        # Path compression keeps later finds short on long paths with many arrays.
        while a is not root:
            a, parent[a] = parent[a], root
        return root

    def union(self, arrays: Sequence[_Element]) -> None:
        if not arrays:
            return
        first = self.find(arrays[0])
        for other in arrays[1:]:
            root = self.find(other)
            if root is not first:
                self.parent[root] = first


class ChainSolver(SolverBase):
    """Query optimisations (``layers``, a subset of :data:`CHAIN_LAYERS`) in front of ``inner``.

    ``ChainSolver(create_solver("z3"), layers=("independence", "cex"))``. The chain calls only
    ``inner``'s primitives ``_check``/``_model``; :class:`symex.errors.SolverUnknown` from it
    passes through (and is never cached). ``cache_size`` bounds the query cache (entries),
    ``cex_models`` the models and ``cex_unsat`` the unsatisfiable sets the counter-example
    cache keeps; ``shared`` (:mod:`symex.solvers.shared`) lets the cex layer take models other
    parallel workers found, and offer its own.
    """

    inner: SolverBase
    """The core solver."""
    layers: tuple[str, ...]
    """The enabled layers, in chain order."""
    statistics: ChainStatistics
    shared: SharedSolutions | None
    """Models other parallel workers found, tried by the cex layer before the core solver."""

    def __init__(
        self,
        inner: SolverBase,
        layers: Iterable[str] = CHAIN_LAYERS,
        *,
        cache_size: int = 100_000,
        cex_models: int = 64,
        cex_unsat: int = 1024,
        shared: SharedSolutions | None = None,
    ) -> None:
        """Wrap ``inner``; raises ConfigError for an unknown layer name."""
        requested = tuple(layers)
        unknown = [name for name in requested if name not in CHAIN_LAYERS]
        if unknown:
            raise ConfigError(
                f"unknown solver chain layer(s) {', '.join(map(repr, unknown))}; "
                f"choose from {', '.join(CHAIN_LAYERS)}"
            )
        super().__init__()
        self.inner = inner
        self.layers = tuple(name for name in CHAIN_LAYERS if name in requested)
        self.statistics = ChainStatistics(
            layers={name: LayerStatistics() for name in self.layers})
        self._trivial = "trivial" in self.layers
        self._independence = "independence" in self.layers
        self._cache_on = "cache" in self.layers
        self._cex_on = "cex" in self.layers
        self.shared = shared
        self._cache_size = cache_size
        self._check_cache: OrderedDict[tuple[frozenset[Expr], Expr | None], bool] = OrderedDict()
        self._model_cache: OrderedDict[frozenset[Expr], _Model | None] = OrderedDict()
        #: (query it answered, model, the model's evaluator): the evaluator is kept with the
        #: model, so values of the subexpressions paths share (reads through the same update
        #: lists, the same older constraints) are computed once per model, not per lookup
        self._cex_models: deque[tuple[frozenset[Expr], _Model, _expr.Assignment]] = \
            deque(maxlen=cex_models)
        self._cex_unsat: deque[frozenset[Expr]] = deque(maxlen=cex_unsat)

    # -- helpers --------------------------------------------------------------------------


    def set_deadline(self, deadline: float | None) -> None:
        """Cut the core solver's checks at ``deadline`` (see SolverBase)."""
        super().set_deadline(deadline)
        self.inner.set_deadline(deadline)

    def _symbolic_arrays(self, e: Expr) -> tuple[Array, ...]:
        """Symbolic arrays ``e`` reads."""
        return tuple(dict.fromkeys(a for a, _ in read_elements(e)))

    def _partition(self, constraints: Sequence[Expr]) -> tuple[_ArraySets, list[tuple[_Element, ...]]]:
        """Union-find over the elements the constraints read; a symbolic-index read of an
        array joins every byte of that array read anywhere in ``constraints``."""
        sets = _ArraySets()
        elements_of = [read_elements(c) for c in constraints]
        by_array: dict[Array, list[_Element]] = {}
        for elements in elements_of:
            sets.union(elements)
            for key in elements:
                by_array.setdefault(key[0], []).append(key)
        for keys in by_array.values():
            if any(index is None for _, index in keys):
                sets.union(keys)
        return sets, elements_of

    def _layer(self, name: str) -> LayerStatistics:
        return self.statistics.layers[name]

    def clear(self) -> None:
        """Forget every cached answer and model (statistics are kept)."""
        self._check_cache.clear()
        self._model_cache.clear()
        self._cex_models.clear()
        self._cex_unsat.clear()

    # -- primitives ----------------------------------------------------------------------

    def _check(self, constraints: tuple[Expr, ...], extra: Expr | None) -> bool:
        """Whether ``constraints`` and ``extra`` are satisfiable together."""
        stats = self.statistics
        stats.queries += 1
        started = time.perf_counter()
        try:
            answer = self._check_chain(constraints, extra)
        except SolverUnknown:
            stats.unknown += 1
            raise
        finally:
            stats.time += time.perf_counter() - started
        if answer:
            stats.sat += 1
        else:
            stats.unsat += 1
        return answer

    def _model(
        self, constraints: tuple[Expr, ...], exprs: Sequence[Expr], arrays: Sequence[Array]
    ) -> tuple[list[int], list[bytes]] | None:
        """Values of ``exprs`` and contents of ``arrays`` in one model of ``constraints``."""
        stats = self.statistics
        stats.queries += 1
        started = time.perf_counter()
        try:
            answer = self._model_chain(tuple(constraints), tuple(exprs), tuple(arrays))
        except SolverUnknown:
            stats.unknown += 1
            raise
        finally:
            stats.time += time.perf_counter() - started
        if answer is None:
            stats.unsat += 1
        else:
            stats.sat += 1
        return answer

    def group_model(self, constraints: tuple[Expr, ...]) -> dict[Array, bytes] | None:
        """A model of ``constraints`` that the caller knows to be one independent group (each
        shares bytes with the others, transitively: ``Executor.solve_beside`` asks about a
        state's groups so): the bytes of the arrays they read (absent arrays and bytes no
        constraint reads may be anything), or None when they are unsatisfiable. The trivial,
        cache and cex layers answer it as any model question; independence has nothing to
        split."""
        stats = self.statistics
        stats.queries += 1
        started = time.perf_counter()
        try:
            kept: list[Expr] = []
            for c in constraints:
                if c.op is _expr.Op.CONST:
                    if c.value == 0:
                        stats.unsat += 1
                        return None
                    continue
                kept.append(c)
            model = self._model_cached(tuple(kept)) if kept else {}
        except SolverUnknown:
            stats.unknown += 1
            raise
        finally:
            stats.time += time.perf_counter() - started
        if model is None:
            stats.unsat += 1
        else:
            stats.sat += 1
        return model

    # -- satisfiability ------------------------------------------------------------------

    def _check_chain(self, constraints: tuple[Expr, ...], extra: Expr | None) -> bool:
        const_op = _expr.Op.CONST
        if self._trivial:
            layer = self._layer("trivial")
            started = time.perf_counter()
            answer: bool | None = None
            kept: list[Expr] = []
            for c in constraints:
                if c.op is const_op:
                    if c.value == 0:
                        answer = False
                        break
                    continue
                kept.append(c)
            if answer is None and extra is not None:
                if extra.op is const_op:
                    # A true condition adds nothing to a path assumed feasible.
                    answer = extra.value != 0
                else:
                    present = set(kept)
                    if extra in present:
                        answer = True
                    elif _expr.bool_not(extra) in present or (
                            extra.op is _expr.Op.NOT and extra.args[0] in present):
                        answer = False
            layer.time += time.perf_counter() - started
            if answer is not None:
                layer.hits += 1
                return answer
            constraints = tuple(kept)

        if self._independence and extra is not None:
            layer = self._layer("independence")
            started = time.perf_counter()
            relevant = self._relevant(constraints, extra)
            if len(relevant) < len(constraints):
                layer.hits += 1
            constraints = relevant
            layer.time += time.perf_counter() - started

        return self._check_cached(constraints, extra)

    def _relevant(self, constraints: tuple[Expr, ...], extra: Expr) -> tuple[Expr, ...]:
        """The constraints sharing read bytes with ``extra`` (transitively), plus every
        constraint that reads no symbolic array."""
        sets, elements_of = self._partition((*constraints, extra))
        roots = {sets.find(k) for k in elements_of[-1]}
        return tuple(
            c for c, elements in zip(constraints, elements_of)
            if not elements or sets.find(elements[0]) in roots
        )

    def _check_cached(self, constraints: tuple[Expr, ...], extra: Expr | None) -> bool:
        key: tuple[frozenset[Expr], Expr | None] | None = None
        if self._cache_on:
            layer = self._layer("cache")
            started = time.perf_counter()
            key = (frozenset(constraints), extra)
            cached = self._check_cache.get(key)
            if cached is not None:
                self._check_cache.move_to_end(key)
            layer.time += time.perf_counter() - started
            if cached is not None:
                layer.hits += 1
                return cached
        if self._cex_on:
            ordered = constraints if extra is None else (*constraints, extra)
            model = self._cex_solve(frozenset(ordered), ordered)
            answer = model is not None
        else:
            answer = self._inner_check(constraints, extra)
        if key is not None:
            self._remember(self._check_cache, key, answer)
        return answer

    # -- counter-example cache -----------------------------------------------------------

    def _cex_solve(self, query: frozenset[Expr], ordered: Sequence[Expr]) -> _Model | None:
        """A model of the conjunction ``query`` (None: unsatisfiable), from the
        counter-example cache when possible, else from the inner solver (then remembered).
        ``ordered`` holds the same constraints in the caller's order, which is what the inner
        solver sees: a frozenset iterates in ``id()`` order, which differs between processes,
        and solvers answer the same constraints in another order with another model."""
        layer = self._layer("cex")
        started = time.perf_counter()
        found = self._cex_lookup(query, ordered)
        layer.time += time.perf_counter() - started
        if found is not None:
            layer.hits += 1
            return found[0]
        ordered = tuple(dict.fromkeys(ordered))
        arrays = self._arrays_of_set(ordered)
        shared = self.shared
        key = 0
        if shared is not None:
            started = time.perf_counter()
            key = shared.key(ordered)
            found_elsewhere = shared.lookup(key, ordered, arrays)
            refuted = found_elsewhere is None and shared.refutes(query)
            layer.time += time.perf_counter() - started
            if found_elsewhere is not None:
                self._cex_models.appendleft((query, found_elsewhere,
                                             _expr.Assignment(found_elsewhere)))
                return found_elsewhere
            if refuted:
                self._cex_unsat.append(query)
                return None
        answer = self._inner_model(ordered, (), arrays)
        started = time.perf_counter()
        if answer is None:
            self._cex_unsat.append(query)
            if shared is not None:
                shared.publish_unsat(ordered)
            model = None
        else:
            model = dict(zip(arrays, answer[1]))
            if self._cex_keep(query, ordered, model) and shared is not None:
                shared.publish(key, model)
        layer.time += time.perf_counter() - started
        return model

    def assume_model(self, constraints: Sequence[Expr], model: dict[Array, bytes]) -> None:
        """Keep ``model`` in the counter-example cache as a model of ``constraints`` (a path
        that assumed the side of a branch its inputs take, without the solver: its later
        questions find its inputs here instead of solving that constraint again). Kept only
        if the evaluator confirms it, as every cached model."""
        if self._cex_on:
            ordered = tuple(dict.fromkeys(constraints))
            self._cex_keep(frozenset(ordered), ordered, dict(model))

    def _cex_keep(self, query: frozenset[Expr], ordered: Sequence[Expr], model: _Model) -> bool:
        """Put ``model`` first in the counter-example cache as a model of ``query`` if the
        evaluator confirms it (the evaluator is what tries cached models); whether it did."""
        assignment = _expr.Assignment(model)
        if not all(assignment.evaluate(c) for c in ordered):
            return False
        self._cex_models.appendleft((query, model, assignment))
        return True

    def _cex_lookup(self, query: frozenset[Expr],
                    ordered: Sequence[Expr]) -> tuple[_Model | None] | None:
        """``(model,)`` or ``(None,)`` (unsat) when the cache decides ``query``, else None.
        ``ordered`` is ``query`` in the caller's order, oldest constraint first."""
        for unsat in self._cex_unsat:
            if unsat <= query:
                return (None,)
        models = self._cex_models
        for index, (solved, model, _) in enumerate(models):
            if query <= solved:
                self._cex_promote(index)
                return (model,)
        # Newest constraints first: the path's older ones held under the models found along
        # it, so a model that fails usually fails the newest, and a miss (every model tried,
        # as on a worker whose caches are cold) then costs one evaluation per model.
        probe = tuple(reversed(ordered))
        for index, (_, model, assignment) in enumerate(models):
            if assignment.memo_size > CEX_MEMO_LIMIT:
                assignment.forget()
            if all(assignment.evaluate(c) for c in probe):
                self._cex_promote(index)
                return (model,)
        return None

    def _cex_promote(self, index: int) -> None:
        """Move a model that answered a query to the front (most recently useful first)."""
        if index:
            entry = self._cex_models[index]
            del self._cex_models[index]
            self._cex_models.appendleft(entry)

    def recent_models(self, count: int) -> list[_Model]:
        """The ``count`` models the counter-example cache would try first."""
        return [model for _, model, _ in list(self._cex_models)[:count]]

    def adopt_models(self, models: Iterable[_Model]) -> None:
        """Models found elsewhere (a parallel worker that handed over work) for the
        counter-example cache to try after its own, while it has room (they never push its
        own out); they answer no subset lookup (no query is known for them)."""
        if not self._cex_on:
            return
        cache = self._cex_models
        for model in models:
            if cache.maxlen is not None and len(cache) >= cache.maxlen:
                return
            cache.append((frozenset(), model, _expr.Assignment(model)))

    # -- models --------------------------------------------------------------------------

    def _model_chain(
        self, constraints: tuple[Expr, ...], exprs: tuple[Expr, ...], arrays: tuple[Array, ...]
    ) -> tuple[list[int], list[bytes]] | None:
        const_op = _expr.Op.CONST
        if self._trivial:
            layer = self._layer("trivial")
            started = time.perf_counter()
            kept: list[Expr] = []
            refuted = False
            for c in constraints:
                if c.op is const_op:
                    if c.value == 0:
                        refuted = True
                        break
                    continue
                kept.append(c)
            layer.time += time.perf_counter() - started
            if refuted:
                layer.hits += 1
                return None
            constraints = tuple(kept)

        wanted: list[Array] = [a for a in arrays if a.initial is None]
        for e in exprs:
            wanted.extend(self._symbolic_arrays(e))

        if self._independence:
            layer = self._layer("independence")
            started = time.perf_counter()
            groups = self._groups(constraints, wanted)
            if sum(len(g) for g in groups) < len(constraints) or len(groups) > 1:
                layer.hits += 1
            layer.time += time.perf_counter() - started
        else:
            groups = [constraints]

        # each group contributes the bytes it reads (all of an array it reads at a symbolic
        # index); the rest stay zero, which no constraint of the query reads
        merged_bytes: dict[Array, bytearray] = {}
        for group in groups:
            model = self._model_cached(group)
            if model is None:
                return None
            owned: dict[Array, set[int] | None] = {}
            for c in group:
                for array, index in read_elements(c):
                    if index is None:
                        owned[array] = None
                    elif array not in owned:
                        owned[array] = {index}
                    elif owned[array] is not None:
                        owned[array].add(index)  # type: ignore[union-attr]
            for array, indices in owned.items():
                data = model.get(array, b"")
                target = merged_bytes.setdefault(array, bytearray(array.size))
                if indices is None:
                    target[:] = data[: array.size].ljust(array.size, b"\0")
                else:
                    for i in indices:
                        if 0 <= i < min(array.size, len(data)):
                            target[i] = data[i]
        merged: _Model = {a: bytes(b) for a, b in merged_bytes.items()}
        assignment = _expr.Assignment(merged)
        values = [assignment.evaluate(e) for e in exprs]
        contents: list[bytes] = []
        for a in arrays:
            if a.initial is not None:
                contents.append(a.initial)
            else:
                data = merged.get(a, b"")
                contents.append(data[: a.size].ljust(a.size, b"\0"))
        return values, contents

    def _groups(self, constraints: tuple[Expr, ...],
                wanted: Sequence[Array]) -> list[tuple[Expr, ...]]:
        """The independent groups of ``constraints`` that read ``wanted`` arrays; constraints
        reading no symbolic array join every group (or form one when no group is needed)."""
        wanted_set = set(wanted)
        if len(constraints) == 1:
            # one constraint (a branch's question about bytes no other constraint reads:
            # Executor.solve_beside): its own group, if it is wanted
            elements = read_elements(constraints[0])
            return [constraints] if not elements or any(
                array in wanted_set for array, _ in elements) else []
        sets, elements_of = self._partition(constraints)
        ground = tuple(c for c, elements in zip(constraints, elements_of) if not elements)
        roots = {sets.find(elements[0]) for elements in elements_of
                 if elements and any(array in wanted_set for array, _ in elements)}
        groups: dict[_Element, list[Expr]] = {}
        for c, elements in zip(constraints, elements_of):
            if elements:
                root = sets.find(elements[0])
                if root in roots:
                    groups.setdefault(root, []).append(c)
        if not groups:
            return [ground] if ground else []
        return [(*ground, *group) for group in groups.values()]

    def _model_cached(self, group: tuple[Expr, ...]) -> _Model | None:
        """A model of ``group`` over its symbolic arrays (any other array may be all zeros:
        no constraint of the group reads it)."""
        key: frozenset[Expr] | None = None
        if self._cache_on:
            layer = self._layer("cache")
            started = time.perf_counter()
            key = frozenset(group)
            hit = key in self._model_cache
            if hit:
                self._model_cache.move_to_end(key)
                cached = self._model_cache[key]
            layer.time += time.perf_counter() - started
            if hit:
                layer.hits += 1
                return cached
        if self._cex_on:
            model = self._cex_solve(frozenset(group), group)
        else:
            arrays = self._arrays_of_set(group)
            answer = self._inner_model(group, (), arrays)
            model = None if answer is None else dict(zip(arrays, answer[1]))
        if key is not None:
            self._remember(self._model_cache, key, model)
        return model

    def _arrays_of_set(self, constraints: Iterable[Expr]) -> tuple[Array, ...]:
        found: dict[Array, None] = {}
        for c in constraints:
            for a in self._symbolic_arrays(c):
                found.setdefault(a, None)
        return tuple(found)

    def _remember(self, cache: OrderedDict, key: object, value: object) -> None:
        cache[key] = value
        if len(cache) > self._cache_size:
            cache.popitem(last=False)

    # -- the core solver -----------------------------------------------------------------

    def _inner_check(self, constraints: tuple[Expr, ...], extra: Expr | None) -> bool:
        stats = self.statistics
        stats.core_queries += 1
        started = time.perf_counter()
        try:
            return self.inner._check(constraints, extra)
        finally:
            stats.core_time += time.perf_counter() - started

    def _inner_model(
        self, constraints: tuple[Expr, ...], exprs: tuple[Expr, ...], arrays: tuple[Array, ...]
    ) -> tuple[list[int], list[bytes]] | None:
        stats = self.statistics
        stats.core_queries += 1
        started = time.perf_counter()
        try:
            return self.inner._model(constraints, exprs, arrays)
        finally:
            stats.core_time += time.perf_counter() - started

    # -- control -------------------------------------------------------------------------

    def close(self) -> None:
        """Close the inner solver and drop the caches."""
        self.clear()
        self.inner.close()

    def __repr__(self) -> str:
        """Name the inner solver and the layers."""
        return f"ChainSolver({self.inner!r}, layers={self.layers!r})"


def build_chain(solver: SolverBase, layers: Iterable[str] = CHAIN_LAYERS, *,
                shared: SharedSolutions | None = None) -> SolverBase:
    """``solver`` behind a :class:`ChainSolver` of ``layers``; ``solver`` itself when
    ``layers`` is empty (no chain, no overhead, and nothing shared)."""
    layers = tuple(layers)
    if not layers:
        return solver
    return ChainSolver(solver, layers, shared=shared)
