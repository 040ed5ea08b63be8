"""What a floating-point register holds, and the operations on it, concrete or symbolic.

A concrete float is a Python ``float`` (a ``float`` value is held exactly, rounded to binary32
after every operation); a symbolic one is the expression of its IEEE bits, 32 or 64 wide
(:mod:`symex.expr.float_build`), so memory, ``bitcast``, ``select`` and ``phi`` carry it as any
other bits. An operation with a symbolic operand builds the expression; one whose operands
are all concrete computes directly, in Python where Python's arithmetic is the processor's
(``+ - * /``, comparisons, widening and narrowing) and otherwise through the expression
constructors, which fold constants with the processor's exact results (NaN payloads, signed
zeros, out-of-range conversions). A folded constant comes back as a Python float, so a value
is symbolic exactly when it depends on an input.

``long double`` (x86's 80-bit format) stays concrete, computed in double precision as before:
symbolic, it ends the path with a message saying so.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from symex import expr as E
from symex.core.interpreter import values as V
from symex.core.memory.objects import SOLVED_FLOATS
from symex.core.outcome import PathStatus, PathTerminated
from symex.expr import float_build as FB
from symex.expr import floats
from symex.expr.floats import BINARY64

if TYPE_CHECKING:
    from symex.core.interpreter.machine import Machine
    from symex.core.state import State

__all__ = ["DEFAULT_NAN", "bits_of", "concrete_float", "fcmp_value", "fixed_float", "float_binary",
           "float_from_integer", "float_resize", "float_to_integer", "is_concrete", "register_of",
           "round_to_kind", "symbolic_width"]

#: bits of the floating-point kinds symex solves, by LLVM type name
SYMBOLIC_WIDTHS = {"float": 32, "double": 64}

DEFAULT_NAN = floats.to_float(BINARY64, BINARY64.default_nan)
"""The NaN x86's operations make from numbers (``0/0``, ``inf - inf``): sign bit set."""

def is_concrete(value: Any) -> bool:
    """Whether a float register's value is concrete (a Python float, or an int zero)."""
    return type(value) is float or type(value) is int


def symbolic_width(width: int) -> int:
    """``width`` if symex solves floats of that many bits (32, 64); else the path ends."""
    if width != 32 and width != 64:
        raise PathTerminated(PathStatus.PARTIAL, f"unsupported: {width}-bit floating point "
                             f"on a symbolic value {SOLVED_FLOATS}")
    return width


def bits_of(value: Any, width: int) -> E.Expr:
    """The ``width``-bit IEEE bits of a float register's value, as an expression."""
    if type(value) is float:
        return FB.float_constant(value, symbolic_width(width))
    if type(value) is int:
        return FB.float_constant(float(value), symbolic_width(width))
    symbolic_width(width)
    return value


def register_of(bits: E.Expr, width: int) -> Any:
    """What a register holds for the float ``bits``: a Python float when they are constant."""
    if bits.op is E.Op.CONST:
        return floats.to_float(FB.format_of(width), bits.value)
    return bits


def concrete_float(value: Any) -> float:
    """A concrete register value as a Python float."""
    return value if type(value) is float else float(value)


def fixed_float(ex: Machine, state: State, value: Any, width: int, why: str) -> float:
    """A float register's value as a Python float: a symbolic one fixed to one value the
    path allows (a constraint, and a ``concretized`` shortfall saying ``why``), where what
    comes next cannot take it symbolic."""
    if is_concrete(value):
        return concrete_float(value)
    bits = ex.concretize(state, value, symbolic_width(width), why)
    return floats.to_float(FB.format_of(width), bits)


def round_to_kind(value: float, kind: str) -> float:
    """``value`` rounded to the precision of LLVM type ``kind`` (binary32 for ``float``)."""
    if kind == "float":
        try:
            return struct.unpack("<f", struct.pack("<f", value))[0]
        except OverflowError:
            # at least half an ulp above the largest float: the processor rounds to infinity
            return math.copysign(math.inf, value)
    return value


def _divide(x: float, y: float) -> float:
    try:
        return x / y
    except ZeroDivisionError:
        if x != x:
            return x + y  # the NaN operand, made quiet, as the processor returns it
        if x == 0:
            return DEFAULT_NAN
        return math.copysign(math.inf, x) * math.copysign(1.0, y)


#: the binary operations Python computes as the processor does (binary64, round to nearest)
_PYTHON_BINARY: dict[str, Callable[[float, float], float]] = {
    "fadd": lambda x, y: x + y, "fsub": lambda x, y: x - y, "fmul": lambda x, y: x * y,
    "fdiv": _divide,
}
_SYMBOLIC_BINARY: dict[str, Callable[[E.Expr, E.Expr], E.Expr]] = {
    "fadd": FB.fadd, "fsub": FB.fsub, "fmul": FB.fmul, "fdiv": FB.fdiv, "frem": FB.frem,
}


