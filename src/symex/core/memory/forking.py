"""KLEE's memory model: a symbolic pointer that may point into several objects forks one
state per object (``--memory-model forking``, the default; :mod:`symex.core.memory.model`).

Each path then reads and writes one object at an offset: a concrete one, a symbolic offset
that structure shows to take a few values (an if-then-else of the reads at each), or any
other symbolic offset (the object becomes an expression array)."""

from __future__ import annotations

from typing import Any, NoReturn

from symex import expr as E
from symex.core.forks import ForkKind
from symex.core.interpreter import values as V
from symex.core.memory.model import PathDecisions
from symex.core.memory.objects import (
    SEGMENT_HALF,
    MemoryObject,
    ObjectKind,
    ObjectState,
    locate,
)
from symex.core.outcome import ErrorKind
from symex.core.shortfalls import ShortfallKind
from symex.core.state import NO_MODEL, State
from symex.expr.bounds import at_most
from symex.expr.value_sets import few_values
from symex.ir.program import SEGMENT_SHIFT

__all__ = ["FEW_OFFSETS", "OFFSET_VALUES_LOOKED_AT", "ForkingModel", "in_segment",
           "chosen", "out_of_bounds", "read_at", "read_one_of", "segment_of"]


class ForkingModel:
    """One state per object a symbolic pointer may point into (module docstring)."""

    name = "forking"

    def resolve(self, ex: PathDecisions, state: State, address: Any, size: int, what: str) -> tuple[ObjectState, Any]:
        """The object a pointer points into, and the offset (int, or 32-bit expression).
        Errors for null, freed and out-of-bounds pointers; a symbolic pointer that may point
        into several objects forks one state per object (the others re-execute the access).
        An address below or above an object but within its region (:func:`locate`) is
        reported against that object, at a signed offset."""
        value = None
        if type(address) is not int:
            # a pointer the path has decided is one number (expr's argument cursor, advanced
            # by comparisons the path has made): read through it as such, or every later
            # query carries the choice. The path's equalities may settle it (no query); else
            # one question, as KLEE's toUnique asks: can it be other than the inputs' value?
            # (unique_value: recorded by the address, not by a value a model chose, so a
            # worker's replay and one process record the same tree)
            address = ex.settled(state, address)
            if type(address) is not int:
                value, unique = ex.unique_value(state, address)
                if unique:
                    address = value
        if type(address) is int:
            segment, offset = locate(address)
            os = state.objects.get(segment)
            if os is None:
                self.bad_pointer(ex, state, address, size, what)
            if offset < 0 or offset + size > os.obj.size:
                ex.fail(state, ErrorKind.PTR, out_of_bounds(what, size, offset, os.obj))
            if os.obj.limit is not None:
                self.check_limit(ex, state, os.obj, offset, size, what)
            return os, offset
        assert value is not None
        segment, value_offset = locate(value)
        os = state.objects.get(segment)
        inside = in_segment(address, segment)
        if os is None:
            # the error is this segment's; a pointer that may lie elsewhere too goes on there
            ex.holds_or_retry(state, inside, ForkKind.POINTER)
            self.bad_pointer(ex, state, value, size, what)
        base = os.obj.address
        offset64 = E.sub(address, E.const(base, 64))
        if os.obj.size >= size:
            in_bounds = at_most(offset64, os.obj.size - size)
        else:
            in_bounds = E.FALSE
        in_bounds = ex.simplify(state, in_bounds)
        if in_bounds.op is not E.Op.CONST and ex.forks_exhausted():
            if not ex.follow_model(state, in_bounds):
                state.add_constraint(inside)
                ex.fail(state, ErrorKind.PTR, out_of_bounds(what, size, value_offset, os.obj))
            return os, V.simplify(E.extract(offset64, 0, 32))
        seeded_sides = ex.seeded_sides(state, in_bounds)
        if seeded_sides is not None and seeded_sides[0] is not NO_MODEL:
            if_in, if_out = seeded_sides  # the seed points here; elsewhere waits unchecked
        else:
            seeded_sides = None
            if_in, if_out = ex.split(state, in_bounds)
        if if_in is None:
            ex.holds_or_retry(state, inside, ForkKind.POINTER)  # as for a segment without an object
            ex.fail(state, ErrorKind.PTR, out_of_bounds(what, size, value_offset, os.obj))
        if if_out is not None:
            # the child tries the access again, under "not in this object"
            child = ex.fork_to_retry(state, in_bounds, ForkKind.POINTER, if_in, if_out)
            if seeded_sides is not None:
                child.unchecked = ()
        offset = V.simplify(E.extract(offset64, 0, 32))
        if os.obj.limit is not None:
            self.check_limit(ex, state, os.obj, offset, size, what)
        if ex.max_sym_array_size and os.obj.size > ex.max_sym_array_size:
            # KLEE's --max-sym-array-size: a symbolic offset into a big object (a hash table
            # at hash(key)) makes every later query reason about the whole object
            offset = self.concretize_inputs(
                ex, state, offset, 32,
                f"offset into a {os.obj.size:,}-byte object (with the inputs it is computed from)")
        return os, offset

    def check_limit(self, ex: PathDecisions, state: State, obj: MemoryObject, offset: Any, size: int,
                    what: str) -> None:
        """An access of ``size`` bytes at ``offset`` (in the object's bytes) to an object
        whose size the program sees as a symbolic value (``MemoryObject.limit``): where it
        may reach past that size, a sibling state reports it out of bounds and this one
        goes on knowing it does not."""
        assert obj.limit is not None
        if type(offset) is int:
            end = E.const(offset + size, 64)
            at = str(offset)
        else:
            end = E.add(E.zext(offset, 64), E.const(size, 64))
            at = "(symbolic)"
        noun = f"{size} byte{'s' if size != 1 else ''}"
        ex.check_fault(state, E.ult(obj.limit, end), ErrorKind.PTR,
                       f"out-of-bounds {what} of {noun} at offset {at} of the {obj.name}, at "
                       f"or past its length (of at most {obj.size} bytes)")

    def concretize_inputs(self, ex: PathDecisions, state: State, value: Any, width: int, why: str) -> int:
        """Fix a symbolic value by fixing the input bytes it is computed from to their values
        in the state's inputs (recorded as constraints, one value asked per byte, so a
        recorded tree replays them), then :meth:`concretize` whatever is left symbolic.

        Fixing ``hash(key) & mask`` itself, as KLEE does, leaves a hash preimage problem in
        every later query about the key's bytes (memcached's keys after murmur3: each such
        query took seconds, and a run's tests could not be solved); fixing the key's bytes
        leaves equalities the path's simplification substitutes. Both keep only one of the
        value's possibilities; this one also keeps only one key giving it."""
        value = ex.settled(state, value)
        if type(value) is int:
            return value
        read = E.Op.READ
        for node in E.postorder([value]):
            if (node.op is read and node.updates.head is None  # type: ignore[union-attr]
                    and node.args[0].op is E.Op.CONST):
                byte = ex.get_value(state, node)
                state.add_constraint(E.eq(E.const(byte, 8), node), model=state.model)
        fixed = ex.simplify(state, value)
        if fixed.op is not E.Op.CONST:
            return ex.concretize(state, fixed, width, why)
        ex.shortfalls.add(ShortfallKind.CONCRETIZED, why, ex.program_site(state))
        return fixed.value

    def bad_pointer(self, ex: PathDecisions, state: State, address: int, size: int, what: str) -> NoReturn:
        """Report an access through a pointer that points into no live object."""
        segment, offset = locate(address)
        freed = state.freed.get(segment)
        noun = f"{size} byte{'s' if size != 1 else ''}"
        if freed is not None:
            gone = "out of scope" if freed.kind is ObjectKind.STACK else "freed"
            ex.fail(state, ErrorKind.PTR,
                    f"use after free: {what} of {noun} at offset {offset} of a "
                    f"{gone} {freed.describe()}")
        if segment == 0:
            ex.fail(state, ErrorKind.PTR, f"null pointer {what} of {noun}"
                    + (f" at address 0x{address:x}" if address else ""))
        if address in ex.program.functions_by_address:
            ex.fail(state, ErrorKind.PTR, f"{what} of {noun} at the address of a function")
        ex.fail(state, ErrorKind.PTR, f"{what} of {noun} at invalid address 0x{address:x}")

    def read_bytes(self, ex: PathDecisions, state: State, address: Any, size: int) -> list[Any]:
        """``size`` raw bytes (ints or 8-bit expressions)."""
        if size == 0:
            return []
        os, offset = self.resolve(ex, state, address, size, "read")
        return read_at(state, os, offset, size)

    def write_bytes(self, ex: PathDecisions, state: State, address: Any, data: list[Any] | bytes) -> None:
        """Raw bytes."""
        if not data:
            return
        os, offset = self.resolve(ex, state, address, len(data), "write")
        if os.obj.read_only:
            ex.fail(state, ErrorKind.READONLY, f"write to read-only {os.obj.describe()}")
        os = state.writable(os)
        if type(offset) is int:
            os.write_bytes(offset, data)
        else:
            os.to_array_mode(state.next_array_name(f"mem{os.obj.segment}"))
            os.write_symbolic(offset, list(data))

    def allocate(self, ex: PathDecisions, state: State, size: int, kind: ObjectKind, name: str, site: str = "") -> int:
        """A fresh zero-filled object; its address (``site``: where the program made it)."""
        return state.allocate(size, kind, name, site=site).obj.address

    def free(self, ex: PathDecisions, state: State, address: Any) -> None:
        """free(): release a heap object, or report an invalid/double free."""
        if type(address) is not int:
            address = ex.concretize(state, address, 64, "pointer passed to free")
        if address == 0:
            return
        segment, offset = locate(address)
        os = state.objects.get(segment)
        if os is None:
            freed = state.freed.get(segment)
            if freed is not None and freed.kind is ObjectKind.HEAP and offset == 0:
                ex.fail(state, ErrorKind.FREE, f"double free of a {freed.describe()}")
            ex.fail(state, ErrorKind.FREE, f"free of invalid pointer 0x{address:x}")
        if os.obj.kind is not ObjectKind.HEAP:
            ex.fail(state, ErrorKind.FREE, f"free of a {os.obj.describe()} (not allocated by malloc)")
        if offset:
            ex.fail(state, ErrorKind.FREE,
                    f"free of a pointer to offset {offset} of a {os.obj.describe()}")
        state.release(segment)


