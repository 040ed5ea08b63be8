"""Smart constructors: the only way to build :class:`~symex.expr.nodes.Expr` nodes.

Each constructor checks widths, folds constants and applies a few cheap local rewrites
(never recursing over the operands' subtrees), then interns the result. Semantics follow
SMT-LIB QF_BV: ``udiv x 0`` is all ones, ``urem x 0`` is ``x``, signed division truncates,
and shifting by the width or more gives 0 (``shl``/``lshr``) or the sign fill (``ashr``).
"""

from __future__ import annotations

from collections.abc import Callable

from symex.expr.nodes import (
    ELEMENT_WIDTH,
    INDEX_WIDTH,
    Expr,
    Op,
    UpdateList,
    intern_expr,
    intern_read,
)

__all__ = [
    "const",
    "TRUE",
    "FALSE",
    "read",
    "concat",
    "extract",
    "zext",
    "sext",
    "trunc",
    "not_",
    "neg",
    "add",
    "sub",
    "mul",
    "udiv",
    "sdiv",
    "urem",
    "srem",
    "and_",
    "or_",
    "xor",
    "shl",
    "lshr",
    "ashr",
    "eq",
    "ne",
    "ult",
    "ule",
    "ugt",
    "uge",
    "slt",
    "sle",
    "sgt",
    "sge",
    "ite",
    "bool_and",
    "bool_or",
    "bool_not",
    "binary",
    "BINARY_SEMANTICS",
]

_CONST = Op.CONST
_SELECT = Op.SELECT
_CONCAT = Op.CONCAT
_EXTRACT = Op.EXTRACT
_ZEXT = Op.ZEXT
_SEXT = Op.SEXT
_NOT = Op.NOT
_ADD = Op.ADD
_SUB = Op.SUB
_MUL = Op.MUL
_AND = Op.AND
_OR = Op.OR
_XOR = Op.XOR
_EQ = Op.EQ
_ULT = Op.ULT
_ULE = Op.ULE
_SLT = Op.SLT
_SLE = Op.SLE


# ---------------------------------------------------------------------------------------------
# Concrete semantics on unsigned ints (shared with the evaluator so both agree by construction).


def to_signed(v: int, width: int) -> int:
    """Interpret the unsigned ``width``-bit value ``v`` as two's complement."""
    return v - (1 << width) if v >> (width - 1) else v


def _udiv(a: int, b: int, width: int) -> int:
    return (1 << width) - 1 if b == 0 else a // b


def _urem(a: int, b: int, width: int) -> int:
    return a if b == 0 else a % b


def _sdiv(a: int, b: int, width: int) -> int:
    # bvsdiv: divide magnitudes with bvudiv, negate when exactly one operand is negative.
    mask = (1 << width) - 1
    a_neg = a >> (width - 1)
    b_neg = b >> (width - 1)
    q = _udiv((-a) & mask if a_neg else a, (-b) & mask if b_neg else b, width)
    return (-q) & mask if a_neg != b_neg else q


def _srem(a: int, b: int, width: int) -> int:
    # bvsrem: remainder of the magnitudes, carrying the sign of the dividend.
    mask = (1 << width) - 1
    a_neg = a >> (width - 1)
    b_neg = b >> (width - 1)
    r = _urem((-a) & mask if a_neg else a, (-b) & mask if b_neg else b, width)
    return (-r) & mask if a_neg else r


def _shl(a: int, b: int, width: int) -> int:
    return 0 if b >= width else (a << b) & ((1 << width) - 1)


def _lshr(a: int, b: int, width: int) -> int:
    return 0 if b >= width else a >> b


def _ashr(a: int, b: int, width: int) -> int:
    return (to_signed(a, width) >> min(b, width - 1)) & ((1 << width) - 1)


def _slt(a: int, b: int, width: int) -> int:
    return 1 if to_signed(a, width) < to_signed(b, width) else 0


def _sle(a: int, b: int, width: int) -> int:
    return 1 if to_signed(a, width) <= to_signed(b, width) else 0