def float_binary(name: str, kind: str, width: int) -> Callable[[Any, Any], Any]:
    """``(x, y) -> x OP y`` for LLVM's binary float instruction ``name`` on type ``kind``."""
    symbolic = _SYMBOLIC_BINARY[name]
    python = _PYTHON_BINARY.get(name)
    if python is None or kind not in ("float", "double", "x86_fp80"):
        # frem: C's fmod, exact only through the constructors' folding
        def folded(x: Any, y: Any) -> Any:
            if kind == "x86_fp80" and is_concrete(x) and is_concrete(y):
                return math.fmod(concrete_float(x), concrete_float(y)) \
                    if y != 0 and not math.isinf(x) else DEFAULT_NAN
            return register_of(symbolic(bits_of(x, width), bits_of(y, width)), width)
        return folded
    if kind == "float":
        def binary32(x: Any, y: Any) -> Any:
            if type(x) is float and type(y) is float:
                # binary64 holds every binary32 product and sum exactly enough that one
                # rounding to binary32 gives the binary32 result
                return round_to_kind(python(x, y), "float")
            if is_concrete(x) and is_concrete(y):
                return round_to_kind(python(float(x), float(y)), "float")
            return register_of(symbolic(bits_of(x, 32), bits_of(y, 32)), 32)
        return binary32

    def binary64(x: Any, y: Any) -> Any:
        if type(x) is float and type(y) is float:
            return python(x, y)
        if is_concrete(x) and is_concrete(y):
            return python(float(x), float(y))
        return register_of(symbolic(bits_of(x, width), bits_of(y, width)), width)
    return binary64


_FCMP: dict[str, Callable[[float, float], bool]] = {
    "false": lambda x, y: False, "true": lambda x, y: True,
    "oeq": lambda x, y: x == y, "ogt": lambda x, y: x > y, "oge": lambda x, y: x >= y,
    "olt": lambda x, y: x < y, "ole": lambda x, y: x <= y,
    "one": lambda x, y: x != y and not (math.isnan(x) or math.isnan(y)),
    "ord": lambda x, y: not (math.isnan(x) or math.isnan(y)),
    "uno": lambda x, y: math.isnan(x) or math.isnan(y),
    "ueq": lambda x, y: x == y or math.isnan(x) or math.isnan(y),
    "ugt": lambda x, y: not (x <= y), "uge": lambda x, y: not (x < y),
    "ult": lambda x, y: not (x >= y), "ule": lambda x, y: not (x > y),
    "une": lambda x, y: x != y,
}


def fcmp_value(predicate: str, width: int) -> Callable[[Any, Any], Any]:
    """``(x, y) -> 0, 1 or a width-1 expression``: LLVM's ``fcmp predicate``."""
    compare = _FCMP[predicate]

    def fcmp(x: Any, y: Any) -> Any:
        if is_concrete(x) and is_concrete(y):
            return 1 if compare(concrete_float(x), concrete_float(y)) else 0
        result = FB.fcmp(predicate, bits_of(x, width), bits_of(y, width))
        return result.value if result.op is E.Op.CONST else result
    return fcmp


def float_resize(value: Any, from_width: int, to_width: int, to_kind: str) -> Any:
    """``fpext``/``fptrunc``."""
    if is_concrete(value):
        return round_to_kind(concrete_float(value), to_kind)
    return register_of(FB.fpconv(bits_of(value, from_width), symbolic_width(to_width)),
                       to_width)


def float_to_integer(value: Any, from_width: int, to_width: int, signed: bool) -> Any:
    """``fptosi``/``fptoui`` as x86-64 computes them (out of range: the integer indefinite,
    cut as the processor's sequence cuts it)."""
    if is_concrete(value):
        x = concrete_float(value)
        if math.isfinite(x):
            whole = int(x)
            low = -(1 << (to_width - 1)) if signed else 0
            high = (1 << (to_width - 1)) if signed else (1 << to_width)
            if low <= whole < high:
                return whole & ((1 << to_width) - 1)
        if from_width not in (32, 64):
            return (1 << (to_width - 1)) if signed else 0
    bits = bits_of(value, from_width)
    result = FB.fptosi(bits, to_width) if signed else FB.fptoui(bits, to_width)
    return result.value if result.op is E.Op.CONST else result


def float_from_integer(value: Any, from_width: int, to_width: int, to_kind: str,
                       signed: bool) -> Any:
    """``sitofp``/``uitofp``: rounded to nearest even once."""
    if type(value) is int:
        number = V.signed(value, from_width) if signed else value
        if abs(number) <= 1 << 53 or to_width not in (32, 64):
            # exact in binary64, so the one rounding is round_to_kind's
            return round_to_kind(float(number), to_kind)
        return floats.to_float(FB.format_of(to_width),
                               floats.from_integer(FB.format_of(to_width), number))
    convert = FB.sitofp if signed else FB.uitofp
    return register_of(convert(value, symbolic_width(to_width)), to_width)

