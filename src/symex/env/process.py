"""The C library functions every test program needs from day one: the heap, process exit,
``assert``/``abort``, and plain output. (The full libc and POSIX model are a separate layer.)
"""

from __future__ import annotations

from typing import Any

from symex.core.threads import scheduling
from symex.core.interpreter import values as V
from symex.core.memory.allocation_sizes import fix_allocation_size
from symex.core.interpreter.machine import ExternalHandler, StateView
from symex.core.memory.objects import OFFSET_MASK, ObjectKind
from symex.core.outcome import ErrorKind
from symex.env import printf
from symex.env.printf import format_printf
from symex.ir.program import SEGMENT_SHIFT

#: the largest single allocation symex performs (a bigger malloc returns NULL, as libc may)
MAX_ALLOCATION = 1 << 28


def _size(view: StateView, value: Any, what: str) -> int:
    # a symbolic size is explored at a few sizes, a path each (core.allocation_sizes)
    ex, state = view.machine, view.state
    return fix_allocation_size(ex, state, value, what)


def _malloc(view: StateView, args: list[Any]) -> int:
    size = _size(view, args[0], "malloc size")
    if size > MAX_ALLOCATION:
        return 0
    return view.allocate(size, ObjectKind.HEAP, "malloc", view.program_site())


def _calloc(view: StateView, args: list[Any]) -> int:
    count = _size(view, args[0], "calloc count")
    size = _size(view, args[1], "calloc size")
    if count * size > MAX_ALLOCATION:
        return 0
    return view.allocate(count * size, ObjectKind.HEAP, "calloc", view.program_site())


def _realloc(view: StateView, args: list[Any]) -> int:
    state = view.state
    pointer = args[0]
    size = _size(view, args[1], "realloc size")
    if type(pointer) is not int:
        pointer = view.concretize(pointer, 64, "realloc pointer")
    if pointer == 0:
        return _malloc(view, [size])
    old = state.objects.get(pointer >> SEGMENT_SHIFT)
    if old is None or old.obj.kind is not ObjectKind.HEAP or pointer & OFFSET_MASK:
        view.free(pointer)  # reports the invalid pointer
        return 0
    if size > MAX_ALLOCATION:
        return 0
    new = view.allocate(size, ObjectKind.HEAP, "realloc", view.program_site())
    keep = min(size, old.obj.size)
    if keep:
        view.write_bytes(new, view.read_bytes(pointer, keep))
    view.free(pointer)
    return new


def _free(view: StateView, args: list[Any]) -> None:
    view.free(args[0])


def _exit(view: StateView, args: list[Any]) -> None:
    # exit() calls each atexit handler, then this call to exit runs again for the next one
    ex, state = view.machine, view.state
    if ex.call_exit_handler(state):
        return
    _exit_now(view, args)


def _exit_now(view: StateView, args: list[Any]) -> None:
    ex, state = view.machine, view.state
    code = args[0] if args else 0
    if not isinstance(code, int):
        code = view.concretize(code, code.width, "exit status")
    # ends the process; the path ends with the last one (core.scheduling)
    scheduling.exit_process(ex, state, code & 0xFF)


def _abort(view: StateView, args: list[Any]) -> None:
    view.fail(ErrorKind.ABORT, "abort() called")


def _assert_fail(view: StateView, args: list[Any]) -> None:
    expression = view.read_c_string(args[0]).decode("utf-8", "replace") if args[0] else "?"
    view.fail(ErrorKind.ASSERT, f"ASSERTION FAIL: {expression}")


def _putchar(view: StateView, args: list[Any]) -> int:
    c = args[0]
    if type(c) is not int:
        c = view.concretize(c, c.width, "putchar argument")
    if not printf.write_standard_output(view, bytes([c & 0xFF]), "putchar"):
        return -1
    return c & 0xFF


def _puts(view: StateView, args: list[Any]) -> int:
    if not printf.write_standard_output(view, view.read_c_string(args[0]) + b"\n", "puts"):
        return -1
    return 1


def _setjmp(view: StateView, args: list[Any]) -> int:
    # the signal mask argument of sigsetjmp is ignored: symex models no signals
    ins = view.instruction
    ex, state = view.machine, view.state
    ex.set_jump(state, args[0], ins)
    return 0


def _longjmp(view: StateView, args: list[Any]) -> None:
    ex, state = view.machine, view.state
    ex.long_jump(state, args[0], args[1])


def _abs(width: int) -> ExternalHandler:
    def handler(view: StateView, args: list[Any]) -> Any:
        return V.absolute(V.trunc(args[0], width), width)
    return handler


def handlers() -> dict[str, ExternalHandler]:
    """Heap, exit, assert/abort, setjmp/longjmp and output functions (the printf family
    too), by name."""
    table: dict[str, ExternalHandler] = {
        "malloc": _malloc,
        "calloc": _calloc,
        "realloc": _realloc,
        "free": _free,
        # musl's own code calls these where an application may have replaced malloc
        "__libc_malloc": _malloc,
        "__libc_calloc": _calloc,
        "__libc_free": _free,
        "exit": _exit,
        "_exit": _exit_now,
        "_Exit": _exit_now,
        "abort": _abort,
        "__assert_fail": _assert_fail,
        "__assert_rtn": _assert_fail,
        "__assert": _assert_fail,
        "putchar": _putchar,
        "puts": _puts,
        "setjmp": _setjmp,
        "_setjmp": _setjmp,
        "__sigsetjmp": _setjmp,
        "sigsetjmp": _setjmp,
        "longjmp": _longjmp,
        "_longjmp": _longjmp,
        "siglongjmp": _longjmp,
        "__longjmp_chk": _longjmp,
        "abs": _abs(32),
        "labs": _abs(64),
        "llabs": _abs(64),
    }
    table.update(printf.handlers())
    return table



__all__ = ["format_printf", "handlers"]
