"""LLVM IR types recovered from textual IR, and the data layout that sizes them.

llvmlite exposes types only as strings, so symex re-parses the text (``ptr``, ``[4 x i32]``,
``%struct.S``, ``i32 (ptr, ...)``) into small hashable values and computes sizes, alignments and
struct field offsets from the module's ``target datalayout`` string exactly as LLVM does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import attrs

from symex.errors import LoadError

__all__ = [
    "ArrayType",
    "DataLayout",
    "FloatType",
    "FunctionType",
    "IRType",
    "IntType",
    "LabelType",
    "MetadataType",
    "PointerType",
    "StructType",
    "TokenType",
    "TypeParser",
    "VectorType",
    "VoidType",
]


@attrs.frozen
class IntType:
    """An integer type ``iN``."""

    bits: int

    def __str__(self) -> str:
        return f"i{self.bits}"


#: Bit widths of LLVM's floating-point types (the memory width, before ABI padding).
FLOAT_BITS: dict[str, int] = {
    "half": 16,
    "bfloat": 16,
    "float": 32,
    "double": 64,
    "x86_fp80": 80,
    "fp128": 128,
    "ppc_fp128": 128,
}


@attrs.frozen
class FloatType:
    """A floating-point type; ``name`` is its LLVM spelling (``float``, ``double``, ``x86_fp80``...)."""

    name: str

    def __str__(self) -> str:
        return self.name


@attrs.frozen
class PointerType:
    """An opaque pointer ``ptr`` (``ptr addrspace(N)`` when ``addrspace`` is not 0)."""

    addrspace: int = 0

    def __str__(self) -> str:
        return "ptr" if self.addrspace == 0 else f"ptr addrspace({self.addrspace})"


@attrs.frozen
class VoidType:
    """The ``void`` type (function results only)."""

    def __str__(self) -> str:
        return "void"


@attrs.frozen
class LabelType:
    """The ``label`` type of basic-block operands."""

    def __str__(self) -> str:
        return "label"


@attrs.frozen
class MetadataType:
    """The ``metadata`` type of intrinsic metadata arguments."""

    def __str__(self) -> str:
        return "metadata"


@attrs.frozen
class TokenType:
    """The ``token`` type (exception handling, coroutines)."""

    def __str__(self) -> str:
        return "token"


@attrs.frozen(eq=False)
class ArrayType:
    """An array ``[count x element]``."""

    count: int
    element: IRType

    _hash: int = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        # Hashing eagerly (children exist first, so are already hashed) keeps hash() shallow.
        object.__setattr__(self, "_hash", hash(("ArrayType",) + (self.count, self.element,)))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        # Tuple comparison short-circuits on identical (interned) children.
        return self is other or (
            type(other) is ArrayType
            and self._hash == other._hash
            and (self.count, self.element,) == (other.count, other.element,)
        )

    def __str__(self) -> str:
        return format_type(self)


@attrs.frozen(eq=False)
class VectorType:
    """A fixed-length vector ``<count x element>``."""

    count: int
    element: IRType

    _hash: int = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        # Hashing eagerly (children exist first, so are already hashed) keeps hash() shallow.
        object.__setattr__(self, "_hash", hash(("VectorType",) + (self.count, self.element,)))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        # Tuple comparison short-circuits on identical (interned) children.
        return self is other or (
            type(other) is VectorType
            and self._hash == other._hash
            and (self.count, self.element,) == (other.count, other.element,)
        )

    def __str__(self) -> str:
        return format_type(self)


@attrs.frozen(eq=False)
class StructType:
    """A struct; ``name`` is set for named structs (``struct.S`` for ``%struct.S``).

    ``opaque`` marks ``type opaque`` declarations, whose body (and so size) is unknown;
    an empty literal struct ``{}`` is *not* opaque.
    """

    fields: tuple[IRType, ...]
    packed: bool = False
    name: str | None = None
    opaque: bool = False

    _hash: int = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        # Hashing eagerly (children exist first, so are already hashed) keeps hash() shallow.
        object.__setattr__(self, "_hash", hash(("StructType",) + (self.fields, self.packed, self.name, self.opaque,)))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        # Tuple comparison short-circuits on identical (interned) children.
        return self is other or (
            type(other) is StructType
            and self._hash == other._hash
            and (self.fields, self.packed, self.name, self.opaque)
            == (other.fields, other.packed, other.name, other.opaque)
        )

    def __str__(self) -> str:
        return format_type(self)


@attrs.frozen(eq=False)
class FunctionType:
    """A function type ``ret (params...)``; ``vararg`` for a trailing ``...``."""

    ret: IRType
    params: tuple[IRType, ...]
    vararg: bool

    _hash: int = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        # Hashing eagerly (children exist first, so are already hashed) keeps hash() shallow.
        object.__setattr__(self, "_hash", hash(("FunctionType",) + (self.ret, self.params, self.vararg,)))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        # Tuple comparison short-circuits on identical (interned) children.
        return self is other or (
            type(other) is FunctionType
            and self._hash == other._hash
            and (self.ret, self.params, self.vararg,) == (other.ret, other.params, other.vararg,)
        )

    def __str__(self) -> str:
        return format_type(self)


#: Any LLVM IR type symex understands.
IRType = (
    IntType
    | FloatType
    | PointerType
    | VoidType
    | LabelType
    | MetadataType
    | TokenType
    | ArrayType
    | VectorType
    | StructType
    | FunctionType
)

def format_type(t: IRType) -> str:
    """LLVM's spelling of ``t`` (named structs print as ``%name``)."""
    out: list[str] = []
    # Items are types still to print or literal text; pushed in reverse so they pop in order.
    stack: list[IRType | str] = [t]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, ArrayType):
            stack += ["]", item.element, f"[{item.count} x "]
        elif isinstance(item, VectorType):
            stack += [">", item.element, f"<{item.count} x "]
        elif isinstance(item, StructType):
            if item.name is not None:
                out.append("%" + _quote_name(item.name))
            elif not item.fields:
                out.append("<{}>" if item.packed else "{}")
            else:
                stack.append(" }>" if item.packed else " }")
                for i in range(len(item.fields) - 1, -1, -1):
                    stack.append(item.fields[i])
                    if i:
                        stack.append(", ")
                stack.append("<{ " if item.packed else "{ ")
        elif isinstance(item, FunctionType):
            stack.append(")")
            if item.vararg:
                stack.append(", ..." if item.params else "...")
            for i in range(len(item.params) - 1, -1, -1):
                stack.append(item.params[i])
                if i:
                    stack.append(", ")
            stack += [" (", item.ret]
        else:
            out.append(str(item))
    return "".join(out)