BINARY_SEMANTICS: dict[Op, Callable[[int, int, int], int]] = {
    Op.ADD: lambda a, b, w: (a + b) & ((1 << w) - 1),
    Op.SUB: lambda a, b, w: (a - b) & ((1 << w) - 1),
    Op.MUL: lambda a, b, w: (a * b) & ((1 << w) - 1),
    Op.UDIV: _udiv,
    Op.SDIV: _sdiv,
    Op.UREM: _urem,
    Op.SREM: _srem,
    Op.AND: lambda a, b, w: a & b,
    Op.OR: lambda a, b, w: a | b,
    Op.XOR: lambda a, b, w: a ^ b,
    Op.SHL: _shl,
    Op.LSHR: _lshr,
    Op.ASHR: _ashr,
    Op.EQ: lambda a, b, w: 1 if a == b else 0,
    Op.ULT: lambda a, b, w: 1 if a < b else 0,
    Op.ULE: lambda a, b, w: 1 if a <= b else 0,
    Op.SLT: _slt,
    Op.SLE: _sle,
}
"""Concrete semantics of every binary op: ``f(a, b, operand_width) -> result`` on unsigned ints."""


# ---------------------------------------------------------------------------------------------
# Checks


def _width_of(e: Expr, what: str) -> int:
    try:
        return e.width
    except AttributeError:
        raise TypeError(
            f"{what} expects Expr operands, got {type(e).__name__}; wrap ints with const(value, width)"
        ) from None


def _same_width(a: Expr, b: Expr, what: str) -> int:
    wa = _width_of(a, what)
    wb = _width_of(b, what)
    if wa != wb:
        raise ValueError(f"{what}: operand widths differ ({wa} vs {wb}); extend or truncate first")
    return wa


# ---------------------------------------------------------------------------------------------
# Constants


def const(value: int, width: int) -> Expr:
    """The ``width``-bit constant ``value`` (masked to the width, so -1 is all ones)."""
    if width < 1:
        raise ValueError(f"bit-vector width must be at least 1, got {width}")
    return intern_expr(_CONST, width, (), value & ((1 << width) - 1))


TRUE: Expr = const(1, 1)
"""The width-1 constant 1."""
FALSE: Expr = const(0, 1)
"""The width-1 constant 0."""


# ---------------------------------------------------------------------------------------------
# Arrays


def read(updates: UpdateList, index: Expr) -> Expr:
    """The byte at ``index`` (32 bits) of the array as modified by ``updates``.

    With a constant index the newest matching concrete write, or the constant array's byte,
    is returned directly; a write at a symbolic index stops that search.
    """
    if _width_of(index, "read") != INDEX_WIDTH:
        raise ValueError(f"read: index must be {INDEX_WIDTH} bits wide, got {index.width}")
    if index.op is not _CONST:
        return intern_read(updates, index)
    i = index.value
    node = updates.head
    while node is not None:
        node_index = node.index
        if node_index.op is not _CONST:
            if node is not updates.head:
                updates = UpdateList(updates.array, node)
            return intern_read(updates, index)
        if node_index.value == i:
            return node.value
        node = node.next
    array = updates.array
    initial = array.initial
    if initial is not None:
        return intern_expr(_CONST, ELEMENT_WIDTH, (), initial[i] if i < array.size else 0)
    if updates.head is not None:
        updates = UpdateList(array, None)
    return intern_read(updates, index)


# ---------------------------------------------------------------------------------------------
# Width changes


