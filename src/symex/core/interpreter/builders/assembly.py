"""Builders of the inline assembly statements symex executes (``Opcode.ASSEMBLY``,
:class:`~symex.ir.program.AssemblyKind`): ``longlong.h``'s 128-bit arithmetic on 64-bit
halves (coreutils' factor, GMP) and bit scans, computed as the processor computes them, on
concrete and symbolic values alike. A statement with two outputs yields a tuple, as LLVM's
``{i64, i64}`` result, which ``extractvalue`` reads."""

from __future__ import annotations

from typing import Any

from symex import expr as E
from symex.core.interpreter import values as V
from symex.core.interpreter.builders.registry import builds
from symex.core.interpreter.machine import Machine
from symex.core.state import Frame, State
from symex.ir.program import AssemblyKind, Function, Instruction, Opcode

_MASK = (1 << 64) - 1


def _pair(high: Any, low: Any) -> Any:
    """The 128-bit value ``high:low``."""
    if type(high) is int and type(low) is int:
        return high << 64 | low
    return E.concat(V.as_expr(high, 64), V.as_expr(low, 64))


def _halves(value: Any) -> tuple[Any, Any]:
    """(high, low) 64-bit halves of a 128-bit value."""
    if type(value) is int:
        return value >> 64, value & _MASK
    return V.simplify(E.extract(value, 64, 64)), V.simplify(E.extract(value, 0, 64))


def _mulq(u: Any, v: Any) -> tuple[Any, Any]:
    high, low = _halves(V.binary("mul", V.zext(u, 128), V.zext(v, 128), 128))
    return low, high  # rax, rdx


def _pair_arithmetic(name: str) -> Any:
    def compute(ah: Any, bh: Any, al: Any, bl: Any) -> tuple[Any, Any]:
        return _halves(V.binary(name, _pair(ah, al), _pair(bh, bl), 128))
    return compute


def _bsr(x: Any) -> Any:
    return V.binary("sub", 63, V.ctlz(x, 64), 64)


_COMPUTE = {
    AssemblyKind.MULQ: _mulq,
    AssemblyKind.ADD_PAIR: _pair_arithmetic("add"),
    AssemblyKind.SUB_PAIR: _pair_arithmetic("sub"),
    AssemblyKind.BSF: lambda x: V.cttz(x, 64),
    AssemblyKind.BSR: _bsr,
}


@builds(Opcode.ASSEMBLY)
def _build_assembly(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    operands = ins.operands
    compute = _COMPUTE[ins.aux]
    width = ins.width
    if ins.aux in (AssemblyKind.BSF, AssemblyKind.BSR) and width < 64:
        # the output is an int: the register's low bits
        scan = compute

        def compute(x: Any) -> Any:
            return V.trunc(scan(x), width)

    def step(state: State, frame: Frame, regs: list) -> None:
        regs[d] = compute(*[regs[a] for a in operands])
    return step