_IDENT_RE = re.compile(r"[-a-zA-Z$._][-a-zA-Z$._0-9]*|[0-9]+")
_PLAIN_NAME_RE = re.compile(r"[-a-zA-Z$._][-a-zA-Z$._0-9]*\Z")
_KEYWORD_RE = re.compile(r"[a-z_][a-z0-9_]*")
_INT_RE = re.compile(r"[0-9]+")
_NAMED_TYPE_LINE_RE = re.compile(
    r'^%("(?:[^"\\]|\\.)*"|[-a-zA-Z$._0-9]+)\s*=\s*type\s+(.*?)\s*$', re.MULTILINE
)
_ESCAPE_RE = re.compile(r"\\([0-9A-Fa-f]{2})")

_SIMPLE_TYPES: dict[str, IRType] = {
    "void": VoidType(),
    "label": LabelType(),
    "metadata": MetadataType(),
    "token": TokenType(),
    **{name: FloatType(name) for name in FLOAT_BITS},
}


def _quote_name(name: str) -> str:
    """Spell an LLVM identifier as it appears after ``%`` / ``@``, quoting when needed."""
    if _PLAIN_NAME_RE.match(name) or name.isdigit():
        return name
    escaped = "".join(
        ch if 0x20 <= ord(ch) < 0x7F and ch not in '"\\' else f"\\{ord(ch):02X}" for ch in name
    )
    return f'"{escaped}"'


def unescape_name(quoted: str) -> str:
    """Decode an LLVM identifier: strip quotes and ``\\XX`` escapes (``"a\\20b"`` -> ``a b``)."""
    if len(quoted) >= 2 and quoted[0] == '"' and quoted[-1] == '"':
        raw = _ESCAPE_RE.sub(lambda m: chr(int(m.group(1), 16)), quoted[1:-1])
        return raw.encode("latin-1").decode("utf-8", errors="replace")
    return quoted