def concat(high: Expr, low: Expr) -> Expr:
    """``high`` bits above ``low`` bits; width is the sum.

    Adjacent extracts of one expression merge, so bytes stored from ``x`` and loaded back
    in order give ``x`` itself.
    """
    hw = _width_of(high, "concat")
    lw = _width_of(low, "concat")
    hop = high.op
    lop = low.op
    if hop is _CONST:
        if lop is _CONST:
            return intern_expr(_CONST, hw + lw, (), (high.value << lw) | low.value)
        if lop is _CONCAT:
            lh = low.args[0]
            if lh.op is _CONST:
                return concat(const((high.value << lh.width) | lh.value, hw + lh.width), low.args[1])
    elif hop is _EXTRACT:
        x = high.args[0]
        if lop is _EXTRACT:
            if low.args[0] is x and high.value == low.value + lw:
                return extract(x, low.value, hw + lw)
        elif lop is _CONCAT:
            lh = low.args[0]
            if lh.op is _EXTRACT and lh.args[0] is x and high.value == lh.value + lh.width:
                return concat(extract(x, lh.value, hw + lh.width), low.args[1])
    elif hop is _CONCAT and lop is _EXTRACT:
        hl = high.args[1]
        if hl.op is _EXTRACT and hl.args[0] is low.args[0] and hl.value == low.value + lw:
            return concat(high.args[0], extract(low.args[0], low.value, hl.width + lw))
    return intern_expr(_CONCAT, hw + lw, (high, low))


def extract(e: Expr, offset: int, width: int) -> Expr:
    """Bits ``[offset, offset + width)`` of ``e`` as a ``width``-bit expression."""
    ew = _width_of(e, "extract")
    if offset < 0 or width < 1 or offset + width > ew:
        raise ValueError(
            f"extract: bits [{offset}, {offset + width}) do not lie within a {ew}-bit value"
        )
    # Loop rather than recurse: each step peels one layer that cannot contribute other bits.
    while True:
        if offset == 0 and width == e.width:
            return e
        op = e.op
        if op is _CONST:
            return intern_expr(_CONST, width, (), (e.value >> offset) & ((1 << width) - 1))
        if op is _EXTRACT:
            offset += e.value
            e = e.args[0]
            continue
        if op is _CONCAT:
            low = e.args[1]
            lw = low.width
            if offset + width <= lw:
                e = low
                continue
            if offset >= lw:
                offset -= lw
                e = e.args[0]
                continue
            break
        if op is _ZEXT or op is _SEXT:
            x = e.args[0]
            xw = x.width
            if offset + width <= xw:
                e = x
                continue
            if op is _ZEXT:
                if offset >= xw:
                    return intern_expr(_CONST, width, (), 0)
                if offset == 0:
                    return intern_expr(_ZEXT, width, (x,))
            elif offset == 0:
                return intern_expr(_SEXT, width, (x,))
            break
        break
    return intern_expr(_EXTRACT, width, (e,), offset)


def trunc(e: Expr, width: int) -> Expr:
    """The low ``width`` bits of ``e``."""
    return extract(e, 0, width)


def zext(e: Expr, width: int) -> Expr:
    """``e`` zero-extended to ``width`` bits (``width == e.width`` returns ``e``)."""
    ew = _width_of(e, "zext")
    if width < ew:
        raise ValueError(f"zext: cannot extend a {ew}-bit value to {width} bits; use trunc")
    if width == ew:
        return e
    op = e.op
    if op is _CONST:
        return intern_expr(_CONST, width, (), e.value)
    if op is _ZEXT:
        e = e.args[0]
    return intern_expr(_ZEXT, width, (e,))


def sext(e: Expr, width: int) -> Expr:
    """``e`` sign-extended to ``width`` bits (``width == e.width`` returns ``e``)."""
    ew = _width_of(e, "sext")
    if width < ew:
        raise ValueError(f"sext: cannot extend a {ew}-bit value to {width} bits; use trunc")
    if width == ew:
        return e
    op = e.op
    if op is _CONST:
        return intern_expr(_CONST, width, (), to_signed(e.value, ew) & ((1 << width) - 1))
    if op is _SEXT:
        e = e.args[0]
    elif op is _ZEXT:
        # The zero-extended value has a clear sign bit, so sign extension adds zeros too.
        return intern_expr(_ZEXT, width, (e.args[0],))
    return intern_expr(_SEXT, width, (e,))


