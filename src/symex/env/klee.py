"""KLEE's intrinsics (``klee/klee.h``) and the SV-COMP / Test-Comp input functions.

Every symbolic input becomes a named object in the state (``Symbolic``); test cases list their
bytes under that name, in creation order. Names are made unique per path (``x``, ``x_1``, ...);
native replay consumes objects in order, as ``klee-replay`` does.
"""

from __future__ import annotations

from typing import Any

from symex import expr as E
from symex.core.interpreter import values as V
from symex.core.interpreter.float_values import register_of
from symex.core.interpreter.machine import ExternalHandler, StateView
from symex.core.memory.objects import OFFSET_MASK
from symex.core.outcome import ErrorKind, PathStatus, PathTerminated
from symex.expr import format_expr
from symex.ir.program import SEGMENT_SHIFT
from symex.solvers.base import Validity

#: byte sizes of the __VERIFIER_nondet_* results (x86-64 LP64)
NONDET_SIZES = {
    "bool": 1, "char": 1, "uchar": 1, "short": 2, "ushort": 2, "int": 4, "uint": 4,
    "long": 8, "ulong": 8, "longlong": 8, "ulonglong": 8, "size_t": 8, "pointer": 8,
    "u32": 4, "u16": 2, "u8": 1, "unsigned": 4, "loff_t": 8, "sector_t": 8, "pchar": 8,
    "float": 4, "double": 8,
}


def _string(view: StateView, address: Any) -> str:
    if address == 0:
        return ""
    return view.read_c_string(address).decode("utf-8", "replace")


def _klee_make_symbolic(view: StateView, args: list[Any]) -> None:
    address = args[0]
    size = view.concretize(args[1], 64, "klee_make_symbolic size")
    if type(address) is not int:
        address = view.concretize(address, 64, "klee_make_symbolic address")
    name = _string(view, args[2]) if len(args) > 2 else "unnamed"
    view.make_symbolic(address, size, name)


def assume(view: StateView, condition: Any, *, silent_if_false: bool) -> None:
    """Add ``condition != 0`` to the path; a provably false one ends the path."""
    state = view.state
    if type(condition) is int:
        holds: Any = 1 if condition else 0
    else:
        holds = V.simplify(E.bool_not(E.eq(E.const(0, condition.width), condition)))
    if type(holds) is int:
        if holds:
            return
        validity = Validity.FALSE
    else:
        validity = view.evaluate(holds)
    if validity is Validity.FALSE:
        if silent_if_false:
            raise PathTerminated(PathStatus.COMPLETED, "assumption is false", emit_test=False)
        view.fail(ErrorKind.USER, "invalid klee_assume call (provably false)")
    if validity is Validity.UNKNOWN:
        state.add_constraint(holds)


def _klee_assume(view: StateView, args: list[Any]) -> None:
    assume(view, args[0], silent_if_false=False)


def _verifier_assume(view: StateView, args: list[Any]) -> None:
    assume(view, args[0], silent_if_false=True)


def _klee_range(view: StateView, args: list[Any]) -> Any:
    state = view.state
    begin = view.concretize(args[0], 32, "klee_range start")
    end = view.concretize(args[1], 32, "klee_range end")
    name = _string(view, args[2])
    if V.signed(begin, 32) >= V.signed(end, 32):
        view.fail(ErrorKind.USER, "invalid range passed to klee_range")
    # always a real input object, so native replay consumes one object per call
    value = view.fresh_value(4, name)
    state.add_constraint(E.sle(E.const(begin, 32), value))
    state.add_constraint(E.slt(value, E.const(end, 32)))
    return V.simplify(value)


def _klee_int(view: StateView, args: list[Any]) -> Any:
    return view.fresh_value(4, _string(view, args[0]))


def _klee_is_symbolic(view: StateView, args: list[Any]) -> int:
    return 0 if type(args[0]) is int else 1


def _klee_get_value(float_width: int) -> ExternalHandler:
    """``klee_get_value_*``: one value the path allows (a float's, for ``float_width`` 32 or
    64, comes back as a float)."""
    def handler(view: StateView, args: list[Any]) -> Any:
        value = args[0]
        if type(value) is int or type(value) is float:
            return value
        number = view.get_value(value)
        return register_of(E.const(number, float_width), float_width) if float_width else number
    return handler


def _klee_silent_exit(view: StateView, args: list[Any]) -> None:
    raise PathTerminated(PathStatus.COMPLETED, "klee_silent_exit", emit_test=False,
                         exit_code=args[0] if args and type(args[0]) is int else 0)


def _klee_report_error(view: StateView, args: list[Any]) -> None:
    message = _string(view, args[2]) if len(args) > 2 else "klee_report_error"
    view.fail(ErrorKind.USER, message)


def _klee_abort(view: StateView, args: list[Any]) -> None:
    view.fail(ErrorKind.ABORT, "klee_abort called")


def _klee_warning(view: StateView, args: list[Any]) -> None:
    view.warn(f"KLEE: WARNING: {_string(view, args[0])}")


def _klee_print_expr(view: StateView, args: list[Any]) -> None:
    message = _string(view, args[0])
    value = args[1] if len(args) > 1 else None
    shown = format_expr(value, max_chars=2000) if value is not None and type(value) is not int \
        else str(value)
    view.warn(f"{message}:{shown}")


def _klee_prefer_cex(view: StateView, args: list[Any]) -> None:
    return None


def _reach_error(view: StateView, args: list[Any]) -> None:
    view.fail(ErrorKind.REACH_ERROR, "reach_error() called")


def _nondet(kind: str) -> ExternalHandler:
    size = NONDET_SIZES[kind]

    def handler(view: StateView, args: list[Any]) -> Any:
        ins = view.instruction
        value = view.fresh_value(size, f"nondet_{kind}")
        if kind == "bool":
            # native _Bool conversion: any non-zero byte reads as 1
            return V.simplify(E.bool_not(E.eq(E.const(0, 8), value)))
        width = ins.width or size * 8
        if kind == "float" or kind == "double":
            return value  # a symbolic float is the expression of its IEEE bits
        return V.simplify(E.extract(value, 0, width) if width < size * 8 else value)
    return handler


def _object_base(view: StateView, args: list[Any]) -> Any:
    pointer = args[0]
    if type(pointer) is not int:
        pointer = view.concretize(pointer, 64, "klee_get_obj_size")
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
