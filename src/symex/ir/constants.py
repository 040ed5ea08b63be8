"""LLVM constants recovered from textual IR: their values and their parser (evaluation and
memory images: :mod:`symex.ir.constant_evaluation`; globals and aliases:
:mod:`symex.ir.global_definitions`).

llvmlite does not expose global initializers or constant expressions, so symex parses them from
``str(module)`` / ``str(operand)``. Every parser, evaluator and encoder here walks constants with
an explicit stack, so deeply nested constant expressions cannot exhaust Python's recursion limit.
"""

from __future__ import annotations

import math
import re
import struct

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
)

__all__ = [
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
    "GlobalRef",
    "EvaluatedValue",
    "parse_constant",
    "parse_typed_constant",
    "BINARY_OPCODES",
    "CAST_OPCODES",
    "WORD_RE",
    "float_to_fp80",
    "float_to_quad",
    "fp80_to_float",
    "int_mask",
    "parse_error",
    "parse_value",
    "quad_to_float",
    "skip_balanced_parens",
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

CAST_OPCODES = frozenset(
    {"trunc", "zext", "sext", "ptrtoint", "inttoptr", "bitcast", "addrspacecast",
     "fptrunc", "fpext", "fptoui", "fptosi", "uitofp", "sitofp"}
)
BINARY_OPCODES = frozenset(
    {"add", "sub", "mul", "xor", "shl", "and", "or", "lshr", "ashr", "udiv", "sdiv", "urem", "srem"}
)
_EXPR_OPCODES = CAST_OPCODES | BINARY_OPCODES | {
    "getelementptr", "icmp", "fcmp", "select", "extractelement", "insertelement", "shufflevector",
}
_EXPR_FLAGS = frozenset({"inbounds", "nuw", "nsw", "nusw", "exact", "disjoint", "nneg", "samesign"})
WORD_RE = re.compile(r"[a-zA-Z_][a-zA-Z0-9_.]*")
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


def parse_error(text: str, pos: int, what: str) -> LoadError:
    return LoadError(
        f"cannot parse LLVM constant: {what} at {text[pos:pos + 60]!r} (in {text[:120]!r}); "
        "symex may not support this construct"
    )


def int_mask(t: IRType, layout: DataLayout | None = None) -> int:
    if isinstance(t, IntType):
        return (1 << t.bits) - 1
    if isinstance(t, PointerType):
        bits = layout.bit_width(t) if layout is not None else 64
        return (1 << bits) - 1
    raise LoadError(f"integer value given for non-integer type {t}")


def skip_balanced_parens(text: str, pos: int) -> int:
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
    raise parse_error(text, pos, "unbalanced parentheses")


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


def fp80_to_float(bits: int) -> float:
    """The double nearest an x86_fp80 bit pattern (infinite beyond the double's range)."""
    sign = -1.0 if bits >> 79 else 1.0
    exponent = (bits >> 64) & 0x7FFF
    mantissa = bits & ((1 << 64) - 1)
    if exponent == 0x7FFF:
        return sign * math.inf if (mantissa << 1) & ((1 << 64) - 1) == 0 else math.nan
    # The explicit integer bit is part of the mantissa, hence the extra 63. A value beyond
    # the double's range (LDBL_MAX) is infinite, as C's conversion to double makes it
    return sign * _scaled(float(mantissa), (exponent or 1) - 16383 - 63)


def _scaled(value: float, exponent: int) -> float:
    """``value * 2**exponent``, infinite when that is beyond the double's range."""
    try:
        return math.ldexp(value, exponent)
    except OverflowError:
        return math.inf


def quad_to_float(bits: int) -> float:
    """The double nearest an fp128 bit pattern (infinite beyond the double's range)."""
    sign = -1.0 if bits >> 127 else 1.0
    exponent = (bits >> 112) & 0x7FFF
    fraction = bits & ((1 << 112) - 1)
    if exponent == 0x7FFF:
        return sign * math.inf if fraction == 0 else math.nan
    if exponent == 0:
        return sign * math.ldexp(float(fraction), 1 - 16383 - 112)
    return sign * _scaled(float(fraction | (1 << 112)), exponent - 16383 - 112)


def float_to_fp80(value: float) -> int:
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


def float_to_quad(value: float) -> int:
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
        raise parse_error(text, pos, "expected a number")
    word = m.group(0)
    end = m.end()
    if isinstance(t, IntType):
        if word[0] in "su" and word[1:3] == "0x":
            value = int(word[3:], 16)
            if word[0] == "s" and value >> (len(word[3:]) * 4 - 1):
                value -= 1 << (len(word[3:]) * 4)
        else:
            value = int(word)
        return ConstInt(t, value & int_mask(t)), end
    if not isinstance(t, FloatType):
        raise parse_error(text, pos, f"number for non-numeric type {t}")
    body = word.lstrip("+-")
    negative = word.startswith("-")
    raw: int | None = None
    if body.startswith("0x"):
        kind = body[2]
        if kind in "KLMHR":
            digits = int(body[3:], 16)
            if kind == "K":
                raw = digits
                value_f = fp80_to_float(raw)
            elif kind in "LM":
                # LLVM prints the low 64 bits first, then the high 64 bits.
                lo, hi = digits >> 64, digits & ((1 << 64) - 1)
                raw = (hi << 64) | lo
                if kind == "L":
                    value_f = quad_to_float(raw)
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
    raise parse_error(text, pos, f"aggregate value does not fit type {t}")


def _skip_operand_attributes(text: str, pos: int) -> int:
    while True:
        pos = skip_spaces(text, pos)
        m = WORD_RE.match(text, pos)
        if m is None or m.group(0) not in _OPERAND_ATTRIBUTES:
            return pos
        pos = m.end()
        if pos < len(text) and text[pos] == "(":
            pos = skip_balanced_parens(text, pos)
        elif m.group(0) in ("align", "dereferenceable", "dereferenceable_or_null", "alignstack"):
            pos = skip_spaces(text, pos)
            num = re.compile(r"[0-9]+").match(text, pos)
            if num is not None:
                pos = num.end()


def parse_value(text: str, pos: int, want: IRType, types: TypeParser) -> tuple[Constant, int]:
    """Parse the value of a constant of type ``want`` at ``text[pos:]``; return it and the end
    position (after trailing spaces)."""
    stack: list[_Frame] = []
    while True:
        # Phase 1: start a value of type `want`: finish a leaf or open a frame.
        pos = skip_spaces(text, pos)
        if pos >= len(text):
            raise parse_error(text, pos, "unexpected end of text")
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
            raise parse_error(text, pos, "a local value is not a constant")
        elif c.isdigit() or c in "-+" or text.startswith(("inf", "nan"), pos):
            value, pos = _parse_number(text, pos, want)
        else:
            m = WORD_RE.match(text, pos)
            if m is None:
                raise parse_error(text, pos, "unexpected character")
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
                    raise parse_error(text, pos, f"expected @name after {word}")
                name, pos = scan_identifier(text, pos + 1)
                value = GlobalRef(want, name)
            elif word == "blockaddress":
                pos = skip_spaces(text, pos)
                if not text.startswith("(", pos):
                    raise parse_error(text, pos, "expected '(' after blockaddress")
                pos = skip_spaces(text, pos + 1)
                if not text.startswith("@", pos):
                    raise parse_error(text, pos, "expected @function in blockaddress")
                function, pos = scan_identifier(text, pos + 1)
                pos = skip_spaces(text, pos)
                if not text.startswith(",", pos):
                    raise parse_error(text, pos, "expected ',' in blockaddress")
                pos = skip_spaces(text, pos + 1)
                if not text.startswith("%", pos):
                    raise parse_error(text, pos, "expected %block in blockaddress")
                block, pos = scan_identifier(text, pos + 1)
                pos = skip_spaces(text, pos)
                if not text.startswith(")", pos):
                    raise parse_error(text, pos, "expected ')' closing blockaddress")
                pos += 1
                value = BlockAddress(want, function, block)
            elif word == "splat":
                pos = skip_spaces(text, pos)
                if not text.startswith("(", pos):
                    raise parse_error(text, pos, "expected '(' after splat")
                stack.append(_Frame("splat", want))
                want, pos = types.parse_prefix(text, pos + 1)
                continue
            elif word in _EXPR_OPCODES:
                frame = _Frame("expr", want)
                frame.opcode = word
                while True:
                    pos = skip_spaces(text, pos)
                    fm = WORD_RE.match(text, pos)
                    if fm is None:
                        break
                    flag = fm.group(0)
                    if flag in _EXPR_FLAGS:
                        frame.flags.append(flag)
                        pos = fm.end()
                    elif flag == "inrange":
                        end = skip_balanced_parens(text, fm.end())
                        frame.flags.append(text[pos:end])
                        pos = end
                    elif word in ("icmp", "fcmp") and frame.predicate is None:
                        frame.predicate = flag
                        pos = fm.end()
                    else:
                        break
                if not text.startswith("(", pos):
                    raise parse_error(text, pos, f"expected '(' after {word}")
                pos += 1
                if word == "getelementptr":
                    frame.source_type, pos = types.parse_prefix(text, pos)
                    if not text.startswith(",", pos):
                        raise parse_error(text, pos, "expected ',' after getelementptr source type")
                    pos += 1
                stack.append(frame)
                pos = _skip_inrange(text, pos, frame)
                want, pos = types.parse_prefix(text, pos)
                continue
            else:
                raise parse_error(text, m.start(), f"unknown constant keyword {word!r}")

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
                    raise parse_error(text, pos, f"expected ',' or {frame.closer!r}")
                pos += len(frame.closer)
                stack.pop()
                value = ConstAggregate(frame.type, tuple(frame.items))
                continue
            if frame.kind == "splat":
                if not text.startswith(")", pos):
                    raise parse_error(text, pos, "expected ')' closing splat")
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
            if text.startswith("to", pos) and frame.opcode in CAST_OPCODES:
                frame.cast_to, pos = types.parse_prefix(text, pos + 2)
            if not text.startswith(")", pos):
                raise parse_error(text, pos, "expected ',' or ')' in constant expression")
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
                raise parse_error(text, pos, f"cast result {frame.cast_to} differs from type {frame.type}")


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
    return parse_value(text, pos, t, types)


def parse_constant(text: str, type: IRType, types: TypeParser) -> Constant:
    """Parse ``text``, exactly one constant value (no type prefix) of type ``type``."""
    value, end = parse_value(text, 0, type, types)
    if end != len(text):
        raise parse_error(text, end, "unexpected text after the constant")
    return value


# ---------------------------------------------------------------------------------------------
# Evaluation
