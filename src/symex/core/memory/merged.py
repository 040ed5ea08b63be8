"""The merged memory model (``--memory-model merged``; :mod:`symex.core.memory.model`): a
symbolic pointer that may point into a few objects is read as the if-then-else of the reads
in each, and a store through it writes each of them conditionally, all on one path.

Where the forking model makes one state per object (KLEE), this one asks which objects the
pointer may point into (the segments its value can take: :meth:`Machine.values_of`), keeps
the path where it points into one of them, in bounds, and leaves the rest (more than
:data:`MERGE_LIMIT` objects, or none of them) to a child that runs the access again. So a
table of pointers read at a symbolic index and followed, or a pointer chosen by a branch,
costs one path instead of one per object, and the conditions that depend on which object it
was go to the solver later, inside larger queries.

A pointer that can point into only one object, an object whose size is symbolic (a fuzz
target's input), one above ``--max-sym-array-size``, a state following a seed, and a run
with no forks left are all the forking model's, unchanged, as is every error: what a
pointer into no object, or out of bounds, reads is reported exactly as there.
"""

from __future__ import annotations

from typing import Any

from symex import expr as E
from symex.core.forks import ForkKind
from symex.core.interpreter import values as V
from symex.core.memory.model import PathDecisions
from symex.core.memory.forking import (
    FEW_OFFSETS,
    OFFSET_VALUES_LOOKED_AT,
    ForkingModel,
    chosen,
    read_at,
    segment_of,
)
from symex.core.memory.objects import ObjectState, locate
from symex.core.outcome import ErrorKind
from symex.core.state import State
from symex.expr.bounds import at_most
from symex.expr.value_sets import few_values

__all__ = ["MERGE_LIMIT", "MergedModel"]

#: the most objects one access merges; a pointer that may point into more forks a child for
#: the others (which merges up to as many again)
MERGE_LIMIT = 8

#: one object an access may reach: its state, the condition that the access lies inside it,
#: and the offset there (an int, or a 32-bit expression)
Candidate = tuple[ObjectState, E.Expr, Any]


