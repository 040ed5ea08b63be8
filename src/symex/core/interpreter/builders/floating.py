"""Builders of floating-point instructions: arithmetic, comparisons, the math intrinsics and
the conversions between floats and integers. A register holds a Python float or, symbolic,
the expression of its IEEE bits (:mod:`symex.core.interpreter.float_values`)."""

from __future__ import annotations

from typing import Any

from symex.core.interpreter.builders.registry import builds
from symex.core.interpreter.float_math import apply_math
from symex.core.interpreter.float_values import (
    bits_of,
    fcmp_value,
    float_binary,
    float_from_integer,
    float_resize,
    fixed_float,
    float_to_integer,
    register_of,
)
from symex.core.interpreter.machine import Machine
from symex.core.state import Frame, State
from symex.expr import float_build as FB
from symex.ir.program import Function, Instruction, Opcode

_KIND_WIDTHS = {"half": 16, "float": 32, "double": 64, "x86_fp80": 80, "fp128": 128}
_WIDTH_KINDS = {width: kind for kind, width in _KIND_WIDTHS.items()}
_BINARY_NAMES = {Opcode.FADD: "fadd", Opcode.FSUB: "fsub", Opcode.FMUL: "fmul",
                 Opcode.FDIV: "fdiv", Opcode.FREM: "frem"}


@builds(*_BINARY_NAMES, Opcode.FNEG)
def _build_float(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    kind = ins.aux
    width = ins.width
    if ins.opcode is Opcode.FNEG:
        (a,) = ins.operands

        def neg_step(state: State, frame: Frame, regs: list) -> None:
            v = regs[a]
            if type(v) is float:
                regs[d] = -v
            elif type(v) is int:
                regs[d] = -float(v)
            else:
                regs[d] = register_of(FB.fneg(bits_of(v, width)), width)
        return neg_step
    a, b = ins.operands
    op = float_binary(_BINARY_NAMES[ins.opcode], kind, width)

    def step(state: State, frame: Frame, regs: list) -> None:
        regs[d] = op(regs[a], regs[b])
    return step


@builds(Opcode.FCMP)
def _build_fcmp(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    a, b = ins.operands
    predicate, kind = ins.aux
    compare = fcmp_value(predicate, _KIND_WIDTHS.get(kind, 64))

    def step(state: State, frame: Frame, regs: list) -> None:
        regs[d] = compare(regs[a], regs[b])
    return step



@builds(Opcode.FLOATMATH)
def _build_float_math(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    name, kind = ins.aux
    operands = ins.operands
    width = _KIND_WIDTHS.get(kind, 64)
    result_width = ins.width

    def step(state: State, frame: Frame, regs: list) -> None:
        regs[d] = apply_math(ex, state, name, [regs[s] for s in operands], width, result_width)
    return step


@builds(Opcode.FPCAST, Opcode.FPTOUI, Opcode.FPTOSI, Opcode.UITOFP, Opcode.SITOFP)
def _build_float_cast(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    (a,) = ins.operands
    info = ins.aux
    fw, tw = info.from_bits, info.to_bits
    op = ins.opcode
    to_kind = _WIDTH_KINDS.get(tw, "double")
    solved = tw == 32 or tw == 64
    if op is Opcode.FPCAST:
        def resize_step(state: State, frame: Frame, regs: list) -> None:
            v = regs[a]
            if not solved:
                # into long double, which the theory does not model: one value of the float
                v = fixed_float(ex, state, v, fw, "float converted to long double")
            regs[d] = float_resize(v, fw, tw, to_kind)
        return resize_step
    if op is Opcode.FPTOUI or op is Opcode.FPTOSI:
        signed = op is Opcode.FPTOSI

        def to_integer_step(state: State, frame: Frame, regs: list) -> None:
            regs[d] = float_to_integer(regs[a], fw, tw, signed)
        return to_integer_step
    signed = op is Opcode.SITOFP

    def from_integer_step(state: State, frame: Frame, regs: list) -> None:
        v = regs[a]
        if not solved and type(v) is not int:
            # into long double (musl's strtod, printf): one value of the integer
            v = ex.concretize(state, v, fw, "integer converted to long double")
        regs[d] = float_from_integer(v, fw, tw, to_kind, signed)
    return from_integer_step
