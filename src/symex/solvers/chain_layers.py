"""The layers of KLEE's solver chain, each its own wrapper around the next one (KLEE's
``IndependentSolver``, ``CachingSolver``, ``CexCachingSolver``...), with its own counters.

Every layer answers three questions, passing what it cannot answer to ``inner``:

- ``_check(constraints, extra)``: are they satisfiable together;
- ``_model(constraints, exprs, arrays)``: the values of ``exprs`` and the contents of
  ``arrays`` in one model;
- ``group_model(constraints)``: a model of constraints that form one independent group,
  over the bytes they read (what the independence layer asks of the layers after it for
  each group, and what ``Executor.solve_beside`` asks for a branch's group).

:class:`CoreLayer` is the bottom, over the core solver; :class:`~symex.solvers.chain.ChainSolver`
composes the enabled layers in :data:`~symex.solvers.chain.CHAIN_LAYERS`' order.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

import attrs

from symex import expr as _expr
from symex.expr.bounds import known_truth
from symex.expr.reads import Element, read_elements
from symex.solvers.base import SolverBase

if TYPE_CHECKING:
    from symex.expr import Array, Expr
    from symex.solvers.shared import SharedSolutions

__all__ = ["CEX_MEMO_LIMIT", "CacheLayer", "CexLayer", "CoreCounts", "CoreLayer", "IndependenceLayer", "Layer",
           "LayerStatistics", "Model", "TrivialLayer", "assemble_model"]

#: values a cached model's evaluator keeps before it starts afresh (memory bound: each value
#: holds its expression alive)
CEX_MEMO_LIMIT = 100_000

Model = dict["Array", bytes]
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


def _symbolic_arrays(e: Expr) -> tuple[Array, ...]:
    """Symbolic arrays ``e`` reads."""
    return tuple(dict.fromkeys(a for a, _ in read_elements(e)))


def _arrays_of_set(constraints: Iterable[Expr]) -> tuple[Array, ...]:
    found: dict[Array, None] = {}
    for c in constraints:
        for a in _symbolic_arrays(c):
            found.setdefault(a, None)
    return tuple(found)


def assemble_model(groups: Sequence[tuple[tuple[Expr, ...], Model]], exprs: Sequence[Expr],
                   arrays: Sequence[Array]) -> tuple[list[int], list[bytes]]:
    """Values of ``exprs`` and contents of ``arrays`` from the models of independent
    groups: each group contributes the bytes it reads (all of an array it reads at a
    symbolic index); the rest stay zero, which no constraint of the query reads."""
    merged_bytes: dict[Array, bytearray] = {}
    for group, model in groups:
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
    merged: Model = {a: bytes(b) for a, b in merged_bytes.items()}
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


class Layer(SolverBase):
    """One layer: answers what it can, passes the rest to ``inner`` (another layer or the
    :class:`CoreLayer`). By default a question passes through unchanged, and a model
    question is answered from :meth:`group_model` over all its constraints."""

    name = ""
    """The layer's name in :data:`~symex.solvers.chain.CHAIN_LAYERS` and the counters."""

    def __init__(self, inner: Layer) -> None:
        super().__init__()
        self.inner = inner
        self.counters = LayerStatistics()

    def _check(self, constraints: tuple[Expr, ...], extra: Expr | None) -> bool:
        return self.inner._check(constraints, extra)

    def _model(self, constraints: tuple[Expr, ...], exprs: Sequence[Expr],
               arrays: Sequence[Array]) -> tuple[list[int], list[bytes]] | None:
        model = self.group_model(tuple(constraints))
        if model is None:
            return None
        return assemble_model([(tuple(constraints), model)], exprs, arrays)

    def group_model(self, constraints: tuple[Expr, ...], near: Model | None = None) -> Model | None:
        """A model of ``constraints`` (one independent group) over the bytes they read;
        ``near``, when given, satisfies all of them but the last (a branch's new condition:
        the model-search layer starts from it)."""
        return self.inner.group_model(constraints, near)

    def clear(self) -> None:
        """Forget what this layer and those after it remember."""
        self.inner.clear()

    def set_deadline(self, deadline: float | None) -> None:
        """Cut the core solver's checks at ``deadline`` (see SolverBase)."""
        super().set_deadline(deadline)
        self.inner.set_deadline(deadline)

    def close(self) -> None:
        """Close the layers after this one and the core solver."""
        self.inner.close()


