"""Bounds and ranges of an expression's value, read off its top nodes without a solver.

A table lookup at a masked index (cksum's ``crctab[k][(crc >> 24) ^ byte]``) is in bounds
whatever the inputs: its offset is ``4 * (x & 255)``. But ``x`` is the checksum so far, an
expression over every byte read and over the table itself, and the bounds question over it
took z3 4-5 s each time (13 of cksum's 87 queries in a minute, 55 of its 60 s). The masks,
shifts, extensions and constant multipliers at the top of such an offset settle it:
:func:`unsigned_max` reads them, and :func:`at_most`, the memory models' bounds condition,
is true where they do.

The walk looks at no more than :data:`MAX_NODES` nodes, nearest the top first; a node below
that, or of an operation not listed, may take any value of its width. Semantics are
SMT-LIB's, as the constructors': ``udiv x 0`` is all ones, ``urem x 0`` is ``x``. (Not in
the constructors' ``ult``/``ule``: there the walk cost every comparison of an input word
with a constant 1.5 -> 8.9 us, for questions only the bounds checks ask.)

:func:`value_range` and :func:`known_truth` (below) go further for comparisons with a
constant: ranges that may cross zero, so that remainders and sums of either sign keep them
tight; the solver chain's trivial layer asks them of each new condition.
"""

from __future__ import annotations

from symex.expr.build import TRUE, const, to_signed, ule
from symex.expr.nodes import Expr, Op

__all__ = ["MAX_NODES", "at_most", "known_truth", "unsigned_max", "value_range"]

#: nodes one range looks at: the memory models ask for one on every access at a symbolic
#: offset, the chain's trivial layer for every new condition, so it must stay a few
#: microseconds; an offset's or a printed digit's arithmetic above its inputs is a handful
MAX_NODES = 16


def at_most(e: Expr, limit: int) -> Expr:
    """The condition ``e <= limit`` (unsigned): true where :func:`unsigned_max` shows it."""
    return TRUE if unsigned_max(e) <= limit else ule(e, const(limit, e.width))


def unsigned_max(e: Expr) -> int:
    """A value ``e`` never exceeds, unsigned, on any input: ``2**width - 1`` where its top
    nodes show nothing smaller."""
    if e.op is Op.CONST:
        return e.value
    return _unsigned(*value_range(e), e.width)[1]


# -- ranges: what a comparison with a constant can be, read off the top nodes -----------------
#
# stat prints the 64-bit sizes and times of a symbolic file, and the output then asks of each
# digit ``'0' + x / d % 10`` whether it is the NUL byte: 200 of its first 721 queries, 19.6 of
# z3's 20.1 s (docs/solver.md). A remainder by 10 lies in -9..9, so the digit lies in 39..57,
# never 0: ranges settle it, no solver needed.
#
# A range of a ``w``-bit node is a pair of integers ``lo <= hi`` with ``hi - lo < 2**w``: the
# node takes only values ``v mod 2**w`` for ``lo <= v <= hi``. Such a range may cross zero
# (``-9..9`` is 0..9 and 2**w-9..2**w-1), so sums and remainders of either sign keep it tight.

#: operations whose range follows from their operands' (the rest: any value of the width)
_RANGED = frozenset({Op.CONST, Op.ZEXT, Op.SEXT, Op.EXTRACT, Op.CONCAT, Op.ADD, Op.SUB, Op.MUL,
                     Op.UDIV, Op.SDIV, Op.UREM, Op.SREM, Op.AND, Op.OR, Op.XOR, Op.LSHR, Op.ASHR,
                     Op.SHL, Op.SELECT})


def _unsigned(lo: int, hi: int, width: int) -> tuple[int, int]:
    """The range as unsigned values: itself moved into ``0..2**width-1`` where it does not
    wrap there, else every value."""
    base = lo >> width
    if hi >> width != base:
        return 0, (1 << width) - 1
    return lo - (base << width), hi - (base << width)


def _signed(lo: int, hi: int, width: int) -> tuple[int, int]:
    """The range as signed values (two's complement), likewise."""
    half = 1 << (width - 1)
    low, high = _unsigned(lo + half, hi + half, width)
    return low - half, high - half


def _fitting(lo: int, hi: int, width: int) -> tuple[int, int]:
    """``lo..hi`` where it is a range of the width, else every value."""
    return (lo, hi) if hi - lo < 1 << width else (0, (1 << width) - 1)


def value_range(e: Expr) -> tuple[int, int]:
    """A range ``lo..hi`` of integers (``hi - lo < 2**width``) such that every value ``e``
    takes, on any input, is ``v mod 2**width`` for some ``v`` in it."""
    if e.op is Op.CONST:
        return e.value, e.value
    ranges: dict[int, tuple[int, int]] = {}  # by node id
    looked = 0
    stack: list[tuple[Expr, bool]] = [(e, False)]
    while stack:
        node, expanded = stack.pop()
        if id(node) in ranges:
            continue
        if expanded:
            ranges[id(node)] = _range_of(node, ranges)
            continue
        looked += 1
        if node.op is Op.CONST:
            ranges[id(node)] = node.value, node.value
        elif node.op not in _RANGED or looked > MAX_NODES:
            ranges[id(node)] = 0, (1 << node.width) - 1
        else:
            stack.append((node, True))
            operands = node.args[1:] if node.op is Op.SELECT else node.args
            stack.extend((operand, False) for operand in operands)
    return ranges[id(e)]


