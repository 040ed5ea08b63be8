"""The C library's math functions (``sqrt``, ``floorf``, ``fmod``, ``sin``...), computed by
:mod:`symex.core.interpreter.float_math`: exactly on symbolic floats where the floating-point theory
has the operation, and from the host's C library otherwise (a symbolic argument fixed
first, a shortfall the run reports).

They are intercepted even where the program's C library defines them (musl's ``libm``): the
theory's operation solves in one step what musl's bit-twiddling C would fork on, and the
results are those a native run against glibc gets (the ones replay checks against).
"""

from __future__ import annotations

from typing import Any

from symex.core.interpreter.float_math import C_MATH_FUNCTIONS, apply_math
from symex.core.interpreter.machine import ExternalHandler, StateView

__all__ = ["handlers"]


def _handler(operation: str, width: int) -> ExternalHandler:
    def handler(view: StateView, args: list[Any]) -> Any:
        ins = view.instruction
        ex, state = view.machine, view.state
        return apply_math(ex, state, operation, args, width, ins.width or 64)
    return handler


def handlers() -> dict[str, ExternalHandler]:
    """The math functions, by C name."""
    return {name: _handler(operation, width)
            for name, (operation, width) in C_MATH_FUNCTIONS.items()}
