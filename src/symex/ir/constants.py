"""LLVM constants recovered from textual IR: parsing, evaluation and memory images.

llvmlite does not expose global initializers or constant expressions, so symex parses them from
``str(module)`` / ``str(operand)``. Every parser, evaluator and encoder here walks constants with
an explicit stack, so deeply nested constant expressions cannot exhaust Python's recursion limit.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable

import attrs

from symex.errors import LoadError
from symex.ir.types import (
    FLOAT_BITS,
    ArrayType,
    DataLayout,
    FloatType,
    IntType,
    IRType,
    PointerType,
    StructType,
    TypeParser,
    VectorType,
    scan_identifier,
    skip_spaces,
    type_children,
)

__all__ = [
    "AliasDef",
    "BlockAddress",
    "ConstAggregate",
    "ConstBytes",
    "ConstExpr",
    "ConstFloat",
    "ConstInt",
    "ConstNull",
    "ConstUndef",
    "ConstZero",
    "Constant",
    "GlobalDef",
    "GlobalRef",
    "EvaluatedValue",
    "encode_constant",
    "evaluate_constant",
    "parse_aliases",
    "parse_constant",
    "parse_globals",
    "parse_typed_constant",
    "to_signed",
]


@attrs.frozen
class ConstInt:
    """An integer constant; ``value`` is unsigned, masked to the type's width (``true`` is 1)."""

    type: IRType
    value: int


@attrs.frozen
class ConstFloat:
    """A floating-point constant.

    ``raw`` holds the exact bit pattern when the text gave one in a type-specific hex form
    (``0xK`` x86_fp80, ``0xL`` fp128, ``0xM`` ppc_fp128, ``0xH`` half, ``0xR`` bfloat), because
    ``value`` (a Python float) cannot represent every such number exactly.
    """

    type: IRType
    value: float
    raw: int | None = None


@attrs.frozen
class ConstNull:
    """The null pointer."""

    type: IRType


@attrs.frozen
class ConstZero:
    """``zeroinitializer`` of any type (also used for the token constant ``none``)."""

    type: IRType


@attrs.frozen
class ConstUndef:
    """``undef`` (``poison=False``) or ``poison`` (``poison=True``)."""

    type: IRType
    poison: bool


@attrs.frozen
class ConstAggregate:
    """A struct, array or vector constant, element by element (``splat`` is expanded)."""

    type: IRType
    elements: tuple[Constant, ...]


@attrs.frozen
class ConstBytes:
    """A byte-array constant ``c"..."``."""

    type: IRType
    data: bytes


@attrs.frozen
class GlobalRef:
    """The address of a global variable or function ``@name`` (``name`` unquoted, no ``@``)."""

    type: IRType
    name: str


@attrs.frozen
class ConstExpr:
    """A constant expression.

    ``opcode`` is the LLVM opcode (``getelementptr``, ``ptrtoint``, ``add``, ``icmp``...);
    ``source_type`` is the GEP source element type; ``predicate`` the ``icmp``/``fcmp``
    predicate; ``flags`` keywords such as ``inbounds``, ``nuw``, ``nsw`` or ``inrange(-8, 8)``.
    For casts, ``type`` is the destination type and ``operands[0].type`` the source type.
    """

    type: IRType
    opcode: str
    operands: tuple[Constant, ...]
    source_type: IRType | None = None
    predicate: str | None = None
    flags: tuple[str, ...] = ()


@attrs.frozen
class BlockAddress:
    """``blockaddress(@function, %block)``; names unquoted, without sigils."""

    type: IRType
    function: str
    block: str


#: Any constant this module can parse.
Constant = (
    ConstInt
    | ConstFloat
    | ConstNull
    | ConstZero
    | ConstUndef
    | ConstAggregate
    | ConstBytes
    | GlobalRef
    | ConstExpr
    | BlockAddress
)

#: What :func:`evaluate_constant` returns: ints, floats, and tuples of those for aggregates.
EvaluatedValue = int | float | tuple["EvaluatedValue", ...]