#: a symbolic offset that can take at most this many values (expr.value_sets) is read as the
#: choice between the reads at each, not as a read of a symbolic array
FEW_OFFSETS = 8
#: ... of those it may take before the object's bounds are applied (expr's argument cursor,
#: ``args += matched`` a dozen times: 13 offsets, of which the 5 of argv's array are read)
OFFSET_VALUES_LOOKED_AT = 64


def read_at(state: State, os: ObjectState, offset: Any, size: int) -> list[Any]:
    """``size`` bytes of ``os`` at ``offset``, which the path keeps in bounds: a concrete
    offset's bytes, the if-then-else of the reads at the few values a symbolic offset's
    structure shows (:data:`FEW_OFFSETS`), else a read of the object as an expression array
    (which it becomes, in a copy the state owns)."""
    if type(offset) is int:
        return os.read_bytes(offset, size)
    choices = few_values(offset, OFFSET_VALUES_LOOKED_AT)
    if choices is not None:
        # the path keeps the offset in bounds: the others cannot be
        fitting = [o for o in choices if o <= os.obj.size - size]
        if 0 < len(fitting) <= FEW_OFFSETS:
            return read_one_of(os, offset, fitting, size)
    os = state.writable(os)
    os.to_array_mode(state.next_array_name(f"mem{os.obj.segment}"))
    return [V.simplify(b) for b in os.read_symbolic(offset, size)]


