"""KLEE's intrinsics (``klee/klee.h``) and the SV-COMP / Test-Comp input functions.

Every symbolic input becomes a named object in the state (``Symbolic``); test cases list their
bytes under that name, in creation order. Names are made unique per path (``x``, ``x_1``, ...);
native replay consumes objects in order, as ``klee-replay`` does.
"""

from __future__ import annotations

from typing import Any, cast

from symex import expr as E
from symex.core.interpreter import values as V
from symex.core.interpreter.float_values import register_of
from symex.core.interpreter.machine import ExternalHandler, Machine
from symex.core.memory.objects import OFFSET_MASK, ObjectKind
from symex.core.outcome import ErrorKind, PathStatus, PathTerminated
from symex.core.search.seeding import refresh as refresh_seeds
from symex.core.state import State, Symbolic
from symex.expr import format_expr
from symex.ir.program import SEGMENT_SHIFT, Instruction
from symex.solvers.base import Validity

#: byte sizes of the __VERIFIER_nondet_* results (x86-64 LP64)
NONDET_SIZES = {
    "bool": 1, "char": 1, "uchar": 1, "short": 2, "ushort": 2, "int": 4, "uint": 4,
    "long": 8, "ulong": 8, "longlong": 8, "ulonglong": 8, "size_t": 8, "pointer": 8,
    "u32": 4, "u16": 2, "u8": 1, "unsigned": 4, "loff_t": 8, "sector_t": 8, "pchar": 8,
    "float": 4, "double": 8,
}


def make_symbolic(ex: Machine, state: State, address: int, size: int, name: str) -> E.Array:
    """Make ``size`` bytes at ``address`` symbolic, as a fresh input object called ``name``."""
    unique = state.unique_name(name or "unnamed")
    os, offset = ex.resolve(state, address, size, "klee_make_symbolic on")
    if type(offset) is not int:
        offset = ex.concretize(state, offset, 32, "klee_make_symbolic address")
    array = ex.input_array(unique, size)
    updates = E.UpdateList(array)
    os = state.writable(os)
    os.write_bytes(offset, [E.read(updates, E.const(i, 32)) for i in range(size)])
    state.symbolics += (Symbolic(unique, array, address),)
    if state.seeds is not None:
        refresh_seeds(state)  # the inputs take the seed's bytes for the new object
    return array


def fresh_value(ex: Machine, state: State, size: int, name: str) -> E.Expr:
    """A fresh symbolic value of ``size`` bytes backed by its own input object."""
    os = state.allocate(size, ObjectKind.ARGUMENT, name)
    make_symbolic(ex, state, os.obj.address, size, name)
    # the bytes were just made symbolic: each is an expression
    data = cast("list[E.Expr]", os.read_bytes(0, size))
    value = data[0]
    for b in data[1:]:
        value = E.concat(b, value)
    return value


def _string(ex: Machine, state: State, address: Any) -> str:
    if address == 0:
        return ""
    return ex.read_c_string(state, address).decode("utf-8", "replace")


def _klee_make_symbolic(ex: Machine, state: State, args: list[Any], ins: Instruction) -> None:
    address = args[0]
    size = ex.concretize(state, args[1], 64, "klee_make_symbolic size")
    if type(address) is not int:
        address = ex.concretize(state, address, 64, "klee_make_symbolic address")
    name = _string(ex, state, args[2]) if len(args) > 2 else "unnamed"
    make_symbolic(ex, state, address, size, name)


def assume(ex: Machine, state: State, condition: Any, *, silent_if_false: bool) -> None:
    """Add ``condition != 0`` to the path; a provably false one ends the path."""
    if type(condition) is int:
        holds: Any = 1 if condition else 0
    else:
        holds = V.simplify(E.bool_not(E.eq(E.const(0, condition.width), condition)))
    if type(holds) is int:
        if holds:
            return
        validity = Validity.FALSE
    else:
        validity = ex.evaluate(state, holds)
    if validity is Validity.FALSE:
        if silent_if_false:
            raise PathTerminated(PathStatus.COMPLETED, "assumption is false", emit_test=False)
        ex.fail(state, ErrorKind.USER, "invalid klee_assume call (provably false)")
    if validity is Validity.UNKNOWN:
        state.add_constraint(holds)


def _klee_assume(ex: Machine, state: State, args: list[Any], ins: Instruction) -> None:
    assume(ex, state, args[0], silent_if_false=False)


def _verifier_assume(ex: Machine, state: State, args: list[Any], ins: Instruction) -> None:
    assume(ex, state, args[0], silent_if_false=True)


def _klee_range(ex: Machine, state: State, args: list[Any], ins: Instruction) -> Any:
    begin = ex.concretize(state, args[0], 32, "klee_range start")
    end = ex.concretize(state, args[1], 32, "klee_range end")
    name = _string(ex, state, args[2])
    if V.signed(begin, 32) >= V.signed(end, 32):
        ex.fail(state, ErrorKind.USER, "invalid range passed to klee_range")
    # always a real input object, so native replay consumes one object per call
    value = fresh_value(ex, state, 4, name)
    state.add_constraint(E.sle(E.const(begin, 32), value))
    state.add_constraint(E.slt(value, E.const(end, 32)))
    return V.simplify(value)