_CAST_OPCODES = frozenset(
    {"trunc", "zext", "sext", "ptrtoint", "inttoptr", "bitcast", "addrspacecast",
     "fptrunc", "fpext", "fptoui", "fptosi", "uitofp", "sitofp"}
)
_BINARY_OPCODES = frozenset(
    {"add", "sub", "mul", "xor", "shl", "and", "or", "lshr", "ashr", "udiv", "sdiv", "urem", "srem"}
)
_EXPR_OPCODES = _CAST_OPCODES | _BINARY_OPCODES | {
    "getelementptr", "icmp", "fcmp", "select", "extractelement", "insertelement", "shufflevector",
}
_EXPR_FLAGS = frozenset({"inbounds", "nuw", "nsw", "nusw", "exact", "disjoint", "nneg", "samesign"})
_WORD_RE = re.compile(r"[a-zA-Z_][a-zA-Z0-9_.]*")
_NUMBER_RE = re.compile(
    r"[-+]?(?:0x[KLMHR]?[0-9A-Fa-f]+|[su]0x[0-9A-Fa-f]+|(?:[0-9]+\.?[0-9]*(?:[eE][-+]?[0-9]+)?)|inf|nan)"
)
#: Parameter attributes that may sit between an operand's type and its value in instruction text.
_OPERAND_ATTRIBUTES = frozenset(
    {"noundef", "nonnull", "signext", "zeroext", "inreg", "noalias", "nocapture", "readonly",
     "readnone", "writeonly", "returned", "immarg", "nofree", "noinline", "swiftself", "swifterror",
     "dead_on_unwind", "writable", "byval", "byref", "sret", "inalloca", "preallocated",
     "elementtype", "align", "dereferenceable", "dereferenceable_or_null", "captures", "range",
     "nofpclass", "initializes", "alignstack", "allocalign", "allocptr"}
)


class _Frame:
    """One open aggregate, ``splat`` or constant expression on the parser's explicit stack."""

    __slots__ = ("kind", "type", "closer", "items", "opcode", "flags", "predicate",
                 "source_type", "cast_to")

    def __init__(self, kind: str, type_: IRType) -> None:
        self.kind = kind
        self.type = type_
        self.closer = ""
        self.items: list[Constant] = []
        self.opcode = ""
        self.flags: list[str] = []
        self.predicate: str | None = None
        self.source_type: IRType | None = None
        self.cast_to: IRType | None = None


def _error(text: str, pos: int, what: str) -> LoadError:
    return LoadError(
        f"cannot parse LLVM constant: {what} at {text[pos:pos + 60]!r} (in {text[:120]!r}); "
        "symex may not support this construct"
    )


def _int_mask(t: IRType, layout: DataLayout | None = None) -> int:
    if isinstance(t, IntType):
        return (1 << t.bits) - 1
    if isinstance(t, PointerType):
        bits = layout.bit_width(t) if layout is not None else 64
        return (1 << bits) - 1
    raise LoadError(f"integer value given for non-integer type {t}")


def _skip_balanced_parens(text: str, pos: int) -> int:
    """Skip ``( ... )`` starting at ``text[pos] == '('``; return the index after ``)``."""
    depth = 0
    n = len(text)
    while pos < n:
        c = text[pos]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return pos + 1
        elif c == '"':
            pos = text.index('"', pos + 1)
        pos += 1
    raise _error(text, pos, "unbalanced parentheses")


def _parse_c_string(text: str, pos: int) -> tuple[bytes, int]:
    """Decode ``c"..."`` at ``text[pos] == 'c'``; ``\\XX`` is a hex byte and ``\\\\`` a backslash."""
    end = text.index('"', pos + 2)
    body = text[pos + 2 : end]
    out = bytearray()
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            if body.startswith("\\", i + 1):
                out.append(0x5C)
                i += 2
            else:
                out.append(int(body[i + 1 : i + 3], 16))
                i += 3
        else:
            out += ch.encode("utf-8")
            i += 1
    return bytes(out), end + 1


def _fp80_to_float(bits: int) -> float:
    sign = -1.0 if bits >> 79 else 1.0
    exponent = (bits >> 64) & 0x7FFF
    mantissa = bits & ((1 << 64) - 1)
    if exponent == 0x7FFF:
        return sign * math.inf if (mantissa << 1) & ((1 << 64) - 1) == 0 else math.nan
    # The explicit integer bit is part of the mantissa, hence the extra 63.
    return sign * math.ldexp(float(mantissa), (exponent or 1) - 16383 - 63)


def _quad_to_float(bits: int) -> float:
    sign = -1.0 if bits >> 127 else 1.0
    exponent = (bits >> 112) & 0x7FFF
    fraction = bits & ((1 << 112) - 1)
    if exponent == 0x7FFF:
        return sign * math.inf if fraction == 0 else math.nan
    if exponent == 0:
        return sign * math.ldexp(float(fraction), 1 - 16383 - 112)
    return sign * math.ldexp(float(fraction | (1 << 112)), exponent - 16383 - 112)


