"""The few values an expression can take, read off its structure without a solver.

A pointer the program chose with a condition (``args + (matched ? 8 : 0)``, a ``select``
between two addresses) is an expression whose only symbolic parts are width-1 conditions:
its offset into the object it points to takes two or four values, whatever the inputs.
:func:`few_values` finds such a set (a superset of the values the expression takes on any
path), so that a read at that offset can be the choice between those few reads
(core/memory/access.py) rather than a read of a symbolic array, which turns every later query
about the value into array theory (expr: the argument cursor, 2,400 queries of
``select`` over pinned arrays in 40 s).
"""

from __future__ import annotations

from symex.expr.build import BINARY_SEMANTICS
from symex.expr.evaluate import apply_node
from symex.expr.nodes import Expr, Op

__all__ = ["few_values"]

#: arithmetic skeletons (the nodes above the conditions) of more nodes than this are not
#: looked at: the walk runs on every read at a symbolic offset and must stay cheap
MAX_NODES = 48

def few_values(e: Expr, limit: int) -> list[int] | None:
    """Every value ``e`` can take, sorted, when its structure shows at most ``limit`` (a
    superset: conditions are taken as independent of each other); None when it does not:
    an input byte itself, an operation outside the bit-vector arithmetic, too many values,
    or an arithmetic skeleton of more than MAX_NODES nodes. What a condition is made of is
    not looked at (it is 0 or 1), so the walk costs the arithmetic above the conditions."""
    if e.op is Op.CONST:
        return [e.value]
    sets: dict[int, frozenset[int] | None] = {}  # by node id; None: many values
    stack: list[tuple[Expr, bool]] = [(e, False)]
    while stack:
        node, expanded = stack.pop()
        if id(node) in sets:
            continue
        op = node.op
        if not expanded:
            if op is Op.CONST or node.width == 1 or not _arithmetic(op):
                sets[id(node)] = _leaf(node)
                continue
            if len(sets) + len(stack) > MAX_NODES:
                return None
            stack.append((node, True))
            operands = node.args[1:] if op is Op.SELECT else node.args
            stack.extend((operand, False) for operand in operands)
            continue
        sets[id(node)] = _combine(node, sets, limit)
    found = sets.get(id(e))
    return sorted(found) if found is not None else None


def _arithmetic(op: Op) -> bool:
    # the binary operations' comparisons are width 1, conditions, and never get here
    return op in BINARY_SEMANTICS or op is Op.SELECT or op is Op.ZEXT or op is Op.SEXT or op is Op.EXTRACT


def _leaf(node: Expr) -> frozenset[int] | None:
    """A constant's value, a condition's two, or None (an input byte, a concatenation of
    them, a float: many values)."""
    if node.op is Op.CONST:
        return frozenset((node.value,))
    if node.width == 1:
        return frozenset((0, 1))
    return None


def _combine(node: Expr, sets: dict[int, frozenset[int] | None], limit: int) -> frozenset[int] | None:
    """The values of an arithmetic ``node`` from its operands' (None: too many)."""
    if node.op is Op.SELECT:
        then, other = sets[id(node.args[1])], sets[id(node.args[2])]
        values = then | other if then is not None and other is not None else None
    elif node.op in BINARY_SEMANTICS:
        left, right = sets[id(node.args[0])], sets[id(node.args[1])]
        if left is None or right is None or len(left) * len(right) > limit * limit:
            return None
        values = frozenset(apply_node(node, [a, b]) for a in left for b in right)
    else:
        inner = sets[id(node.args[0])]
        values = frozenset(apply_node(node, [v]) for v in inner) if inner is not None else None
    return values if values is not None and len(values) <= limit else None
