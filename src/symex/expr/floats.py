"""IEEE-754 binary32 and binary64 arithmetic on bit patterns, as x86-64 hardware computes it.

A floating-point value in an expression is the unsigned integer of its IEEE bits (a 32- or
64-bit vector: the bytes of a ``float`` or ``double`` in memory). Every operation here takes
and gives such bit patterns, rounds to nearest, ties to even (C's default), and follows what
an x86-64 processor's SSE instructions produce, so that a value computed here is the value a
native run computes, bit for bit:

- a NaN result of an operation with a NaN operand is the first NaN operand (the left one
  when both are), made quiet; an invalid operation on numbers (``inf - inf``, ``0 * inf``,
  ``0 / 0``, the square root of a negative number, ``fmod(inf, y)``, ``fmod(x, 0)``) gives the
  *default NaN*, which has its sign bit set (``0xFFC00000``, ``0xFFF8000000000000``);
- signed zeros as IEEE-754 says (``-0 + -0`` is ``-0``, ``x - x`` is ``+0``);
- conversion to an integer truncates; a NaN or out-of-range value gives the *integer
  indefinite*, only the sign bit set (``cvttss2si``); to an unsigned integer, what clang's
  code for ``fptoui`` computes (through a signed conversion of ``x`` or ``x - 2**(w-1)``);
- ``minnum``/``maxnum`` (C's ``fmin``/``fmax``) return the number when one operand is a quiet
  NaN, and of two equal numbers (``-0`` and ``+0``) the second, as glibc's code does.

The arithmetic is exact: values are read as fractions (:class:`fractions.Fraction`) and the
exact result rounded once, so neither Python's double arithmetic nor double rounding can
differ from the hardware. The same functions back the expression layer's constant folding
and the evaluator that checks models (:mod:`symex.expr.evaluate`), which must agree with the
solvers' floating-point theory on everything but NaN payloads (the theory has one NaN; the
expressions built for a solver pick the payload the rules above give).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import attrs

__all__ = ["BINARY32", "BINARY64", "FORMATS", "Format", "RoundingKind", "add", "compare",
           "convert", "div", "fma", "from_float", "from_integer", "from_signed", "from_unsigned",
           "is_nan", "to_fraction",
           "maxnum", "minnum", "mul", "rem", "round_integral", "sqrt", "sub", "to_float",
           "to_signed", "to_unsigned"]


@attrs.frozen
class Format:
    """An IEEE-754 binary format: total bits, exponent bits, significand bits (with the
    hidden one)."""

    width: int
    exponent_bits: int
    precision: int

    @property
    def bias(self) -> int:
        """The exponent bias."""
        return (1 << (self.exponent_bits - 1)) - 1

    @property
    def sign_bit(self) -> int:
        """The sign bit's mask."""
        return 1 << (self.width - 1)

    @property
    def exponent_mask(self) -> int:
        """The exponent field's mask (in place)."""
        return ((1 << self.exponent_bits) - 1) << (self.precision - 1)

    @property
    def fraction_mask(self) -> int:
        """The fraction field's mask."""
        return (1 << (self.precision - 1)) - 1

    @property
    def quiet_bit(self) -> int:
        """The fraction's top bit: set in a quiet NaN."""
        return 1 << (self.precision - 2)

    @property
    def infinity(self) -> int:
        """Positive infinity's bits."""
        return self.exponent_mask

    @property
    def default_nan(self) -> int:
        """The NaN an invalid operation gives on x86-64: sign set, quiet, payload zero."""
        return self.sign_bit | self.exponent_mask | self.quiet_bit

    @property
    def min_exponent(self) -> int:
        """The exponent of the least normal number (``1 - bias``)."""
        return 1 - self.bias


BINARY32 = Format(32, 8, 24)
BINARY64 = Format(64, 11, 53)
FORMATS = {32: BINARY32, 64: BINARY64}
"""The formats by width (C's ``float`` and ``double``)."""