class CoreLayer(Layer):
    """The bottom of the chain: the core solver, its questions counted in ``statistics``
    (``core_queries``, ``core_time``)."""

    name = "core"

    def __init__(self, core: SolverBase, statistics: CoreCounts) -> None:
        SolverBase.__init__(self)
        self.core = core
        self.counts = statistics
        self.counters = LayerStatistics()

    def _check(self, constraints: tuple[Expr, ...], extra: Expr | None) -> bool:
        counts = self.counts
        counts.core_queries += 1
        started = time.perf_counter()
        try:
            return self.core._check(constraints, extra)
        finally:
            counts.core_time += time.perf_counter() - started

    def _model(self, constraints: tuple[Expr, ...], exprs: Sequence[Expr],
               arrays: Sequence[Array]) -> tuple[list[int], list[bytes]] | None:
        counts = self.counts
        counts.core_queries += 1
        started = time.perf_counter()
        try:
            return self.core._model(constraints, exprs, arrays)
        finally:
            counts.core_time += time.perf_counter() - started

    def group_model(self, constraints: tuple[Expr, ...], near: Model | None = None) -> Model | None:
        arrays = _arrays_of_set(constraints)
        answer = self._model(constraints, (), arrays)
        return None if answer is None else dict(zip(arrays, answer[1]))

    def clear(self) -> None:
        return None

    def set_deadline(self, deadline: float | None) -> None:
        SolverBase.set_deadline(self, deadline)
        self.core.set_deadline(deadline)

    def close(self) -> None:
        self.core.close()


class CoreCounts(Protocol):
    """What :class:`CoreLayer` counts into (the chain's statistics)."""

    core_queries: int
    core_time: float


class TrivialLayer(Layer):
    """Constant conditions and constraints; a condition that is one of the constraints (sat:
    the path condition is assumed feasible) or the negation of one (unsat); a comparison with
    a constant that its operand's range settles (:func:`symex.expr.bounds.known_truth`: is a
    printed digit ``'0' + x % 10`` the NUL byte?)."""

    name = "trivial"

    def _check(self, constraints: tuple[Expr, ...], extra: Expr | None) -> bool:
        const_op = _expr.Op.CONST
        layer = self.counters
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
                else:
                    answer = known_truth(extra)
        layer.time += time.perf_counter() - started
        if answer is not None:
            layer.hits += 1
            return answer
        return self.inner._check(tuple(kept), extra)

    def _kept(self, constraints: tuple[Expr, ...]) -> tuple[Expr, ...] | None:
        """The constraints without the constant true ones; None when one is false."""
        layer = self.counters
        started = time.perf_counter()
        const_op = _expr.Op.CONST
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
        return tuple(kept)

    def _model(self, constraints: tuple[Expr, ...], exprs: Sequence[Expr],
               arrays: Sequence[Array]) -> tuple[list[int], list[bytes]] | None:
        kept = self._kept(constraints)
        return None if kept is None else self.inner._model(kept, exprs, arrays)

    def group_model(self, constraints: tuple[Expr, ...], near: Model | None = None) -> Model | None:
        kept = self._kept(constraints)
        if kept is None:
            return None
        if kept and kept[-1] is constraints[-1]:
            # the new condition (the earlier ones were asked when they were new)
            started = time.perf_counter()
            truth = known_truth(kept[-1])
            self.counters.time += time.perf_counter() - started
            if truth is False:
                self.counters.hits += 1
                return None
            if truth:
                kept = kept[:-1]
        if not kept:
            return {}
        # the new condition stays last only if it was kept (a constant one is dropped)
        return self.inner.group_model(kept, near if kept[-1] is constraints[-1] else None)


