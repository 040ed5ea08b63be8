"""An upper bound on an expression's unsigned value, read off its top nodes without a solver.

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
"""

from __future__ import annotations

from symex.expr.build import TRUE, const, ule
from symex.expr.nodes import Expr, Op

__all__ = ["MAX_NODES", "at_most", "unsigned_max"]

#: nodes one bound looks at: it runs on every access at a symbolic offset, so it must stay
#: a few microseconds; an offset's arithmetic above its inputs is a handful
MAX_NODES = 16

#: operations whose bound follows from their operands' (the rest: any value of the width)
_BOUNDED = frozenset({Op.CONST, Op.ZEXT, Op.AND, Op.OR, Op.XOR, Op.ADD, Op.MUL, Op.UDIV, Op.UREM,
                      Op.LSHR, Op.SHL, Op.SELECT, Op.CONCAT, Op.EXTRACT})


def at_most(e: Expr, limit: int) -> Expr:
    """The condition ``e <= limit`` (unsigned): true where :func:`unsigned_max` shows it."""
    return TRUE if unsigned_max(e) <= limit else ule(e, const(limit, e.width))


def unsigned_max(e: Expr) -> int:
    """A value ``e`` never exceeds, unsigned, on any input: ``2**width - 1`` where its top
    nodes show nothing smaller."""
    if e.op is Op.CONST:
        return e.value
    if e.op not in _BOUNDED:
        return (1 << e.width) - 1
    bounds: dict[int, int] = {}  # by node id
    looked = 0
    stack: list[tuple[Expr, bool]] = [(e, False)]
    while stack:
        node, expanded = stack.pop()
        if id(node) in bounds:
            continue
        if expanded:
            bounds[id(node)] = _combine(node, bounds)
            continue
        looked += 1
        if node.op is Op.CONST:
            bounds[id(node)] = node.value
        elif node.op not in _BOUNDED or looked > MAX_NODES:
            bounds[id(node)] = (1 << node.width) - 1
        else:
            stack.append((node, True))
            operands = node.args[1:] if node.op is Op.SELECT else node.args
            stack.extend((operand, False) for operand in operands)
    return bounds[id(e)]


def _combine(node: Expr, bounds: dict[int, int]) -> int:
    """The bound of ``node`` from its operands' bounds."""
    op = node.op
    full = (1 << node.width) - 1
    args = node.args
    if op is Op.ZEXT:
        return bounds[id(args[0])]
    if op is Op.SELECT:
        return max(bounds[id(args[1])], bounds[id(args[2])])
    if op is Op.EXTRACT:
        shifted = bounds[id(args[0])] >> node.value  # node.value: the lowest bit taken
        return shifted if shifted <= full else full
    if op is Op.CONCAT:
        return (bounds[id(args[0])] << args[1].width) | bounds[id(args[1])]
    left, right = bounds[id(args[0])], bounds[id(args[1])]
    if op is Op.AND:
        return min(left, right)
    if op is Op.OR or op is Op.XOR:
        return min(full, (1 << max(left, right).bit_length()) - 1)
    if op is Op.ADD:
        total = left + right
        return total if total <= full else full
    if op is Op.MUL:
        product = left * right
        return product if product <= full else full
    constant = args[1].value if args[1].op is Op.CONST else 0  # a divisor, a shift
    if op is Op.UDIV:
        return left // constant if constant else full
    if op is Op.UREM:
        return min(left, constant - 1) if constant else left
    if op is Op.LSHR:
        return left >> constant if args[1].op is Op.CONST else left
    # SHL
    if args[1].op is Op.CONST and constant < node.width:
        moved = left << constant
        return moved if moved <= full else full
    return full