class MergedModel(ForkingModel):
    """The forking model but for symbolic pointers into several objects (module
    docstring)."""

    name = "merged"

    def read_bytes(self, ex: PathDecisions, state: State, address: Any, size: int) -> list[Any]:
        """``size`` raw bytes; a pointer into several objects reads an if-then-else."""
        if type(address) is int or not size:
            return super().read_bytes(ex, state, address, size)
        candidates = self.candidates(ex, state, address, size)
        if candidates is None:
            return super().read_bytes(ex, state, address, size)
        columns = []
        for os, _inside, offset in candidates:
            columns.append(read_at(state, os, offset, size))
        conditions = [inside for _, inside, _ in candidates]
        if all(type(b) is int for column in columns for b in column):
            # whole values: a pointer loaded so stays a choice between addresses
            words = [E.const(int.from_bytes(bytes(column), "little"), 8 * size)
                     for column in columns]
            value = chosen(conditions, words)
            return [V.simplify(E.extract(value, 8 * i, 8)) for i in range(size)]
        return [V.simplify(chosen(conditions, [V.as_expr(column[i], 8) for column in columns]))
                for i in range(size)]

    def write_bytes(self, ex: PathDecisions, state: State, address: Any, data: list[Any] | bytes) -> None:
        """Raw bytes; a pointer into several objects writes each where it is the one."""
        if type(address) is int or not data:
            super().write_bytes(ex, state, address, data)
            return
        size = len(data)
        candidates = self.candidates(ex, state, address, size)
        if candidates is None:
            super().write_bytes(ex, state, address, data)
            return
        for os, inside, _offset in candidates:
            if os.obj.read_only:
                # a sibling reports the write; this path goes on in the others
                ex.check_fault(state, inside, ErrorKind.READONLY,
                               f"write to read-only {os.obj.describe()}")
        for os, inside, offset in candidates:
            if not os.obj.read_only:
                _write_where(state, os, inside, offset, list(data))

    def candidates(self, ex: PathDecisions, state: State, address: E.Expr,
                   size: int) -> list[Candidate] | None:
        """The objects (two to :data:`MERGE_LIMIT`) an access of ``size`` bytes at the
        symbolic ``address`` may lie inside, the path now assuming it lies inside one of
        them (a child takes the rest: :meth:`Machine.holds_or_retry`); None where the
        forking model decides (module docstring)."""
        address = ex.settled(state, address)
        if type(address) is int or ex.forks_exhausted():
            return None
        first = self._inside(ex, state, address, locate(ex.get_value(state, address))[0], size)
        if first is None:
            return None
        if first[1].op is E.Op.CONST or ex.seeded_sides(state, first[1]) is not None:
            return None  # in bounds of one object whatever the inputs; or a seed's way
        if_in, if_out = ex.split(state, first[1])
        if if_in is None or if_out is None:
            return None  # only out of this object (an error), or only inside it
        segments = ex.values_of(state, segment_of(address), MERGE_LIMIT)
        candidates = []
        for segment in segments:
            candidate = self._inside(ex, state, address, segment, size)
            if candidate is None:
                if segment in state.objects:
                    return None  # an object the forking model handles apart
                continue  # no object there: an error, which the child left outside finds
            if candidate[1].op is E.Op.CONST and not candidate[1].value:
                continue
            candidates.append(candidate)
        if len(candidates) < 2:
            return None
        inside = candidates[0][1]
        for _, each, _ in candidates[1:]:
            inside = E.bool_or(inside, each)
        if not ex.holds_or_retry(state, inside, ForkKind.POINTER):
            return None  # in none of them: an error, reported as the forking model does
        return candidates

    @staticmethod
    def _inside(ex: PathDecisions, state: State, address: E.Expr, segment: int,
                size: int) -> Candidate | None:
        """The object in ``segment`` as a candidate of the access (condition simplified on
        the path), or None: no object there, or one the merged model leaves to the forking
        model (a symbolic size, larger than ``--max-sym-array-size``, smaller than the
        access)."""
        os = state.objects.get(segment)
        if os is None or os.obj.limit is not None or os.obj.size < size:
            return None
        if ex.max_sym_array_size and os.obj.size > ex.max_sym_array_size:
            return None
        offset64 = E.sub(address, E.const(os.obj.address, 64))
        inside = ex.simplify(state, at_most(offset64, os.obj.size - size))
        offset = V.simplify(E.extract(offset64, 0, 32))
        return os, inside, offset.value if offset.op is E.Op.CONST else offset


def _write_where(state: State, os: ObjectState, inside: E.Expr, offset: Any,
                 data: list[Any]) -> None:
    """Write ``data`` at ``offset`` of ``os`` where ``inside`` holds; elsewhere each byte
    keeps its value (a write of the byte read there). Outside the object the offset means
    nothing, and then the condition is false: bytes the offset reaches keep their values."""
    os = state.writable(os)
    if type(offset) is int:
        old = os.read_bytes(offset, len(data))
        os.write_bytes(offset, [_either(inside, d, o) for d, o in zip(data, old)])
        return
    choices = few_values(offset, OFFSET_VALUES_LOOKED_AT)
    if choices is not None:
        fitting = [o for o in choices if o <= os.obj.size - len(data)]
        if len(fitting) <= FEW_OFFSETS:
            for at in fitting:
                here = E.bool_and(inside, E.eq(offset, E.const(at, offset.width)))
                old = os.read_bytes(at, len(data))
                os.write_bytes(at, [_either(here, d, o) for d, o in zip(data, old)])
            return
    os.to_array_mode(state.next_array_name(f"mem{os.obj.segment}"))
    old = [V.simplify(b) for b in os.read_symbolic(offset, len(data))]
    os.write_symbolic(offset, [_either(inside, d, o) for d, o in zip(data, old)])


def _either(condition: E.Expr, new: Any, old: Any) -> Any:
    """A byte: ``new`` where ``condition`` holds, else ``old`` (an int where both are the
    same number)."""
    if type(new) is int and new == old:
        return new
    chosen = V.simplify(E.ite(condition, V.as_expr(new, 8), V.as_expr(old, 8)))
    return chosen.value if chosen.op is E.Op.CONST else chosen
