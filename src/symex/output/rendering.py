"""How symex shows values and counts to people: the command line's summary and test lines,
and the service's page (which takes its crash inputs from here, so both read the same).

A test object is shown by what it most likely is: the inputs the POSIX model makes
(``--sym-arg`` strings, ``--sym-stdin``, ``--sym-files``, packets) as text when their bytes
are printable; other objects of 1, 2, 4 or 8 bytes as the integer they hold (an ``int`` made
symbolic with ``klee_make_symbolic`` is a number, even when its bytes happen to be
printable), with the unsigned hexadecimal beside large ones, but the results of
``__VERIFIER_nondet_float``/``double`` as the float they hold (as Test-Comp writes them); any other buffer as text when
it is a printable C string, else as hex, cut after :data:`MAX_OBJECT_BYTES` bytes. A fuzz
target's input (``fuzz-size``, ``fuzz-data``) is one ``input``: the bytes the target got.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from symex.env.fuzz_input import FUZZ_DATA, FUZZ_SIZE, raw_input
from symex.output.testcomp import nondet_kind, render_nondet
from symex.symargs import FAILURE_OBJECTS

__all__ = ["MAX_OBJECT_BYTES", "counted", "is_text_object", "share", "show_object", "show_value",
           "shown_objects"]

#: bytes of a non-text object shown (as hex) before the rest is cut
MAX_OBJECT_BYTES = 16

# the objects the POSIX model makes for text inputs (argv strings, stdin, files, packets)
_TEXT_OBJECT = re.compile(r"arg\d+|stdin|stdout|[A-Z]-data|packet-\d+")
_NUMBER_SIZES = (1, 2, 4, 8)
# from here on an integer is also shown in hex (a bit pattern more than a count)
_HEX_FROM = 1 << 16


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``1 path``, ``2 paths``, ``0 branches`` (``plural`` where adding ``s`` is wrong)."""
    if n == 1:
        return f"1 {noun}"
    if plural is None:
        plural = noun + ("es" if noun.endswith(("s", "sh", "ch", "x")) else "s")
    return f"{n} {plural}"


def share(part: int, whole: int, noun: str, plural: str | None = None) -> str:
    """``87.5% (7 of 8 lines)``; ``none to cover (0 branches)`` when ``whole`` is 0."""
    if whole == 0:
        return f"none to cover ({counted(0, noun, plural)})"
    return f"{100.0 * part / whole:.1f}% ({part} of {counted(whole, noun, plural)})"


def is_text_object(name: str) -> bool:
    """Whether an object holds text input made by the POSIX model (argv, stdin, files)."""
    return _TEXT_OBJECT.fullmatch(name) is not None


def _printable(data: bytes) -> bool:
    return all(32 <= b < 127 or b in (9, 10, 13) for b in data)


def _as_text(data: bytes) -> str | None:
    """``data`` as a quoted C string when it is one (printable bytes, then only NULs)."""
    text, nul, rest = data.partition(b"\0")
    if not _printable(text) or rest.strip(b"\0") or (not text and not nul):
        return None
    escaped = text.decode("ascii").replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    return f'"{escaped}"'


def _as_hex(data: bytes) -> str:
    if len(data) > MAX_OBJECT_BYTES:
        return f"{data[:MAX_OBJECT_BYTES].hex()}... ({len(data)} bytes)"
    return data.hex()


def _show_raw(data: bytes) -> str:
    """A fuzz target's input, every byte of it counting: quoted when all printable, else
    hex, with its length."""
    if data and _printable(data):
        return f"{_as_text(data)} ({counted(len(data), 'byte')})"
    if not data:
        return '"" (0 bytes)'
    return _as_hex(data) if len(data) > MAX_OBJECT_BYTES else f"{data.hex()} ({counted(len(data), 'byte')})"


def _as_number(data: bytes) -> str:
    value = int.from_bytes(data, "little", signed=True)
    if len(data) == 1 and 32 <= data[0] < 127:
        return f"{value} ({chr(data[0])!r})"
    if abs(value) >= _HEX_FROM:
        return f"{value} (0x{int.from_bytes(data, 'little'):0{2 * len(data)}x})"
    return str(value)


def show_value(name: str, data: bytes) -> str:
    """The bytes of test object ``name`` as a person reads them (module docstring for the
    rules); ``symex ktest`` shows the whole bytes."""
    if nondet_kind(name) in ("float", "double") and len(data) in (4, 8):
        return render_nondet("float" if len(data) == 4 else "double", data)
    if len(data) in _NUMBER_SIZES and not is_text_object(name):
        return _as_number(data)
    text = _as_text(data)
    return text if text is not None else _as_hex(data)


def show_object(name: str, data: bytes) -> str:
    """A test object as ``name=value``."""
    return f"{name}={show_value(name, data)}"


def shown_objects(objects: Mapping[str, bytes]) -> dict[str, str]:
    """A test's objects as a person reads them, name -> value, in order, without those that
    only describe the environment (``A-data-stat``, ``stdin-stat``, ``model_version``) and
    ``--max-fail`` objects that are 0 (calls are numbered from 1: none of that kind fails).
    A fuzz target's input is shown as one ``input``: the bytes the target got."""
    fuzz_input = raw_input(objects)
    if fuzz_input is not None:
        rest = {name: data for name, data in objects.items() if name not in (FUZZ_SIZE, FUZZ_DATA)}
        return {"input": _show_raw(fuzz_input), **shown_objects(rest)}
    return {name: show_value(name, data) for name, data in objects.items()
            if not name.endswith("-stat") and name != "model_version"
            and not (name in FAILURE_OBJECTS and not any(data))}