def _float_to_fp80(value: float) -> int:
    """Exact x86_fp80 bit pattern of a double (every double is representable)."""
    sign = 1 if math.copysign(1.0, value) < 0 else 0
    if math.isnan(value):
        return (sign << 79) | (0x7FFF << 64) | (0xC000000000000000)
    if math.isinf(value):
        return (sign << 79) | (0x7FFF << 64) | (1 << 63)
    if value == 0.0:
        return sign << 79
    mantissa, exponent = math.frexp(abs(value))  # abs(value) = mantissa * 2**exponent, 0.5 <= m < 1
    biased = exponent - 1 + 16383
    return (sign << 79) | (biased << 64) | int(math.ldexp(mantissa, 64))


def _float_to_quad(value: float) -> int:
    """Exact IEEE binary128 bit pattern of a double."""
    sign = 1 if math.copysign(1.0, value) < 0 else 0
    if math.isnan(value):
        return (sign << 127) | (0x7FFF << 112) | (1 << 111)
    if math.isinf(value):
        return (sign << 127) | (0x7FFF << 112)
    if value == 0.0:
        return sign << 127
    mantissa, exponent = math.frexp(abs(value))
    biased = exponent - 1 + 16383
    fraction = int(math.ldexp(mantissa, 113)) & ((1 << 112) - 1)
    return (sign << 127) | (biased << 112) | fraction


def _parse_number(text: str, pos: int, t: IRType) -> tuple[Constant, int]:
    m = _NUMBER_RE.match(text, pos)
    if m is None:
        raise _error(text, pos, "expected a number")
    word = m.group(0)
    end = m.end()
    if isinstance(t, IntType):
        if word[0] in "su" and word[1:3] == "0x":
            value = int(word[3:], 16)
            if word[0] == "s" and value >> (len(word[3:]) * 4 - 1):
                value -= 1 << (len(word[3:]) * 4)
        else:
            value = int(word)
        return ConstInt(t, value & _int_mask(t)), end
    if not isinstance(t, FloatType):
        raise _error(text, pos, f"number for non-numeric type {t}")
    body = word.lstrip("+-")
    negative = word.startswith("-")
    raw: int | None = None
    if body.startswith("0x"):
        kind = body[2]
        if kind in "KLMHR":
            digits = int(body[3:], 16)
            if kind == "K":
                raw = digits
                value_f = _fp80_to_float(raw)
            elif kind in "LM":
                # LLVM prints the low 64 bits first, then the high 64 bits.
                lo, hi = digits >> 64, digits & ((1 << 64) - 1)
                raw = (hi << 64) | lo
                if kind == "L":
                    value_f = _quad_to_float(raw)
                else:
                    value_f = struct.unpack("<d", (raw & ((1 << 64) - 1)).to_bytes(8, "little"))[0]
            elif kind == "H":
                raw = digits
                value_f = struct.unpack("<e", digits.to_bytes(2, "little"))[0]
            else:
                raw = digits
                value_f = struct.unpack("<f", (digits << 16).to_bytes(4, "little"))[0]
        else:
            # float and double constants both print as the 64-bit pattern of the double value.
            value_f = struct.unpack("<d", int(body[2:], 16).to_bytes(8, "little"))[0]
        if negative:
            value_f = -value_f
            if raw is not None:
                raw ^= 1 << (FLOAT_BITS[t.name] - 1)
        return ConstFloat(t, value_f, raw), end
    return ConstFloat(t, float(word)), end


def _element_type(t: IRType, index: int, text: str, pos: int) -> IRType:
    if isinstance(t, (ArrayType, VectorType)):
        return t.element
    if isinstance(t, StructType) and index < len(t.fields):
        return t.fields[index]
    raise _error(text, pos, f"aggregate value does not fit type {t}")


def _skip_operand_attributes(text: str, pos: int) -> int:
    while True:
        pos = skip_spaces(text, pos)
        m = _WORD_RE.match(text, pos)
        if m is None or m.group(0) not in _OPERAND_ATTRIBUTES:
            return pos
        pos = m.end()
        if pos < len(text) and text[pos] == "(":
            pos = _skip_balanced_parens(text, pos)
        elif m.group(0) in ("align", "dereferenceable", "dereferenceable_or_null", "alignstack"):
            pos = skip_spaces(text, pos)
            num = re.compile(r"[0-9]+").match(text, pos)
            if num is not None:
                pos = num.end()


