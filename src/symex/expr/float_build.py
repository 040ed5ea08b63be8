"""Smart constructors of floating-point expressions (C's ``float`` and ``double``).

A floating-point value is the bit-vector of its IEEE bits (32 or 64 wide), so memory,
``bitcast``, ``select`` and ``phi`` carry floats as any other bits. The operations the SMT
floating-point theory computes are nodes of their own (:data:`FLOAT_OPS`); the rest is built
here from bit-vector operations: ``fneg``/``fabs``/``copysign`` are bit operations, the NaN and
infinity tests compare bits, ``fptoui``, ``fmin``/``fmax`` and the ``fcmp`` predicates are made of
the nodes.

**NaN payloads.** The theory has one NaN; the processor gives NaNs payloads
(:mod:`symex.expr.floats`). So a *node* means the operation with every NaN result replaced
by the default NaN (``0xFFC00000``/``0xFFF8000000000000``), the only NaN an operation on
numbers makes, and the public constructors put the payload rule around it: when an operand
is a NaN, the result is the first NaN operand made quiet (``ite(is_nan(a), quiet(a), ...)``).
The evaluator (:func:`node_value`) and the solvers' translation compute exactly the nodes'
meaning, and the constructors fold constants with the processor's arithmetic, so all three
agree with a native run bit for bit.

Only ``float`` and ``double`` are supported: a width other than 32 or 64 is a ValueError
(the executor reports ``long double`` as unsupported before it gets here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from symex.expr import floats
from symex.expr.build import (
    FALSE,
    TRUE,
    and_,
    bool_and,
    bool_not,
    bool_or,
    const,
    eq,
    extract,
    ite,
    lshr,
    or_,
    shl,
    trunc,
    ult,
    xor,
    zext,
)
from symex.expr.floats import FORMATS, Format, RoundingKind
from symex.expr.nodes import Expr, Op, intern_expr
from symex.expr.printing import OP_NAMES

__all__ = ["FLOAT_ARGUMENT_OPS", "FLOAT_NODE_NAMES", "FLOAT_OPS", "FLOAT_RESULT_OPS", "ROUNDING_OPS", "copysign",
           "fabs", "fadd", "fcmp", "fdiv", "float_constant", "float_node_named", "float_op", "fma", "fmul", "fneg",
           "format_of", "fpconv", "fptosi", "fptoui", "frem", "fround", "fsqrt", "fsub",
           "is_inf", "is_nan", "maxnum", "minnum", "node_value", "sitofp", "uitofp"]

#: the rounding-to-integral nodes by :class:`~symex.expr.floats.RoundingKind`
ROUNDING_OPS: dict[int, Op] = {RoundingKind.FLOOR: Op.FFLOOR, RoundingKind.CEIL: Op.FCEIL,
                               RoundingKind.TRUNC: Op.FTRUNC, RoundingKind.RINT: Op.FRINT,
                               RoundingKind.ROUND: Op.FROUND}
_ROUNDING_KIND = {op: kind for kind, op in ROUNDING_OPS.items()}

FLOAT_RESULT_OPS = frozenset({Op.FADD, Op.FSUB, Op.FMUL, Op.FDIV, Op.FREM, Op.FSQRT, Op.FFMA,
                              *ROUNDING_OPS.values(), Op.FPCONV, Op.SITOFP, Op.UITOFP})
"""Nodes whose value is a float (the theory computes them; their NaN is the default NaN)."""
FLOAT_ARGUMENT_OPS = frozenset({*(FLOAT_RESULT_OPS - {Op.SITOFP, Op.UITOFP}), Op.FPTOSI,
                                Op.FOEQ, Op.FOLT, Op.FOLE})
"""Nodes whose operands are floats."""
FLOAT_OPS = FLOAT_RESULT_OPS | FLOAT_ARGUMENT_OPS
"""Every floating-point node."""
#: how many operands each node has
FLOAT_ARITY: dict[Op, int] = {op: 1 for op in FLOAT_OPS} | {
    Op.FADD: 2, Op.FSUB: 2, Op.FMUL: 2, Op.FDIV: 2, Op.FREM: 2, Op.FFMA: 3, Op.FOEQ: 2,
    Op.FOLT: 2, Op.FOLE: 2}

_BINARY: dict[Op, Callable[[Format, int, int], int]] = {
    Op.FADD: floats.add, Op.FSUB: floats.sub, Op.FMUL: floats.mul, Op.FDIV: floats.div,
    Op.FREM: floats.rem}
_COMPARE = {Op.FOEQ: "oeq", Op.FOLT: "olt", Op.FOLE: "ole"}

FLOAT_NODE_NAMES: dict[str, Op] = {OP_NAMES[op]: op for op in FLOAT_OPS}
"""The float nodes by their printed names (``FAdd``, ``FOLt``), as KQuery writes them."""


def format_of(width: int) -> Format:
    """The IEEE format of a ``width``-bit float (32 or 64)."""
    f = FORMATS.get(width)
    if f is None:
        raise ValueError(f"floating point of {width} bits is not supported (only float and "
                         "double, 32 and 64 bits)")
    return f


def float_constant(value: float, width: int) -> Expr:
    """The bits of a Python float as a ``width``-bit constant (binary32 rounds)."""
    return const(floats.from_float(format_of(width), value), width)


# -- the nodes' meaning ---------------------------------------------------------------------

def node_value(op: Op, values: Sequence[int], arg_width: int, width: int) -> int:
    """The value of a floating-point node of kind ``op`` on operand values ``values`` (all
    ``arg_width`` wide) giving ``width`` bits: the processor's result, but the default NaN
    for every NaN (see the module docstring)."""
    if op is Op.SITOFP:
        return floats.from_signed(format_of(width), values[0], arg_width)
    if op is Op.UITOFP:
        return floats.from_unsigned(format_of(width), values[0], arg_width)
    f = format_of(arg_width)
    if op in _COMPARE:
        return 1 if floats.compare(f, _COMPARE[op], values[0], values[1]) else 0
    if op is Op.FPTOSI:
        return floats.to_signed(f, values[0], width)
    if op is Op.FPCONV:
        target = format_of(width)
        result = floats.convert(f, target, values[0])
        return target.default_nan if floats.is_nan(target, result) else result
    binary = _BINARY.get(op)
    if binary is not None:
        result = binary(f, values[0], values[1])
    elif op is Op.FSQRT:
        result = floats.sqrt(f, values[0])
    elif op is Op.FFMA:
        result = floats.fma(f, values[0], values[1], values[2])
    else:
        result = floats.round_integral(f, values[0], _ROUNDING_KIND[op])
    return f.default_nan if floats.is_nan(f, result) else result


def float_node_named(name: str, args: Sequence[Expr], width: int | None) -> Expr:
    """The node printed as ``name`` (``FAdd``, ``FOLt``: :data:`FLOAT_NODE_NAMES`) over
    ``args``, of ``width`` bits (None for a comparison); ValueError when it cannot be."""
    op = FLOAT_NODE_NAMES[name]
    if width is None and op not in _COMPARE:
        raise ValueError(f"({name} wN ...) needs its result width")
    return float_op(op, args, 1 if width is None else width)


def float_op(op: Op, args: Sequence[Expr], width: int) -> Expr:
    """The node ``op`` over ``args`` giving ``width`` bits, folded when every operand is a
    constant (for generic rebuilding: the payload rule is not added; the public constructors
    add it)."""
    arity = FLOAT_ARITY.get(op)
    if arity is None:
        raise ValueError(f"float_op: {op!r} is not a floating-point operation")
    if len(args) != arity:
        raise ValueError(f"float_op: {op.name} takes {arity} operands, got {len(args)}")
    arg_width = args[0].width
    if op is not Op.SITOFP and op is not Op.UITOFP:
        format_of(arg_width)
        for a in args[1:]:
            if a.width != arg_width:
                raise ValueError(f"{op.name}: operand widths differ ({arg_width} and {a.width})")
    if op in FLOAT_RESULT_OPS:
        format_of(width)
    if op in _COMPARE:
        width = 1
    if all(a.op is Op.CONST for a in args):
        return const(node_value(op, [a.value for a in args], arg_width, width), width)
    return intern_expr(op, width, tuple(args))


# -- bit-level pieces -------------------------------------------------------------------------

def _format_of_expr(a: Expr) -> Format:
    return format_of(a.width)


def is_nan(a: Expr) -> Expr:
    """Whether the float ``a`` is a NaN (its magnitude bits above infinity's)."""
    f = _format_of_expr(a)
    if a.op is Op.SITOFP or a.op is Op.UITOFP:
        return FALSE  # an integer converts to a number
    return ult(const(f.infinity, a.width), and_(a, const(~f.sign_bit & ((1 << a.width) - 1),
                                                          a.width)))


def is_inf(a: Expr) -> Expr:
    """Whether the float ``a`` is an infinity."""
    f = _format_of_expr(a)
    return eq(and_(a, const(~f.sign_bit & ((1 << a.width) - 1), a.width)),
              const(f.infinity, a.width))


def fneg(a: Expr) -> Expr:
    """``-a`` (LLVM's ``fneg``: the sign bit flipped, NaNs included)."""
    return xor(a, const(_format_of_expr(a).sign_bit, a.width))


def fabs(a: Expr) -> Expr:
    """``|a|`` (the sign bit cleared)."""
    f = _format_of_expr(a)
    return and_(a, const(~f.sign_bit & ((1 << a.width) - 1), a.width))


def copysign(a: Expr, b: Expr) -> Expr:
    """``a`` with the sign of ``b``."""
    f = _format_of_expr(a)
    return or_(fabs(a), and_(b, const(f.sign_bit, b.width)))


def _quiet(a: Expr) -> Expr:
    return or_(a, const(_format_of_expr(a).quiet_bit, a.width))


def _with_payload(node: Expr, operands: Sequence[Expr]) -> Expr:
    """``node`` where no operand is a NaN, else the first NaN operand made quiet."""
    if node.op is Op.CONST:
        return node
    result = node
    for a in reversed(operands):
        test = is_nan(a)
        if test is not FALSE:
            result = ite(test, _quiet(a), result)
    return result


def _folded(op: Op, args: Sequence[Expr], width: int,
            exact: Callable[..., int]) -> Expr | None:
    """The constant ``exact`` gives when every operand is constant (payloads included)."""
    if all(a.op is Op.CONST for a in args):
        return const(exact(*[a.value for a in args]), width)
    return None


def _arithmetic(op: Op, args: Sequence[Expr], payload_order: Sequence[Expr],
                exact: Callable[..., int]) -> Expr:
    width = args[0].width
    folded = _folded(op, args, width, exact)
    if folded is not None:
        return folded
    return _with_payload(float_op(op, args, width), payload_order)


def fadd(a: Expr, b: Expr) -> Expr:
    """``a + b``."""
    f = _format_of_expr(a)
    return _arithmetic(Op.FADD, (a, b), (a, b), lambda x, y: floats.add(f, x, y))


def fsub(a: Expr, b: Expr) -> Expr:
    """``a - b``."""
    f = _format_of_expr(a)
    return _arithmetic(Op.FSUB, (a, b), (a, b), lambda x, y: floats.sub(f, x, y))


def fmul(a: Expr, b: Expr) -> Expr:
    """``a * b``."""
    f = _format_of_expr(a)
    return _arithmetic(Op.FMUL, (a, b), (a, b), lambda x, y: floats.mul(f, x, y))


def fdiv(a: Expr, b: Expr) -> Expr:
    """``a / b``."""
    f = _format_of_expr(a)
    return _arithmetic(Op.FDIV, (a, b), (a, b), lambda x, y: floats.div(f, x, y))


def frem(a: Expr, b: Expr) -> Expr:
    """``fmod(a, b)`` (LLVM's ``frem``)."""
    f = _format_of_expr(a)
    return _arithmetic(Op.FREM, (a, b), (a, b), lambda x, y: floats.rem(f, x, y))


def fsqrt(a: Expr) -> Expr:
    """The square root of ``a``."""
    f = _format_of_expr(a)
    return _arithmetic(Op.FSQRT, (a,), (a,), lambda x: floats.sqrt(f, x))


def fma(a: Expr, b: Expr, c: Expr) -> Expr:
    """``a * b + c`` rounded once (a NaN from ``b`` before one from ``a``, as the
    processor's instruction takes them)."""
    f = _format_of_expr(a)
    return _arithmetic(Op.FFMA, (a, b, c), (b, a, c), lambda x, y, z: floats.fma(f, x, y, z))


def fround(a: Expr, kind: int) -> Expr:
    """``a`` rounded to an integral value as :class:`~symex.expr.floats.RoundingKind` ``kind``
    says (``floor``, ``ceil``, ``trunc``, ``rint``, ``round``)."""
    f = _format_of_expr(a)
    return _arithmetic(ROUNDING_OPS[kind], (a,), (a,),
                       lambda x: floats.round_integral(f, x, kind))


def fpconv(a: Expr, width: int) -> Expr:
    """``fpext``/``fptrunc`` of ``a`` to a ``width``-bit float (a NaN keeps its sign and the
    top of its payload, made quiet)."""
    source = _format_of_expr(a)
    target = format_of(width)
    if width == a.width:
        return a
    if a.op is Op.CONST:
        return const(floats.convert(source, target, a.value), width)
    node = float_op(Op.FPCONV, (a,), width)
    test = is_nan(a)
    if test is FALSE:
        return node
    payload = extract(a, 0, source.precision - 1)
    shift = source.precision - target.precision
    if shift > 0:
        payload = trunc(lshr(payload, const(shift, payload.width)), target.precision - 1)
    else:
        payload = shl(zext(payload, target.precision - 1), const(-shift, target.precision - 1))
    sign = extract(a, a.width - 1, 1)
    nan = or_(or_(shl(zext(sign, width), const(width - 1, width)),
                  const(target.exponent_mask | target.quiet_bit, width)), zext(payload, width))
    return ite(test, nan, node)


def fptosi(a: Expr, width: int) -> Expr:
    """``fptosi`` to a ``width``-bit integer as x86-64 computes it: truncation; out of range
    or NaN, the integer indefinite (of 32 bits, cut, for ``i8``/``i16``)."""
    if width < 32:
        return extract(fptosi(a, 32), 0, width)
    return float_op(Op.FPTOSI, (a,), width)


def fptoui(a: Expr, width: int) -> Expr:
    """``fptoui`` as clang's x86-64 code computes it (:func:`symex.expr.floats.to_unsigned`)."""
    f = _format_of_expr(a)
    if width < 64:
        return extract(fptosi(a, 64 if width == 32 else 32), 0, width)
    if a.op is Op.CONST:
        return const(floats.to_unsigned(f, a.value, width), width)
    limit = const(floats.from_unsigned(f, 1 << 63, 64), a.width)
    high = xor(float_op(Op.FPTOSI, (float_op(Op.FSUB, (a, limit), a.width),), 64),
               const(1 << 63, 64))
    return ite(float_op(Op.FOLE, (limit, a), 1), high, float_op(Op.FPTOSI, (a,), 64))


def sitofp(a: Expr, width: int) -> Expr:
    """``sitofp``: the signed integer ``a`` as a ``width``-bit float, rounded to nearest."""
    return float_op(Op.SITOFP, (a,), width)


def uitofp(a: Expr, width: int) -> Expr:
    """``uitofp``: the unsigned integer ``a`` as a ``width``-bit float, rounded to nearest."""
    return float_op(Op.UITOFP, (a,), width)


def fcmp(predicate: str, a: Expr, b: Expr) -> Expr:
    """LLVM's ``fcmp`` (``oeq ogt oge olt ole one ord ueq ugt uge ult ule une uno true
    false``): a width-1 expression."""
    if predicate == "true":
        return TRUE
    if predicate == "false":
        return FALSE
    unordered = bool_or(is_nan(a), is_nan(b))
    if predicate == "ord":
        return bool_not(unordered)
    if predicate == "uno":
        return unordered
    base = predicate[1:]
    if base == "eq":
        ordered = float_op(Op.FOEQ, (a, b), 1)
    elif base == "ne":
        ordered = bool_and(bool_not(unordered), bool_not(float_op(Op.FOEQ, (a, b), 1)))
    elif base == "lt":
        ordered = float_op(Op.FOLT, (a, b), 1)
    elif base == "le":
        ordered = float_op(Op.FOLE, (a, b), 1)
    elif base == "gt":
        ordered = float_op(Op.FOLT, (b, a), 1)
    elif base == "ge":
        ordered = float_op(Op.FOLE, (b, a), 1)
    else:
        raise ValueError(f"fcmp: unknown predicate {predicate!r}")
    if predicate[0] == "o":
        return ordered
    if predicate[0] != "u":
        raise ValueError(f"fcmp: unknown predicate {predicate!r}")
    return bool_or(unordered, ordered)


def _signalling(a: Expr) -> Expr:
    f = _format_of_expr(a)
    return bool_and(is_nan(a), eq(and_(a, const(f.quiet_bit, a.width)), const(0, a.width)))


def _min_max(a: Expr, b: Expr, smaller: bool) -> Expr:
    f = _format_of_expr(a)
    if a.op is Op.CONST and b.op is Op.CONST:
        pick = floats.minnum if smaller else floats.maxnum
        return const(pick(f, a.value, b.value), a.width)
    # glibc: a signalling NaN gives a + b; a quiet NaN gives the other operand; else the
    # comparison a < b (a > b) picks a, and equal values pick b
    first = float_op(Op.FOLT, (a, b) if smaller else (b, a), 1)
    ordered = ite(first, a, b)
    numbers = ite(is_nan(a), b, ite(is_nan(b), a, ordered))
    return ite(bool_or(_signalling(a), _signalling(b)), fadd(a, b), numbers)


def minnum(a: Expr, b: Expr) -> Expr:
    """C's ``fmin`` as glibc computes it (:func:`symex.expr.floats.minnum`)."""
    return _min_max(a, b, smaller=True)


def maxnum(a: Expr, b: Expr) -> Expr:
    """C's ``fmax`` as glibc computes it (:func:`symex.expr.floats.maxnum`)."""
    return _min_max(a, b, smaller=False)