# ---------------------------------------------------------------------------------------------
# Bitwise and arithmetic


def not_(e: Expr) -> Expr:
    """Bitwise complement of ``e``."""
    w = _width_of(e, "not_")
    op = e.op
    if op is _CONST:
        return intern_expr(_CONST, w, (), e.value ^ ((1 << w) - 1))
    if op is _NOT:
        return e.args[0]
    return intern_expr(_NOT, w, (e,))


def neg(e: Expr) -> Expr:
    """Two's complement negation, built as ``sub(0, e)``."""
    return sub(const(0, _width_of(e, "neg")), e)


def add(a: Expr, b: Expr) -> Expr:
    """``a + b`` modulo ``2**width``."""
    w = _same_width(a, b, "add")
    if b.op is _CONST:
        if a.op is _CONST:
            return intern_expr(_CONST, w, (), (a.value + b.value) & ((1 << w) - 1))
        a, b = b, a
    elif a.op is not _CONST:
        return intern_expr(_ADD, w, (a, b))
    # a is the constant, b is not.
    c = a.value
    if c == 0:
        return b
    if b.op is _ADD:
        inner = b.args[0]
        if inner.op is _CONST:
            c = (c + inner.value) & ((1 << w) - 1)
            b = b.args[1]
            if c == 0:
                return b
            a = intern_expr(_CONST, w, (), c)
    return intern_expr(_ADD, w, (a, b))


def sub(a: Expr, b: Expr) -> Expr:
    """``a - b`` modulo ``2**width``."""
    w = _same_width(a, b, "sub")
    if b.op is _CONST:
        if a.op is _CONST:
            return intern_expr(_CONST, w, (), (a.value - b.value) & ((1 << w) - 1))
        if b.value == 0:
            return a
        return add(intern_expr(_CONST, w, (), (-b.value) & ((1 << w) - 1)), a)
    if a is b:
        return intern_expr(_CONST, w, (), 0)
    return intern_expr(_SUB, w, (a, b))


def mul(a: Expr, b: Expr) -> Expr:
    """``a * b`` modulo ``2**width``."""
    w = _same_width(a, b, "mul")
    if b.op is _CONST:
        if a.op is _CONST:
            return intern_expr(_CONST, w, (), (a.value * b.value) & ((1 << w) - 1))
        a, b = b, a
    elif a.op is not _CONST:
        return intern_expr(_MUL, w, (a, b))
    c = a.value
    if c == 0:
        return a
    if c == 1:
        return b
    return intern_expr(_MUL, w, (a, b))


def udiv(a: Expr, b: Expr) -> Expr:
    """Unsigned division; division by zero gives all ones (SMT-LIB bvudiv)."""
    w = _same_width(a, b, "udiv")
    if b.op is _CONST:
        if a.op is _CONST:
            return intern_expr(_CONST, w, (), _udiv(a.value, b.value, w))
        if b.value == 1:
            return a
        if a.op is Op.UDIV and a.args[1].op is _CONST and a.args[1].value and b.value:
            # (x / c1) / c2 is x / (c1 * c2): printing a number divides it by 10 once per
            # digit, and one division is what the solver bit-blasts instead of sixteen; a
            # product past the width leaves nothing (x / c1 < 2**w / c1 <= c2)
            divisor = a.args[1].value * b.value
            if divisor >> w:
                return intern_expr(_CONST, w, (), 0)
            return intern_expr(Op.UDIV, w, (a.args[0], intern_expr(_CONST, w, (), divisor)))
    return intern_expr(Op.UDIV, w, (a, b))


