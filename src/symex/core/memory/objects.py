"""The default object memory model: one segment per allocation, copy-on-write contents.

An object's base address is ``segment << SEGMENT_SHIFT`` (38). Every allocation (stack, heap,
global, argv, ...) gets its own segment, so resolving a concrete pointer is one map lookup, an
access past the end of an object can never silently land in its neighbour, and error messages
can name the object and the offset exactly. Each object owns the addresses within 2^37 of its
base, below as well as above (:func:`locate`): a pointer moved below an object (``p - 192``,
``table[INT_MIN]``) is reported against the object it came from, at a negative offset, as
AddressSanitizer does. The interpreter's fast paths still take ``address >> SEGMENT_SHIFT``
and the low bits as the offset: for an address below its object that finds the segment
underneath with an offset far past its end, so they fall back to :func:`locate`'s slow path.
Segments are handed out from a per-state counter, so the same path always gives the same
addresses (parallel workers and memoized runs replay paths and rely on that).

Contents are concrete bytes plus a sparse map of symbolic bytes. The first access at a symbolic
offset turns an object into *array mode*: its contents become an expression array (initial bytes
as a constant array, then an update list), which the solver reasons about.
"""

from __future__ import annotations

import enum
import struct
from typing import Any, cast
from collections.abc import Callable

import attrs

from symex import expr as E
from symex.ir.program import SEGMENT_SHIFT, Access, ValueKind

OFFSET_MASK = (1 << SEGMENT_SHIFT) - 1
POINTER_MASK = (1 << 64) - 1
#: how far below (and above) its base an address still belongs to an object
SEGMENT_HALF = 1 << (SEGMENT_SHIFT - 1)
#: segments a path may allocate (the null segment 0 and the program's static ones included)
MAX_SEGMENTS = 1 << (64 - SEGMENT_SHIFT)


def locate(address: int) -> tuple[int, int]:
    """The segment whose region holds a concrete address, and the address's signed offset
    from that segment's base (negative below the object: ``(segment, -192)``). Addresses
    within 2^37 of 0, ``(char *)-1`` among them, are segment 0's: null."""
    biased = (address + SEGMENT_HALF) & POINTER_MASK
    return biased >> SEGMENT_SHIFT, (biased & OFFSET_MASK) - SEGMENT_HALF


class ObjectKind(enum.Enum):
    """Where an object lives; named in error messages ("a 8-byte stack object")."""

    STACK = "stack"
    HEAP = "heap"
    GLOBAL = "global"
    ARGUMENT = "argument"  # argv strings and the like, set up by the environment
    VARARGS = "varargs"


@attrs.frozen(slots=True)
class MemoryObject:
    """The identity of an allocation, shared by all states that have it."""

    segment: int
    size: int
    kind: ObjectKind
    name: str
    read_only: bool = False
    #: where it was made, "file:line": a variable's declaration, malloc's call; "" if unknown
    site: str = ""
    #: the object's size as the program sees it where that is symbolic (a fuzz target's
    #: input: ``size`` bytes are there, the first ``limit`` of them are the program's); an
    #: access reaching past it is out of bounds. Such an object is all symbolic bytes and
    #: read-only, so it is never ``flat`` and the interpreter's flat fast paths never take it.
    limit: E.Expr | None = None

    @property
    def address(self) -> int:
        """The object's base address."""
        return self.segment << SEGMENT_SHIFT

    def describe(self) -> str:
        """E.g. "8-byte stack object 'buf' (declared at prog.c:7)", "16-byte heap object
        (allocated by malloc at prog.c:12)"."""
        text = f"{self.size}-byte {self.kind.value} object"
        if self.kind is ObjectKind.HEAP:
            made = f"allocated by {self.name}" if self.name else "allocated"
            return f"{text} ({made} at {self.site})" if self.site else f"{text} ({made})"
        if self.name:
            text = f"{text} '{self.name}'"
        elif self.kind is ObjectKind.GLOBAL and self.site:
            # the only unnamed globals debug info describes are string literals
            return f"{text} (a string literal at {self.site})"
        return f"{text} (declared at {self.site})" if self.site else text