def _klee_int(ex: Machine, state: State, args: list[Any], ins: Instruction) -> Any:
    return fresh_value(ex, state, 4, _string(ex, state, args[0]))


def _klee_is_symbolic(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    return 0 if type(args[0]) is int else 1


def _klee_get_value(float_width: int) -> ExternalHandler:
    """``klee_get_value_*``: one value the path allows (a float's, for ``float_width`` 32 or
    64, comes back as a float)."""
    def handler(ex: Machine, state: State, args: list[Any], ins: Instruction) -> Any:
        value = args[0]
        if type(value) is int or type(value) is float:
            return value
        number = ex.get_value(state, value)
        return register_of(E.const(number, float_width), float_width) if float_width else number
    return handler


def _klee_silent_exit(ex: Machine, state: State, args: list[Any], ins: Instruction) -> None:
    raise PathTerminated(PathStatus.COMPLETED, "klee_silent_exit", emit_test=False,
                         exit_code=args[0] if args and type(args[0]) is int else 0)


def _klee_report_error(ex: Machine, state: State, args: list[Any], ins: Instruction) -> None:
    message = _string(ex, state, args[2]) if len(args) > 2 else "klee_report_error"
    ex.fail(state, ErrorKind.USER, message)


def _klee_abort(ex: Machine, state: State, args: list[Any], ins: Instruction) -> None:
    ex.fail(state, ErrorKind.ABORT, "klee_abort called")


def _klee_warning(ex: Machine, state: State, args: list[Any], ins: Instruction) -> None:
    ex.messages.append(f"KLEE: WARNING: {_string(ex, state, args[0])}")


def _klee_print_expr(ex: Machine, state: State, args: list[Any], ins: Instruction) -> None:
    message = _string(ex, state, args[0])
    value = args[1] if len(args) > 1 else None
    shown = format_expr(value, max_chars=2000) if value is not None and type(value) is not int \
        else str(value)
    ex.messages.append(f"{message}:{shown}")


def _klee_prefer_cex(ex: Machine, state: State, args: list[Any], ins: Instruction) -> None:
    return None


def _reach_error(ex: Machine, state: State, args: list[Any], ins: Instruction) -> None:
    ex.fail(state, ErrorKind.REACH_ERROR, "reach_error() called")


def _nondet(kind: str) -> ExternalHandler:
    size = NONDET_SIZES[kind]

    def handler(ex: Machine, state: State, args: list[Any], ins: Instruction) -> Any:
        value = fresh_value(ex, state, size, f"nondet_{kind}")
        if kind == "bool":
            # native _Bool conversion: any non-zero byte reads as 1
            return V.simplify(E.bool_not(E.eq(E.const(0, 8), value)))
        width = ins.width or size * 8
        if kind == "float" or kind == "double":
            return value  # a symbolic float is the expression of its IEEE bits
        return V.simplify(E.extract(value, 0, width) if width < size * 8 else value)
    return handler


def _object_base(ex: Machine, state: State, args: list[Any], ins: Instruction) -> Any:
    pointer = args[0]
    if type(pointer) is not int:
        pointer = ex.concretize(state, pointer, 64, "klee_get_obj_size")
    return (pointer >> SEGMENT_SHIFT) << SEGMENT_SHIFT if pointer & OFFSET_MASK else pointer


def handlers() -> dict[str, ExternalHandler]:
    """The KLEE and SV-COMP functions, by name."""
    table: dict[str, ExternalHandler] = {
        "klee_make_symbolic": _klee_make_symbolic,
        "klee_assume": _klee_assume,
        "klee_range": _klee_range,
        "klee_int": _klee_int,
        "klee_is_symbolic": _klee_is_symbolic,
        "klee_silent_exit": _klee_silent_exit,
        "klee_report_error": _klee_report_error,
        "klee_abort": _klee_abort,
        "klee_warning": _klee_warning,
        "klee_warning_once": _klee_warning,
        "klee_print_expr": _klee_print_expr,
        "klee_prefer_cex": _klee_prefer_cex,
        "klee_get_obj_base": _object_base,
        "__VERIFIER_assume": _verifier_assume,
        "reach_error": _reach_error,
        "__VERIFIER_error": _reach_error,
    }
    for suffix in ("i32", "i64", "f", "d", "l", "ll", "_i32", "_i64", "_f", "_d", "_l", "_ll"):
        float_width = {"f": 32, "d": 64}.get(suffix.lstrip("_"), 0)
        table[f"klee_get_value{suffix}"] = _klee_get_value(float_width)
    for kind in NONDET_SIZES:
        table[f"__VERIFIER_nondet_{kind}"] = _nondet(kind)
    return table
