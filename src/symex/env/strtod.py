"""The host's ``strtod``, for the numbers symex's C ``strtod`` (``runtime/libc/strtod.c``)
leaves to it: hexadecimal floats, ``inf``, ``nan``, more than 19 digits, large exponents.

Reading those exactly takes big-number arithmetic, which the program's own C library does
digit by digit (musl's through ``long double``, which symex keeps concrete); the host's
``strtod`` rounds correctly, as every C library's does, so its value is the one a native run
gets. The string is fixed to one of its values first, and the run reports that shortfall.
"""

from __future__ import annotations

import ctypes
import errno
import functools
from typing import Any

from symex.core.interpreter.machine import ExternalHandler, StateView
from symex.ir.program import WORD_ACCESS, Access, ValueKind

__all__ = ["handlers", "host_strtod"]

_INT = Access(ValueKind.INT, 4, 32)


@functools.cache
def _function(single: bool) -> Any:
    """The host's ``strtof`` (``single``) or ``strtod``, from the C library Python runs on."""
    library = ctypes.CDLL(None, use_errno=True)
    function = library.strtof if single else library.strtod
    function.restype = ctypes.c_float if single else ctypes.c_double
    function.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]
    return function


def host_strtod(text: bytes, single: bool) -> tuple[float, int, bool]:
    """The host's ``strtod`` (``strtof`` when ``single``) of ``text``: the value, how many
    bytes it read, and whether it set ``ERANGE``."""
    buffer = ctypes.create_string_buffer(text)
    end = ctypes.c_char_p()
    ctypes.set_errno(0)
    value = _function(single)(ctypes.cast(buffer, ctypes.c_char_p), ctypes.byref(end))
    out_of_range = ctypes.get_errno() == errno.ERANGE
    used = (ctypes.cast(end, ctypes.c_void_p).value or 0) - ctypes.addressof(buffer)
    return float(value), used, out_of_range


def _host_strtod(view: StateView, args: list[Any]) -> Any:
    """``double __symex_host_strtod(const char *s, int single, long *used, int *range)``."""
    text = view.read_c_string(args[0])
    single = view.concretize(args[1], 32, "strtod kind") if type(args[1]) is not int \
        else args[1]
    value, used, out_of_range = host_strtod(text, bool(single))
    view.write(args[2], WORD_ACCESS, used)
    view.write(args[3], _INT, int(out_of_range))
    return value


def handlers() -> dict[str, ExternalHandler]:
    """The host reading, by the name the C library calls it."""
    return {"__symex_host_strtod": _host_strtod}