def _parse_value(text: str, pos: int, want: IRType, types: TypeParser) -> tuple[Constant, int]:
    """Parse the value of a constant of type ``want`` at ``text[pos:]``; return it and the end
    position (after trailing spaces)."""
    stack: list[_Frame] = []
    while True:
        # Phase 1: start a value of type `want`: finish a leaf or open a frame.
        pos = skip_spaces(text, pos)
        if pos >= len(text):
            raise _error(text, pos, "unexpected end of text")
        c = text[pos]
        value: Constant | None = None
        if c == "{" or text.startswith("<{", pos) or c == "[" or c == "<":
            packed = text.startswith("<{", pos)
            opener = "<{" if packed else c
            frame = _Frame("aggregate", want)
            frame.closer = {"{": "}", "<{": "}>", "[": "]", "<": ">"}[opener]
            pos = skip_spaces(text, pos + len(opener))
            if text.startswith(frame.closer, pos):
                value = ConstAggregate(want, ())
                pos += len(frame.closer)
            else:
                stack.append(frame)
                want, pos = types.parse_prefix(text, pos)
                continue
        elif c == "c" and text.startswith('c"', pos):
            data, pos = _parse_c_string(text, pos)
            value = ConstBytes(want, data)
        elif c == "@":
            name, pos = scan_identifier(text, pos + 1)
            value = GlobalRef(want, name)
        elif c == "%":
            raise _error(text, pos, "a local value is not a constant")
        elif c.isdigit() or c in "-+" or text.startswith(("inf", "nan"), pos):
            value, pos = _parse_number(text, pos, want)
        else:
            m = _WORD_RE.match(text, pos)
            if m is None:
                raise _error(text, pos, "unexpected character")
            word = m.group(0)
            pos = m.end()
            if word == "true" or word == "false":
                value = ConstInt(want, 1 if word == "true" else 0)
            elif word == "null":
                value = ConstNull(want)
            elif word == "zeroinitializer" or word == "none":
                value = ConstZero(want)
            elif word == "undef" or word == "poison":
                value = ConstUndef(want, word == "poison")
            elif word in ("dso_local_equivalent", "no_cfi"):
                pos = skip_spaces(text, pos)
                if not text.startswith("@", pos):
                    raise _error(text, pos, f"expected @name after {word}")
                name, pos = scan_identifier(text, pos + 1)
                value = GlobalRef(want, name)
            elif word == "blockaddress":
                pos = skip_spaces(text, pos)
                if not text.startswith("(", pos):
                    raise _error(text, pos, "expected '(' after blockaddress")
                pos = skip_spaces(text, pos + 1)
                if not text.startswith("@", pos):
                    raise _error(text, pos, "expected @function in blockaddress")
                function, pos = scan_identifier(text, pos + 1)
                pos = skip_spaces(text, pos)
                if not text.startswith(",", pos):
                    raise _error(text, pos, "expected ',' in blockaddress")
                pos = skip_spaces(text, pos + 1)
                if not text.startswith("%", pos):
                    raise _error(text, pos, "expected %block in blockaddress")
                block, pos = scan_identifier(text, pos + 1)
                pos = skip_spaces(text, pos)
                if not text.startswith(")", pos):
                    raise _error(text, pos, "expected ')' closing blockaddress")
                pos += 1
                value = BlockAddress(want, function, block)
            elif word == "splat":
                pos = skip_spaces(text, pos)
                if not text.startswith("(", pos):
                    raise _error(text, pos, "expected '(' after splat")
                stack.append(_Frame("splat", want))
                want, pos = types.parse_prefix(text, pos + 1)
                continue
            elif word in _EXPR_OPCODES:
                frame = _Frame("expr", want)
                frame.opcode = word
                while True:
                    pos = skip_spaces(text, pos)
                    fm = _WORD_RE.match(text, pos)
                    if fm is None:
                        break
                    flag = fm.group(0)
                    if flag in _EXPR_FLAGS:
                        frame.flags.append(flag)
                        pos = fm.end()
                    elif flag == "inrange":
                        end = _skip_balanced_parens(text, fm.end())
                        frame.flags.append(text[pos:end])
                        pos = end
                    elif word in ("icmp", "fcmp") and frame.predicate is None:
                        frame.predicate = flag
                        pos = fm.end()
                    else:
                        break
                if not text.startswith("(", pos):
                    raise _error(text, pos, f"expected '(' after {word}")
                pos += 1
                if word == "getelementptr":
                    frame.source_type, pos = types.parse_prefix(text, pos)
                    if not text.startswith(",", pos):
                        raise _error(text, pos, "expected ',' after getelementptr source type")
                    pos += 1
                stack.append(frame)
                pos = _skip_inrange(text, pos, frame)
                want, pos = types.parse_prefix(text, pos)
                continue
            else:
                raise _error(text, m.start(), f"unknown constant keyword {word!r}")

        # Phase 2: hand the finished value to the enclosing frames.
        while True:
            pos = skip_spaces(text, pos)
            if not stack:
                return value, pos
            frame = stack[-1]
            frame.items.append(value)
            if frame.kind == "aggregate":
                if text.startswith(",", pos):
                    pos = skip_spaces(text, pos + 1)
                    # Element types come from the text; the aggregate type only checks arity.
                    _element_type(frame.type, len(frame.items), text, pos)
                    want, pos = types.parse_prefix(text, pos)
                    break
                if not text.startswith(frame.closer, pos):
                    raise _error(text, pos, f"expected ',' or {frame.closer!r}")
                pos += len(frame.closer)
                stack.pop()
                value = ConstAggregate(frame.type, tuple(frame.items))
                continue
            if frame.kind == "splat":
                if not text.startswith(")", pos):
                    raise _error(text, pos, "expected ')' closing splat")
                pos += 1
                stack.pop()
                count = frame.type.count if isinstance(frame.type, VectorType) else 1
                value = ConstAggregate(frame.type, (frame.items[0],) * count)
                continue
            # A constant expression operand list.
            if text.startswith(",", pos):
                pos = _skip_inrange(text, pos + 1, frame)
                want, pos = types.parse_prefix(text, pos)
                break
            if text.startswith("to", pos) and frame.opcode in _CAST_OPCODES:
                frame.cast_to, pos = types.parse_prefix(text, pos + 2)
            if not text.startswith(")", pos):
                raise _error(text, pos, "expected ',' or ')' in constant expression")
            pos += 1
            stack.pop()
            value = ConstExpr(
                frame.type,
                frame.opcode,
                tuple(frame.items),
                frame.source_type,
                frame.predicate,
                tuple(frame.flags),
            )
            if frame.cast_to is not None and frame.cast_to != frame.type:
                raise _error(text, pos, f"cast result {frame.cast_to} differs from type {frame.type}")