def is_nan(f: Format, bits: int) -> bool:
    """Whether ``bits`` is a NaN."""
    return bits & f.exponent_mask == f.exponent_mask and bits & f.fraction_mask != 0


def _is_inf(f: Format, bits: int) -> bool:
    return bits & ~f.sign_bit == f.infinity


def _negative(f: Format, bits: int) -> bool:
    return bits & f.sign_bit != 0


def _quiet(f: Format, bits: int) -> int:
    return bits | f.quiet_bit


def _value(f: Format, bits: int) -> Fraction:
    """The exact value of finite ``bits``."""
    exponent = (bits & f.exponent_mask) >> (f.precision - 1)
    fraction = bits & f.fraction_mask
    if exponent == 0:
        magnitude = Fraction(fraction) * Fraction(2) ** (f.min_exponent - (f.precision - 1))
    else:
        magnitude = (Fraction(fraction | (1 << (f.precision - 1)))
                     * Fraction(2) ** (exponent - f.bias - (f.precision - 1)))
    return -magnitude if _negative(f, bits) else magnitude


def _round(f: Format, value: Fraction, negative_zero: bool = False) -> int:
    """``value`` rounded to nearest, ties to even, as bits (overflow gives infinity; a zero
    result has the sign ``negative_zero`` asks for)."""
    if value == 0:
        return f.sign_bit if negative_zero else 0
    sign = f.sign_bit if value < 0 else 0
    magnitude = -value if value < 0 else value
    # the exponent e with 2**e <= magnitude < 2**(e+1)
    exponent = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    if Fraction(2) ** exponent > magnitude:
        exponent -= 1
    elif Fraction(2) ** (exponent + 1) <= magnitude:
        exponent += 1
    exponent = max(exponent, f.min_exponent)  # subnormals: the least exponent
    scale = Fraction(2) ** (f.precision - 1 - exponent)
    scaled = magnitude * scale  # the significand, an integer once rounded
    whole = scaled.numerator // scaled.denominator
    rest = scaled - whole
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and whole & 1):
        whole += 1
    if whole >> f.precision:  # rounding carried into the next binade
        whole >>= 1
        exponent += 1
    if exponent > f.bias:
        return sign | f.infinity
    if whole >> (f.precision - 1):  # normal
        biased = exponent + f.bias
        return sign | (biased << (f.precision - 1)) | (whole & f.fraction_mask)
    return sign | whole  # subnormal (or the least normal, reached by rounding: carried above)


def _nan_of(f: Format, *operands: int) -> int | None:
    """The first NaN operand, quiet, or None."""
    for bits in operands:
        if is_nan(f, bits):
            return _quiet(f, bits)
    return None


def add(f: Format, a: int, b: int) -> int:
    """``a + b``."""
    nan = _nan_of(f, a, b)
    if nan is not None:
        return nan
    if _is_inf(f, a) or _is_inf(f, b):
        if _is_inf(f, a) and _is_inf(f, b) and _negative(f, a) != _negative(f, b):
            return f.default_nan
        return a if _is_inf(f, a) else b
    total = _value(f, a) + _value(f, b)
    # an exact zero sum is -0 only when both operands are -0
    return _round(f, total, negative_zero=_negative(f, a) and _negative(f, b))


def sub(f: Format, a: int, b: int) -> int:
    """``a - b``."""
    nan = _nan_of(f, a, b)
    if nan is not None:
        return nan
    return add(f, a, b ^ f.sign_bit)


def mul(f: Format, a: int, b: int) -> int:
    """``a * b``."""
    nan = _nan_of(f, a, b)
    if nan is not None:
        return nan
    sign = _negative(f, a) != _negative(f, b)
    if _is_inf(f, a) or _is_inf(f, b):
        other = b if _is_inf(f, a) else a
        if other & ~f.sign_bit == 0:
            return f.default_nan  # 0 * inf
        return (f.sign_bit if sign else 0) | f.infinity
    return _round(f, _value(f, a) * _value(f, b), negative_zero=sign)


