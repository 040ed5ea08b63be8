"""The executor's memory access: resolving pointers (forking where a symbolic one may point
into several objects), loads and stores of values and bytes, strings, allocation and free,
with the errors each can raise.

A mixin of :class:`~symex.core.interpreter.executor.Executor`, written against the
:class:`~symex.core.interpreter.machine.Machine` it is part of."""

from __future__ import annotations

from typing import Any, NoReturn


from symex import expr as E
from symex.core.interpreter import values as V
from symex.core.memory.objects import (
    SEGMENT_HALF,
    ObjectKind,
    ObjectState,
    MemoryObject,
    SymbolicFloat,
    decode,
    encode,
    locate,
)
from symex.core.forks import (
    ForkKind,
)
from symex.core.outcome import (
    ErrorKind,
    PathStatus,
    PathTerminated,
)
from symex.core.shortfalls import ShortfallKind
from symex.core.state import NO_MODEL, State
from symex.expr.value_sets import few_values
from symex.ir.program import (
    SEGMENT_SHIFT,
    Access,
    ValueKind,
)
from symex.core.interpreter.machine import Machine




class MemoryAccess(Machine):
    """Reads, writes, allocation and free, through the state's address space."""

    # -- memory -------------------------------------------------------------------------

    def resolve(self, state: State, address: Any, size: int, what: str) -> tuple[ObjectState, Any]:
        """The object a pointer points into, and the offset (int, or 32-bit expression).
        Errors for null, freed and out-of-bounds pointers; a symbolic pointer that may point
        into several objects forks one state per object (the others re-execute the access).
        An address below or above an object but within its region (:func:`locate`) is
        reported against that object, at a signed offset."""
        if type(address) is int:
            segment, offset = locate(address)
            os = state.objects.get(segment)
            if os is None:
                self.bad_pointer(state, address, size, what)
            if offset < 0 or offset + size > os.obj.size:
                self.fail(state, ErrorKind.PTR, _out_of_bounds(what, size, offset, os.obj))
            if os.obj.limit is not None:
                self.check_limit(state, os.obj, offset, size, what)
            return os, offset
        value = self.get_value(state, address)
        segment, value_offset = locate(value)
        os = state.objects.get(segment)
        in_segment = E.eq(E.extract(E.add(address, E.const(SEGMENT_HALF, 64)), SEGMENT_SHIFT,
                                    64 - SEGMENT_SHIFT),
                          E.const(segment, 64 - SEGMENT_SHIFT))
        if os is None:
            state.add_constraint(in_segment)
            self.bad_pointer(state, value, size, what)
        base = os.obj.address
        offset64 = E.sub(address, E.const(base, 64))
        if os.obj.size >= size:
            in_bounds = E.ule(offset64, E.const(os.obj.size - size, 64))
        else:
            in_bounds = E.FALSE
        in_bounds = self.simplify(state, in_bounds)
        if in_bounds.op is not E.Op.CONST and self.forks_exhausted():
            if not self.follow_model(state, in_bounds):
                state.add_constraint(in_segment)
                self.fail(state, ErrorKind.PTR, _out_of_bounds(what, size, value_offset, os.obj))
            return os, V.simplify(E.extract(offset64, 0, 32))
        seeded_sides = self.seeded_sides(state, in_bounds)
        if seeded_sides is not None and seeded_sides[0] is not NO_MODEL:
            if_in, if_out = seeded_sides  # the seed points here; elsewhere waits unchecked
        else:
            seeded_sides = None
            if_in, if_out = self.split(state, in_bounds)
        if if_in is None:
            state.add_constraint(in_segment)
            self.fail(state, ErrorKind.PTR, _out_of_bounds(what, size, value_offset, os.obj))
        if if_out is not None:
            # the child tries the access again, under "not in this object"
            child = self.fork_to_retry(state, in_bounds, ForkKind.POINTER, if_in, if_out)
            if seeded_sides is not None:
                child.unchecked = ()
        offset = V.simplify(E.extract(offset64, 0, 32))
        if os.obj.limit is not None:
            self.check_limit(state, os.obj, offset, size, what)
        if self.max_sym_array_size and os.obj.size > self.max_sym_array_size:
            # KLEE's --max-sym-array-size: a symbolic offset into a big object (a hash table
            # at hash(key)) makes every later query reason about the whole object
            offset = self.concretize_inputs(
                state, offset, 32,
                f"offset into a {os.obj.size:,}-byte object (with the inputs it is computed from)")
        return os, offset

    def check_limit(self, state: State, obj: MemoryObject, offset: Any, size: int, what: str) -> None:
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
        self.check_fault(state, E.ult(obj.limit, end), ErrorKind.PTR,
                         f"out-of-bounds {what} of {noun} at offset {at} of the {obj.name}, at "
                         f"or past its length (of at most {obj.size} bytes)")

    def concretize_inputs(self, state: State, value: Any, width: int, why: str) -> int:
        """Fix a symbolic value by fixing the input bytes it is computed from to their values
        in the state's inputs (recorded as constraints, one value asked per byte, so a
        recorded tree replays them), then :meth:`concretize` whatever is left symbolic.

        Fixing ``hash(key) & mask`` itself, as KLEE does, leaves a hash preimage problem in
        every later query about the key's bytes (memcached's keys after murmur3: each such
        query took seconds, and a run's tests could not be solved); fixing the key's bytes
        leaves equalities the path's simplification substitutes. Both keep only one of the
        value's possibilities; this one also keeps only one key giving it."""
        value = self.settled(state, value)
        if type(value) is int:
            return value
        read = E.Op.READ
        for node in E.postorder([value]):
            if (node.op is read and node.updates.head is None  # type: ignore[union-attr]
                    and node.args[0].op is E.Op.CONST):
                byte = self.get_value(state, node)
                state.add_constraint(E.eq(E.const(byte, 8), node), model=state.model)
        fixed = self.simplify(state, value)
        if fixed.op is not E.Op.CONST:
            return self.concretize(state, fixed, width, why)
        self.shortfalls.add(ShortfallKind.CONCRETIZED, why, self.program_site(state))
        return fixed.value

    def bad_pointer(self, state: State, address: int, size: int, what: str) -> NoReturn:
        """Report an access through a pointer that points into no live object."""
        segment, offset = locate(address)
        freed = state.freed.get(segment)
        noun = f"{size} byte{'s' if size != 1 else ''}"
        if freed is not None:
            gone = "out of scope" if freed.kind is ObjectKind.STACK else "freed"
            self.fail(state, ErrorKind.PTR,
                      f"use after free: {what} of {noun} at offset {offset} of a "
                      f"{gone} {freed.describe()}")
        if segment == 0:
            self.fail(state, ErrorKind.PTR, f"null pointer {what} of {noun}"
                      + (f" at address 0x{address:x}" if address else ""))
        if address in self.program.functions_by_address:
            self.fail(state, ErrorKind.PTR, f"{what} of {noun} at the address of a function")
        self.fail(state, ErrorKind.PTR, f"{what} of {noun} at invalid address 0x{address:x}")

    def read(self, state: State, address: Any, access: Access) -> Any:
        """Load a value. A naturally aligned 2- to 16-byte load that starts inside an object
        and runs past its end reads the bytes past the end as 0 (:meth:`partial_load`)."""
        size = access.size
        if type(address) is int and size in _PARTIAL_LOAD_SIZES and not address % size:
            os = state.objects.get(address >> SEGMENT_SHIFT)
            if os is not None and os.obj.address <= address < os.obj.address + os.obj.size < address + size:
                data = self.partial_load(state, os, address - os.obj.address, size)
            else:
                data = self.read_bytes(state, address, size)
        else:
            data = self.read_bytes(state, address, size)
        try:
            return decode(data, access)
        except SymbolicFloat:
            # x86's 80-bit long double is computed concretely (as the nearest double): its
            # symbolic bytes are fixed to one value the path allows, and counted, as a
            # symbolic value converted to long double is (od -t fL reads its input so)
            raw = decode(data, Access(ValueKind.INT, access.size, access.size * 8))
            fixed = self.concretize(state, raw, access.size * 8,
                                    "symbolic long double (-mlong-double-64 makes it a double, solved)")
            return decode(fixed.to_bytes(access.size, "little"), access)

    def partial_load(self, state: State, os: ObjectState, offset: int, size: int) -> list[Any]:
        """The in-bounds bytes of an aligned load that crosses an object's end, then zeros.

        Word-at-a-time searches (gnulib's ``rawmemchr``, ``memchr2``, ``strchrnul``) read
        whole aligned words and stop at the first matching byte, which lies inside the
        object: natively the word never crosses a page, so the read cannot fault and the
        result does not depend on the bytes past the end. Reporting it would be a false
        alarm (valgrind accepts such loads by default, ``--partial-loads-ok``); the bytes
        past the end read as 0, one of the values they can have natively, and the run's
        shortfalls count it. AddressSanitizer does report these loads."""
        self.shortfalls.add(ShortfallKind.PARTIAL_LOAD, f"{size}-byte read", self.program_site(state))
        inside = os.obj.size - offset
        return self.read_bytes(state, os.obj.address + offset, inside) + [0] * (size - inside)

    def write(self, state: State, address: Any, access: Access, value: Any) -> None:
        """Store a value."""
        try:
            data = encode(value, access)
        except SymbolicFloat as exc:
            raise PathTerminated(PathStatus.PARTIAL, f"unsupported: {exc}") from None
        self.write_bytes(state, address, data)

    def read_bytes(self, state: State, address: Any, size: int) -> list[Any]:
        """``size`` raw bytes (ints or 8-bit expressions)."""
        if size == 0:
            return []
        os, offset = self.resolve(state, address, size, "read")
        if type(offset) is int:
            return os.read_bytes(offset, size)
        choices = few_values(offset, OFFSET_VALUES_LOOKED_AT)
        if choices is not None:
            # resolve() kept the offset in bounds on this path: the others cannot be
            fitting = [o for o in choices if o <= os.obj.size - size]
            if 0 < len(fitting) <= FEW_OFFSETS:
                return _read_one_of(os, offset, fitting, size)
        os = state.writable(os)
        os.to_array_mode(state.next_array_name(f"mem{os.obj.segment}"))
        return [V.simplify(b) for b in os.read_symbolic(offset, size)]

    def write_bytes(self, state: State, address: Any, data: list[Any] | bytes) -> None:
        """Raw bytes."""
        if not data:
            return
        os, offset = self.resolve(state, address, len(data), "write")
        if os.obj.read_only:
            self.fail(state, ErrorKind.READONLY, f"write to read-only {os.obj.describe()}")
        os = state.writable(os)
        if type(offset) is int:
            os.write_bytes(offset, data)
        else:
            os.to_array_mode(state.next_array_name(f"mem{os.obj.segment}"))
            os.write_symbolic(offset, list(data))

    def read_c_string(self, state: State, address: Any, limit: int = 1 << 16) -> bytes:
        """A NUL-terminated string with concrete bytes (symbolic bytes are concretized)."""
        out = bytearray()
        if type(address) is not int:
            address = self.concretize(state, address, 64, "string address")
        while len(out) < limit:
            b = self.read_bytes(state, address + len(out), 1)[0]
            if type(b) is not int:
                b = self.concretize(state, b, 8, "string byte")
            if b == 0:
                break
            out.append(b)
        return bytes(out)

    def allocate(self, state: State, size: int, kind: ObjectKind, name: str, site: str = "") -> int:
        """A fresh zero-filled object; its address (``site``: where the program made it)."""
        return state.allocate(size, kind, name, site=site).obj.address

    def free(self, state: State, address: Any) -> None:
        """free(): release a heap object, or report an invalid/double free."""
        if type(address) is not int:
            address = self.concretize(state, address, 64, "pointer passed to free")
        if address == 0:
            return
        segment, offset = locate(address)
        os = state.objects.get(segment)
        if os is None:
            freed = state.freed.get(segment)
            if freed is not None and freed.kind is ObjectKind.HEAP and offset == 0:
                self.fail(state, ErrorKind.FREE, f"double free of a {freed.describe()}")
            self.fail(state, ErrorKind.FREE, f"free of invalid pointer 0x{address:x}")
        if os.obj.kind is not ObjectKind.HEAP:
            self.fail(state, ErrorKind.FREE, f"free of a {os.obj.describe()} (not allocated by malloc)")
        if offset:
            self.fail(state, ErrorKind.FREE,
                      f"free of a pointer to offset {offset} of a {os.obj.describe()}")
        state.release(segment)