#: objects of at least this many bytes are copied page by page: a state writing one word into
#: a shared 4 KB buffer copies one page and a table of 16 page references, not 4 KB
PAGED_OBJECT_SIZE = 4096
PAGE_SHIFT = 8
PAGE_SIZE = 1 << PAGE_SHIFT
PAGE_MASK = PAGE_SIZE - 1
#: a paged copy that comes to own more than 1/FLATTEN_SHARE of its pages turns flat again
#: (its state is rewriting the object: the fast paths are worth more than the sharing)
FLATTEN_SHARE = 4


class ObjectState:
    """The contents of one object in one or more states (copied on first write by a state that
    does not own it: see :meth:`symex.core.state.State.writable`).

    Concrete bytes are ``data``, one bytearray (*flat*), or, for a copy of an object of
    :data:`PAGED_OBJECT_SIZE` bytes or more, ``pages`` with ``data`` None (*paged*): pages
    shared with the object it was copied from are ``bytes``, pages this copy wrote are its own
    ``bytearray``. Copies are only ever made of *frozen* objects (no live state owns them any
    more: forks renew both sides' tokens), so a flat object keeps the split of its bytes in
    ``pages`` once made, for every copy to share. Symbolic bytes sit in ``sym``, or everything
    in ``updates`` once the object is in array mode."""

    __slots__ = ("obj", "data", "sym", "updates", "owner", "flat", "pages")

    def __init__(self, obj: MemoryObject, data: bytearray | None, owner: object = None) -> None:
        self.obj = obj
        self.data = data
        self.sym: dict[int, E.Expr] | None = None
        self.updates: E.UpdateList | None = None
        self.owner = owner
        #: concrete and flat: all the interpreter's fast paths need to read ``data`` directly
        self.flat = data is not None
        self.pages: list[bytes | bytearray] | None = None

    def copy(self, owner: object) -> ObjectState:
        """A private copy for ``owner`` (update lists are persistent and shared)."""
        if self.obj.size < PAGED_OBJECT_SIZE:
            other = ObjectState(self.obj, bytearray(self.data), owner)  # type: ignore[arg-type]
        else:
            other = ObjectState(self.obj, None, owner)
            other.pages = self._shared_pages().copy()
        other.sym = dict(self.sym) if self.sym else None
        other.updates = self.updates
        other.flat = other.data is not None and other.sym is None and other.updates is None
        return other

    def _shared_pages(self) -> list[bytes | bytearray]:
        """This frozen object's bytes as immutable pages, made once and shared by its copies."""
        pages = self.pages
        if self.data is not None:
            if pages is None:
                data = self.data
                pages = self.pages = [bytes(data[i:i + PAGE_SIZE])
                                      for i in range(0, len(data), PAGE_SIZE)]
        elif any(type(page) is bytearray for page in pages):  # type: ignore[union-attr]
            # pages it wrote while a state owned it: no state writes them any more
            pages = self.pages = [bytes(page) for page in pages]  # type: ignore[union-attr]
        return pages  # type: ignore[return-value]

    def _writable_page(self, index: int) -> bytearray | None:
        """Page ``index`` of a paged object, made this object's own on first write; None when
        that made the object flat again (write into ``data`` then)."""
        pages = self.pages
        assert pages is not None  # only a paged object has pages to write
        page = pages[index]
        if type(page) is bytearray:
            return page
        page = pages[index] = bytearray(page)
        owned = sum(1 for p in pages if type(p) is bytearray)
        if owned * FLATTEN_SHARE > len(pages):
            self.data = bytearray(b"".join(pages))
            self.pages = None
            self.flat = self.sym is None and self.updates is None
            return None
        return page

    def concrete(self, offset: int, size: int) -> bytes | bytearray:
        """``size`` concrete bytes at ``offset``, ignoring ``sym`` and ``updates``."""
        data = self.data
        if data is not None:
            return data[offset:offset + size]
        pages = self.pages
        first = offset >> PAGE_SHIFT
        start = offset & PAGE_MASK
        if start + size <= PAGE_SIZE:
            return pages[first][start:start + size]  # type: ignore[index]
        last = (offset + size - 1) >> PAGE_SHIFT
        joined = b"".join(pages[first:last + 1])  # type: ignore[index]
        return joined[start:start + size]

    def _put_concrete(self, offset: int, values: bytes | bytearray) -> None:
        """Store concrete bytes at ``offset`` into ``data`` or the pages."""
        done = 0
        size = len(values)
        while done < size:
            at = offset + done
            page = None if self.data is not None else self._writable_page(at >> PAGE_SHIFT)
            if page is None:  # flat (perhaps just now): the rest goes into data at once
                self.data[at:offset + size] = values[done:]  # type: ignore[index]
                return
            start = at & PAGE_MASK
            count = min(size - done, PAGE_SIZE - start)
            page[start:start + count] = values[done:done + count]
            done += count

    @property
    def is_concrete(self) -> bool:
        """True when every byte is a known constant."""
        return self.sym is None and self.updates is None

    def contents(self) -> bytes:
        """All concrete bytes (of a concrete object, or the base under ``sym``)."""
        return bytes(self.data) if self.data is not None else b"".join(self.pages)  # type: ignore[arg-type]

    # -- byte level ---------------------------------------------------------------------

    def read_byte(self, offset: int) -> int | E.Expr:
        """One byte at a concrete offset."""
        if self.updates is not None:
            value = E.read(self.updates, E.const(offset, 32))
            return value.value if value.op is E.Op.CONST else value
        if self.sym is not None:
            b = self.sym.get(offset)
            if b is not None:
                return b
        data = self.data
        if data is not None:
            return data[offset]
        return self.pages[offset >> PAGE_SHIFT][offset & PAGE_MASK]  # type: ignore[index]

    def write_byte(self, offset: int, value: int | E.Expr) -> None:
        """One byte at a concrete offset (the state must own this object)."""
        if self.updates is not None:
            self.updates = self.updates.write(E.const(offset, 32),
                                              value if isinstance(value, E.Expr) else E.const(value, 8))
            return
        if isinstance(value, int):
            if self.data is not None:
                self.data[offset] = value
            else:
                self._put_concrete(offset, bytes((value,)))
            if self.sym is not None:
                self.sym.pop(offset, None)
                if not self.sym:
                    self.sym = None
                    self.flat = self.data is not None
        else:
            if value.op is E.Op.CONST:
                self.write_byte(offset, value.value)
                return
            if self.sym is None:
                self.sym = {}
                self.flat = False
            self.sym[offset] = value

    def read_bytes(self, offset: int, size: int) -> list[int | E.Expr]:
        """``size`` bytes at a concrete offset."""
        if self.is_concrete:
            return list(self.concrete(offset, size))
        return [self.read_byte(offset + i) for i in range(size)]

    def write_bytes(self, offset: int, values: list[int | E.Expr] | bytes) -> None:
        """Bytes at a concrete offset."""
        if self.is_concrete and isinstance(values, (bytes, bytearray)):
            self._put_concrete(offset, values)
            return
        for i, v in enumerate(values):
            self.write_byte(offset + i, v)

    def to_array_mode(self, array_name: str) -> E.UpdateList:
        """Switch to an expression array so symbolic offsets can be read and written."""
        if self.updates is None:
            updates = E.UpdateList(E.Array(array_name, self.obj.size, self.contents()))
            if self.sym:
                for offset in sorted(self.sym):
                    updates = updates.write(E.const(offset, 32), self.sym[offset])
            self.updates = updates
            self.sym = None
            self.flat = False
        return self.updates

    def read_symbolic(self, offset: E.Expr, size: int) -> list[E.Expr]:
        """``size`` bytes at a symbolic 32-bit offset (array mode must be on)."""
        assert self.updates is not None
        return [E.read(self.updates, offset if i == 0 else E.add(E.const(i, 32), offset))
                for i in range(size)]

    def write_symbolic(self, offset: E.Expr, values: list[int | E.Expr]) -> None:
        """Bytes at a symbolic 32-bit offset (array mode must be on)."""
        assert self.updates is not None
        updates = self.updates
        for i, v in enumerate(values):
            index = offset if i == 0 else E.add(E.const(i, 32), offset)
            updates = updates.write(index, v if isinstance(v, E.Expr) else E.const(v, 8))
        self.updates = updates


