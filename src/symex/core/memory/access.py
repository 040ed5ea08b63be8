"""The executor's memory access: loads and stores of typed values (decoded from bytes, x86's
long double, aligned loads across an object's end), C strings, and the run's memory model
(:mod:`symex.core.memory.model`) for everything a pointer means: resolving it, raw bytes,
allocation and free.

A mixin of :class:`~symex.core.interpreter.executor.Executor`, written against the
:class:`~symex.core.interpreter.machine.Machine` it is part of."""

from __future__ import annotations

from typing import Any

from symex.core.memory.objects import (
    ObjectKind,
    ObjectState,
    SymbolicFloat,
    decode,
    encode,
)
from symex.core.outcome import (
    PathStatus,
    PathTerminated,
)
from symex.core.shortfalls import ShortfallKind
from symex.core.state import State
from symex.ir.program import (
    SEGMENT_SHIFT,
    Access,
    ValueKind,
)
from symex.core.interpreter.machine import Machine


class MemoryAccess(Machine):
    """Reads, writes, allocation and free, through the run's memory model."""

    # -- memory -------------------------------------------------------------------------

    def resolve(self, state: State, address: Any, size: int, what: str) -> tuple[ObjectState, Any]:
        """The one object a pointer points into, and the offset (int, or 32-bit expression),
        as the run's memory model resolves it (:meth:`MemoryModel.resolve`)."""
        return self.memory_model.resolve(self, state, address, size, what)

    def read(self, state: State, address: Any, access: Access) -> Any:
        """Load a value. A naturally aligned 2- to 16-byte load that starts inside an object
        and runs past its end reads the bytes past the end as 0 (:meth:`partial_load`)."""
        size = access.size
        if type(address) is int and size in _PARTIAL_LOAD_SIZES and not address % size:
            os = state.objects.get(address >> SEGMENT_SHIFT)
            if os is not None and os.obj.address <= address < os.obj.address + os.obj.size < address + size:
                data = self.partial_load(state, os, address - os.obj.address, size)
            else:
                data = self.memory_model.read_bytes(self, state, address, size)
        else:
            data = self.memory_model.read_bytes(self, state, address, size)
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
        self.memory_model.write_bytes(self, state, address, data)

    def read_bytes(self, state: State, address: Any, size: int) -> list[Any]:
        """``size`` raw bytes (ints or 8-bit expressions), through the memory model."""
        return self.memory_model.read_bytes(self, state, address, size)

    def write_bytes(self, state: State, address: Any, data: list[Any] | bytes) -> None:
        """Raw bytes, through the memory model."""
        self.memory_model.write_bytes(self, state, address, data)

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
        return self.memory_model.allocate(self, state, size, kind, name, site)

    def free(self, state: State, address: Any) -> None:
        """free(): release a heap object, or report an invalid/double free."""
        self.memory_model.free(self, state, address)


#: load sizes :meth:`MemoryAccess.partial_load` accepts past an object's end when aligned
#: (the word sizes of word-at-a-time string code, vector registers included)
_PARTIAL_LOAD_SIZES = frozenset({2, 4, 8, 16})
