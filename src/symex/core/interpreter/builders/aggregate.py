"""Builders of aggregate and vector instructions: extractvalue/insertvalue,
extractelement/insertelement and shufflevector."""

from __future__ import annotations

from typing import Any

from symex.core.interpreter.machine import Machine

from symex.core.interpreter.builders.registry import builds
from symex.core.outcome import (
    PathStatus,
    PathTerminated,
)
from symex.core.state import Frame, State
from symex.ir.program import (
    Access,
    Function,
    Instruction,
    Opcode,
    ValueKind,
)

# -- aggregates and vectors --------------------------------------------------------------------

def _zero_value(access: Access) -> Any:
    if access.kind is ValueKind.VECTOR or access.kind is ValueKind.AGGREGATE:
        return tuple(_zero_value(part) for _, part in access.parts)
    if access.kind is ValueKind.FLOAT:
        return 0.0
    return 0


@builds(Opcode.EXTRACTVALUE)
def _build_extractvalue(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    a = ins.operands[0]
    indices = ins.aux

    def step(state: State, frame: Frame, regs: list) -> None:
        value = regs[a]
        for i in indices:
            value = value[i] if type(value) is tuple else 0
        regs[d] = value
    return step


@builds(Opcode.INSERTVALUE)
def _build_insertvalue(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    a, v = ins.operands[:2]
    indices, access = ins.aux

    def insert(aggregate: Any, part: Access, path: tuple[int, ...], value: Any) -> Any:
        if type(aggregate) is not tuple:
            aggregate = _zero_value(part)
        items = list(aggregate)
        i = path[0]
        if len(path) == 1:
            items[i] = value
        else:
            items[i] = insert(items[i], part.parts[i][1], path[1:], value)
        return tuple(items)

    def step(state: State, frame: Frame, regs: list) -> None:
        regs[d] = insert(regs[a], access, indices, regs[v])
    return step


def _vector_index(ex: Machine, state: State, index: Any, count: int) -> int:
    if type(index) is not int:
        index = ex.concretize(state, index, index.width, "vector index")
    if index >= count:
        raise PathTerminated(PathStatus.PARTIAL, "unsupported: vector index out of range (poison)")
    return index


@builds(Opcode.EXTRACTELEMENT)
def _build_extractelement(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    a, i = ins.operands

    def step(state: State, frame: Frame, regs: list) -> None:
        vector = regs[a]
        regs[d] = vector[_vector_index(ex, state, regs[i], len(vector))]
    return step


@builds(Opcode.INSERTELEMENT)
def _build_insertelement(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    a, v, i = ins.operands

    def step(state: State, frame: Frame, regs: list) -> None:
        vector = regs[a]
        if type(vector) is not tuple:
            raise PathTerminated(PathStatus.PARTIAL, "unsupported: insertelement into a non-vector value")
        items = list(vector)
        items[_vector_index(ex, state, regs[i], len(items))] = regs[v]
        regs[d] = tuple(items)
    return step


@builds(Opcode.SHUFFLEVECTOR)
def _build_shuffle(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    a, b = ins.operands
    mask = ins.aux

    def step(state: State, frame: Frame, regs: list) -> None:
        x, y = regs[a], regs[b]
        if type(x) is not tuple:
            x = (0,) * len(y) if type(y) is tuple else (0,)
        if type(y) is not tuple:
            y = (0,) * len(x)
        both = x + y
        regs[d] = tuple(both[m] if m >= 0 else 0 for m in mask)
    return step


