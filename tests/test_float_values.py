"""The executor's concrete float arithmetic agrees bit for bit with the expression layer's.

A register holding concrete floats computes in Python where Python's arithmetic is the
processor's; the expression constructors fold constants with :mod:`symex.expr.floats`, which
``test_floats.py`` checks against the processor. A value must not change with the route it
took (concrete all along, or symbolic and then fixed), so for every operation the Python
route must give the bits the folding gives: NaN payloads, signed zeros, division by zero,
binary32 rounding, conversions out of range.
"""

from __future__ import annotations

import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from symex import expr as E
from symex.core.interpreter.float_values import (
    fcmp_value,
    float_binary,
    float_from_integer,
    float_resize,
    float_to_integer,
)
from symex.expr import float_build as FB
from symex.expr import floats
from symex.expr.floats import BINARY32, BINARY64

KINDS = {32: "float", 64: "double"}


def bits(value: float, width: int) -> int:
    """The IEEE bits of a register's Python float."""
    return floats.from_float(BINARY32 if width == 32 else BINARY64, value)


def python_float(raw: int, width: int) -> float:
    """The Python float a register holds for the ``width``-bit pattern ``raw``."""
    return floats.to_float(BINARY32 if width == 32 else BINARY64, raw)


def interesting(width: int) -> st.SearchStrategy[int]:
    """Bit patterns: specials (zeros, infinities, NaNs with payloads, subnormals) and any."""
    f = BINARY32 if width == 32 else BINARY64
    specials = [0, f.sign_bit, f.infinity, f.infinity | f.sign_bit, f.infinity | f.quiet_bit,
                f.infinity | f.quiet_bit | 0x15, f.sign_bit | f.infinity | f.quiet_bit | 3, 1,
                f.sign_bit | 1, bits(1.0, width), bits(-3.0, width), bits(0.1, width)]
    return st.one_of(st.sampled_from(specials), st.integers(0, (1 << width) - 1))


def quiet_nan_or_number(raw: int, width: int) -> bool:
    """Whether the pattern is a number or a quiet NaN (a Python float may quieten a
    signalling NaN it merely copies, as the processor's loads do not; such inputs come from
    memory as bits, not from registers, so the comparison leaves them out)."""
    f = BINARY32 if width == 32 else BINARY64
    return not floats.is_nan(f, raw) or bool(raw & f.quiet_bit)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from([32, 64]), st.sampled_from(["fadd", "fsub", "fmul", "fdiv", "frem"]),
       st.data())
def test_binary_operations_agree_with_folding(width: int, name: str, data: st.DataObject) -> None:
    x = data.draw(interesting(width))
    y = data.draw(interesting(width))
    if not (quiet_nan_or_number(x, width) and quiet_nan_or_number(y, width)):
        return
    concrete = float_binary(name, KINDS[width], width)(python_float(x, width),
                                                      python_float(y, width))
    builder = {"fadd": FB.fadd, "fsub": FB.fsub, "fmul": FB.fmul, "fdiv": FB.fdiv,
               "frem": FB.frem}[name]
    expected = builder(E.const(x, width), E.const(y, width))  # constant operands fold
    assert expected.op is E.Op.CONST
    f = BINARY32 if width == 32 else BINARY64
    if floats.is_nan(f, x) and floats.is_nan(f, y):
        # which NaN two NaNs give is unspecified (C, IEEE 754): the processor returns its
        # first source operand's, and compilers (CPython's own float add among them, once
        # its interpreter specialises the addition) swap the operands of a commutative one
        assert bits(concrete, width) in (x, y) and expected.value in (x, y), (hex(x), hex(y))
        return
    assert bits(concrete, width) == expected.value, (hex(x), hex(y))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([32, 64]), st.data(),
       st.sampled_from(["oeq", "one", "olt", "ole", "ogt", "oge", "ueq", "une", "ult", "ule",
                        "ugt", "uge", "ord", "uno"]))
def test_comparisons_agree_with_folding(width: int, data: st.DataObject, predicate: str) -> None:
    x = data.draw(interesting(width))
    y = data.draw(interesting(width))
    concrete = fcmp_value(predicate, width)(python_float(x, width), python_float(y, width))
    expected = FB.fcmp(predicate, E.const(x, width), E.const(y, width))
    assert concrete == expected.value


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([32, 64]), st.sampled_from([8, 16, 32, 64]), st.booleans(), st.data())
def test_float_to_integer_agrees_with_folding(width: int, to_width: int, signed: bool,
                                              data: st.DataObject) -> None:
    x = data.draw(st.one_of(interesting(width),
                            st.floats(-2.0 ** 65, 2.0 ** 65).map(lambda v: bits(v, width))))
    concrete = float_to_integer(python_float(x, width), width, to_width, signed)
    build = FB.fptosi if signed else FB.fptoui
    assert concrete == build(E.const(x, width), to_width).value, hex(x)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([32, 64]), st.sampled_from([8, 32, 64]), st.booleans(), st.data())
def test_integer_to_float_rounds_once(width: int, from_width: int, signed: bool,
                                      data: st.DataObject) -> None:
    value = data.draw(st.integers(0, (1 << from_width) - 1))
    concrete = float_from_integer(value, from_width, width, KINDS[width], signed)
    build = FB.sitofp if signed else FB.uitofp
    assert bits(concrete, width) == build(E.const(value, from_width), width).value


def test_large_integers_round_to_binary32_once() -> None:
    # 2**60 + 2**36 + 1 lies just above the midpoint between two binary32 values: rounding
    # first to binary64 drops the 1 and lands on the midpoint, which then rounds to even
    value = (1 << 60) + (1 << 36) + 1
    result = float_from_integer(value, 64, 32, "float", signed=False)
    assert result == float((1 << 60) + (1 << 37))


def test_division_by_zero_gives_the_processors_nan_and_infinities() -> None:
    divide = float_binary("fdiv", "double", 64)
    assert struct.pack("<d", divide(0.0, 0.0)) == struct.pack("<Q", 0xFFF8000000000000)
    assert divide(-3.0, 0.0) == float("-inf") and divide(3.0, -0.0) == float("-inf")
    nan = python_float(0x7FF8000000000123, 64)
    assert bits(divide(nan, 0.0), 64) == 0x7FF8000000000123  # the operand's payload


def test_narrowing_rounds_and_overflows_to_infinity() -> None:
    assert float_resize(3.4028235677973366e38, 64, 32, "float") == float("inf")
    assert float_resize(3.4028234663852886e38, 64, 32, "float") == 3.4028234663852886e38
    assert float_resize(1.0000000596046448, 64, 32, "float") == 1.0  # a tie: to even


def test_every_float_intrinsic_the_lowering_keeps_is_one_the_executor_computes() -> None:
    # the IR layer names the intrinsics it lowers to FLOATMATH; core computes them (a name
    # missing there would fail at run time, on the first program that used it)
    from symex.core.interpreter.float_math import INTRINSICS
    from symex.ir.lower_instructions import _FLOAT_MATH

    assert set(_FLOAT_MATH) <= INTRINSICS