# -- values <-> bytes ----------------------------------------------------------------------

#: in-place readers and writers of little-endian unsigned integers by size in bytes (no slice
#: and no bytes object: about 4x faster than int.from_bytes of a slice)
_STRUCTS = {size: struct.Struct("<" + code) for size, code in ((1, "B"), (2, "H"), (4, "I"),
                                                              (8, "Q"))}
UNPACK = {size: s.unpack_from for size, s in _STRUCTS.items()}
PACK = {size: s.pack_into for size, s in _STRUCTS.items()}


def int_reader(size: int) -> Callable[[bytearray, int], tuple[int]]:
    """``(data, offset) -> (value,)`` for a ``size``-byte little-endian unsigned integer,
    like ``struct``'s ``unpack_from`` (which it is for 1, 2, 4 and 8 bytes)."""
    found = UNPACK.get(size)
    if found is not None:
        return found
    return lambda data, offset: (int.from_bytes(data[offset:offset + size], "little"),)


def int_writer(size: int) -> Callable[[bytearray, int, int], None]:
    """``(data, offset, value)`` storing a ``size``-byte little-endian unsigned integer, like
    ``struct``'s ``pack_into`` (which it is for 1, 2, 4 and 8 bytes)."""
    found = PACK.get(size)
    if found is not None:
        return found

    def write(data: bytearray, offset: int, value: int) -> None:
        data[offset:offset + size] = value.to_bytes(size, "little")
    return write


