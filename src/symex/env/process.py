"""The C library functions every test program needs from day one: the heap, process exit,
``assert``/``abort``, and plain output. (The full libc and POSIX model are a separate layer.)
"""

from __future__ import annotations

from typing import Any

from symex.core import values as V
from symex.core.executor import Executor, ExternalHandler
from symex.core.memory import OFFSET_MASK, ObjectKind
from symex.core.outcome import ErrorKind, PathStatus, PathTerminated
from symex.core.state import State
from symex.ir.program import SEGMENT_SHIFT, Instruction

#: the largest single allocation symex performs (a bigger malloc returns NULL, as libc may)
MAX_ALLOCATION = 1 << 28


def _size(ex: Executor, state: State, value: Any, what: str) -> int:
    if type(value) is int:
        return value
    # KLEE also concretizes symbolic sizes; the smallest feasible value keeps memory bounded
    return ex.concretize(state, value, value.width, what)


def _malloc(ex: Executor, state: State, args: list[Any], ins: Instruction) -> int:
    size = _size(ex, state, args[0], "malloc size")
    if size > MAX_ALLOCATION:
        return 0
    return ex.allocate(state, size, ObjectKind.HEAP, "malloc")


def _calloc(ex: Executor, state: State, args: list[Any], ins: Instruction) -> int:
    count = _size(ex, state, args[0], "calloc count")
    size = _size(ex, state, args[1], "calloc size")
    if count * size > MAX_ALLOCATION:
        return 0
    return ex.allocate(state, count * size, ObjectKind.HEAP, "calloc")


def _realloc(ex: Executor, state: State, args: list[Any], ins: Instruction) -> int:
    pointer = args[0]
    size = _size(ex, state, args[1], "realloc size")
    if type(pointer) is not int:
        pointer = ex.concretize(state, pointer, 64, "realloc pointer")
    if pointer == 0:
        return _malloc(ex, state, [size], ins)
    old = state.objects.get(pointer >> SEGMENT_SHIFT)
    if old is None or old.obj.kind is not ObjectKind.HEAP or pointer & OFFSET_MASK:
        ex.free(state, pointer)  # reports the invalid pointer
        return 0
    if size > MAX_ALLOCATION:
        return 0
    new = ex.allocate(state, size, ObjectKind.HEAP, "realloc")
    keep = min(size, old.obj.size)
    if keep:
        ex.write_bytes(state, new, ex.read_bytes(state, pointer, keep))
    ex.free(state, pointer)
    return new


def _free(ex: Executor, state: State, args: list[Any], ins: Instruction) -> None:
    ex.free(state, args[0])


def _exit(ex: Executor, state: State, args: list[Any], ins: Instruction) -> None:
    code = args[0] if args else 0
    if type(code) is not int:
        code = ex.concretize(state, code, code.width, "exit status")
    raise PathTerminated(PathStatus.COMPLETED, "exit", exit_code=code & 0xFF)


def _abort(ex: Executor, state: State, args: list[Any], ins: Instruction) -> None:
    ex.fail(state, ErrorKind.ABORT, "abort() called")


def _assert_fail(ex: Executor, state: State, args: list[Any], ins: Instruction) -> None:
    expression = ex.read_c_string(state, args[0]).decode("utf-8", "replace") if args[0] else "?"
    ex.fail(state, ErrorKind.ASSERT, f"ASSERTION FAIL: {expression}")


def _write_output(state: State, data: bytes) -> None:
    state.stdout += data


def _putchar(ex: Executor, state: State, args: list[Any], ins: Instruction) -> int:
    c = args[0]
    if type(c) is not int:
        c = ex.concretize(state, c, c.width, "putchar argument")
    _write_output(state, bytes([c & 0xFF]))
    return c & 0xFF


def _puts(ex: Executor, state: State, args: list[Any], ins: Instruction) -> int:
    _write_output(state, ex.read_c_string(state, args[0]) + b"\n")
    return 1


def _printf(ex: Executor, state: State, args: list[Any], ins: Instruction) -> int:
    text = format_printf(ex, state, args[0], args[1:])
    _write_output(state, text)
    return len(text)


def format_printf(ex: Executor, state: State, fmt_address: Any, args: list[Any]) -> bytes:
    """Format like printf for the common conversions. Symbolic arguments are concretized
    (the choice is recorded as a path constraint, so the test case reproduces this output)."""
    fmt = ex.read_c_string(state, fmt_address)
    out = bytearray()
    i = 0
    arg = 0
    while i < len(fmt):
        c = fmt[i]
        if c != ord("%"):
            out.append(c)
            i += 1
            continue
        j = i + 1
        while j < len(fmt) and fmt[j] in b"-+ #0123456789.*hlLqjzt":
            j += 1
        if j >= len(fmt):
            out += fmt[i:]
            break
        conv = chr(fmt[j])
        spec = fmt[i + 1:j].decode()
        i = j + 1
        if conv == "%":
            out.append(ord("%"))
            continue
        value = args[arg] if arg < len(args) else 0
        arg += 1
        flags = spec.replace("l", "").replace("h", "").replace("z", "").replace("j", "") \
            .replace("t", "").replace("q", "").replace("L", "")
        if conv == "s":
            out += ("%" + flags + "s").encode() % ex.read_c_string(state, value) if value else b"(null)"
            continue
        if type(value) is not int and type(value) is not float:
            value = ex.concretize(state, value, value.width, "printf argument")
        if conv in "di":
            width = 64 if "l" in spec or "z" in spec or "j" in spec else (8 if "hh" in spec else 16 if "h" in spec else 32)
            v = value & ((1 << width) - 1)
            v = v - (1 << width) if v >> (width - 1) else v
            out += (("%" + flags + "d") % v).encode()
        elif conv in "uxXoc":
            width = 64 if "l" in spec or "z" in spec or "j" in spec else (8 if "hh" in spec else 16 if "h" in spec else 32)
            v = value & ((1 << width) - 1)
            out += (("%" + flags + conv) % (v if conv != "c" else chr(v & 0xFF))).encode("latin-1")
        elif conv == "p":
            out += f"0x{value:x}".encode()
        elif conv in "fFeEgGaA":
            out += (("%" + flags + conv) % float(value)).encode()
        else:
            out += fmt[i - len(spec) - 2:i]
    return bytes(out)


def _abs(width: int) -> ExternalHandler:
    def handler(ex: Executor, state: State, args: list[Any], ins: Instruction) -> Any:
        return V.absolute(V.trunc(args[0], width), width)
    return handler


def handlers() -> dict[str, ExternalHandler]:
    """Heap, exit, assert/abort and output functions, by name."""
    return {
        "malloc": _malloc,
        "calloc": _calloc,
        "realloc": _realloc,
        "free": _free,
        "exit": _exit,
        "_exit": _exit,
        "_Exit": _exit,
        "abort": _abort,
        "__assert_fail": _assert_fail,
        "__assert_rtn": _assert_fail,
        "__assert": _assert_fail,
        "putchar": _putchar,
        "puts": _puts,
        "printf": _printf,
        "abs": _abs(32),
        "labs": _abs(64),
        "llabs": _abs(64),
    }