def div(f: Format, a: int, b: int) -> int:
    """``a / b``."""
    nan = _nan_of(f, a, b)
    if nan is not None:
        return nan
    sign = f.sign_bit if _negative(f, a) != _negative(f, b) else 0
    a_inf, b_inf = _is_inf(f, a), _is_inf(f, b)
    a_zero, b_zero = a & ~f.sign_bit == 0, b & ~f.sign_bit == 0
    if (a_inf and b_inf) or (a_zero and b_zero):
        return f.default_nan
    if a_inf or b_zero:
        return sign | f.infinity
    if b_inf:
        return sign
    return _round(f, _value(f, a) / _value(f, b), negative_zero=bool(sign))


def _isqrt_fraction(value: Fraction, bits: int) -> tuple[int, bool]:
    """The integer part of ``sqrt(value * 4**bits)`` and whether it is inexact."""
    scaled = value * (Fraction(4) ** bits)
    whole = scaled.numerator // scaled.denominator
    root = math.isqrt(whole)
    exact = root * root == whole and scaled.denominator == 1
    return root, not exact


def sqrt(f: Format, a: int) -> int:
    """The square root of ``a`` (``sqrt(-0) = -0``)."""
    nan = _nan_of(f, a)
    if nan is not None:
        return nan
    if a & ~f.sign_bit == 0:
        return a
    if _negative(f, a):
        return f.default_nan
    if _is_inf(f, a):
        return a
    value = _value(f, a)
    # enough bits that rounding the truncated root (with a sticky bit) is exact
    extra = f.precision + 2 - (value.numerator.bit_length() - value.denominator.bit_length()) // 2
    extra = max(extra, 0) + f.precision + 4
    root, inexact = _isqrt_fraction(value, extra)
    approx = Fraction(2 * root + (1 if inexact else 0), 2) / (Fraction(2) ** extra)
    return _round(f, approx)


def fma(f: Format, a: int, b: int, c: int) -> int:
    """``a * b + c``, rounded once. Of NaN operands, the first of ``b``, ``a``, ``c`` (glibc's
    ``fma`` is one ``vfmadd213`` instruction, which takes its NaN in that order; on a processor
    without FMA its software fallback takes ``a`` before ``b``)."""
    nan = _nan_of(f, b, a, c)
    if nan is not None:
        return nan
    product_inf = _is_inf(f, a) or _is_inf(f, b)
    if product_inf:
        other = b if _is_inf(f, a) else a
        if other & ~f.sign_bit == 0:
            return f.default_nan
        product_sign = _negative(f, a) != _negative(f, b)
        if _is_inf(f, c) and _negative(f, c) != product_sign:
            return f.default_nan
        return (f.sign_bit if product_sign else 0) | f.infinity
    if _is_inf(f, c):
        return c
    product = _value(f, a) * _value(f, b)
    addend = _value(f, c)
    # an exact zero is -0 only when the product and the addend are zeros of that sign
    product_negative = _negative(f, a) != _negative(f, b)
    zero_sign = product == 0 and addend == 0 and product_negative and _negative(f, c)
    return _round(f, product + addend, negative_zero=zero_sign)


def rem(f: Format, a: int, b: int) -> int:
    """C's ``fmod(a, b)`` (LLVM's ``frem``): ``a - b * trunc(a / b)``, exact."""
    nan = _nan_of(f, a, b)
    if nan is not None:
        return nan
    if _is_inf(f, a) or b & ~f.sign_bit == 0:
        return f.default_nan
    if _is_inf(f, b) or a & ~f.sign_bit == 0:
        return a
    x, y = _value(f, a), abs(_value(f, b))
    quotient = abs(x) // y
    result = abs(x) - quotient * y
    return _round(f, -result if x < 0 else result, negative_zero=_negative(f, a))