def segment_of(address: E.Expr) -> E.Expr:
    """The segment a 64-bit address lies in, as an expression (:func:`locate`'s rounding:
    an object owns the addresses half a segment below and above its base)."""
    return E.extract(E.add(address, E.const(SEGMENT_HALF, 64)), SEGMENT_SHIFT, 64 - SEGMENT_SHIFT)


def in_segment(address: E.Expr, segment: int) -> E.Expr:
    """The condition that ``address`` lies in ``segment``."""
    return E.eq(segment_of(address), E.const(segment, 64 - SEGMENT_SHIFT))


def read_one_of(os: ObjectState, offset: E.Expr, choices: list[int], size: int) -> list[Any]:
    """``size`` bytes at ``offset``, which is one of ``choices``: an if-then-else over the
    reads at each (of the object's bytes, or of its expression array where it has one).
    Concrete candidates make one whole value (a pointer loaded this way is a choice between
    addresses, which the next read through it can use again); bytes that differ
    symbolically choose byte by byte."""
    at = [E.eq(offset, E.const(choice, offset.width)) for choice in choices]
    if os.updates is None:
        columns = [os.read_bytes(o, size) for o in choices]
    else:  # an expression array already: its reads at constant offsets, folded where they can
        columns = [[V.simplify(b) for b in os.read_symbolic(E.const(o, 32), size)] for o in choices]
    if all(type(b) is int for column in columns for b in column):
        words = [int.from_bytes(bytes(column), "little") for column in columns]  # type: ignore[arg-type]
        value = chosen(at, [E.const(word, 8 * size) for word in words])
        return [E.extract(value, 8 * i, 8) for i in range(size)]
    return [chosen(at, [V.as_expr(column[i], 8) for column in columns]) for i in range(size)]


def chosen(conditions: list[E.Expr], values: list[E.Expr]) -> E.Expr:
    """``values[k]`` where ``conditions[k]`` holds (the last where none of the others does:
    one of them holds)."""
    value = values[-1]
    for condition, candidate in zip(reversed(conditions[:-1]), reversed(values[:-1])):
        value = E.ite(condition, candidate, value)
    return value


def out_of_bounds(what: str, size: int, offset: int, obj: MemoryObject) -> str:
    """The message of an access of ``size`` bytes at ``offset`` outside ``obj``."""
    noun = f"{size} byte{'s' if size != 1 else ''}"
    return f"out-of-bounds {what} of {noun} at offset {offset} of a {obj.describe()}"