def scan_identifier(text: str, pos: int) -> tuple[str, int]:
    """Read an identifier (plain, numbered, or quoted) at ``text[pos:]``; return (name, end)."""
    if pos < len(text) and text[pos] == '"':
        end = pos + 1
        while end < len(text) and text[end] != '"':
            end += 1
        if end >= len(text):
            raise LoadError(f"unterminated quoted name in LLVM IR text: {text[pos:pos + 60]!r}")
        return unescape_name(text[pos : end + 1]), end + 1
    m = _IDENT_RE.match(text, pos)
    if m is None:
        raise LoadError(f"expected a name in LLVM IR text at {text[pos:pos + 60]!r}")
    return m.group(0), m.end()


def skip_spaces(text: str, pos: int) -> int:
    """Index of the first non-whitespace character at or after ``pos``."""
    n = len(text)
    while pos < n and text[pos] in " \t\r\n":
        pos += 1
    return pos


class _Frame:
    """One open type constructor on the parser's explicit stack."""

    __slots__ = ("kind", "count", "items", "packed", "name", "saved_text", "saved_pos", "ret")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.count = 0
        self.items: list[IRType] = []
        self.packed = False
        self.name = ""
        self.saved_text = ""
        self.saved_pos = 0
        self.ret: IRType | None = None


def type_children(t: IRType) -> tuple[IRType, ...]:
    """The types directly inside ``t`` (element of an array/vector, fields of a struct)."""
    if isinstance(t, (ArrayType, VectorType)):
        return (t.element,)
    if isinstance(t, StructType):
        return t.fields
    return ()