#: load sizes :meth:`MemoryAccess.partial_load` accepts past an object's end when aligned
#: (the word sizes of word-at-a-time string code, vector registers included)
_PARTIAL_LOAD_SIZES = frozenset({2, 4, 8, 16})
#: a symbolic offset that can take at most this many values (expr.value_sets) is read as the
#: choice between the reads at each, not as a read of a symbolic array
FEW_OFFSETS = 8
#: ... of those it may take before the object's bounds are applied (expr's argument cursor,
#: ``args += matched`` a dozen times: 13 offsets, of which the 5 of argv's array are read)
OFFSET_VALUES_LOOKED_AT = 64


def _read_one_of(os: ObjectState, offset: E.Expr, choices: list[int], size: int) -> list[Any]:
    """``size`` bytes at ``offset``, which is one of ``choices``: an if-then-else over the
    reads at each (of the object's bytes, or of its expression array where it has one).
    Concrete candidates make one whole value (a pointer loaded this way is a choice between
    addresses, which the next read through it can use again); bytes that differ
    symbolically choose byte by byte."""
    if os.updates is None:
        columns = [os.read_bytes(o, size) for o in choices]
    else:  # an expression array already: its reads at constant offsets, folded where they can
        columns = [[V.simplify(b) for b in os.read_symbolic(E.const(o, 32), size)] for o in choices]
    if all(type(b) is int for column in columns for b in column):
        words = [int.from_bytes(bytes(column), "little") for column in columns]  # type: ignore[arg-type]
        value = _chosen(offset, choices, [E.const(word, 8 * size) for word in words])
        return [E.extract(value, 8 * i, 8) for i in range(size)]
    return [_chosen(offset, choices, [V.as_expr(column[i], 8) for column in columns])
            for i in range(size)]


def _chosen(offset: E.Expr, choices: list[int], values: list[E.Expr]) -> E.Expr:
    """``values[k]`` where ``offset`` is ``choices[k]`` (the last where it is none of the
    others: it is one of them)."""
    value = values[-1]
    for choice, candidate in zip(reversed(choices[:-1]), reversed(values[:-1])):
        value = E.ite(E.eq(offset, E.const(choice, offset.width)), candidate, value)
    return value


def _out_of_bounds(what: str, size: int, offset: int, obj: MemoryObject) -> str:
    noun = f"{size} byte{'s' if size != 1 else ''}"
    return f"out-of-bounds {what} of {noun} at offset {offset} of a {obj.describe()}"

