"""Builders of integer instructions: arithmetic, comparisons, select, casts and copies, and
the integer intrinsics (overflow, min/max and saturation, bit counts, funnel shifts,
three-way comparison)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from symex.core.interpreter.float_values import bits_of, register_of
from symex.core.interpreter.machine import Machine

from symex import expr as E
from symex.core.interpreter import values as V
from symex.core.interpreter.builders.registry import SITE_MEMO_LIMIT, builds, elementwise, unsupported_step
from symex.core.memory.objects import (
    SymbolicFloat,
    decode,
    encode,
)
from symex.core.outcome import (
    ErrorKind,
    PathStatus,
    PathTerminated,
)
from symex.core.state import Frame, State
from symex.ir.program import (
    Function,
    Instruction,
    Opcode,
)

_BINARY_NAMES = {
    Opcode.ADD: "add", Opcode.SUB: "sub", Opcode.MUL: "mul", Opcode.UDIV: "udiv",
    Opcode.SDIV: "sdiv", Opcode.UREM: "urem", Opcode.SREM: "srem", Opcode.AND: "and",
    Opcode.OR: "or", Opcode.XOR: "xor", Opcode.SHL: "shl", Opcode.LSHR: "lshr",
    Opcode.ASHR: "ashr",
}
_DIVISIONS = {Opcode.UDIV, Opcode.SDIV, Opcode.UREM, Opcode.SREM}
_SHIFTS = {Opcode.SHL, Opcode.LSHR, Opcode.ASHR}


@builds(*_BINARY_NAMES)
def _build_binary(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    name = _BINARY_NAMES[ins.opcode]
    d = ins.dest
    a, b = ins.operands
    w = ins.width
    mask = (1 << w) - 1
    concrete = V.CONCRETE_BINARY[name]
    symbolic = V.SYMBOLIC_BINARY[name]
    count = ins.aux
    is_div = ins.opcode in _DIVISIONS
    is_shift = ins.opcode in _SHIFTS
    what = "remainder" if ins.opcode in (Opcode.UREM, Opcode.SREM) else "division"

    def scalar(state: State, x: Any, y: Any) -> Any:
        if is_div:
            if type(y) is int:
                if y == 0:
                    ex.fail(state, ErrorKind.DIV, f"{what} by zero")
            else:
                ex.check_fault(state, E.eq(E.const(0, w), y), ErrorKind.DIV, f"{what} by zero")
        elif is_shift:
            if type(y) is int:
                if y >= w:
                    ex.fail(state, ErrorKind.OVERSHIFT,
                            f"shift by {y}, which is not less than the width {w}")
            else:
                ex.check_fault(state, E.uge(y, E.const(w, w)), ErrorKind.OVERSHIFT,
                               f"shift by an amount that can be {w} or more (the width)")
        if type(x) is int and type(y) is int:
            return concrete(x, y, w)
        return V.simplify(symbolic(V.as_expr(x, w), V.as_expr(y, w)))

    if count:
        def vector_step(state: State, frame: Frame, regs: list) -> None:
            x, y = regs[a], regs[b]
            regs[d] = tuple(scalar(state, x[i], y[i]) for i in range(count))
        return vector_step

    if ins.opcode is Opcode.ADD:
        def add_step(state: State, frame: Frame, regs: list) -> None:
            x = regs[a]
            y = regs[b]
            if type(x) is int and type(y) is int:
                regs[d] = (x + y) & mask
            else:
                regs[d] = V.simplify(E.add(V.as_expr(x, w), V.as_expr(y, w)))
        return add_step
    if ins.opcode is Opcode.SUB:
        def sub_step(state: State, frame: Frame, regs: list) -> None:
            x = regs[a]
            y = regs[b]
            if type(x) is int and type(y) is int:
                regs[d] = (x - y) & mask
            else:
                regs[d] = V.simplify(E.sub(V.as_expr(x, w), V.as_expr(y, w)))
        return sub_step
    if is_div or is_shift:
        def checked_step(state: State, frame: Frame, regs: list) -> None:
            regs[d] = scalar(state, regs[a], regs[b])
        return checked_step

    def step(state: State, frame: Frame, regs: list) -> None:
        x = regs[a]
        y = regs[b]
        if type(x) is int and type(y) is int:
            regs[d] = concrete(x, y, w)
        else:
            regs[d] = V.simplify(symbolic(V.as_expr(x, w), V.as_expr(y, w)))
    return step


@builds(Opcode.ICMP)
def _build_icmp(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    a, b = ins.operands
    w = ins.width
    predicate, count = ins.aux
    concrete = V.CONCRETE_COMPARE[predicate]
    symbolic = V.SYMBOLIC_COMPARE[predicate]
    if count:
        def vector_step(state: State, frame: Frame, regs: list) -> None:
            regs[d] = elementwise(count, lambda x, y: V.compare(predicate, x, y, w), regs[a], regs[b])
        return vector_step

    def step(state: State, frame: Frame, regs: list) -> None:
        x = regs[a]
        y = regs[b]
        if type(x) is int and type(y) is int:
            regs[d] = 1 if concrete(x, y, w) else 0
        else:
            regs[d] = V.simplify(symbolic(V.as_expr(x, w), V.as_expr(y, w)))

    literal = fn.template[b]
    if type(literal) is int and ex.memos:
        # a comparison with a literal (the template holds constants only: nothing writes
        # them): its expression is made once, not on every symbolic comparison
        literal_expr = E.const(literal, w)

        done: dict[E.Expr, Any] = {}  # symbolic operands and results (see _build_int_cast)

        def literal_step(state: State, frame: Frame, regs: list) -> None:
            x = regs[a]
            if type(x) is int:
                regs[d] = 1 if concrete(x, literal, w) else 0
                return
            found = done.get(x)
            if found is None:
                if len(done) >= SITE_MEMO_LIMIT:
                    done.clear()
                found = done[x] = V.simplify(symbolic(x, literal_expr))
            regs[d] = found
        return literal_step
    return step


@builds(Opcode.SELECT)
def _build_select(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    c, t, f = ins.operands
    w = ins.width
    count = ins.aux

    def step(state: State, frame: Frame, regs: list) -> None:
        cond = regs[c]
        if count:
            regs[d] = elementwise(count, lambda k, x, y: _select_value(k, x, y, w), cond, regs[t], regs[f])
        else:
            regs[d] = _select_value(cond, regs[t], regs[f], w)
    return step


def _select_value(cond: Any, then: Any, else_: Any, width: int) -> Any:
    if type(cond) is int:
        return then if cond else else_
    if type(then) is tuple:
        raise PathTerminated(PathStatus.PARTIAL,
                             "unsupported: select between aggregates on a symbolic condition")
    if type(then) is float or type(else_) is float:
        # floats select as their bits (a register holding a Python float is a float's)
        chosen = V.select(cond, bits_of(then, width), bits_of(else_, width), width)
        return register_of(chosen, width) if type(chosen) is not int else chosen
    return V.select(cond, then, else_, width)




# -- casts --------------------------------------------------------------------------------------

@builds(Opcode.TRUNC, Opcode.ZEXT, Opcode.SEXT, Opcode.PTRTOINT, Opcode.INTTOPTR)
def _build_int_cast(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    (a,) = ins.operands
    info = ins.aux
    fw, tw = info.from_bits, info.to_bits
    op = ins.opcode
    if op is Opcode.TRUNC:
        mask = (1 << tw) - 1

        def cast(v: Any) -> Any:
            return v & mask if type(v) is int else V.trunc(v, tw)
    elif op is Opcode.ZEXT:
        def cast(v: Any) -> Any:
            return v if type(v) is int else V.zext(v, tw)
    elif op is Opcode.SEXT:
        def cast(v: Any) -> Any:
            return V.sext(v, fw, tw)
    else:
        def cast(v: Any) -> Any:
            return V.resize(v, fw, tw)
    count = info.count
    if count:
        def vector_step(state: State, frame: Frame, regs: list) -> None:
            regs[d] = tuple(cast(v) for v in regs[a])
        return vector_step

    # symbolic operands and their results: a loop casts the same symbolic bytes on every
    # iteration (expressions are interned and casts pure: the same input, the same result)
    done: dict[E.Expr, Any] = {}
    if not ex.memos:
        def plain_step(state: State, frame: Frame, regs: list) -> None:
            regs[d] = cast(regs[a])
        return plain_step

    def step(state: State, frame: Frame, regs: list) -> None:
        v = regs[a]
        if type(v) is int:
            regs[d] = cast(v)
            return
        found = done.get(v)
        if found is None:
            if len(done) >= SITE_MEMO_LIMIT:
                done.clear()
            found = done[v] = cast(v)
        regs[d] = found
    return step


@builds(Opcode.BITCAST)
def _build_bitcast(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    (a,) = ins.operands
    info = ins.aux
    source, target = info.from_access, info.to_access
    if source is None or target is None:
        return unsupported_step(f"bitcast in '{ins.text}'")

    def step(state: State, frame: Frame, regs: list) -> None:
        try:
            regs[d] = decode(encode(regs[a], source), target)
        except SymbolicFloat as exc:
            raise PathTerminated(PathStatus.PARTIAL, f"unsupported: {exc}") from None
    return step




@builds(Opcode.COPY)
def _build_copy(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    (a,) = ins.operands[:1]

    def step(state: State, frame: Frame, regs: list) -> None:
        regs[d] = regs[a]
    return step



# -- intrinsics ---------------------------------------------------------------------------------

@builds(Opcode.OVERFLOW)
def _build_overflow(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    a, b = ins.operands
    kind = ins.aux
    w = ins.width

    def step(state: State, frame: Frame, regs: list) -> None:
        regs[d] = V.overflow(kind, regs[a], regs[b], w)
    return step


def _unary_or_vector(d: int, a: int, count: int, fn: Callable[[Any], Any]) -> Any:
    if count:
        def vector_step(state: State, frame: Frame, regs: list) -> None:
            regs[d] = tuple(fn(v) for v in regs[a])
        return vector_step

    def step(state: State, frame: Frame, regs: list) -> None:
        regs[d] = fn(regs[a])
    return step


@builds(Opcode.SATURATE, Opcode.MINMAX)
def _build_minmax(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    kind, count = ins.aux
    w = ins.width
    if kind.startswith("reduce."):
        op = kind[len("reduce."):]
        (a,) = ins.operands

        def reduce_step(state: State, frame: Frame, regs: list) -> None:
            items = regs[a]
            acc = items[0]
            for item in items[1:]:
                acc = V.minmax(op, acc, item, w) if op in ("smax", "smin", "umax", "umin") \
                    else V.binary(op, acc, item, w)
            regs[d] = acc
        return reduce_step
    a, b = ins.operands[:2]
    combine = V.saturate if ins.opcode is Opcode.SATURATE else V.minmax

    def step(state: State, frame: Frame, regs: list) -> None:
        x, y = regs[a], regs[b]
        if count:
            regs[d] = tuple(combine(kind, x[i], y[i], w) for i in range(count))
        else:
            regs[d] = combine(kind, x, y, w)
    return step


@builds(Opcode.ABS, Opcode.BSWAP, Opcode.BITREVERSE, Opcode.CTPOP, Opcode.CTLZ, Opcode.CTTZ)
def _build_bits(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    w = ins.width
    op = {Opcode.ABS: V.absolute, Opcode.BSWAP: V.bswap, Opcode.BITREVERSE: V.bitreverse,
          Opcode.CTPOP: V.ctpop, Opcode.CTLZ: V.ctlz, Opcode.CTTZ: V.cttz}[ins.opcode]
    return _unary_or_vector(ins.dest, ins.operands[0], ins.aux or 0, lambda v: op(v, w))


@builds(Opcode.FSHL, Opcode.FSHR)
def _build_funnel(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    a, b, s = ins.operands
    w = ins.width
    left = ins.opcode is Opcode.FSHL
    count = ins.aux

    def step(state: State, frame: Frame, regs: list) -> None:
        x, y, z = regs[a], regs[b], regs[s]
        if count:
            regs[d] = tuple(V.funnel(left, x[i], y[i], z[i], w) for i in range(count))
        else:
            regs[d] = V.funnel(left, x, y, z, w)
    return step


@builds(Opcode.THREEWAY)
def _build_threeway(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    a, b = ins.operands
    is_signed, operand_width = ins.aux
    w = ins.width

    def step(state: State, frame: Frame, regs: list) -> None:
        regs[d] = V.threeway(is_signed, regs[a], regs[b], operand_width, w)
    return step