def encode(value: Any, access: Access) -> list[int | E.Expr] | bytes:
    """The little-endian bytes of a register value laid out as ``access``."""
    kind = access.kind
    if kind is ValueKind.INT or kind is ValueKind.PTR:
        if type(value) is int:
            return value.to_bytes(access.size, "little")
        if value.width < access.size * 8:
            value = E.zext(value, access.size * 8)
        return [E.extract(value, 8 * i, 8) for i in range(access.size)]
    if kind is ValueKind.FLOAT:
        return encode_float(value, access)
    out: list[int | E.Expr] = [0] * access.size
    for (offset, part), element in zip(access.parts, value):
        for i, b in enumerate(encode(element, part)):
            out[offset + i] = b
    return out


def decode(data: list[int | E.Expr] | bytes | bytearray, access: Access) -> Any:
    """A register value from little-endian bytes laid out as ``access``."""
    kind = access.kind
    if kind is ValueKind.INT or kind is ValueKind.PTR:
        if isinstance(data, (bytes, bytearray)) or all(type(b) is int for b in data):
            value = int.from_bytes(bytes(cast("list[int]", data)), "little")
            return value & ((1 << access.bits) - 1) if access.bits != access.size * 8 else value
        exprs = [b if isinstance(b, E.Expr) else E.const(b, 8) for b in data]
        result = exprs[0]
        for b in exprs[1:]:
            result = E.concat(b, result)
        if access.bits != access.size * 8:
            result = E.extract(result, 0, access.bits)
        return result
    if kind is ValueKind.FLOAT:
        if isinstance(data, (bytes, bytearray)) or all(type(b) is int for b in data):
            return decode_float(bytes(cast("list[int]", data)), access)
        bits_access = _FLOAT_BITS.get(access.bits)
        if bits_access is None:
            raise SymbolicFloat(f"a {access.bits}-bit floating-point value loaded from memory "
                                f"is symbolic {SOLVED_FLOATS}")
        # a symbolic float is the expression of its IEEE bits: read as an integer's
        return decode(data[:bits_access.size], bits_access)
    return tuple(decode(data[offset:offset + part.size], part) for offset, part in access.parts)


