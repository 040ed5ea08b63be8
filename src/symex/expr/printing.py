"""KQuery-like text for expressions, e.g. ``(Add w32 (w32 3) (ZExt w32 (Read w8 (w32 0) a)))``."""

from __future__ import annotations

from symex.expr import nodes as _nodes
from symex.expr.nodes import Expr, Op

__all__ = ["format_expr", "OP_NAMES"]

OP_NAMES: dict[Op, str] = {
    Op.CONST: "Const",
    Op.READ: "Read",
    Op.SELECT: "Select",
    Op.CONCAT: "Concat",
    Op.EXTRACT: "Extract",
    Op.ZEXT: "ZExt",
    Op.SEXT: "SExt",
    Op.NOT: "Not",
    Op.ADD: "Add",
    Op.SUB: "Sub",
    Op.MUL: "Mul",
    Op.UDIV: "UDiv",
    Op.SDIV: "SDiv",
    Op.UREM: "URem",
    Op.SREM: "SRem",
    Op.AND: "And",
    Op.OR: "Or",
    Op.XOR: "Xor",
    Op.SHL: "Shl",
    Op.LSHR: "LShr",
    Op.ASHR: "AShr",
    Op.EQ: "Eq",
    Op.ULT: "Ult",
    Op.ULE: "Ule",
    Op.SLT: "Slt",
    Op.SLE: "Sle",
    Op.FADD: "FAdd",
    Op.FSUB: "FSub",
    Op.FMUL: "FMul",
    Op.FDIV: "FDiv",
    Op.FREM: "FRem",
    Op.FSQRT: "FSqrt",
    Op.FFMA: "FFma",
    Op.FFLOOR: "FFloor",
    Op.FCEIL: "FCeil",
    Op.FTRUNC: "FTrunc",
    Op.FRINT: "FRint",
    Op.FROUND: "FRound",
    Op.FPCONV: "FPConv",
    Op.FPTOSI: "FPToSI",
    Op.SITOFP: "SIToFP",
    Op.UITOFP: "UIToFP",
    Op.FOEQ: "FOEq",
    Op.FOLT: "FOLt",
    Op.FOLE: "FOLe",
}
"""KQuery name of each op."""

# As in KQuery, comparisons carry no width (it is always 1).
_COMPARISONS = frozenset({Op.EQ, Op.ULT, Op.ULE, Op.SLT, Op.SLE, Op.FOEQ, Op.FOLT, Op.FOLE})


def format_expr(e: Expr, max_chars: int | None = None) -> str:
    """KQuery-like text of ``e``; shared subterms are printed in full at every use.

    Consts print as ``(w32 5)``, reads as ``(Read w8 (w32 2) a)`` or, through writes, as
    ``(Read w8 (w32 2) [(w32 1)=(w8 7), ...] @ a)`` (newest write first). With ``max_chars``
    the text stops after that many characters and ends with ``...``; pass it for expressions
    with much sharing, whose full text can be exponentially long.
    """
    parts: list[str] = []
    length = 0
    # Items are pending output: strings verbatim, expressions to expand. Pushed in reverse.
    stack: list[str | Expr] = [e]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
            length += len(item)
            if max_chars is not None and length > max_chars:
                return "".join(parts)[:max_chars] + "..."
            continue
        op = item.op
        if op is Op.CONST:
            stack.append(f"(w{item.width} {item.value})")
            continue
        name = OP_NAMES[op]
        stack.append(")")
        if op is Op.READ:
            updates = item.updates
            assert updates is not None
            stack.append(updates.array.name)
            if updates.head is not None:
                stack.append("] @ ")
                first = True
                # Reversed pushes: collect newest-first, then push oldest-first.
                nodes = list(updates)
                for node in reversed(nodes):
                    if not first:
                        stack.append(", ")
                    first = False
                    stack.append(node.value)
                    stack.append("=")
                    stack.append(node.index)
                stack.append("[")
            stack.append(" ")
            stack.append(item.args[0])
            stack.append(f"(Read w{item.width} ")
            continue
        args = item.args
        for i in range(len(args) - 1, -1, -1):
            stack.append(args[i])
            stack.append(" ")
        if op is Op.EXTRACT:
            stack.append(f"(Extract w{item.width} {item.value}")
        elif op in _COMPARISONS:
            stack.append(f"({name}")
        else:
            stack.append(f"({name} w{item.width}")
    return "".join(parts)


# Expr.__repr__ prints through format_expr; nodes cannot import this module (it imports nodes)
_nodes._formatter = format_expr
