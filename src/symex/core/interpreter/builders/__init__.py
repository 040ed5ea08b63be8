"""Closure builders, by family: every lowered instruction becomes one
``step(state, frame, regs)`` (see :mod:`symex.core.interpreter.executor`), built once per exploration by
the builder its opcode is registered to (:mod:`~symex.core.interpreter.builders.registry`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from symex.core.interpreter.builders import aggregate, assembly, control, floating, integer, memory  # noqa: F401  (register)
from symex.core.interpreter.builders.registry import BUILDERS, unsupported_step

if TYPE_CHECKING:
    from symex.core.interpreter.machine import Machine
    from symex.ir.program import Function, Instruction

__all__ = ["build_step"]


def build_step(machine: Machine, fn: Function, fcode: list[list[Any]], ins: Instruction) -> Any:
    """The closure executing ``ins`` (an unsupported step where no builder knows its opcode)."""
    builder = BUILDERS.get(ins.opcode)
    if builder is None:
        return unsupported_step(f"no semantics for {ins.opcode.name}")
    return builder(machine, fn, fcode, ins)
