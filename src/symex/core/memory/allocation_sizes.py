"""Which sizes a symbolic allocation size is explored at.

Memory objects have concrete sizes, so a symbolic size given to ``malloc``, ``calloc``,
``realloc`` or a variable-length array is fixed. KLEE fixes it to one value; the smallest
feasible one finds the bugs of too small a buffer but misses those that need a large one
(an index computed from the size, a loop bounded by it, an overflow of ``n * sizeof``).
symex explores a few sizes instead, each on a path of its own:

1. the smallest feasible size;
2. the largest feasible size not above :data:`SIZE_CAP` (64 KB), or none when the smallest
   is already above it (bigger objects cost memory on every path that copies them);
3. boundaries the path's constraints suggest: each constant a comparison on the path holds
   (in a constraint that reads an input the size depends on), and the value just past it,
   that lies strictly between the two (at most :data:`MAX_BOUNDARIES` of them, the smallest
   first), where feasible.

Every size that is fixed is said once per program line in the run's messages
(``messages.txt``) and counted in its summary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from symex import expr as E
from symex.solvers.base import Query

if TYPE_CHECKING:
    from symex.core.interpreter.machine import Machine
    from symex.core.state import State

__all__ = ["MAX_BOUNDARIES", "SIZE_CAP", "allocation_sizes", "fix_allocation_size"]

#: the largest size explored as "the largest feasible" (unless the smallest is larger)
SIZE_CAP = 1 << 16
#: boundary sizes taken from the path's constraints, at most
MAX_BOUNDARIES = 2
# the comparisons whose constant operand is a boundary (not, say, the index of a byte read)
_COMPARISONS = frozenset({E.Op.EQ, E.Op.ULT, E.Op.ULE, E.Op.SLT, E.Op.SLE})


def allocation_sizes(ex: Machine, state: State, size: E.Expr) -> list[int]:
    """The sizes to explore for ``size`` on ``state``'s path (the module's rule), smallest
    first, each feasible."""
    low, high = ex.value_range(state, size, SIZE_CAP)
    sizes = [low]
    if high != low:
        sizes.append(high)
    arrays = set(E.arrays_in([size]))
    suggested: set[int] = set()
    for constraint in state.constraints:
        if not arrays.intersection(E.arrays_in([constraint])):
            continue
        for node in E.postorder((constraint,)):
            if node.op not in _COMPARISONS:
                continue
            for operand in node.args:
                if operand.op is E.Op.CONST:
                    for candidate in (operand.value, operand.value + 1):
                        if low < candidate < high:
                            suggested.add(candidate)
    chosen = 0
    for candidate in sorted(suggested):
        if chosen == MAX_BOUNDARIES:
            break
        is_it = E.eq(E.const(candidate, size.width), size)
        if ex.solver.may_be_true(Query(state.constraints, is_it)):
            sizes.append(candidate)
            chosen += 1
    return sizes


def fix_allocation_size(ex: Machine, state: State, size: object, what: str) -> int:
    """A concrete size for an allocation (``what``: ``malloc size``...): ``size`` itself, or
    for a symbolic one, each of :func:`allocation_sizes` on a path of its own (this state
    takes the smallest), said once per program line in the run's messages."""
    if type(size) is int:
        return size
    assert isinstance(size, E.Expr)

    def choose(chosen_state: State, value: E.Expr) -> list[int]:
        sizes = allocation_sizes(ex, chosen_state, value)
        site = ex.program_site(chosen_state) or "an unknown line"
        key = (what, site)
        if key not in ex.fixed_sizes:
            ex.fixed_sizes.add(key)
            shown = ", ".join(str(s) for s in sizes)
            ex.messages.append(
                f"symex: warning: the {what} at {site} is symbolic: explored at "
                f"{'size' if len(sizes) == 1 else 'sizes'} {shown}, each on a path of its own "
                f"(other sizes are not explored)")
        return sizes

    return ex.fork_on_values(state, size, size.width, choose)