class RoundingKind:
    """How :func:`round_integral` rounds (LLVM's intrinsics of those names)."""

    FLOOR = 0
    CEIL = 1
    TRUNC = 2
    RINT = 3
    """To nearest, ties to even (``rint``, ``nearbyint``, ``roundeven``)."""
    ROUND = 4
    """To nearest, ties away from zero (``round``)."""


def round_integral(f: Format, a: int, kind: int) -> int:
    """``a`` rounded to an integral value as ``kind`` says (the sign of a zero result kept)."""
    nan = _nan_of(f, a)
    if nan is not None:
        return nan
    if _is_inf(f, a) or a & ~f.sign_bit == 0:
        return a
    value = _value(f, a)
    floor = value.numerator // value.denominator
    rest = value - floor
    if rest == 0:
        return a
    if kind == RoundingKind.FLOOR:
        whole = floor
    elif kind == RoundingKind.CEIL:
        whole = floor + 1
    elif kind == RoundingKind.TRUNC:
        whole = floor if value > 0 else floor + 1
    elif kind == RoundingKind.RINT:
        whole = floor + 1 if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and floor & 1) \
            else floor
    else:
        if value > 0:
            whole = floor + 1 if rest >= Fraction(1, 2) else floor
        else:
            whole = floor if rest <= Fraction(1, 2) else floor + 1
    return _round(f, Fraction(whole), negative_zero=_negative(f, a))


def compare(f: Format, predicate: str, a: int, b: int) -> bool:
    """LLVM's ``fcmp``: ``o``-predicates are false and ``u``-predicates true when either is a
    NaN; ``-0`` equals ``+0``. ``predicate``: ``oeq ogt oge olt ole one ord ueq ugt uge ult
    ule une uno true false``."""
    if predicate == "true":
        return True
    if predicate == "false":
        return False
    unordered = is_nan(f, a) or is_nan(f, b)
    if predicate == "ord":
        return not unordered
    if predicate == "uno":
        return unordered
    if unordered:
        return predicate[0] == "u"
    x = _signed_order(f, a)
    y = _signed_order(f, b)
    test = predicate[1:]
    return {"eq": x == y, "ne": x != y, "gt": x > y, "ge": x >= y, "lt": x < y,
            "le": x <= y}[test]


def _signed_order(f: Format, bits: int) -> Fraction | float:
    """A key ordering non-NaN values (infinities included; both zeros equal)."""
    if _is_inf(f, bits):
        return -math.inf if _negative(f, bits) else math.inf
    return _value(f, bits)


def minnum(f: Format, a: int, b: int) -> int:
    """C's ``fmin`` as glibc computes it on x86-64: the number when one operand is a quiet NaN,
    ``a + b`` (a quiet NaN) when either is signalling, otherwise ``a < b ? a : b`` (so of two
    equal zeros, ``b``)."""
    return _min_max(f, a, b, smaller=True)


def maxnum(f: Format, a: int, b: int) -> int:
    """C's ``fmax`` (see :func:`minnum`; ``a > b ? a : b``)."""
    return _min_max(f, a, b, smaller=False)


def _signalling(f: Format, bits: int) -> bool:
    return is_nan(f, bits) and not bits & f.quiet_bit


def _min_max(f: Format, a: int, b: int, smaller: bool) -> int:
    if _signalling(f, a) or _signalling(f, b):
        return add(f, a, b)
    if is_nan(f, a):
        return b
    if is_nan(f, b):
        return a
    x, y = _signed_order(f, a), _signed_order(f, b)
    return (a if x < y else b) if smaller else (a if x > y else b)