def sdiv(a: Expr, b: Expr) -> Expr:
    """Signed division truncating toward zero (SMT-LIB bvsdiv)."""
    w = _same_width(a, b, "sdiv")
    if b.op is _CONST:
        if a.op is _CONST:
            return intern_expr(_CONST, w, (), _sdiv(a.value, b.value, w))
        if b.value == 1:
            return a
        if a.op is Op.SDIV and a.args[1].op is _CONST:
            # truncation toward zero composes for positive divisors, as for udiv above; a
            # product past the signed range is left alone (-2**(w-1) / 2**(w-1) is -1)
            divisor = a.args[1].value * b.value
            if divisor and not (a.args[1].value >> (w - 1) or b.value >> (w - 1)
                                or divisor >> (w - 1)):
                return intern_expr(Op.SDIV, w, (a.args[0], intern_expr(_CONST, w, (), divisor)))
    return intern_expr(Op.SDIV, w, (a, b))


def urem(a: Expr, b: Expr) -> Expr:
    """Unsigned remainder; remainder by zero gives the dividend (SMT-LIB bvurem)."""
    w = _same_width(a, b, "urem")
    if b.op is _CONST:
        if a.op is _CONST:
            return intern_expr(_CONST, w, (), _urem(a.value, b.value, w))
        if b.value == 1:
            return intern_expr(_CONST, w, (), 0)
    return intern_expr(Op.UREM, w, (a, b))


def srem(a: Expr, b: Expr) -> Expr:
    """Signed remainder with the sign of the dividend (SMT-LIB bvsrem)."""
    w = _same_width(a, b, "srem")
    if b.op is _CONST:
        if a.op is _CONST:
            return intern_expr(_CONST, w, (), _srem(a.value, b.value, w))
        if b.value == 1:
            return intern_expr(_CONST, w, (), 0)
    return intern_expr(Op.SREM, w, (a, b))


def and_(a: Expr, b: Expr) -> Expr:
    """Bitwise and (logical and on width-1 expressions)."""
    w = _same_width(a, b, "and_")
    if b.op is _CONST:
        if a.op is _CONST:
            return intern_expr(_CONST, w, (), a.value & b.value)
        a, b = b, a
    elif a.op is not _CONST:
        if a is b:
            return a
        return intern_expr(_AND, w, (a, b))
    c = a.value
    if c == 0:
        return a
    if c == (1 << w) - 1:
        return b
    return intern_expr(_AND, w, (a, b))


def or_(a: Expr, b: Expr) -> Expr:
    """Bitwise or (logical or on width-1 expressions)."""
    w = _same_width(a, b, "or_")
    if b.op is _CONST:
        if a.op is _CONST:
            return intern_expr(_CONST, w, (), a.value | b.value)
        a, b = b, a
    elif a.op is not _CONST:
        if a is b:
            return a
        return intern_expr(_OR, w, (a, b))
    c = a.value
    if c == 0:
        return b
    if c == (1 << w) - 1:
        return a
    return intern_expr(_OR, w, (a, b))


def xor(a: Expr, b: Expr) -> Expr:
    """Bitwise exclusive or."""
    w = _same_width(a, b, "xor")
    if b.op is _CONST:
        if a.op is _CONST:
            return intern_expr(_CONST, w, (), a.value ^ b.value)
        a, b = b, a
    elif a.op is not _CONST:
        if a is b:
            return intern_expr(_CONST, w, (), 0)
        return intern_expr(_XOR, w, (a, b))
    if a.value == 0:
        return b
    return intern_expr(_XOR, w, (a, b))


def _shift(op: Op, fold: Callable[[int, int, int], int], a: Expr, b: Expr, what: str) -> Expr:
    w = _same_width(a, b, what)
    if b.op is _CONST:
        if a.op is _CONST:
            return intern_expr(_CONST, w, (), fold(a.value, b.value, w))
        s = b.value
        if s == 0:
            return a
        if s >= w and op is not Op.ASHR:
            return intern_expr(_CONST, w, (), 0)
    elif a.op is _CONST and a.value == 0:
        return a
    return intern_expr(op, w, (a, b))


def shl(a: Expr, b: Expr) -> Expr:
    """Shift left by ``b``; shifting by the width or more gives 0."""
    return _shift(Op.SHL, _shl, a, b, "shl")


def lshr(a: Expr, b: Expr) -> Expr:
    """Logical shift right by ``b``; shifting by the width or more gives 0."""
    return _shift(Op.LSHR, _lshr, a, b, "lshr")