def _skip_inrange(text: str, pos: int, frame: _Frame) -> int:
    """Old-style GEP indices may carry ``inrange``; keep it as a flag and skip it."""
    pos = skip_spaces(text, pos)
    if frame.opcode == "getelementptr" and text.startswith("inrange", pos):
        frame.flags.append("inrange")
        pos = skip_spaces(text, pos + len("inrange"))
    return pos


def parse_typed_constant(text: str, types: TypeParser, pos: int = 0) -> tuple[Constant, int]:
    """Parse ``TYPE VALUE`` (e.g. ``i32 5``, ``ptr getelementptr (...)``) at ``text[pos:]``;
    return the constant and the position after it (past trailing spaces). Parameter attributes
    between type and value (``i32 noundef 5``) are skipped."""
    t, pos = types.parse_prefix(text, pos)
    pos = _skip_operand_attributes(text, pos)
    return _parse_value(text, pos, t, types)


def parse_constant(text: str, type: IRType, types: TypeParser) -> Constant:
    """Parse ``text``, exactly one constant value (no type prefix) of type ``type``."""
    value, end = _parse_value(text, 0, type, types)
    if end != len(text):
        raise _error(text, end, "unexpected text after the constant")
    return value


# ---------------------------------------------------------------------------------------------
# Evaluation


def to_signed(value: int, bits: int) -> int:
    """An unsigned ``bits``-bit pattern as the two's-complement number it holds."""
    return value - (1 << bits) if value >> (bits - 1) & 1 else value


def _zero_value(t: IRType) -> EvaluatedValue:
    """The evaluated value of ``zeroinitializer`` of type ``t``, built without recursion."""
    results: dict[int, EvaluatedValue] = {}
    stack: list[IRType] = [t]
    while stack:
        top = stack[-1]
        if id(top) in results:
            stack.pop()
            continue
        missing = [c for c in type_children(top) if id(c) not in results]
        if missing:
            stack.extend(missing)
            continue
        stack.pop()
        if isinstance(top, (ArrayType, VectorType)):
            results[id(top)] = (results[id(top.element)],) * top.count
        elif isinstance(top, StructType):
            results[id(top)] = tuple(results[id(f)] for f in top.fields)
        elif isinstance(top, FloatType):
            results[id(top)] = 0.0
        else:
            results[id(top)] = 0
    return results[id(t)]


def _children(c: Constant) -> tuple[Constant, ...]:
    if isinstance(c, ConstAggregate):
        return c.elements
    if isinstance(c, ConstExpr):
        return c.operands
    return ()


def _float_bits(value: float, t: FloatType) -> int:
    if t.name == "double":
        return int.from_bytes(struct.pack("<d", value), "little")
    if t.name == "float":
        return int.from_bytes(struct.pack("<f", value), "little")
    if t.name == "half":
        return int.from_bytes(struct.pack("<e", value), "little")
    if t.name == "bfloat":
        return int.from_bytes(struct.pack("<f", value), "little") >> 16
    if t.name == "x86_fp80":
        return _float_to_fp80(value)
    if t.name == "fp128":
        return _float_to_quad(value)
    return int.from_bytes(struct.pack("<dd", value, 0.0), "little")