SOLVED_FLOATS = ("(symex solves float and double; x86's 80-bit long double is computed "
                 "concretely only: compile with -mlong-double-64 to make long double a double)")
"""What a message about a symbolic value of another floating-point format adds."""


#: how the IEEE bits of a symbolic float or double are laid out: as an integer of that width
_FLOAT_BITS = {32: Access(ValueKind.INT, 4, 32), 64: Access(ValueKind.INT, 8, 64)}


class SymbolicFloat(Exception):
    """A symbolic value of a floating-point format symex does not solve (x86's 80-bit long
    double) reached memory or a bitcast (the engine ends the path as unsupported)."""


def encode_float(value: Any, access: Access) -> bytes | list[int | E.Expr]:
    """IEEE bytes of a float register's value (x86_fp80 as 10 bytes, padded to the store
    size); a symbolic float's are the bytes of its bits."""
    if type(value) is not float and type(value) is not int:
        bits_access = _FLOAT_BITS.get(access.bits)
        if bits_access is None or value.width != access.bits:
            raise SymbolicFloat(f"a symbolic {access.bits}-bit floating-point value was "
                                f"stored {SOLVED_FLOATS}")
        # a symbolic float's bytes are those of its IEEE bits, stored as an integer's
        return encode(value, bits_access)
    if access.bits == 32:
        return struct.pack("<f", value)
    if access.bits == 64:
        return struct.pack("<d", value)
    if access.bits == 80:
        return _fp80_bytes(float(value)).ljust(access.size, b"\0")
    raise SymbolicFloat(f"{access.bits}-bit floating point is not supported")


def decode_float(data: bytes, access: Access) -> float:
    """A Python float from IEEE bytes."""
    if access.bits == 32:
        return struct.unpack("<f", data[:4])[0]
    if access.bits == 64:
        return struct.unpack("<d", data[:8])[0]
    if access.bits == 80:
        return _fp80_value(data[:10])
    raise SymbolicFloat(f"{access.bits}-bit floating point is not supported")


def _fp80_bytes(value: float) -> bytes:
    bits = struct.unpack("<Q", struct.pack("<d", value))[0]
    sign = bits >> 63
    exponent = (bits >> 52) & 0x7FF
    fraction = bits & ((1 << 52) - 1)
    if exponent == 0 and fraction == 0:
        e80, mantissa = 0, 0
    elif exponent == 0x7FF:
        e80, mantissa = 0x7FFF, (1 << 63) | (fraction << 11)
    elif exponent == 0:  # subnormal double: normalise
        shift = 52 - fraction.bit_length() + 1
        mantissa = (fraction << (11 + shift))
        e80 = 1 - 1023 + 16383 - shift
    else:
        e80 = exponent - 1023 + 16383
        mantissa = (1 << 63) | (fraction << 11)
    return mantissa.to_bytes(8, "little") + ((sign << 15) | e80).to_bytes(2, "little")


def _fp80_value(data: bytes) -> float:
    mantissa = int.from_bytes(data[:8], "little")
    top = int.from_bytes(data[8:10], "little")
    sign = -1.0 if top >> 15 else 1.0
    exponent = top & 0x7FFF
    if exponent == 0x7FFF:
        return sign * float("inf") if (mantissa << 1) & ((1 << 64) - 1) == 0 else float("nan")
    if mantissa == 0:
        return sign * 0.0
    try:
        return sign * mantissa * 2.0 ** (exponent - 16383 - 63)
    except OverflowError:
        return sign * float("inf")
