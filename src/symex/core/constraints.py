"""Path-constraint bookkeeping that saves solver calls.

Two ideas from KLEE:

* **Equality substitution.** A constraint ``x == 42`` (or a boolean ``b`` that must hold)
  lets every later condition be rewritten with ``x := 42``; most branch conditions of a path
  then fold to constants and never reach a solver.
* **A model per state.** Every state carries an assignment of its symbolic inputs that
  satisfies its constraints. A branch condition evaluated under it tells which side is
  certainly feasible, so only the other side needs a solver query, and its answer (a model)
  becomes the model of the forked state.
"""

from __future__ import annotations

from collections.abc import Mapping

from symex import expr as E

_CONST = E.Op.CONST
_READ = E.Op.READ
_EQ = E.Op.EQ
_NOT = E.Op.NOT


def equality_of(constraint: E.Expr) -> tuple[E.Expr, E.Expr] | None:
    """The substitution a constraint justifies: ``c == e`` gives ``e := c``; a boolean ``b``
    gives ``b := 1``; ``not b`` gives ``b := 0``."""
    if constraint.op is _EQ:
        a, b = constraint.args
        if a.op is _CONST and b.op is not _CONST:
            return b, a
        if b.op is _CONST and a.op is not _CONST:
            return a, b
    if constraint.op is _NOT and constraint.width == 1:
        return constraint.args[0], E.FALSE
    if constraint.width == 1 and constraint.op is not _CONST:
        return constraint, E.TRUE
    return None


def _rebuild(node: E.Expr, args: list[E.Expr]) -> E.Expr:
    op = node.op
    if op is _READ:
        assert node.updates is not None  # every read has its update list
        return E.read(node.updates, args[0])
    if op is E.Op.SELECT:
        return E.ite(args[0], args[1], args[2])
    if op is E.Op.CONCAT:
        return E.concat(args[0], args[1])
    if op is E.Op.EXTRACT:
        return E.extract(args[0], node.value, node.width)
    if op is E.Op.ZEXT:
        return E.zext(args[0], node.width)
    if op is E.Op.SEXT:
        return E.sext(args[0], node.width)
    if op is _NOT:
        return E.not_(args[0])
    if op in E.FLOAT_OPS:
        return E.float_op(op, args, node.width)
    return E.binary(op, args[0], args[1])


def substitute(root: E.Expr, mapping: Mapping[E.Expr, E.Expr]) -> E.Expr:
    """``root`` with every subexpression found in ``mapping`` replaced, rebuilt through the
    smart constructors so the result is simplified. Iterative (explicit stack); update lists
    inside reads are left as they are (only read indices are rewritten)."""
    if not mapping or root.op is _CONST:
        return mapping.get(root, root) if mapping else root
    done: dict[E.Expr, E.Expr] = {}
    stack: list[tuple[E.Expr, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if node in done:
            continue
        replaced = mapping.get(node)
        if replaced is not None:
            done[node] = replaced
            continue
        if node.op is _CONST or not node.args:
            done[node] = node
            continue
        if not expanded:
            stack.append((node, True))
            for child in node.args:
                if child not in done:
                    stack.append((child, False))
            continue
        args = [done[c] for c in node.args]
        if all(a is c for a, c in zip(args, node.args)):
            done[node] = node
        else:
            done[node] = _rebuild(node, args)
    return done[root]