def _bits_to_float(bits: int, t: FloatType) -> float:
    if t.name == "double":
        return float(struct.unpack("<d", bits.to_bytes(8, "little"))[0])
    if t.name == "float":
        return float(struct.unpack("<f", bits.to_bytes(4, "little"))[0])
    if t.name == "half":
        return float(struct.unpack("<e", bits.to_bytes(2, "little"))[0])
    if t.name == "bfloat":
        return float(struct.unpack("<f", (bits << 16).to_bytes(4, "little"))[0])
    if t.name == "x86_fp80":
        return _fp80_to_float(bits)
    if t.name == "fp128":
        return _quad_to_float(bits)
    return float(struct.unpack("<d", (bits & ((1 << 64) - 1)).to_bytes(8, "little"))[0])


def _gep_offset(expr: ConstExpr, indices: list[int], layout: DataLayout) -> int:
    assert expr.source_type is not None
    index_types = [op.type for op in expr.operands[1:]]
    signed = [
        to_signed(v, t.bits) if isinstance(t, IntType) else v for v, t in zip(indices, index_types)
    ]
    if not signed:
        return 0
    offset = signed[0] * layout.alloc_size(expr.source_type)
    current = expr.source_type
    for index in signed[1:]:
        if isinstance(current, StructType):
            offset += layout.field_offsets(current)[index]
            current = current.fields[index]
        elif isinstance(current, (ArrayType, VectorType)):
            current = current.element
            offset += index * layout.alloc_size(current)
        else:
            raise LoadError(f"getelementptr indexes into non-aggregate type {current}")
    return offset


def _apply_expr(
    expr: ConstExpr, args: list[EvaluatedValue], layout: DataLayout
) -> EvaluatedValue:
    op = expr.opcode
    t = expr.type
    if op == "getelementptr":
        base = args[0]
        if not isinstance(base, int):
            raise LoadError("vector getelementptr constant expressions are not supported")
        offset = _gep_offset(expr, [a for a in args[1:] if isinstance(a, int)], layout)
        return (base + offset) & _int_mask(t, layout)
    if op == "select":
        return args[1] if args[0] else args[2]
    if op in _CAST_OPCODES:
        src_t = expr.operands[0].type
        v = args[0]
        if op in ("trunc", "ptrtoint", "inttoptr", "zext", "addrspacecast") and isinstance(v, int):
            return v & _int_mask(t, layout)
        if op == "sext" and isinstance(v, int) and isinstance(src_t, IntType):
            return to_signed(v, src_t.bits) & _int_mask(t, layout)
        if op == "bitcast":
            if isinstance(t, FloatType) and isinstance(v, int):
                return _bits_to_float(v, t)
            if isinstance(src_t, FloatType) and isinstance(v, float):
                return _float_bits(v, src_t) & _int_mask(t, layout)
            return v
        if op in ("fptrunc", "fpext") and isinstance(v, float):
            return v
        if op in ("fptoui", "fptosi") and isinstance(v, float):
            return int(v) & _int_mask(t, layout)
        if op == "uitofp" and isinstance(v, int):
            return float(v)
        if op == "sitofp" and isinstance(v, int) and isinstance(src_t, IntType):
            return float(to_signed(v, src_t.bits))
        raise LoadError(f"unsupported constant cast {op} from {src_t} to {t}")
    if op == "icmp":
        a, b = args
        operand_t = expr.operands[0].type
        if not isinstance(a, int) or not isinstance(b, int):
            raise LoadError("vector icmp constant expressions are not supported")
        bits = operand_t.bits if isinstance(operand_t, IntType) else layout.bit_width(operand_t)
        sa, sb = to_signed(a, bits), to_signed(b, bits)
        result = {
            "eq": a == b, "ne": a != b, "ugt": a > b, "uge": a >= b, "ult": a < b, "ule": a <= b,
            "sgt": sa > sb, "sge": sa >= sb, "slt": sa < sb, "sle": sa <= sb,
        }.get(expr.predicate or "")
        if result is None:
            raise LoadError(f"unknown icmp predicate {expr.predicate!r}")
        return int(result)
    if op in _BINARY_OPCODES:
        a, b = args
        if not isinstance(a, int) or not isinstance(b, int) or not isinstance(t, IntType):
            raise LoadError(f"constant expression {op} on non-integer operands is not supported")
        mask = (1 << t.bits) - 1
        if op == "add":
            return (a + b) & mask
        if op == "sub":
            return (a - b) & mask
        if op == "mul":
            return (a * b) & mask
        if op == "xor":
            return a ^ b
        if op == "and":
            return a & b
        if op == "or":
            return a | b
        if op == "shl":
            return (a << b) & mask if b < t.bits else 0
        if op == "lshr":
            return a >> b if b < t.bits else 0
        if op == "ashr":
            return (to_signed(a, t.bits) >> min(b, t.bits - 1)) & mask
        if b == 0:
            raise LoadError(f"constant expression {op} divides by zero")
        if op == "udiv":
            return a // b
        if op == "urem":
            return a % b
        sa, sb = to_signed(a, t.bits), to_signed(b, t.bits)
        quotient = abs(sa) // abs(sb) * (1 if (sa < 0) == (sb < 0) else -1)
        if op == "sdiv":
            return quotient & mask
        return (sa - quotient * sb) & mask
    raise LoadError(f"constant expression {op} is not supported by symex")