def ashr(a: Expr, b: Expr) -> Expr:
    """Arithmetic shift right by ``b``; shifting by the width or more gives the sign fill."""
    return _shift(Op.ASHR, _ashr, a, b, "ashr")


# ---------------------------------------------------------------------------------------------
# Comparisons (width-1 results)


def eq(a: Expr, b: Expr) -> Expr:
    """1 when ``a == b``, else 0."""
    w = _same_width(a, b, "eq")
    if b.op is _CONST:
        if a.op is _CONST:
            return TRUE if a.value == b.value else FALSE
        a, b = b, a
    elif a.op is not _CONST:
        if a is b:
            return TRUE
        return intern_expr(_EQ, 1, (a, b))
    # a is the constant, b is not.
    c = a.value
    if w == 1:
        return b if c else not_(b)
    bop = b.op
    if bop is _ZEXT:
        x = b.args[0]
        xw = x.width
        if c >> xw:
            return FALSE
        return eq(intern_expr(_CONST, xw, (), c), x)
    if bop is _SEXT:
        x = b.args[0]
        xw = x.width
        low = c & ((1 << xw) - 1)
        if to_signed(low, xw) & ((1 << w) - 1) != c:
            return FALSE
        return eq(intern_expr(_CONST, xw, (), low), x)
    if c == 0 and (bop is Op.UDIV or bop is Op.SDIV) and b.args[1].op is _CONST:
        # "no digits left" in a number's digit loop: a comparison, not a division
        x, d = b.args[0], b.args[1].value
        if bop is Op.UDIV and d:
            return ult(x, intern_expr(_CONST, w, (), d))
        if bop is Op.SDIV and 0 < d < 1 << (w - 1):
            # -d < x < d, as one unsigned comparison of x shifted by d - 1
            return ult(add(intern_expr(_CONST, w, (), d - 1), x), intern_expr(_CONST, w, (), 2 * d - 1))
    return intern_expr(_EQ, 1, (a, b))


def ne(a: Expr, b: Expr) -> Expr:
    """1 when ``a != b``, else 0; built as ``not_(eq(a, b))``."""
    return not_(eq(a, b))


def ult(a: Expr, b: Expr) -> Expr:
    """Unsigned ``a < b``."""
    w = _same_width(a, b, "ult")
    aop = a.op
    bop = b.op
    if bop is _CONST:
        c = b.value
        if aop is _CONST:
            return TRUE if a.value < c else FALSE
        if c == 0:
            return FALSE
        if aop is _ZEXT:
            x = a.args[0]
            if c >> x.width:
                return TRUE
            return ult(x, intern_expr(_CONST, x.width, (), c))
    elif aop is _CONST:
        c = a.value
        if c == (1 << w) - 1:
            return FALSE
        if bop is _ZEXT:
            x = b.args[0]
            if c >> x.width:
                return FALSE
            return ult(intern_expr(_CONST, x.width, (), c), x)
    elif a is b:
        return FALSE
    return intern_expr(_ULT, 1, (a, b))


def ule(a: Expr, b: Expr) -> Expr:
    """Unsigned ``a <= b``."""
    w = _same_width(a, b, "ule")
    aop = a.op
    bop = b.op
    if bop is _CONST:
        c = b.value
        if aop is _CONST:
            return TRUE if a.value <= c else FALSE
        if c == (1 << w) - 1:
            return TRUE
        if aop is _ZEXT:
            x = a.args[0]
            if c >> x.width:
                return TRUE
            return ule(x, intern_expr(_CONST, x.width, (), c))
    elif aop is _CONST:
        c = a.value
        if c == 0:
            return TRUE
        if bop is _ZEXT:
            x = b.args[0]
            if c >> x.width:
                return FALSE
            return ule(intern_expr(_CONST, x.width, (), c), x)
    elif a is b:
        return TRUE
    return intern_expr(_ULE, 1, (a, b))