def _range_of(node: Expr, ranges: dict[int, tuple[int, int]]) -> tuple[int, int]:
    """The range of ``node`` from its operands' ranges (SMT-LIB's semantics)."""
    op = node.op
    width = node.width
    full = (0, (1 << width) - 1)
    args = node.args
    if op is Op.SELECT:  # the condition is not walked: either value may be taken
        a = _unsigned(*ranges[id(args[1])], width)
        b = _unsigned(*ranges[id(args[2])], width)
        return min(a[0], b[0]), max(a[1], b[1])
    lo, hi = ranges[id(args[0])]
    if op is Op.ZEXT:
        return _unsigned(lo, hi, args[0].width)
    if op is Op.SEXT:
        return _signed(lo, hi, args[0].width)
    if op is Op.EXTRACT:
        if node.value == 0:
            return _fitting(lo, hi, width)
        low, high = _unsigned(lo, hi, args[0].width)
        return _fitting(low >> node.value, high >> node.value, width)
    right = ranges[id(args[1])]
    if op is Op.CONCAT:
        low_width = args[1].width
        a = _unsigned(lo, hi, args[0].width)
        b = _unsigned(*right, low_width)
        return (a[0] << low_width) + b[0], (a[1] << low_width) + b[1]
    if op is Op.ADD:
        return _fitting(lo + right[0], hi + right[1], width)
    if op is Op.SUB:
        return _fitting(lo - right[1], hi - right[0], width)
    if op is Op.OR or op is Op.XOR:
        top = max(_unsigned(lo, hi, width)[1], _unsigned(*right, width)[1])
        return 0, (1 << top.bit_length()) - 1
    if op is Op.MUL or op is Op.AND:
        if args[0].op is Op.CONST:
            lo, hi, right = right[0], right[1], (lo, hi)
        if args[0].op is Op.CONST or args[1].op is Op.CONST:
            factor = right[0]
            if op is Op.AND:
                return 0, min(factor, _unsigned(lo, hi, width)[1])
            return _fitting(lo * factor, hi * factor, width)
        a, b = _unsigned(lo, hi, width), _unsigned(*right, width)
        return (0, min(a[1], b[1])) if op is Op.AND else _fitting(a[0] * b[0], a[1] * b[1], width)
    if args[1].op is not Op.CONST:
        if op is Op.UREM or op is Op.LSHR:  # never above the left operand (urem x 0 is x)
            return 0, _unsigned(lo, hi, width)[1]
        return full
    constant = args[1].value
    if op is Op.UREM:
        low, high = _unsigned(lo, hi, width)
        if constant == 0 or high < constant:  # x urem 0 is x
            return low, high
        return 0, constant - 1
    if op is Op.SREM:
        if constant == 0:  # x srem 0 is x
            return lo, hi
        bound = abs(to_signed(constant, width)) - 1
        low, high = _signed(lo, hi, args[0].width)
        if low >= 0:
            return 0, min(bound, high)
        if high <= 0:
            return max(-bound, low), 0
        return -bound, bound
    if op is Op.UDIV:
        if constant == 0:  # all ones
            return full[1], full[1]
        low, high = _unsigned(lo, hi, width)
        return low // constant, high // constant
    if op is Op.SDIV:
        divisor = to_signed(constant, width)
        if divisor <= 0:  # zero, and -1 (whose quotient of the least value wraps): left out
            return full
        low, high = _signed(lo, hi, width)
        return _toward_zero(low, divisor), _toward_zero(high, divisor)
    if op is Op.LSHR:
        low, high = _unsigned(lo, hi, width)
        return (low >> constant, high >> constant) if constant < width else (0, 0)
    if op is Op.ASHR:
        low, high = _signed(lo, hi, width)
        shift = min(constant, width - 1)
        return low >> shift, high >> shift
    # SHL
    if constant >= width:
        return 0, 0
    low, high = _unsigned(lo, hi, width)
    return _fitting(low << constant, high << constant, width)


def _toward_zero(dividend: int, divisor: int) -> int:
    """``dividend / divisor`` rounded toward zero (``bvsdiv``'s rounding; ``divisor > 0``)."""
    return dividend // divisor if dividend >= 0 else -(-dividend // divisor)


def _holds_somewhere(lo: int, hi: int, value: int, width: int) -> bool:
    """Whether some ``v`` in ``lo..hi`` is ``value`` modulo ``2**width``."""
    return lo + ((value - lo) % (1 << width)) <= hi


def known_truth(condition: Expr) -> bool | None:
    """True or False where the operands' ranges settle ``condition`` (a comparison with a
    constant, or its negation) on every input; None where they do not."""
    negated = False
    while condition.op is Op.NOT and condition.width == 1:
        negated = not negated
        condition = condition.args[0]
    op = condition.op
    if op not in (Op.EQ, Op.ULT, Op.ULE, Op.SLT, Op.SLE):
        return None
    a, b = condition.args
    if b.op is Op.CONST:
        other, constant, constant_left = a, b.value, False
    elif a.op is Op.CONST:
        other, constant, constant_left = b, a.value, True
    else:
        return None
    width = other.width
    lo, hi = value_range(other)
    answer: bool | None = None
    if op is Op.EQ:
        if not _holds_somewhere(lo, hi, constant, width):
            answer = False
        elif lo == hi:
            answer = True
    else:
        if op is Op.SLT or op is Op.SLE:
            low, high = _signed(lo, hi, width)
            constant = to_signed(constant, width)
        else:
            low, high = _unsigned(lo, hi, width)
        strict = op is Op.ULT or op is Op.SLT
        # other < c (or <=), or c < other (or <=)
        if constant_left:
            always = constant < low if strict else constant <= low
            never = constant >= high if strict else constant > high
        else:
            always = high < constant if strict else high <= constant
            never = low >= constant if strict else low > constant
        answer = True if always else False if never else None
    if answer is None:
        return None
    return answer != negated
