"""The chain's model-search layer: a branch's other side answered without the solver, by
changing the path's model on the bytes the branch condition reads and checking by evaluation
(FUZZY-SAT's idea, Borzacchiello et al. 2021; JFS's).

At a symbolic branch the path's model satisfies the path's constraints and takes one side;
the other side's question (the constraints that share bytes with the condition, then the
condition or its negation) comes down the chain with that model as ``near``
(``Executor.solve_beside``). Most such conditions in a parser compare a byte or a word of
the input with a constant (``c == '-'``, ``n < 10``, ``len != 4``): setting the bytes the
condition reads to that constant, or to one more or one less, often answers them. So where
the cache and the counter-example cache above it had no answer, :func:`search_model` tries
a few such changes, each checked by evaluation: the condition, then every constraint of its
group; the first that satisfies all of them is the answer. Every other constraint of the
path reads other bytes, so the changed model still satisfies it. Nothing is guessed: an
answer is a model the evaluator checked; a search that finds none costs a few evaluations
and the core solver is asked as before. The candidates come in a fixed order, so runs
repeat.

It cannot show that a side is infeasible (that stays the solver's), and it finds nothing for
a condition on a digest or a sum of many bytes, where no byte is compared with a constant.
It is the chain layer ``search`` (``--solver-chain``: leave it out for an A/B).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence

from symex.expr import Array, Assignment, Expr, Op
from symex.expr.reads import Element, read_elements
from symex.solvers.chain_layers import Layer, Model

__all__ = ["MAX_CANDIDATES", "MAX_CONSTANTS", "MAX_ELEMENTS", "MAX_NODES", "SPARSE_BELOW", "SPARSE_EVERY", "WINDOW",
           "SearchLayer", "search_model"]

#: changed models tried per question: each costs an evaluation of the condition (and, when
#: it holds, of its group); past this the solver answers
MAX_CANDIDATES = 16
#: distinct constants of the condition whose bytes are tried
MAX_CONSTANTS = 8
#: a condition reading more bytes than this is left to the solver (a digest, a sum)
MAX_ELEMENTS = 16
#: ... and one of more nodes (operations, reads and constants) than this
MAX_NODES = 64
#: the tries the layer's rate of answers is reckoned over, the rate below which (one in
#: this many) it tries only ...
WINDOW, SPARSE_BELOW = 64, 16
#: ... one question in this many
SPARSE_EVERY = 16


class SearchLayer(Layer):
    """Answers a group's model question from a changed ``near`` model when it can: the
    question's last constraint is the new condition, the others hold under ``near``.

    Where the search rarely answers (a program whose conditions are sums and hashes, or
    whose questions are mostly infeasible sides), it runs on one question in
    :data:`SPARSE_EVERY` once it has answered fewer than one in :data:`SPARSE_BELOW` of
    its last :data:`WINDOW` tries, and in full again once it answers more: counted in
    questions, not seconds, so runs repeat."""

    name = "search"

    def __init__(self, inner: Layer) -> None:
        super().__init__(inner)
        #: the rate's window: searches tried and answered (halved as it slides)
        self.tries = 0
        self.found = 0
        #: questions passed on without a search while it rarely answers
        self.skipped = 0
        #: searches run in all
        self.searched = 0

    def group_model(self, constraints: tuple[Expr, ...], near: Model | None = None) -> Model | None:
        if near is not None and constraints and self._worth_trying():
            layer = self.counters
            started = time.perf_counter()
            condition = constraints[-1]
            found = search_model(near, constraints[:-1], condition, read_elements(condition))
            layer.time += time.perf_counter() - started
            self.tries += 1
            self.searched += 1
            if found is not None:
                self.found += 1
                layer.hits += 1
                return found
            if self.tries >= WINDOW:
                self.tries //= 2  # a sliding estimate: the older half of the window counts half
                self.found //= 2
        return self.inner.group_model(constraints, near)

    def _worth_trying(self) -> bool:
        if self.tries < WINDOW // 2 or self.found * SPARSE_BELOW >= self.tries:
            return True
        self.skipped += 1
        return self.skipped % SPARSE_EVERY == 0


def search_model(model: Model, constraints: Sequence[Expr], condition: Expr,
                 elements: Iterable[Element]) -> Model | None:
    """A model satisfying ``constraints`` and ``condition``, made from ``model`` (which
    satisfies the constraints) by changing bytes of ``elements`` (those ``condition``
    reads), or None if no candidate did."""
    runs = _runs(elements)
    if not runs:
        return None
    constants = _constants(condition)
    if constants is None:
        return None
    # each candidate is evaluated over the arrays the question reads only (a path's model
    # also holds its other arguments, files, stat images, a 1 KB standard output)
    read = {array for c in (*constraints, condition) for array, _ in read_elements(c)}
    base = {array: data for array, data in model.items() if array in read}
    for change in _candidates(runs, constants):
        changed = dict(base)
        buffers: dict[Array, bytearray] = {}
        for array, index, value in change:
            buffer = buffers.get(array)
            if buffer is None:
                data = changed.get(array, b"")
                buffer = buffers[array] = bytearray(data.ljust(array.size, b"\0"))
            buffer[index] = value
        for array, buffer in buffers.items():
            changed[array] = bytes(buffer)
        check = Assignment(changed)
        if check.evaluate(condition) and all(check.evaluate(c) for c in constraints):
            return {**model, **changed}
    return None


def _runs(elements: Iterable[Element]) -> list[tuple[Array, list[int]]]:
    """The bytes as runs of consecutive indices per array (a word's bytes form one run); none
    when a byte's index is symbolic or too many are read."""
    by_array: dict[Array, list[int]] = {}
    count = 0
    for array, index in elements:
        if index is None or array.initial is not None:
            return []
        if index < array.size:
            by_array.setdefault(array, []).append(index)
            count += 1
    if count > MAX_ELEMENTS:
        return []
    runs: list[tuple[Array, list[int]]] = []
    for array in sorted(by_array, key=lambda a: a.name):
        run: list[int] = []
        for index in sorted(set(by_array[array])):
            if run and index != run[-1] + 1:
                runs.append((array, run))
                run = []
            run.append(index)
        runs.append((array, run))
    return runs


def _constants(condition: Expr) -> list[tuple[int, int]] | None:
    """The condition's constants of a byte or more, ``(value, bytes)``, in a fixed order (a
    walk of its DAG, without recursion), at most :data:`MAX_CONSTANTS`; None for a condition
    of more than :data:`MAX_NODES` operations (a checksum's: no byte of it is compared with
    a constant, and each evaluation of it costs more than it is likely to find)."""
    found: list[tuple[int, int]] = []
    seen: set[Expr] = set()
    stack = [condition]
    while stack:
        e = stack.pop()
        if e in seen:
            continue
        seen.add(e)
        if len(seen) > MAX_NODES:
            return None
        if e.op is Op.CONST:
            key = (e.value, e.width // 8)
            if e.width >= 8 and e.width % 8 == 0 and key not in found and len(found) < MAX_CONSTANTS:
                found.append(key)
            continue
        stack.extend(reversed(e.args))
    return found


def _candidates(runs: list[tuple[Array, list[int]]],
                constants: list[tuple[int, int]]) -> Iterator[list[tuple[Array, int, int]]]:
    """Changes to try, each a list of ``(array, index, byte)``: each constant laid
    little-endian over the bytes of a run (a byte-wide one on each byte; a wider one from
    each start where it fits, or its low bytes over a shorter run), then each constant plus
    one and minus one the same way, then every byte zero; at most :data:`MAX_CANDIDATES`."""
    made = 0
    tried: set[tuple[tuple[Array, int, int], ...]] = set()
    for step in (0, 1, -1):
        for value, size in constants:
            data = ((value + step) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
            for array, run in runs:
                starts = run[:len(run) - size + 1] if size <= len(run) else run[:1]
                for start in starts:
                    change = [(array, start + k, data[k]) for k in range(min(size, run[-1] - start + 1))]
                    key = tuple(change)
                    if key in tried:
                        continue
                    tried.add(key)
                    yield change
                    made += 1
                    if made >= MAX_CANDIDATES:
                        return
    change = [(array, index, 0) for array, run in runs for index in run]
    if tuple(change) not in tried:
        yield change