class TypeParser:
    """Parses LLVM type syntax, resolving named structs (``%struct.S``) from the module's bodies.

    Parsing uses an explicit stack (no recursion) and caches by text, so it is cheap to call
    on every instruction's type strings.
    """

    __slots__ = ("_named_bodies", "_named_types", "_cache", "_interned")

    def __init__(self, named: Mapping[str, str]) -> None:
        """``named`` maps a struct name without ``%`` (``struct.S``) to its body text
        (``{ i32, ptr }``, ``<{ i8, i16 }>`` or ``opaque``)."""
        self._named_bodies: dict[str, str] = dict(named)
        self._named_types: dict[str, StructType] = {}
        self._cache: dict[str, IRType] = {}
        # Interning makes equal composite types the same object, so equality and hashing of
        # deeply nested types stay shallow (tuple comparison short-circuits on identity).
        self._interned: dict[IRType, IRType] = {}

    def _intern(self, t: IRType) -> IRType:
        return self._interned.setdefault(t, t)

    @classmethod
    def from_module_text(cls, text: str) -> TypeParser:
        """Build a parser knowing every ``%name = type ...`` definition of a module's text."""
        named: dict[str, str] = {}
        for m in _NAMED_TYPE_LINE_RE.finditer(text):
            named[unescape_name(m.group(1))] = m.group(2)
        return cls(named)

    @property
    def named(self) -> Mapping[str, str]:
        """The named struct bodies this parser knows, by name without ``%``."""
        return self._named_bodies

    def named_type(self, name: str) -> StructType:
        """The struct type called ``%name`` (``name`` without ``%``, unquoted)."""
        result, _ = self.parse_prefix("%" + _quote_name(name))
        assert isinstance(result, StructType)
        return result

    def parse(self, text: str) -> IRType:
        """Parse ``text``, which must be exactly one type (surrounding spaces allowed).

        llvmlite's ``str()`` of a named struct type, ``%struct.S = type { ... }``, is accepted
        and means ``%struct.S``."""
        cached = self._cache.get(text)
        if cached is not None:
            return cached
        result, end = self.parse_prefix(text, 0)
        if isinstance(result, StructType) and result.name is not None and text.startswith("=", end):
            # llvmlite prints a named struct TypeRef as its whole definition "%s = type {...}".
            end = len(text)
        if end != len(text):
            raise LoadError(
                f"unexpected text {text[end:end + 40]!r} after type in {text!r}; "
                "symex may not support this LLVM IR construct"
            )
        self._cache[text] = result
        return result

    def parse_prefix(self, text: str, pos: int = 0) -> tuple[IRType, int]:
        """Parse one type starting at ``text[pos:]``; return it and the position after it
        (past any trailing whitespace)."""
        stack: list[_Frame] = []
        in_progress: set[str] = set()
        while True:
            # Phase 1: read the start of a type; either finish a leaf or open a frame.
            pos = skip_spaces(text, pos)
            if pos >= len(text):
                raise LoadError(f"unexpected end of LLVM type text {text!r}")
            c = text[pos]
            result: IRType | None = None
            if c == "[" or (c == "<" and not text.startswith("<{", pos)):
                frame = _Frame("array" if c == "[" else "vector")
                pos = skip_spaces(text, pos + 1)
                if text.startswith("vscale", pos):
                    raise LoadError("scalable vectors (<vscale x ...>) are not supported by symex")
                m = _INT_RE.match(text, pos)
                if m is None:
                    raise LoadError(f"expected element count in LLVM type {text!r}")
                frame.count = int(m.group(0))
                pos = skip_spaces(text, m.end())
                if not text.startswith("x", pos):
                    raise LoadError(f"expected 'x' in LLVM type {text!r}")
                pos += 1
                stack.append(frame)
                continue
            if c == "{" or c == "<":
                frame = _Frame("struct")
                frame.packed = c == "<"
                pos = skip_spaces(text, pos + (2 if frame.packed else 1))
                closer = "}>" if frame.packed else "}"
                if text.startswith(closer, pos):
                    result = StructType((), frame.packed)
                    pos += len(closer)
                else:
                    stack.append(frame)
                    continue
            elif c == "%":
                name, pos = scan_identifier(text, pos + 1)
                known = self._named_types.get(name)
                if known is not None:
                    result = known
                else:
                    body = self._named_bodies.get(name)
                    if body is None:
                        raise LoadError(f"unknown named type %{name} in LLVM IR text")
                    if body.strip() == "opaque":
                        result = StructType((), False, name, True)
                        self._named_types[name] = result
                    else:
                        if name in in_progress:
                            raise LoadError(f"named type %{name} contains itself by value")
                        in_progress.add(name)
                        frame = _Frame("named")
                        frame.name = name
                        frame.saved_text = text
                        frame.saved_pos = pos
                        stack.append(frame)
                        text, pos = body, 0
                        continue
            else:
                m = _KEYWORD_RE.match(text, pos)
                if m is None:
                    raise LoadError(f"cannot parse LLVM type at {text[pos:pos + 40]!r}")
                word = m.group(0)
                pos = m.end()
                if word == "ptr":
                    result = PointerType(0)
                    after = skip_spaces(text, pos)
                    if text.startswith("addrspace(", after):
                        close = text.index(")", after)
                        result = PointerType(int(text[after + 10 : close]))
                        pos = close + 1
                elif word[0] == "i" and word[1:].isdigit():
                    result = IntType(int(word[1:]))
                elif word in _SIMPLE_TYPES:
                    result = _SIMPLE_TYPES[word]
                else:
                    raise LoadError(f"unsupported LLVM type {word!r} in {text!r}")

            # Phase 2: apply postfixes and close frames while the completed type allows it.
            while True:
                pos = skip_spaces(text, pos)
                if pos < len(text) and text[pos] == "*":
                    # Typed pointers from pre-opaque-pointer IR: the pointee is irrelevant.
                    result = PointerType(0)
                    pos += 1
                    continue
                if pos < len(text) and text[pos] == "(":
                    frame = _Frame("function")
                    frame.ret = result
                    pos = skip_spaces(text, pos + 1)
                    if text.startswith(")", pos):
                        result = FunctionType(result, (), False)
                        pos += 1
                        continue
                    if text.startswith("...", pos):
                        pos = skip_spaces(text, pos + 3)
                        if not text.startswith(")", pos):
                            raise LoadError(f"expected ')' after '...' in {text!r}")
                        result = FunctionType(result, (), True)
                        pos += 1
                        continue
                    stack.append(frame)
                    break
                if not stack:
                    return result, pos
                frame = stack[-1]
                kind = frame.kind
                if kind == "array" or kind == "vector":
                    closer = "]" if kind == "array" else ">"
                    if not text.startswith(closer, pos):
                        raise LoadError(f"expected {closer!r} in LLVM type {text!r}")
                    pos += 1
                    stack.pop()
                    if kind == "array":
                        result = self._intern(ArrayType(frame.count, result))
                    else:
                        result = self._intern(VectorType(frame.count, result))
                    continue
                if kind == "struct":
                    frame.items.append(result)
                    if text.startswith(",", pos):
                        pos += 1
                        break
                    closer = "}>" if frame.packed else "}"
                    if not text.startswith(closer, pos):
                        raise LoadError(f"expected {closer!r} in LLVM type {text!r}")
                    pos += len(closer)
                    stack.pop()
                    result = self._intern(StructType(tuple(frame.items), frame.packed))
                    continue
                if kind == "function":
                    frame.items.append(result)
                    if text.startswith(",", pos):
                        pos = skip_spaces(text, pos + 1)
                        if not text.startswith("...", pos):
                            break
                        pos = skip_spaces(text, pos + 3)
                        vararg = True
                    else:
                        vararg = False
                    if not text.startswith(")", pos):
                        raise LoadError(f"expected ')' in LLVM function type {text!r}")
                    pos += 1
                    stack.pop()
                    assert frame.ret is not None
                    result = self._intern(FunctionType(frame.ret, tuple(frame.items), vararg))
                    continue
                # kind == "named": the body text is done; resume the text that referred to it.
                if not isinstance(result, StructType) or pos != len(text):
                    raise LoadError(f"named type %{frame.name} has a malformed body {text!r}")
                stack.pop()
                in_progress.discard(frame.name)
                named = StructType(result.fields, result.packed, frame.name)
                self._named_types[frame.name] = named
                result = named
                text, pos = frame.saved_text, frame.saved_pos


