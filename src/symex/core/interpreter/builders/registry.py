"""The table of closure builders: each opcode's ``build(machine, function, code, instruction)``
returns the ``step(state, frame, regs)`` the interpreter calls (pySMT's ``@handles``
pattern: a family module registers its builders with :func:`builds`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from symex.core.outcome import PathStatus, PathTerminated
from symex.core.state import Frame, State
from symex.ir.program import Function, Instruction, Opcode

if TYPE_CHECKING:
    from symex.core.interpreter.machine import Machine

__all__ = ["BUILDERS", "SITE_MEMO_LIMIT", "Builder", "builds", "elementwise", "unsupported_step",
           "where"]

Builder = Callable[["Machine", Function, list, Instruction], Any]
"""``(machine, function, the function's code, instruction) -> step(state, frame, regs)``."""

BUILDERS: dict[Opcode, Builder] = {}
"""Each opcode's builder (filled by the family modules as they are imported)."""

#: symbolic operands an instruction remembers its result for (casts, comparisons with a
#: literal: pure functions of interned expressions)
SITE_MEMO_LIMIT = 256


def builds(*opcodes: Opcode) -> Callable[[Builder], Builder]:
    """Register the decorated function as the builder of ``opcodes``."""
    def register(fn: Builder) -> Builder:
        for op in opcodes:
            BUILDERS[op] = fn
        return fn
    return register


def where(ins: Instruction) -> str:
    """The instruction's source location, for messages."""
    if ins.location is not None:
        return f"{ins.location.file}:{ins.location.line}"
    return "no source location"


def unsupported_step(reason: str) -> Any:
    """A step that ends the path as unsupported, saying ``reason``."""
    def step(state: State, frame: Frame, regs: list) -> None:
        raise PathTerminated(PathStatus.PARTIAL, f"unsupported: {reason}")
    return step


def elementwise(count: int, fn: Callable[..., Any], *vectors: Any) -> tuple:
    """``fn`` applied to the elements of ``count``-element vectors, position by position."""
    return tuple(fn(*[v[i] for v in vectors]) for i in range(count))
