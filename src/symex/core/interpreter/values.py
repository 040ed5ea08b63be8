"""Semantics of integer operations on register values: plain ints when concrete, expressions
when symbolic. Shared by the executor's closures (their slow paths), vectors and intrinsics."""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

from symex import expr as E


signed = E.to_signed
"""Two's-complement reading of an unsigned ``width``-bit int."""


def as_expr(value: Any, width: int) -> E.Expr:
    """An expression for a register value (concrete ints become constants)."""
    return value if type(value) is not int else E.const(value, width)


def simplify(value: Any) -> Any:
    """Constants fold back into plain ints, so concrete code stays on the fast path."""
    if type(value) is not int and value.op is E.Op.CONST:
        return value.value
    return value


_OPS = {
    "add": E.Op.ADD, "sub": E.Op.SUB, "mul": E.Op.MUL, "udiv": E.Op.UDIV, "sdiv": E.Op.SDIV,
    "urem": E.Op.UREM, "srem": E.Op.SREM, "and": E.Op.AND, "or": E.Op.OR, "xor": E.Op.XOR,
    "shl": E.Op.SHL, "lshr": E.Op.LSHR, "ashr": E.Op.ASHR,
}

#: concrete semantics per LLVM opcode name (SMT-LIB's, the same the expression layer folds with);
#: division-by-zero and shift checks are done by the caller
CONCRETE_BINARY: dict[str, Callable[[int, int, int], int]] = {
    name: E.BINARY_SEMANTICS[op] for name, op in _OPS.items()
}

SYMBOLIC_BINARY: dict[str, Callable[[E.Expr, E.Expr], E.Expr]] = {
    "add": E.add, "sub": E.sub, "mul": E.mul, "udiv": E.udiv, "sdiv": E.sdiv, "urem": E.urem,
    "srem": E.srem, "and": E.and_, "or": E.or_, "xor": E.xor, "shl": E.shl, "lshr": E.lshr,
    "ashr": E.ashr,
}


def binary(name: str, a: Any, b: Any, width: int) -> Any:
    """``a <name> b`` on register values."""
    if type(a) is int and type(b) is int:
        return CONCRETE_BINARY[name](a, b, width)
    return simplify(SYMBOLIC_BINARY[name](as_expr(a, width), as_expr(b, width)))


CONCRETE_COMPARE: dict[str, Callable[[int, int, int], bool]] = {
    "eq": lambda a, b, w: a == b,
    "ne": lambda a, b, w: a != b,
    "ugt": lambda a, b, w: a > b,
    "uge": lambda a, b, w: a >= b,
    "ult": lambda a, b, w: a < b,
    "ule": lambda a, b, w: a <= b,
    "sgt": lambda a, b, w: signed(a, w) > signed(b, w),
    "sge": lambda a, b, w: signed(a, w) >= signed(b, w),
    "slt": lambda a, b, w: signed(a, w) < signed(b, w),
    "sle": lambda a, b, w: signed(a, w) <= signed(b, w),
}

SYMBOLIC_COMPARE: dict[str, Callable[[E.Expr, E.Expr], E.Expr]] = {
    "eq": E.eq, "ne": E.ne, "ugt": E.ugt, "uge": E.uge, "ult": E.ult, "ule": E.ule,
    "sgt": E.sgt, "sge": E.sge, "slt": E.slt, "sle": E.sle,
}


def compare(predicate: str, a: Any, b: Any, width: int) -> Any:
    """``icmp predicate a, b`` on register values (1/0 or a width-1 expression)."""
    if type(a) is int and type(b) is int:
        return 1 if CONCRETE_COMPARE[predicate](a, b, width) else 0
    return simplify(SYMBOLIC_COMPARE[predicate](as_expr(a, width), as_expr(b, width)))


def select(cond: Any, then: Any, else_: Any, width: int) -> Any:
    """``select cond, then, else``."""
    if type(cond) is int:
        return then if cond else else_
    if type(then) is int and type(else_) is int and then == else_:
        return then
    return simplify(E.ite(cond, as_expr(then, width), as_expr(else_, width)))


def trunc(value: Any, width: int) -> Any:
    """Keep the low ``width`` bits."""
    if type(value) is int:
        return value & ((1 << width) - 1)
    return simplify(E.extract(value, 0, width)) if value.width > width else value


def zext(value: Any, width: int) -> Any:
    """Zero-extend (ints are already unsigned)."""
    if type(value) is int:
        return value
    return E.zext(value, width) if value.width < width else value


def sext(value: Any, from_width: int, width: int) -> Any:
    """Sign-extend from ``from_width`` bits."""
    if type(value) is int:
        return signed(value, from_width) & ((1 << width) - 1)
    return E.sext(value, width) if value.width < width else value


def resize(value: Any, from_width: int, width: int) -> Any:
    """Zero-extend or truncate (ptrtoint/inttoptr)."""
    if from_width == width:
        return value
    return zext(value, width) if width > from_width else trunc(value, width)


