"""The math intrinsics and C math functions on floats (``llvm.floor``, ``sqrtf``, ``sin``...).

Those the floating-point theory computes exactly (``fabs copysign sqrt fma floor ceil trunc
round rint nearbyint roundeven fmin fmax fmod``, the ``lround``/``lrint`` family, ``powi`` by a
concrete power, the ``is.fpclass`` test) are built on the operands' bits, symbolic or not
(constant operands fold to the processor's result). The theory has no ``sin``, ``exp`` or
``pow``: their results come from the C library a native run calls (the host's ``libm``, through
ctypes; Python's ``math`` where there is none), and a symbolic argument is first fixed to one
value the path allows, a choice the run's shortfalls (``messages.txt``) report, as KLEE does.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
from collections.abc import Callable
from typing import Any

from symex import expr as E
from symex.core.interpreter.float_values import (
    DEFAULT_NAN,
    bits_of,
    fixed_float,
    is_concrete,
    register_of,
    round_to_kind,
    symbolic_width,
)
from symex.core.interpreter.machine import Machine
from symex.core.state import State
from symex.expr import float_build as FB
from symex.expr.floats import RoundingKind

__all__ = ["C_MATH_FUNCTIONS", "INTRINSICS", "apply_math"]


def _rounding(kind: int) -> Callable[[E.Expr], E.Expr]:
    return lambda a: FB.fround(a, kind)


#: operations on the bits, by name (an intrinsic's short name or the C function's double name)
_EXACT: dict[str, Callable[..., E.Expr]] = {
    "fabs": FB.fabs, "copysign": FB.copysign, "sqrt": FB.fsqrt, "fma": FB.fma,
    "fmuladd": lambda a, b, c: FB.fadd(FB.fmul(a, b), c),  # x86-64 has no fused default
    "floor": _rounding(RoundingKind.FLOOR), "ceil": _rounding(RoundingKind.CEIL),
    "trunc": _rounding(RoundingKind.TRUNC), "round": _rounding(RoundingKind.ROUND),
    "rint": _rounding(RoundingKind.RINT), "nearbyint": _rounding(RoundingKind.RINT),
    "roundeven": _rounding(RoundingKind.RINT),
    "minnum": FB.minnum, "maxnum": FB.maxnum, "fmin": FB.minnum, "fmax": FB.maxnum,
    "fmod": FB.frem,
}
#: results that are integers: (the rounding first, then fptosi)
_TO_INTEGER = {"lround": RoundingKind.ROUND, "llround": RoundingKind.ROUND,
               "lrint": RoundingKind.RINT, "llrint": RoundingKind.RINT}
#: the functions only the C library computes, by arity
_LIBM = {
    "sin": 1, "cos": 1, "tan": 1, "asin": 1, "acos": 1, "atan": 1, "atan2": 2, "sinh": 1,
    "cosh": 1, "tanh": 1, "asinh": 1, "acosh": 1, "atanh": 1, "exp": 1, "exp2": 1,
    "expm1": 1, "log": 1, "log2": 1, "log10": 1, "log1p": 1, "pow": 2, "cbrt": 1,
    "hypot": 2,
}
#: LLVM's IEEE 754-2019 minimum/maximum (NaN-propagating; -0 below +0), computed here
_PYTHON_ONLY = {"minimum", "maximum"}

INTRINSICS = frozenset({*_EXACT, *_TO_INTEGER, *_LIBM, *_PYTHON_ONLY, "powi", "is.fpclass"})
"""The short names of the float intrinsics (``llvm.NAME.f64``) :func:`apply_math` computes."""

C_MATH_FUNCTIONS: dict[str, tuple[str, int]] = {
    **{name: (name, 64) for name in (*_EXACT, *_TO_INTEGER, *_LIBM)
       if name not in ("fmuladd", "minnum", "maxnum", "roundeven")},
    **{name + "f": (name, 32) for name in (*_EXACT, *_TO_INTEGER, *_LIBM)
       if name not in ("fmuladd", "minnum", "maxnum", "roundeven")},
}
"""The C library's math functions symex computes itself: C name -> (operation, operand
bits); ``floorf`` is ``floor`` on 32-bit floats."""


@functools.cache
def _libm() -> Any:
    path = ctypes.util.find_library("m")
    try:
        return ctypes.CDLL(path) if path else None
    except OSError:
        return None


@functools.cache
def _libm_function(name: str, width: int) -> Callable[..., float] | None:
    library = _libm()
    if library is None:
        return None
    c_name = name if width == 64 else name + "f"
    function = getattr(library, c_name, None)
    if function is None:
        return None
    c_type = ctypes.c_double if width == 64 else ctypes.c_float
    function.restype = c_type
    function.argtypes = [c_type] * _LIBM[name]
    return function


def _python_math(name: str, args: list[float]) -> float:
    """Python's ``math`` where the host has no C library to call (C's special values)."""
    function = getattr(math, name, None)
    if name == "exp2":
        function = lambda x: 2.0 ** x  # noqa: E731
    try:
        return float(function(*args))  # type: ignore[misc]
    except OverflowError:
        return math.inf
    except ValueError:
        if name.startswith("log") and args[0] == 0:
            return -math.inf
        return DEFAULT_NAN


def _minimum_maximum(x: float, y: float, smaller: bool) -> float:
    if math.isnan(x) or math.isnan(y):
        return x + y
    if x == y:
        negative = (math.copysign(1.0, x) < 0 or math.copysign(1.0, y) < 0) if smaller \
            else (math.copysign(1.0, x) < 0 and math.copysign(1.0, y) < 0)
        return -abs(x) if negative else abs(x)
    return min(x, y) if smaller else max(x, y)


def _powi(a: Any, n: int, width: int) -> Any:
    """compiler-rt's ``__powidf2``/``__powisf2``: square and multiply, each step rounded."""
    negative = n < 0
    b = -n if negative else n
    result: Any = FB.float_constant(1.0, width)
    base = bits_of(a, width)
    while True:
        if b & 1:
            result = FB.fmul(result, base)
        b //= 2
        if b == 0:
            break
        base = FB.fmul(base, base)
    if negative:
        result = FB.fdiv(FB.float_constant(1.0, width), result)
    return register_of(result, width)


