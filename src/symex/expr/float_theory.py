r"""Floating-point nodes in the SMT-LIB floating-point theory, for any builder of its terms.

Expressions carry floats as IEEE bits (:mod:`symex.expr.float_build`); the theory has a sort
of its own, with one NaN. A float-valued node is therefore translated twice over: its *float
term*, which the operations on it use directly, and its *bits*, which everything else uses
(memory, ``bitcast``, bit tests). The theory has no operation from a float to its bits, so
the bits are a fresh variable ``b`` defined by one set-up assertion, ``to_fp(b) = r`` (SMT-LIB's
``=``: the same element, so ``b`` is unique unless ``r`` is a NaN), and are read as
``ite(isNaN(r), default NaN, b)``: exactly the node's meaning, whose NaN is the default NaN
(the constructors add the payload rule around the node).

Two operations are built here from others: C's ``fmod`` from IEEE's remainder (``fp.rem``
rounds the quotient to nearest; ``fmod`` truncates it, so a remainder whose sign differs from
the dividend's is moved by the divisor, exactly), and ``fptosi``, which the theory leaves
unspecified out of range, guarded to give the processor's integer indefinite there.

The same :class:`FloatTerms` builds the terms for the solvers (:mod:`symex.solvers.translate`,
whose backends are :class:`FloatTermBuilder`\ s) and the text of SMT-LIB scripts
(:mod:`symex.expr.smtlib_floats`), so a written query means what the solver was asked.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, MutableMapping, Sequence
from typing import Any, Protocol, runtime_checkable

from immutables import MapMutation

from symex.expr import floats
from symex.expr.float_build import format_of
from symex.expr.nodes import Expr, Op

__all__ = ["BITS_NAME", "FloatBuilder", "FloatKind", "FloatTermBuilder", "FloatTerms",
           "FloatTest"]


class FloatKind(enum.Enum):
    """The SMT-LIB floating-point operations a :class:`FloatBuilder` makes (its value is the
    SMT-LIB name; arithmetic rounds to nearest, ties to even; ``fp.rem`` is IEEE's remainder,
    not C's ``fmod``, which the translator builds from it)."""

    ADD = "fp.add"
    SUB = "fp.sub"
    MUL = "fp.mul"
    DIV = "fp.div"
    REM = "fp.rem"
    SQRT = "fp.sqrt"
    FMA = "fp.fma"
    ROUND_FLOOR = "fp.roundToIntegral RTN"
    ROUND_CEIL = "fp.roundToIntegral RTP"
    ROUND_TRUNC = "fp.roundToIntegral RTZ"
    ROUND_EVEN = "fp.roundToIntegral RNE"
    ROUND_AWAY = "fp.roundToIntegral RNA"
    NEG = "fp.neg"
    ABS = "fp.abs"
    ITE = "ite"
    """``(cond, then, else)``: ``cond`` a boolean."""


class FloatTest(enum.Enum):
    """The SMT-LIB floating-point predicates a :class:`FloatBuilder` makes."""

    EQ = "fp.eq"
    LT = "fp.lt"
    LEQ = "fp.leq"
    IS_NAN = "fp.isNaN"
    IS_ZERO = "fp.isZero"
    IS_NEGATIVE = "fp.isNegative"
    SAME = "="
    """SMT-LIB's equality: the same element of the sort (all NaNs equal, ``-0`` not ``+0``)."""


@runtime_checkable
class FloatBuilder(Protocol):
    """What a backend with the SMT-LIB floating-point theory offers (z3, bitwuzla, cvc5):
    float terms of ``Float32``/``Float64``, made from and compared as the translator of
    :mod:`symex.expr.float_build`'s nodes needs. ``width`` is 32 or 64."""

    def fp_from_bits(self, bits: Any, width: int) -> Any:
        """The float whose IEEE bits are the ``width``-bit vector ``bits``."""
        ...

    def fp_term(self, kind: FloatKind, args: Sequence[Any], width: int) -> Any:
        """A ``width``-bit float operation on floats of that width."""
        ...

    def fp_test(self, kind: FloatTest, args: Sequence[Any]) -> Any:
        """A predicate on floats: a boolean."""
        ...

    def fp_convert(self, term: Any, width: int) -> Any:
        """The float ``term`` rounded (or widened) to a ``width``-bit float."""
        ...

    def fp_from_integer(self, bits: Any, width: int, signed: bool) -> Any:
        """The bit-vector ``bits`` read as a (signed) integer, rounded to a ``width``-bit
        float."""
        ...

    def fp_to_signed(self, term: Any, width: int) -> Any:
        """The float ``term`` truncated to a ``width``-bit signed integer (SMT-LIB leaves the
        result unspecified out of range; the translator guards it)."""
        ...


@runtime_checkable
class FloatTermBuilder(FloatBuilder, Protocol):
    """A builder of bit-vector terms with the floating-point theory: what :class:`FloatTerms`
    builds with (every backend's term builder with the theory is one)."""

    def bv_const(self, value: int, width: int) -> Any:
        """A bit-vector constant."""
        ...

    def bv_op(self, op: Op, args: Sequence[Any], width: int, offset: int = 0) -> Any:
        """A bit-vector operation (here ``SELECT``: ``(cond, then, else)``)."""
        ...

    def bool_op(self, op: Op, args: Sequence[Any]) -> Any:
        """A boolean connective (here ``AND`` and ``EQ``)."""
        ...


_ARITHMETIC: dict[Op, FloatKind] = {
    Op.FADD: FloatKind.ADD, Op.FSUB: FloatKind.SUB, Op.FMUL: FloatKind.MUL,
    Op.FDIV: FloatKind.DIV, Op.FSQRT: FloatKind.SQRT, Op.FFMA: FloatKind.FMA,
    Op.FFLOOR: FloatKind.ROUND_FLOOR, Op.FCEIL: FloatKind.ROUND_CEIL,
    Op.FTRUNC: FloatKind.ROUND_TRUNC, Op.FRINT: FloatKind.ROUND_EVEN,
    Op.FROUND: FloatKind.ROUND_AWAY,
}
_TESTS: dict[Op, FloatTest] = {Op.FOEQ: FloatTest.EQ, Op.FOLT: FloatTest.LT,
                               Op.FOLE: FloatTest.LEQ}

BITS_NAME = "symex!fp"
"""The name of the variables holding float-valued nodes' bits (the translator makes each
unique)."""


class FloatTerms:
    """Translates the floating-point nodes of one translation pass; ``floats`` (a mutation of
    the translator's map) keeps each float-valued expression's float term."""

    __slots__ = ("builder", "naming", "floats", "bits_of", "setup")

    def __init__(self, builder: FloatTermBuilder, naming: Any,
                 floats: MutableMapping[Expr, Any] | MapMutation[Expr, Any],
                 bits_of: Callable[[Expr], Any], setup: list[Any]) -> None:
        """Build with ``builder``, name variables through ``naming``, read an operand's bits
        with ``bits_of`` and append set-up assertions to ``setup``."""
        self.builder = builder
        self.naming = naming
        self.floats = floats
        self.bits_of = bits_of
        self.setup = setup

    def float_of(self, e: Expr) -> Any:
        """The float term of the float-valued ``e`` (its bits read as a float, unless ``e``
        is a node with a float term of its own)."""
        term = self.floats.get(e)
        if term is None:
            term = self.builder.fp_from_bits(self.bits_of(e), e.width)
            self.floats[e] = term
        return term

    def translate(self, e: Expr) -> Any:
        """The term of the node ``e``: a boolean for a comparison, else a bit-vector."""
        op = e.op
        builder = self.builder
        args = e.args
        width = e.width
        test = _TESTS.get(op)
        if test is not None:
            return builder.fp_test(test, [self.float_of(args[0]), self.float_of(args[1])])
        if op is Op.FPTOSI:
            return self._to_signed(args[0], width)
        if op is Op.SITOFP or op is Op.UITOFP:
            result = builder.fp_from_integer(self.bits_of(args[0]), width, op is Op.SITOFP)
        elif op is Op.FPCONV:
            result = builder.fp_convert(self.float_of(args[0]), width)
        elif op is Op.FREM:
            result = self._fmod(self.float_of(args[0]), self.float_of(args[1]), width)
        else:
            result = builder.fp_term(_ARITHMETIC[op], [self.float_of(a) for a in args], width)
        self.floats[e] = result
        bits = self.naming.bv_var(BITS_NAME, width)
        self.setup.append(builder.fp_test(FloatTest.SAME,
                                          [builder.fp_from_bits(bits, width), result]))
        if op is Op.SITOFP or op is Op.UITOFP:
            return bits  # an integer is never a NaN
        nan = builder.fp_test(FloatTest.IS_NAN, [result])
        return builder.bv_op(Op.SELECT, (nan, builder.bv_const(format_of(width).default_nan,
                                                                width), bits), width)

    def _constant(self, bits: int, width: int) -> Any:
        return self.builder.fp_from_bits(self.builder.bv_const(bits, width), width)

    def _fmod(self, x: Any, y: Any, width: int) -> Any:
        """C's ``fmod(x, y)`` from IEEE's remainder ``r``: ``r`` when it is zero (with ``x``'s
        sign) or has ``x``'s sign, else ``r`` moved by ``|y|`` toward ``x``'s sign (exact:
        every ``fmod`` result is a float)."""
        b = self.builder
        f = format_of(width)
        remainder = b.fp_term(FloatKind.REM, [x, y], width)
        x_negative = b.fp_test(FloatTest.IS_NEGATIVE, [x])
        zero = b.fp_term(FloatKind.ITE, [x_negative, self._constant(f.sign_bit, width),
                                         self._constant(0, width)], width)
        magnitude = b.fp_term(FloatKind.ABS, [y], width)
        toward_x = b.fp_term(FloatKind.ITE, [x_negative,
                                             b.fp_term(FloatKind.NEG, [magnitude], width),
                                             magnitude], width)
        moved = b.fp_term(FloatKind.ADD, [remainder, toward_x], width)
        same_sign = b.bool_op(Op.EQ, (b.fp_test(FloatTest.IS_NEGATIVE, [remainder]), x_negative))
        nonzero = b.fp_term(FloatKind.ITE, [same_sign, remainder, moved], width)
        return b.fp_term(FloatKind.ITE, [b.fp_test(FloatTest.IS_ZERO, [remainder]), zero,
                                         nonzero], width)

    def _to_signed(self, operand: Expr, width: int) -> Any:
        """``fptosi``: the truncated value where it fits ``width`` bits, else the integer
        indefinite (NaNs fail both comparisons)."""
        b = self.builder
        f = format_of(operand.width)
        x = self.float_of(operand)
        high = self._constant(floats.from_integer(f, 1 << (width - 1)), width=operand.width)
        below = -(1 << (width - 1)) - 1  # the greatest integer that does not fit
        below_bits = floats.from_integer(f, below)
        if floats.to_fraction(f, below_bits) == below:
            low_test = b.fp_test(FloatTest.LT, [self._constant(below_bits, operand.width), x])
        else:
            # no float lies strictly between `below` and -2**(width-1)
            lowest = self._constant(floats.from_integer(f, -(1 << (width - 1))), operand.width)
            low_test = b.fp_test(FloatTest.LEQ, [lowest, x])
        fits = b.bool_op(Op.AND, (low_test, b.fp_test(FloatTest.LT, [x, high])))
        return b.bv_op(Op.SELECT, (fits, b.fp_to_signed(x, width),
                                   b.bv_const(1 << (width - 1), width)), width)