# -- intrinsic helpers -------------------------------------------------------------------------

def overflow(kind: str, a: Any, b: Any, width: int) -> tuple[Any, Any]:
    """``llvm.<kind>.with.overflow``: (wrapped result, overflow flag)."""
    op = kind[1:]
    result = binary(op, a, b, width)
    if type(a) is int and type(b) is int:
        if kind[0] == "s":
            exact = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y,
                     "mul": lambda x, y: x * y}[op](signed(a, width), signed(b, width))
            return result, int(exact != signed(result, width))
        exact = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y,
                 "mul": lambda x, y: x * y}[op](a, b)
        return result, int(exact != result)
    wide = 2 * width
    extend = E.sext if kind[0] == "s" else E.zext
    ea, eb = extend(as_expr(a, width), wide), extend(as_expr(b, width), wide)
    exact_e = SYMBOLIC_BINARY[op](ea, eb)
    flag = E.ne(exact_e, extend(as_expr(result, width), wide))
    return result, simplify(flag)


def saturate(kind: str, a: Any, b: Any, width: int) -> Any:
    """``llvm.<kind>.sat``: clamp instead of wrapping."""
    result, flag = overflow(kind, a, b, width)
    mask = (1 << width) - 1
    if kind[0] == "u":
        limit = mask if kind[1:] == "add" else 0
        return select(flag, limit, result, width)
    # signed: on overflow the result saturates towards the sign of a
    smax, smin = mask >> 1, 1 << (width - 1)
    negative = compare("slt", a, 0, width)
    return select(flag, select(negative, smin, smax, width), result, width)


def minmax(kind: str, a: Any, b: Any, width: int) -> Any:
    """smax/smin/umax/umin."""
    predicate = {"smax": "sgt", "smin": "slt", "umax": "ugt", "umin": "ult"}[kind]
    return select(compare(predicate, a, b, width), a, b, width)


def absolute(a: Any, width: int) -> Any:
    """llvm.abs."""
    return select(compare("slt", a, 0, width), binary("sub", 0, a, width), a, width)


def bswap(a: Any, width: int) -> Any:
    """Byte swap."""
    if type(a) is int:
        return int.from_bytes(a.to_bytes(width // 8, "little"), "big")
    result = E.extract(a, 0, 8)
    for i in range(1, width // 8):
        result = E.concat(result, E.extract(a, 8 * i, 8))
    return result


def bitreverse(a: Any, width: int) -> Any:
    """Bit reversal."""
    if type(a) is int:
        return int(format(a, f"0{width}b")[::-1], 2)
    result = E.extract(a, 0, 1)
    for i in range(1, width):
        result = E.concat(result, E.extract(a, i, 1))
    return result


def ctpop(a: Any, width: int) -> Any:
    """Population count."""
    if type(a) is int:
        return bin(a).count("1")
    total = E.zext(E.extract(a, 0, 1), width)
    for i in range(1, width):
        total = E.add(total, E.zext(E.extract(a, i, 1), width))
    return total


def ctlz(a: Any, width: int) -> Any:
    """Count leading zeros (the width for zero)."""
    if type(a) is int:
        return width - a.bit_length()
    result: E.Expr = E.const(width, width)
    for i in range(width):  # higher set bits are applied last, so they win
        result = E.ite(E.eq(E.extract(a, i, 1), E.const(1, 1)), E.const(width - 1 - i, width), result)
    return simplify(result)


def cttz(a: Any, width: int) -> Any:
    """Count trailing zeros (the width for zero)."""
    if type(a) is int:
        return (a & -a).bit_length() - 1 if a else width
    result: E.Expr = E.const(width, width)
    for i in reversed(range(width)):
        result = E.ite(E.eq(E.extract(a, i, 1), E.const(1, 1)), E.const(i, width), result)
    return simplify(result)


def funnel(left: bool, a: Any, b: Any, s: Any, width: int) -> Any:
    """fshl / fshr."""
    if type(a) is int and type(b) is int and type(s) is int:
        amount = s % width
        joined = (a << width) | b
        if left:
            return (joined << amount >> width) & ((1 << width) - 1)
        return (joined >> amount) & ((1 << width) - 1)
    both = E.concat(as_expr(a, width), as_expr(b, width))
    shift = E.zext(E.urem(as_expr(s, width), E.const(width, width)), 2 * width)
    if left:
        return simplify(E.extract(E.shl(both, shift), width, width))
    return simplify(E.extract(E.lshr(both, shift), 0, width))


def threeway(is_signed: bool, a: Any, b: Any, operand_width: int, width: int) -> Any:
    """llvm.scmp / llvm.ucmp: -1, 0 or 1."""
    less = compare("slt" if is_signed else "ult", a, b, operand_width)
    greater = compare("sgt" if is_signed else "ugt", a, b, operand_width)
    minus_one = (1 << width) - 1
    return select(less, minus_one, select(greater, 1, 0, width), width)