def ugt(a: Expr, b: Expr) -> Expr:
    """Unsigned ``a > b``; built as ``ult(b, a)``."""
    return ult(b, a)


def uge(a: Expr, b: Expr) -> Expr:
    """Unsigned ``a >= b``; built as ``ule(b, a)``."""
    return ule(b, a)


def slt(a: Expr, b: Expr) -> Expr:
    """Signed ``a < b``."""
    w = _same_width(a, b, "slt")
    if a.op is _CONST and b.op is _CONST:
        return TRUE if to_signed(a.value, w) < to_signed(b.value, w) else FALSE
    if a is b:
        return FALSE
    return intern_expr(_SLT, 1, (a, b))


def sle(a: Expr, b: Expr) -> Expr:
    """Signed ``a <= b``."""
    w = _same_width(a, b, "sle")
    if a.op is _CONST and b.op is _CONST:
        return TRUE if to_signed(a.value, w) <= to_signed(b.value, w) else FALSE
    if a is b:
        return TRUE
    return intern_expr(_SLE, 1, (a, b))


def sgt(a: Expr, b: Expr) -> Expr:
    """Signed ``a > b``; built as ``slt(b, a)``."""
    return slt(b, a)


def sge(a: Expr, b: Expr) -> Expr:
    """Signed ``a >= b``; built as ``sle(b, a)``."""
    return sle(b, a)


# ---------------------------------------------------------------------------------------------
# Selection and booleans


def ite(cond: Expr, then: Expr, else_: Expr) -> Expr:
    """``then`` if the width-1 ``cond`` is 1, else ``else_`` (op SELECT)."""
    if _width_of(cond, "ite") != 1:
        raise ValueError(f"ite: condition must be 1 bit wide, got {cond.width}; compare with ne(x, 0)")
    w = _same_width(then, else_, "ite")
    if cond.op is _CONST:
        return then if cond.value else else_
    if then is else_:
        return then
    if w == 1 and then.op is _CONST and else_.op is _CONST:
        # then and else_ differ (checked above), so this is cond or its negation.
        return cond if then.value else not_(cond)
    return intern_expr(_SELECT, w, (cond, then, else_))


def _check_bool(e: Expr, what: str) -> None:
    if _width_of(e, what) != 1:
        raise ValueError(f"{what}: expects a 1-bit boolean, got width {e.width}; compare with ne(x, 0)")


def bool_and(a: Expr, b: Expr) -> Expr:
    """Logical and of two width-1 expressions."""
    _check_bool(a, "bool_and")
    _check_bool(b, "bool_and")
    return and_(a, b)


def bool_or(a: Expr, b: Expr) -> Expr:
    """Logical or of two width-1 expressions."""
    _check_bool(a, "bool_or")
    _check_bool(b, "bool_or")
    return or_(a, b)


def bool_not(a: Expr) -> Expr:
    """Logical negation of a width-1 expression."""
    _check_bool(a, "bool_not")
    return not_(a)


_BINARY_BUILDERS: dict[Op, Callable[[Expr, Expr], Expr]] = {
    Op.ADD: add,
    Op.SUB: sub,
    Op.MUL: mul,
    Op.UDIV: udiv,
    Op.SDIV: sdiv,
    Op.UREM: urem,
    Op.SREM: srem,
    Op.AND: and_,
    Op.OR: or_,
    Op.XOR: xor,
    Op.SHL: shl,
    Op.LSHR: lshr,
    Op.ASHR: ashr,
    Op.EQ: eq,
    Op.ULT: ult,
    Op.ULE: ule,
    Op.SLT: slt,
    Op.SLE: sle,
}


def binary(op: Op, a: Expr, b: Expr) -> Expr:
    """Build the binary operation ``op`` through its smart constructor (for generic rebuilding)."""
    try:
        builder = _BINARY_BUILDERS[op]
    except KeyError:
        raise ValueError(f"binary: {op!r} is not a binary operation") from None
    return builder(a, b)