def convert(source: Format, target: Format, a: int) -> int:
    """``fpext``/``fptrunc``: ``a`` in ``target``'s format (a NaN keeps its sign and the top
    of its payload, made quiet)."""
    if is_nan(source, a):
        shift = source.precision - target.precision
        payload = a & source.fraction_mask
        payload = payload >> shift if shift >= 0 else payload << -shift
        sign = target.sign_bit if _negative(source, a) else 0
        return sign | target.exponent_mask | target.quiet_bit | (payload & target.fraction_mask)
    if _is_inf(source, a):
        return (target.sign_bit if _negative(source, a) else 0) | target.infinity
    return _round(target, _value(source, a), negative_zero=_negative(source, a))


def to_signed(f: Format, a: int, width: int) -> int:
    """``fptosi`` to a ``width``-bit integer (unsigned bits): truncation; a NaN or a value out
    of range gives the integer indefinite (only the sign bit set)."""
    indefinite = 1 << (width - 1)
    if is_nan(f, a) or _is_inf(f, a):
        return indefinite
    value = _value(f, a)
    whole = value.numerator // value.denominator
    if value < 0 and whole != value:
        whole += 1  # toward zero
    if not -(1 << (width - 1)) <= whole < (1 << (width - 1)):
        return indefinite
    return whole & ((1 << width) - 1)


def to_unsigned(f: Format, a: int, width: int) -> int:
    """``fptoui`` to a ``width``-bit integer, as clang's x86-64 code computes it: for 8, 16
    and 32 bits, a signed conversion to 32 or 64 bits, cut to ``width``; for 64 bits, a
    signed conversion of ``a`` or, from ``2**63`` on, of ``a - 2**63`` with the top bit set.
    (In range, all give the truncated value; out of range, C leaves the result undefined.)"""
    if width < 64:
        signed_width = 64 if width == 32 else 32
        return to_signed(f, a, signed_width) & ((1 << width) - 1)
    limit = _round(f, Fraction(1 << 63))
    if not is_nan(f, a) and compare(f, "oge", a, limit):
        return to_signed(f, sub(f, a, limit), 64) ^ (1 << 63)
    return to_signed(f, a, 64)


def from_signed(f: Format, value: int, width: int) -> int:
    """``sitofp`` of a ``width``-bit integer's unsigned bits."""
    signed = value - (1 << width) if value >> (width - 1) else value
    return _round(f, Fraction(signed))


def from_unsigned(f: Format, value: int, width: int) -> int:
    """``uitofp`` of a ``width``-bit unsigned integer."""
    return _round(f, Fraction(value))


def from_integer(f: Format, value: int) -> int:
    """The Python int ``value`` rounded to nearest even in format ``f``."""
    return _round(f, Fraction(value))


def to_fraction(f: Format, bits: int) -> Fraction:
    """The exact value of the finite float ``bits``."""
    if bits & f.exponent_mask == f.exponent_mask:
        raise ValueError("an infinity or NaN has no exact rational value")
    return _value(f, bits)


def from_float(f: Format, value: float) -> int:
    """The bits of a Python float in format ``f`` (rounded to nearest even for binary32)."""
    import struct  # noqa: PLC0415  (constants only)
    if f is BINARY64:
        return int.from_bytes(struct.pack("<d", value), "little")
    if math.isnan(value):
        double = from_float(BINARY64, value)
        return convert(BINARY64, BINARY32, double)
    return int.from_bytes(struct.pack("<f", value), "little") if abs(value) <= 3.4028234663852886e38 \
        else (f.sign_bit if value < 0 else 0) | f.infinity


def to_float(f: Format, bits: int) -> float:
    """The Python float of ``bits`` (a binary32 value widened exactly)."""
    import struct  # noqa: PLC0415
    if f is BINARY64:
        return float(struct.unpack("<d", bits.to_bytes(8, "little"))[0])
    return float(struct.unpack("<f", bits.to_bytes(4, "little"))[0])


#: the binary operations by LLVM's name
BINARY: dict[str, Callable[[Format, int, int], int]] = {
    "fadd": add, "fsub": sub, "fmul": mul, "fdiv": div, "frem": rem,
}