class _ArraySets:
    """Union-find over read elements (independence partitions)."""

    __slots__ = ("parent",)

    def __init__(self) -> None:
        self.parent: dict[Element, Element] = {}

    def find(self, a: Element) -> Element:
        parent = self.parent
        root = parent.setdefault(a, a)
        while parent[root] is not root:
            root = parent[root]
        # Path compression keeps later finds short on long paths with many arrays.
        while a is not root:
            a, parent[a] = parent[a], root
        return root

    def union(self, arrays: Sequence[Element]) -> None:
        if not arrays:
            return
        first = self.find(arrays[0])
        for other in arrays[1:]:
            root = self.find(other)
            if root is not first:
                self.parent[root] = first


class IndependenceLayer(Layer):
    """Only constraints that share bytes with the question (transitively) go on; constraints
    reading no symbolic array always do. A model question is asked group by group (a group
    that did not change since an earlier query hits the caches after this layer) and the
    groups' bytes are merged."""

    name = "independence"

    @staticmethod
    def _partition(constraints: Sequence[Expr]) -> tuple[_ArraySets, list[tuple[Element, ...]]]:
        """Union-find over the elements the constraints read; a symbolic-index read of an
        array joins every byte of that array read anywhere in ``constraints``."""
        sets = _ArraySets()
        elements_of = [read_elements(c) for c in constraints]
        by_array: dict[Array, list[Element]] = {}
        for elements in elements_of:
            sets.union(elements)
            for key in elements:
                by_array.setdefault(key[0], []).append(key)
        for keys in by_array.values():
            if any(index is None for _, index in keys):
                sets.union(keys)
        return sets, elements_of

    def _check(self, constraints: tuple[Expr, ...], extra: Expr | None) -> bool:
        if extra is None:
            return self.inner._check(constraints, extra)
        layer = self.counters
        started = time.perf_counter()
        sets, elements_of = self._partition((*constraints, extra))
        roots = {sets.find(k) for k in elements_of[-1]}
        relevant = tuple(c for c, elements in zip(constraints, elements_of)
                         if not elements or sets.find(elements[0]) in roots)
        if len(relevant) < len(constraints):
            layer.hits += 1
        layer.time += time.perf_counter() - started
        return self.inner._check(relevant, extra)

    def _groups(self, constraints: tuple[Expr, ...],
                wanted: Sequence[Array]) -> list[tuple[Expr, ...]]:
        """The independent groups of ``constraints`` that read ``wanted`` arrays; constraints
        reading no symbolic array join every group (or form one when no group is needed)."""
        wanted_set = set(wanted)
        if len(constraints) == 1:
            # one constraint (a branch's question about bytes no other constraint reads):
            # its own group, if it is wanted
            elements = read_elements(constraints[0])
            return [constraints] if not elements or any(
                array in wanted_set for array, _ in elements) else []
        sets, elements_of = self._partition(constraints)
        ground = tuple(c for c, elements in zip(constraints, elements_of) if not elements)
        roots = {sets.find(elements[0]) for elements in elements_of
                 if elements and any(array in wanted_set for array, _ in elements)}
        groups: dict[Element, list[Expr]] = {}
        for c, elements in zip(constraints, elements_of):
            if elements:
                root = sets.find(elements[0])
                if root in roots:
                    groups.setdefault(root, []).append(c)
        if not groups:
            return [ground] if ground else []
        return [(*ground, *group) for group in groups.values()]

    def _model(self, constraints: tuple[Expr, ...], exprs: Sequence[Expr],
               arrays: Sequence[Array]) -> tuple[list[int], list[bytes]] | None:
        wanted: list[Array] = [a for a in arrays if a.initial is None]
        for e in exprs:
            wanted.extend(_symbolic_arrays(e))
        layer = self.counters
        started = time.perf_counter()
        groups = self._groups(constraints, wanted)
        if sum(len(g) for g in groups) < len(constraints) or len(groups) > 1:
            layer.hits += 1
        layer.time += time.perf_counter() - started
        models = []
        for group in groups:
            model = self.inner.group_model(group)
            if model is None:
                return None
            models.append((group, model))
        return assemble_model(models, exprs, arrays)