def evaluate_constant(
    c: Constant, layout: DataLayout, resolve: Callable[[str], int]
) -> EvaluatedValue:
    """Value of a constant: integers and pointers as unsigned ints masked to their width,
    floats as Python floats, aggregates as tuples of element values; ``undef``/``poison``
    evaluate as zero. ``resolve(name)`` gives the address of global ``@name``; for a
    ``blockaddress`` it is called with the text ``blockaddress(@f, %bb)``."""
    results: dict[int, EvaluatedValue] = {}
    stack: list[Constant] = [c]
    while stack:
        top = stack[-1]
        key = id(top)
        if key in results:
            stack.pop()
            continue
        kids = _children(top)
        missing = [k for k in kids if id(k) not in results]
        if missing:
            stack.extend(missing)
            continue
        stack.pop()
        if isinstance(top, (ConstInt, ConstFloat)):
            results[key] = top.value
        elif isinstance(top, ConstNull):
            results[key] = 0
        elif isinstance(top, (ConstZero, ConstUndef)):
            results[key] = _zero_value(top.type)
        elif isinstance(top, ConstBytes):
            results[key] = tuple(top.data)
        elif isinstance(top, GlobalRef):
            results[key] = resolve(top.name) & _int_mask(top.type, layout)
        elif isinstance(top, BlockAddress):
            results[key] = resolve(f"blockaddress(@{top.function}, %{top.block})")
        elif isinstance(top, ConstAggregate):
            results[key] = tuple(results[id(e)] for e in top.elements)
        else:
            results[key] = _apply_expr(top, [results[id(o)] for o in top.operands], layout)
    return results[id(c)]