def _fpclass(a: E.Expr, mask: int) -> Any:
    """LLVM's ``is.fpclass``: whether ``a`` is in one of the classes ``mask`` names (bit 0
    signalling NaN, 1 quiet NaN, 2 -inf, 3 -normal, 4 -subnormal, 5 -0, 6 +0, 7 +subnormal,
    8 +normal, 9 +inf)."""
    f = FB.format_of(a.width)
    w = a.width
    magnitude = FB.fabs(a)
    negative = E.bool_not(E.eq(E.and_(a, E.const(f.sign_bit, w)), E.const(0, w)))
    positive = E.bool_not(negative)
    exponent = E.and_(a, E.const(f.exponent_mask, w))
    exponent_zero = E.eq(exponent, E.const(0, w))
    exponent_full = E.eq(exponent, E.const(f.exponent_mask, w))
    zero = E.eq(magnitude, E.const(0, w))
    nan = FB.is_nan(a)
    quiet = E.bool_not(E.eq(E.and_(a, E.const(f.quiet_bit, w)), E.const(0, w)))
    infinite = E.eq(magnitude, E.const(f.infinity, w))
    subnormal = E.bool_and(exponent_zero, E.bool_not(zero))
    normal = E.bool_and(E.bool_not(exponent_zero), E.bool_not(exponent_full))
    classes = (E.bool_and(nan, E.bool_not(quiet)), E.bool_and(nan, quiet),
               E.bool_and(infinite, negative), E.bool_and(normal, negative),
               E.bool_and(subnormal, negative), E.bool_and(zero, negative),
               E.bool_and(zero, positive), E.bool_and(subnormal, positive),
               E.bool_and(normal, positive), E.bool_and(infinite, positive))
    result = E.FALSE
    for bit, test in enumerate(classes):
        if mask >> bit & 1:
            result = E.bool_or(result, test)
    return result.value if result.op is E.Op.CONST else result


def apply_math(ex: Machine, state: State, name: str, args: list[Any], width: int,
               result_width: int) -> Any:
    """The register value of math operation ``name`` on float operands of ``width`` bits
    (``result_width``: the integer result's bits for the ``lround`` family)."""
    if width != 32 and width != 64 and all(is_concrete(a) for a in args):
        # long double, held (and so computed) as the nearest double
        width = 64
    exact = _EXACT.get(name)
    if exact is not None:
        return register_of(exact(*(bits_of(a, width) for a in args)), width)
    rounding = _TO_INTEGER.get(name)
    if rounding is not None:
        result = FB.fptosi(FB.fround(bits_of(args[0], width), rounding), result_width)
        return result.value if result.op is E.Op.CONST else result
    if name == "is.fpclass":
        mask = args[1] if type(args[1]) is int else ex.concretize(state, args[1], 32,
                                                                 "is.fpclass mask")
        return _fpclass(bits_of(args[0], width), mask)
    if name == "powi":
        n = args[1] if type(args[1]) is int else ex.concretize(state, args[1], 32, "powi power")
        return _powi(args[0], n - (1 << 32) if n >> 31 else n, symbolic_width(width))
    why = f"{name} argument (no floating-point theory for {name})"
    values = [fixed_float(ex, state, a, width, why) for a in args]
    if name in _PYTHON_ONLY:
        result_value = _minimum_maximum(values[0], values[1], name == "minimum")
    else:
        function = _libm_function(name, width) if width in (32, 64) else None
        result_value = function(*values) if function is not None \
            else _python_math(name, values)
    return round_to_kind(result_value, "float" if width == 32 else "double")