_SPEC_RE = re.compile(r"([a-zA-Z]+)([0-9]*)((?::[0-9]*)*)")


class _Layout:
    """Size facts of one sized type, in bytes (``bits`` is LLVM's type size in bits)."""

    __slots__ = ("bits", "store", "alloc", "align", "offsets")

    def __init__(
        self, bits: int, store: int, alloc: int, align: int, offsets: tuple[int, ...] = ()
    ) -> None:
        self.bits = bits
        self.store = store
        self.alloc = alloc
        self.align = align
        self.offsets = offsets


def _round_up(value: int, align: int) -> int:
    return (value + align - 1) // align * align


def _power_of_two_ceil(value: int) -> int:
    return 1 if value <= 1 else 1 << (value - 1).bit_length()


class DataLayout:
    """Sizes, alignments and struct offsets per an LLVM ``target datalayout`` string.

    Unspecified entries take LLVM's defaults (LangRef "Data Layout"); lookups follow LLVM's
    rules (integers without an exact entry use the next larger one, else the largest).
    """

    __slots__ = (
        "text",
        "little_endian",
        "pointer_size",
        "_pointers",
        "_ints",
        "_floats",
        "_vectors",
        "_aggregate_align",
        "stack_align",
        "_cache",
    )

    def __init__(self, text: str) -> None:
        """Parse a datalayout string such as ``e-m:e-p270:32:32-i64:64-n8:16:32:64-S128``."""
        self.text = text
        self.little_endian = True
        #: bits -> (abi bytes, pref bytes)
        self._ints: dict[int, tuple[int, int]] = {1: (1, 1), 8: (1, 1), 16: (2, 2), 32: (4, 4), 64: (4, 8)}
        self._floats: dict[int, tuple[int, int]] = {16: (2, 2), 32: (4, 4), 64: (8, 8), 128: (16, 16)}
        self._vectors: dict[int, tuple[int, int]] = {64: (8, 8), 128: (16, 16)}
        #: address space -> (size bytes, abi align bytes)
        self._pointers: dict[int, tuple[int, int]] = {0: (8, 8)}
        self._aggregate_align = 1
        #: natural stack alignment in bytes (0 when unspecified)
        self.stack_align = 0
        self._cache: dict[IRType, _Layout] = {}
        for spec in text.split("-"):
            if spec:
                self._apply(spec)
        self.pointer_size: int = self._pointers[0][0]

    def _apply(self, spec: str) -> None:
        if spec == "e":
            self.little_endian = True
            return
        if spec == "E":
            self.little_endian = False
            return
        if spec[0] in "mn" or spec.startswith(("ni", "F", "A", "P", "G")):
            return  # mangling, native widths, program/alloca/globals address spaces: no effect on sizes
        m = _SPEC_RE.fullmatch(spec)
        if m is None:
            raise LoadError(f"cannot parse datalayout component {spec!r}; is the IR from a recent LLVM?")
        kind, num, rest = m.group(1), m.group(2), m.group(3)
        fields = [int(f) if f else 0 for f in rest[1:].split(":")] if rest else []
        if kind == "S":
            self.stack_align = int(num) // 8 if num else 0
            return
        if kind == "p":
            addrspace = int(num) if num else 0
            if not fields:
                raise LoadError(f"pointer datalayout component {spec!r} lacks a size")
            size = fields[0] // 8
            abi = fields[1] // 8 if len(fields) > 1 else size
            self._pointers[addrspace] = (size, max(abi, 1))
            return
        if kind == "a":
            if fields:
                self._aggregate_align = max(fields[0] // 8, 1)
            return
        if kind in ("i", "f", "v"):
            if not num or not fields:
                raise LoadError(f"datalayout component {spec!r} lacks a size or alignment")
            abi = max(fields[0] // 8, 1)
            pref = max(fields[1] // 8, 1) if len(fields) > 1 else abi
            table = {"i": self._ints, "f": self._floats, "v": self._vectors}[kind]
            table[int(num)] = (abi, pref)
            return
        # Unknown components (future LLVM features) do not change the sizes symex needs.

    def _int_align(self, bits: int) -> int:
        exact = self._ints.get(bits)
        if exact is not None:
            return exact[0]
        larger = [b for b in self._ints if b > bits]
        key = min(larger) if larger else max(self._ints)
        return self._ints[key][0]

    def _layout(self, t: IRType) -> _Layout:
        cached = self._cache.get(t)
        if cached is not None:
            return cached
        # Post-order over the type tree with an explicit stack; children are laid out first.
        stack: list[IRType] = [t]
        while stack:
            top = stack[-1]
            if top in self._cache:
                stack.pop()
                continue
            missing = [c for c in type_children(top) if c not in self._cache]
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            self._cache[top] = self._compute(top)
        return self._cache[t]

    def _compute(self, t: IRType) -> _Layout:
        if isinstance(t, IntType):
            store = (t.bits + 7) // 8
            align = self._int_align(t.bits)
            return _Layout(t.bits, store, _round_up(store, align), align)
        if isinstance(t, PointerType):
            size, align = self._pointers.get(t.addrspace, self._pointers[0])
            return _Layout(size * 8, size, _round_up(size, align), align)
        if isinstance(t, FloatType):
            bits = FLOAT_BITS[t.name]
            store = (bits + 7) // 8
            spec = self._floats.get(bits)
            align = spec[0] if spec is not None else _power_of_two_ceil(store)
            return _Layout(bits, store, _round_up(store, align), align)
        if isinstance(t, ArrayType):
            elem = self._cache[t.element]
            alloc = elem.alloc * t.count
            return _Layout(alloc * 8, alloc, alloc, elem.align)
        if isinstance(t, VectorType):
            elem = self._cache[t.element]
            bits = elem.bits * t.count
            store = (bits + 7) // 8
            spec = self._vectors.get(bits)
            align = spec[0] if spec is not None else _power_of_two_ceil(store)
            return _Layout(bits, store, _round_up(store, align), align)
        if isinstance(t, StructType):
            if t.opaque:
                raise ValueError(f"opaque struct %{t.name} has no known size")
            offset = 0
            fields_align = 1
            offsets: list[int] = []
            for field in t.fields:
                fl = self._cache[field]
                field_align = 1 if t.packed else fl.align
                offset = _round_up(offset, field_align)
                offsets.append(offset)
                offset += fl.alloc
                fields_align = max(fields_align, field_align)
            size = _round_up(offset, fields_align)
            # As in LLVM, the datalayout's aggregate alignment raises the ABI alignment (and so the
            # alloc size) of non-packed structs but not their own size.
            align = 1 if t.packed else max(fields_align, self._aggregate_align)
            return _Layout(size * 8, size, _round_up(size, align), align, tuple(offsets))
        raise ValueError(f"type {t} has no size in memory")

    def store_size(self, t: IRType) -> int:
        """Bytes a load/store of ``t`` touches: ``ceil(bits / 8)`` (``i1`` -> 1, ``x86_fp80`` -> 10)."""
        return self._layout(t).store

    def alloc_size(self, t: IRType) -> int:
        """Bytes between consecutive ``t`` in memory: store size rounded up to the ABI alignment
        (what ``alloca``, arrays and ``getelementptr`` use)."""
        return self._layout(t).alloc

    def abi_align(self, t: IRType) -> int:
        """ABI alignment of ``t`` in bytes."""
        return self._layout(t).align

    def field_offsets(self, t: StructType) -> tuple[int, ...]:
        """Byte offset of each field of struct ``t``."""
        return self._layout(t).offsets

    def bit_width(self, t: IRType) -> int:
        """LLVM's size in bits: ``iN`` -> N, ``ptr`` -> pointer bits, ``x86_fp80`` -> 80,
        vectors ``count * element bits``, arrays and structs ``8 * alloc_size``."""
        return self._layout(t).bits