class CacheLayer(Layer):
    """The same constraint set (order-independent) and condition give the remembered
    answer; a group's model likewise. At most ``size`` entries each, the least recently
    used going first."""

    name = "cache"

    def __init__(self, inner: Layer, size: int = 100_000) -> None:
        super().__init__(inner)
        self.size = size
        self._checks: OrderedDict[tuple[frozenset[Expr], Expr | None], bool] = OrderedDict()
        self._models: OrderedDict[frozenset[Expr], Model | None] = OrderedDict()

    def _remember(self, cache: OrderedDict, key: object, value: object) -> None:
        cache[key] = value
        if len(cache) > self.size:
            cache.popitem(last=False)

    def _check(self, constraints: tuple[Expr, ...], extra: Expr | None) -> bool:
        layer = self.counters
        started = time.perf_counter()
        key = (frozenset(constraints), extra)
        cached = self._checks.get(key)
        if cached is not None:
            self._checks.move_to_end(key)
        layer.time += time.perf_counter() - started
        if cached is not None:
            layer.hits += 1
            return cached
        answer = self.inner._check(constraints, extra)
        self._remember(self._checks, key, answer)
        return answer

    def group_model(self, constraints: tuple[Expr, ...], near: Model | None = None) -> Model | None:
        layer = self.counters
        started = time.perf_counter()
        key = frozenset(constraints)
        hit = key in self._models
        cached = None
        if hit:
            self._models.move_to_end(key)
            cached = self._models[key]
        layer.time += time.perf_counter() - started
        if hit:
            layer.hits += 1
            return cached
        model = self.inner.group_model(constraints, near)
        self._remember(self._models, key, model)
        return model

    def clear(self) -> None:
        self._checks.clear()
        self._models.clear()
        self.inner.clear()