def encode_constant(
    c: Constant, layout: DataLayout, types: TypeParser, resolve: Callable[[str], int]
) -> bytes:
    """Little-endian memory image of ``c``: ``alloc_size(c.type)`` bytes, with struct padding,
    ``undef`` and ``poison`` as zero bytes and global addresses from ``resolve(name)``."""
    del types  # every constant already carries its resolved type
    image = bytearray(layout.alloc_size(c.type))
    stack: list[tuple[Constant, int]] = [(c, 0)]
    while stack:
        item, offset = stack.pop()
        t = item.type
        if isinstance(item, (ConstZero, ConstUndef)):
            continue
        if isinstance(item, ConstBytes):
            image[offset : offset + len(item.data)] = item.data
            continue
        if isinstance(item, ConstAggregate):
            if isinstance(t, StructType):
                offsets = layout.field_offsets(t)
                stack.extend((e, offset + o) for e, o in zip(item.elements, offsets))
            elif isinstance(t, ArrayType):
                stride = layout.alloc_size(t.element)
                stack.extend((e, offset + i * stride) for i, e in enumerate(item.elements))
            elif isinstance(t, VectorType):
                bits = layout.bit_width(t.element)
                if bits % 8 == 0:
                    stack.extend((e, offset + i * bits // 8) for i, e in enumerate(item.elements))
                else:
                    # Sub-byte vector elements (<8 x i1>) are bit-packed, element 0 lowest.
                    packed = 0
                    for i, e in enumerate(item.elements):
                        v = evaluate_constant(e, layout, resolve)
                        assert isinstance(v, int)
                        packed |= (v & ((1 << bits) - 1)) << (i * bits)
                    size = layout.store_size(t)
                    image[offset : offset + size] = packed.to_bytes(size, "little")
            else:
                raise LoadError(f"aggregate constant of non-aggregate type {t}")
            continue
        size = layout.store_size(t)
        if isinstance(item, ConstFloat) and isinstance(t, FloatType):
            bits = item.raw if item.raw is not None else _float_bits(item.value, t)
        else:
            value = evaluate_constant(item, layout, resolve)
            if isinstance(value, float) and isinstance(t, FloatType):
                bits = _float_bits(value, t)
            elif isinstance(value, int):
                bits = value
            else:
                raise LoadError(f"cannot store constant expression of type {t} in memory")
        image[offset : offset + size] = (bits & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
    return bytes(image)


# ---------------------------------------------------------------------------------------------
# Module-level definitions


@attrs.frozen
class GlobalDef:
    """One global variable definition or declaration of a module."""

    name: str
    type: IRType
    initializer: Constant | None
    is_constant: bool
    linkage: str
    align: int | None
    #: a declaration without initializer (``external global``)
    external: bool
    thread_local: bool = False
    section: str | None = None


@attrs.frozen
class AliasDef:
    """``@name = alias TYPE, ptr TARGET``."""

    name: str
    target: Constant


_LINKAGES = frozenset(
    {"private", "internal", "available_externally", "linkonce", "weak", "common", "appending",
     "extern_weak", "linkonce_odr", "weak_odr", "external"}
)
_GLOBAL_ATTRIBUTE_WORDS = _LINKAGES | {
    "dso_local", "dso_preemptable", "default", "hidden", "protected", "dllimport", "dllexport",
    "unnamed_addr", "local_unnamed_addr", "externally_initialized", "thread_local", "addrspace",
}
_DEFINITION_LINE_RE = re.compile(r'^@("(?:[^"\\]|\\.)*"|[-a-zA-Z$._0-9]+)\s*=\s*', re.MULTILINE)
_ALIGN_RE = re.compile(r",\s*align\s+([0-9]+)")
_SECTION_RE = re.compile(r',\s*section\s+"([^"]*)"')


def _definition_head(text: str, pos: int) -> tuple[str, str, bool, int]:
    """Read linkage/visibility/... words up to the defining keyword.

    Returns (keyword, linkage, thread_local, position after the keyword)."""
    linkage = "external"
    thread_local = False
    while True:
        pos = skip_spaces(text, pos)
        m = _WORD_RE.match(text, pos)
        if m is None:
            raise _error(text, pos, "expected a global definition keyword")
        word = m.group(0)
        pos = m.end()
        if word in ("global", "constant", "alias", "ifunc"):
            return word, linkage, thread_local, pos
        if word not in _GLOBAL_ATTRIBUTE_WORDS:
            raise _error(text, m.start(), f"unexpected word {word!r} in global definition")
        if word in _LINKAGES:
            linkage = word
        if word == "thread_local":
            thread_local = True
        if text.startswith("(", pos):
            pos = _skip_balanced_parens(text, pos)


def _definition_lines(module_text: str) -> list[tuple[str, str, int]]:
    """(name, line, offset of the text after ``=``) of each ``@name = ...`` line."""
    out = []
    for m in _DEFINITION_LINE_RE.finditer(module_text):
        line_end = module_text.find("\n", m.end())
        if line_end < 0:
            line_end = len(module_text)
        line = module_text[m.start() : line_end]
        name, _ = scan_identifier(module_text, m.start() + 1)
        out.append((name, line, m.end() - m.start()))
    return out


def parse_globals(module_text: str, types: TypeParser) -> list[GlobalDef]:
    """Every global variable (``@x = ... global|constant ...``) of a module's text, in order."""
    out: list[GlobalDef] = []
    for name, line, pos in _definition_lines(module_text):
        keyword, linkage, thread_local, pos = _definition_head(line, pos)
        if keyword not in ("global", "constant"):
            continue
        value_type, pos = types.parse_prefix(line, pos)
        initializer: Constant | None = None
        if pos < len(line) and not line.startswith(",", pos):
            initializer, pos = _parse_value(line, pos, value_type, types)
        tail = line[pos:]
        align = _ALIGN_RE.search(tail)
        section = _SECTION_RE.search(tail)
        out.append(
            GlobalDef(
                name=name,
                type=value_type,
                initializer=initializer,
                is_constant=keyword == "constant",
                linkage=linkage,
                align=int(align.group(1)) if align else None,
                external=initializer is None,
                thread_local=thread_local,
                section=section.group(1) if section else None,
            )
        )
    return out


def parse_aliases(module_text: str, types: TypeParser) -> list[AliasDef]:
    """Every ``@a = [linkage...] alias TYPE, ptr TARGET`` of a module's text, in order."""
    out: list[AliasDef] = []
    for name, line, pos in _definition_lines(module_text):
        keyword, _, _, pos = _definition_head(line, pos)
        if keyword != "alias":
            continue
        _, pos = types.parse_prefix(line, pos)
        if not line.startswith(",", pos):
            raise _error(line, pos, "expected ',' after alias value type")
        target, _ = parse_typed_constant(line, types, pos + 1)
        out.append(AliasDef(name, target))
    return out
