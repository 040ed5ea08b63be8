"""``ChainSolver``: KLEE-style query optimisations in front of a core solver.

A chain answers :class:`~symex.solvers.base.SolverBase`'s two primitives itself when it can and
passes the rest, reduced, to an inner :class:`SolverBase`. Each layer is its own wrapper
around the next (:mod:`symex.solvers.chain_layers`), composed here in this order (each
switchable):

``trivial``
    constant conditions and constraints; a condition that is one of the constraints (sat: the
    path condition is assumed feasible) or the negation of one (unsat).
``independence``
    only constraints that share symbolic bytes with the query (transitively) are sent;
    constraints reading no symbolic array are always kept. Models are built per independent
    group, so a group that did not change since an earlier query hits the caches.
``cache``
    the same constraint set (order-independent) and query give the remembered answer.
``cex``
    KLEE's counter-example cache: an unsatisfiable subset makes a superset unsatisfiable, and
    remembered models (most recent first) are tried on the query before the core solver runs;
    a parallel worker's chain also looks up the models other workers found
    (:class:`~symex.solvers.shared.SharedSolutions`).
``search``
    a branch's other side from the path's model, changed on the bytes the new condition
    reads and checked by evaluation (:mod:`symex.solvers.model_search`); only for a group's
    question that comes with that model.

Like KLEE, the chain relies on the path condition being satisfiable: with an unsatisfiable one,
independence may answer from the part of it that is satisfiable.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import attrs

from symex.errors import ConfigError, SolverUnknown
from symex.solvers.base import SolverBase, SolverStatistics
from symex.solvers.float_route import RouteStatistics
from symex.solvers.model_search import SearchLayer
from symex.solvers.chain_layers import (CEX_MEMO_LIMIT, CacheLayer, CexLayer, CoreLayer,
                                        IndependenceLayer, Layer, LayerStatistics, Model,
                                        TrivialLayer)

if TYPE_CHECKING:
    from symex.expr import Array, Expr
    from symex.solvers.shared import SharedSolutions

__all__ = [
    "CEX_MEMO_LIMIT",
    "CHAIN_LAYERS",
    "ChainSolver",
    "ChainStatistics",
    "LayerStatistics",
    "build_chain",
]

CHAIN_LAYERS: tuple[str, ...] = ("trivial", "independence", "cache", "cex", "search")
"""Every layer name, in the order the chain applies them."""


#: the counters of :class:`SolverStatistics` itself
_EVERY_SOLVER_COUNTS = frozenset(SolverStatistics().as_dict())


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
    route: RouteStatistics | None = None
    """The core solvers' counters where the core routes float queries to a second solver."""
    core: SolverStatistics | None = None
    """The core solver's own counters where it routes nothing (a session's resets, a
    choice's answers per member)."""

    def as_dict(self) -> dict[str, float]:
        """The counters as a flat mapping (layer counters as ``LAYER_hits``/``LAYER_time``;
        a float route's as ``route[solver|floats].COUNTER``, the core solver's own as
        ``core.COUNTER``)."""
        counters = super().as_dict()
        counters["core_queries"] = self.core_queries
        counters["core_time"] = self.core_time
        for name, layer in self.layers.items():
            counters[f"{name}_hits"] = layer.hits
            counters[f"{name}_time"] = layer.time
        if self.route is not None:
            counters.update((k, v) for k, v in self.route.as_dict().items()
                            if k.startswith("route["))
        if self.core is not None:
            # the counters every solver has are the chain's core_* already
            counters.update((f"core.{k}", v) for k, v in self.core.as_dict().items()
                            if k not in _EVERY_SOLVER_COUNTS)
        return counters


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
        self.shared = shared
        self.statistics = ChainStatistics()
        if isinstance(inner.statistics, RouteStatistics):
            self.statistics.route = inner.statistics
        else:
            self.statistics.core = inner.statistics
        makers: dict[str, Callable[[Layer], Layer]] = {
            "trivial": TrivialLayer,
            "independence": IndependenceLayer,
            "cache": lambda below: CacheLayer(below, cache_size),
            "cex": lambda below: CexLayer(below, cex_models, cex_unsat, shared),
            "search": SearchLayer,
        }
        # KLEE's ConstructSolverChain: the core solver at the bottom, each layer around the
        # layers after it
        top: Layer = CoreLayer(inner, self.statistics)
        self._cex: CexLayer | None = None
        for name in reversed(self.layers):
            top = makers[name](top)
            self.statistics.layers[name] = top.counters
            if isinstance(top, CexLayer):
                self._cex = top
        self.statistics.layers = {name: self.statistics.layers[name] for name in self.layers}
        self._top = top

    def set_deadline(self, deadline: float | None) -> None:
        """Cut the core solver's checks at ``deadline`` (see SolverBase)."""
        super().set_deadline(deadline)
        self._top.set_deadline(deadline)

    def clear(self) -> None:
        """Forget every cached answer and model (statistics are kept)."""
        self._top.clear()

    # -- primitives ----------------------------------------------------------------------

    def _check(self, constraints: tuple[Expr, ...], extra: Expr | None) -> bool:
        """Whether ``constraints`` and ``extra`` are satisfiable together."""
        stats = self.statistics
        stats.queries += 1
        started = time.perf_counter()
        try:
            answer = self._top._check(constraints, extra)
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
            answer = self._top._model(tuple(constraints), tuple(exprs), tuple(arrays))
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

    def group_model(self, constraints: tuple[Expr, ...],
                    near: dict[Array, bytes] | None = None) -> dict[Array, bytes] | None:
        """A model of ``constraints`` that the caller knows to be one independent group (each
        shares bytes with the others, transitively: ``Executor.solve_beside`` asks about a
        state's groups so): the bytes of the arrays they read (absent arrays and bytes no
        constraint reads may be anything), or None when they are unsatisfiable. The trivial,
        cache and cex layers answer it as any model question; independence has nothing to
        split. ``near``, when given, is a model of all but the last constraint (the search
        layer starts from it)."""
        stats = self.statistics
        stats.queries += 1
        started = time.perf_counter()
        try:
            model = self._top.group_model(constraints, near)
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

    # -- the counter-example cache, for the engine and parallel workers --------------------

    def assume_model(self, constraints: Sequence[Expr], model: dict[Array, bytes]) -> None:
        """Keep ``model`` in the counter-example cache as a model of ``constraints`` (a path
        that assumed the side of a branch its inputs take, without the solver: its later
        questions find its inputs here instead of solving that constraint again). Kept only
        if the evaluator confirms it, as every cached model."""
        if self._cex is not None:
            ordered = tuple(dict.fromkeys(constraints))
            self._cex.keep(frozenset(ordered), ordered, dict(model))

    def recent_models(self, count: int) -> list[Model]:
        """The ``count`` models the counter-example cache would try first."""
        return self._cex.recent(count) if self._cex is not None else []

    def adopt_models(self, models: Iterable[Model]) -> None:
        """Models found elsewhere (a parallel worker that handed over work) for the
        counter-example cache to try after its own, while it has room (they never push its
        own out); they answer no subset lookup (no query is known for them)."""
        if self._cex is not None:
            self._cex.adopt(models)

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