class CexLayer(Layer):
    """KLEE's counter-example cache: an unsatisfiable subset makes a superset unsatisfiable,
    and remembered models (most recent first) are tried on the question before the layers
    after it; a parallel worker's chain also looks up the models other workers found
    (:class:`~symex.solvers.shared.SharedSolutions`). Keeps ``models`` models and ``unsat``
    unsatisfiable sets."""

    name = "cex"

    def __init__(self, inner: Layer, models: int = 64, unsat: int = 1024,
                 shared: SharedSolutions | None = None) -> None:
        super().__init__(inner)
        self.shared = shared
        #: (query it answered, model, the model's evaluator): the evaluator is kept with the
        #: model, so values of the subexpressions paths share (reads through the same update
        #: lists, the same older constraints) are computed once per model, not per lookup
        self._models: deque[tuple[frozenset[Expr], Model, _expr.Assignment]] = \
            deque(maxlen=models)
        self._unsat: deque[frozenset[Expr]] = deque(maxlen=unsat)

    def _check(self, constraints: tuple[Expr, ...], extra: Expr | None) -> bool:
        ordered = constraints if extra is None else (*constraints, extra)
        return self._solve(frozenset(ordered), ordered) is not None

    def group_model(self, constraints: tuple[Expr, ...], near: Model | None = None) -> Model | None:
        return self._solve(frozenset(constraints), constraints, near)

    def _solve(self, query: frozenset[Expr], ordered: Sequence[Expr], near: Model | None = None) -> Model | None:
        """A model of the conjunction ``query`` (None: unsatisfiable), from the cache when
        possible, else from the layers after it (then remembered). ``ordered`` holds the
        same constraints in the caller's order, which is what the core solver sees: a
        frozenset iterates in ``id()`` order, which differs between processes, and solvers
        answer the same constraints in another order with another model."""
        layer = self.counters
        started = time.perf_counter()
        found = self._lookup(query, ordered)
        layer.time += time.perf_counter() - started
        if found is not None:
            layer.hits += 1
            return found[0]
        last = ordered[-1] if ordered else None
        ordered = tuple(dict.fromkeys(ordered))
        if ordered and ordered[-1] is not last:
            near = None  # the new condition repeated an older constraint: not last any more
        shared = self.shared
        key = 0
        if shared is not None:
            started = time.perf_counter()
            arrays = _arrays_of_set(ordered)
            key = shared.key(ordered)
            found_elsewhere = shared.lookup(key, ordered, arrays)
            refuted = found_elsewhere is None and shared.refutes(query)
            layer.time += time.perf_counter() - started
            if found_elsewhere is not None:
                self._models.appendleft((query, found_elsewhere,
                                         _expr.Assignment(found_elsewhere)))
                return found_elsewhere
            if refuted:
                self._unsat.append(query)
                return None
        model = self.inner.group_model(ordered, near)
        started = time.perf_counter()
        if model is None:
            self._unsat.append(query)
            if shared is not None:
                shared.publish_unsat(ordered)
        elif self.keep(query, ordered, model) and shared is not None:
            shared.publish(key, model)
        layer.time += time.perf_counter() - started
        return model

    def keep(self, query: frozenset[Expr], ordered: Sequence[Expr], model: Model) -> bool:
        """Put ``model`` first in the cache as a model of ``query`` if the evaluator confirms
        it (the evaluator is what tries cached models); whether it did."""
        assignment = _expr.Assignment(model)
        if not all(assignment.evaluate(c) for c in ordered):
            return False
        self._models.appendleft((query, model, assignment))
        return True

    def _lookup(self, query: frozenset[Expr],
                ordered: Sequence[Expr]) -> tuple[Model | None] | None:
        """``(model,)`` or ``(None,)`` (unsat) when the cache decides ``query``, else None.
        ``ordered`` is ``query`` in the caller's order, oldest constraint first."""
        for unsat in self._unsat:
            if unsat <= query:
                return (None,)
        models = self._models
        for index, (solved, model, _) in enumerate(models):
            if query <= solved:
                self._promote(index)
                return (model,)
        # Newest constraints first: the path's older ones held under the models found along
        # it, so a model that fails usually fails the newest, and a miss (every model tried,
        # as on a worker whose caches are cold) then costs one evaluation per model.
        probe = tuple(reversed(ordered))
        for index, (_, model, assignment) in enumerate(models):
            if assignment.memo_size > CEX_MEMO_LIMIT:
                assignment.forget()
            if all(assignment.evaluate(c) for c in probe):
                self._promote(index)
                return (model,)
        return None

    def _promote(self, index: int) -> None:
        """Move a model that answered a query to the front (most recently useful first)."""
        if index:
            entry = self._models[index]
            del self._models[index]
            self._models.appendleft(entry)

    def recent(self, count: int) -> list[Model]:
        """The ``count`` models the cache would try first."""
        return [model for _, model, _ in list(self._models)[:count]]

    def adopt(self, models: Iterable[Model]) -> None:
        """Models found elsewhere (a parallel worker that handed over work), tried after the
        cache's own while it has room (they never push its own out); they answer no subset
        lookup (no query is known for them)."""
        cache = self._models
        for model in models:
            if cache.maxlen is not None and len(cache) >= cache.maxlen:
                return
            cache.append((frozenset(), model, _expr.Assignment(model)))

    def clear(self) -> None:
        self._models.clear()
        self._unsat.clear()
        self.inner.clear()
