"""Builders of floating-point instructions: arithmetic, comparisons, the math intrinsics and
the conversions between floats and integers (concrete values; a symbolic float ends the
path as unsupported)."""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from typing import Any

from symex.core.machine import Machine

from symex.core import values as V
from symex.core.builders.registry import builds
from symex.core.outcome import (
    PathStatus,
    PathTerminated,
)
from symex.core.state import Frame, State
from symex.ir.program import (
    Function,
    Instruction,
    Opcode,
)

# -- floats -------------------------------------------------------------------------------------

def _float_value(value: Any) -> float:
    if type(value) is float:
        return value
    if type(value) is int:
        return float(value)
    raise PathTerminated(PathStatus.PARTIAL,
                         "unsupported: floating-point operation on a symbolic value")


def _round_float(value: float, kind: str) -> float:
    if kind == "float":
        try:
            return struct.unpack("<f", struct.pack("<f", value))[0]
        except OverflowError:
            return math.copysign(math.inf, value)
    return value


def _fdiv(x: float, y: float) -> float:
    try:
        return x / y
    except ZeroDivisionError:
        if x == 0 or math.isnan(x):
            return math.nan
        return math.copysign(math.inf, x) * math.copysign(1.0, y)


_FLOAT_OPS: dict[Opcode, Callable[[float, float], float]] = {
    Opcode.FADD: lambda x, y: x + y,
    Opcode.FSUB: lambda x, y: x - y,
    Opcode.FMUL: lambda x, y: x * y,
    Opcode.FDIV: _fdiv,
    Opcode.FREM: lambda x, y: math.fmod(x, y) if y != 0 and not math.isinf(x) else math.nan,
}


@builds(*_FLOAT_OPS, Opcode.FNEG)
def _build_float(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    kind = ins.aux
    if ins.opcode is Opcode.FNEG:
        (a,) = ins.operands

        def neg_step(state: State, frame: Frame, regs: list) -> None:
            regs[d] = -_float_value(regs[a])
        return neg_step
    a, b = ins.operands
    op = _FLOAT_OPS[ins.opcode]

    def step(state: State, frame: Frame, regs: list) -> None:
        try:
            result = op(_float_value(regs[a]), _float_value(regs[b]))
        except OverflowError:
            result = math.inf
        regs[d] = _round_float(result, kind)
    return step


_FCMP: dict[str, Callable[[float, float], bool]] = {
    "false": lambda x, y: False, "true": lambda x, y: True,
    "oeq": lambda x, y: x == y, "ogt": lambda x, y: x > y, "oge": lambda x, y: x >= y,
    "olt": lambda x, y: x < y, "ole": lambda x, y: x <= y,
    "one": lambda x, y: x != y and not (math.isnan(x) or math.isnan(y)),
    "ord": lambda x, y: not (math.isnan(x) or math.isnan(y)),
    "uno": lambda x, y: math.isnan(x) or math.isnan(y),
    "ueq": lambda x, y: x == y or math.isnan(x) or math.isnan(y),
    "ugt": lambda x, y: not (x <= y), "uge": lambda x, y: not (x < y),
    "ult": lambda x, y: not (x >= y), "ule": lambda x, y: not (x > y),
    "une": lambda x, y: x != y,
}


@builds(Opcode.FCMP)
def _build_fcmp(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    a, b = ins.operands
    predicate = _FCMP[ins.aux[0]]

    def step(state: State, frame: Frame, regs: list) -> None:
        regs[d] = 1 if predicate(_float_value(regs[a]), _float_value(regs[b])) else 0
    return step


_FLOAT_MATH: dict[str, Callable[..., float]] = {
    "fabs": abs, "sqrt": lambda x: math.sqrt(x) if x >= 0 else math.nan, "floor": math.floor,
    "ceil": math.ceil, "trunc": math.trunc, "round": lambda x: float(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1),
    "roundeven": round, "rint": round, "nearbyint": round, "fmuladd": lambda a, b, c: a * b + c,
    "fma": lambda a, b, c: a * b + c, "copysign": math.copysign, "minnum": min, "maxnum": max,
    "minimum": min, "maximum": max, "pow": math.pow, "exp": math.exp, "exp2": lambda x: 2.0 ** x,
    "log": math.log, "log2": math.log2, "log10": math.log10, "sin": math.sin, "cos": math.cos,
    "powi": lambda x, n: x ** V.signed(n, 32) if isinstance(n, int) else x ** n,
}


@builds(Opcode.FLOATMATH)
def _build_float_math(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    name, kind = ins.aux
    operands = ins.operands
    if name in ("lround", "llround", "lrint", "llrint"):
        w = ins.width

        def to_int_step(state: State, frame: Frame, regs: list) -> None:
            x = _float_value(regs[operands[0]])
            regs[d] = int(math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)) & ((1 << w) - 1)
        return to_int_step
    op = _FLOAT_MATH[name]

    def step(state: State, frame: Frame, regs: list) -> None:
        args = [regs[s] if name == "powi" and i == 1 else _float_value(regs[s])
                for i, s in enumerate(operands)]
        try:
            result = float(op(*args))
        except (ValueError, OverflowError):
            result = math.nan
        regs[d] = _round_float(result, kind)
    return step




@builds(Opcode.FPCAST, Opcode.FPTOUI, Opcode.FPTOSI, Opcode.UITOFP, Opcode.SITOFP)
def _build_float_cast(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    (a,) = ins.operands
    info = ins.aux
    fw, tw = info.from_bits, info.to_bits
    op = ins.opcode
    kind = "float" if tw == 32 else "double"

    def step(state: State, frame: Frame, regs: list) -> None:
        v = regs[a]
        if op is Opcode.FPCAST:
            regs[d] = _round_float(_float_value(v), kind)
        elif op is Opcode.FPTOUI or op is Opcode.FPTOSI:
            x = _float_value(v)
            regs[d] = (int(x) if math.isfinite(x) else 0) & ((1 << tw) - 1)
        else:
            if type(v) is not int:
                # no floating-point theory yet (issue 29): the path goes on with the integer
                # fixed to one of its values, a shortfall messages.txt counts, rather than ending
                v = ex.concretize(state, v, fw, "integer converted to floating point")
            regs[d] = _round_float(float(V.signed(v, fw) if op is Opcode.SITOFP else v), kind)
    return step


