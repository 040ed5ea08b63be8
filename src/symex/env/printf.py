"""The printf family: one formatter (C's conversions, flags, width, precision, length
modifiers) and the functions built on it (printf, fprintf, dprintf, sprintf, snprintf and their
``v`` forms taking an x86-64 ``va_list``, plus glibc's ``__*_chk`` fortify names).

Arguments come either from the call itself (``printf(fmt, ...)``) or from a ``va_list`` in
memory (``vsnprintf(buf, n, fmt, ap)``); the formatter asks an argument source for "the next
int of N bits" or "the next double", as C's ``va_arg`` does, so both read the same way.
Symbolic arguments are concretized to one value the path allows, and the choice is added to
the path condition, so the test case reproduces exactly the output the path printed.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

from symex.core.interpreter.float_values import fixed_float
from symex.core.interpreter.machine import ExternalHandler, StateView
from symex.core.memory.objects import ObjectKind
from symex.core.outcome import ErrorKind, PathStatus, PathTerminated
from symex.ir.program import POINTER_ACCESS, Access, Instruction, Opcode, ValueKind

#: stands for the call instruction when this module calls another handler itself
_NO_CALL = Instruction(Opcode.CALL, -1, (), 0, None, None, "")
_U32 = Access(ValueKind.INT, 4, 32)
_DOUBLE = Access(ValueKind.FLOAT, 8, 64)
_LONG_DOUBLE = Access(ValueKind.FLOAT, 10, 80)

#: bits of an integer argument per length modifier (LP64)
_LENGTH_BITS = {"hh": 8, "h": 16, "": 32, "l": 64, "ll": 64, "q": 64, "j": 64, "z": 64, "t": 64, "L": 64}

#: the x86-64 va_list's register save area: 6 general registers, then 8 16-byte vector registers
_GP_AREA_END = 48
_FP_AREA_END = 176


class Arguments(Protocol):
    """Where a conversion's argument comes from, in order."""

    def next_int(self, bits: int) -> Any:
        """The next integer argument (int or expression; only the low ``bits`` count)."""

    def next_float(self, long_double: bool) -> Any:
        """The next floating-point argument (a float, or a symbolic float's bits)."""


class CallArguments:
    """The variadic arguments of the call being handled."""

    __slots__ = ("values", "index")

    def __init__(self, values: list[Any]) -> None:
        self.values = values
        self.index = 0

    def _next(self) -> Any:
        # a missing argument is undefined behaviour in C; 0 keeps the output deterministic
        value = self.values[self.index] if self.index < len(self.values) else 0
        self.index += 1
        return value

    def next_int(self, bits: int) -> Any:
        """The next argument as passed."""
        return self._next()

    def next_float(self, long_double: bool) -> Any:
        """The next argument as passed (a float, or a symbolic float's bits)."""
        value = self._next()
        return float(value) if type(value) is int else value


class VaListArguments:
    """Arguments read through an x86-64 SysV ``va_list`` in memory, as ``va_arg`` reads them:
    ``{u32 gp_offset; u32 fp_offset; void *overflow_arg_area; void *reg_save_area}``. symex's
    va_start marks the register areas exhausted, so everything normally comes from the overflow
    area, but a va_list with register offsets left is read from its save area all the same.
    The va_list is advanced in memory, as glibc's vfprintf leaves it."""

    __slots__ = ("view", "address")

    def __init__(self, view: StateView, address: Any) -> None:
        self.view = view
        self.address = address if type(address) is int else view.concretize(address, 64, "va_list")

    def _field(self, offset: int, access: Access) -> int:
        value = self.view.read(self.address + offset, access)
        if type(value) is not int:
            value = self.view.concretize(value, access.bits, "va_list field")
        return value

    def _overflow_slot(self, size: int, align: int) -> int:
        area = self._field(8, POINTER_ACCESS)
        area = (area + align - 1) // align * align
        self.view.write(self.address + 8, POINTER_ACCESS, area + (size + 7) // 8 * 8)
        return area

    def next_int(self, bits: int) -> Any:
        """The next integer argument (an 8-byte slot, of which the low ``bits`` are read)."""
        access = Access(ValueKind.INT, bits // 8, bits)
        gp = self._field(0, _U32)
        if gp + 8 <= _GP_AREA_END:
            self.view.write(self.address, _U32, gp + 8)
            return self.view.read(self._field(16, POINTER_ACCESS) + gp, access)
        return self.view.read(self._overflow_slot(8, 8), access)

    def next_float(self, long_double: bool) -> Any:
        """The next double (a vector register or an 8-byte slot) or long double (always a
        16-byte aligned stack slot)."""
        if long_double:
            value = self.view.read(self._overflow_slot(16, 16), _LONG_DOUBLE)
        else:
            fp = self._field(4, _U32)
            if fp + 16 <= _FP_AREA_END:
                self.view.write(self.address + 4, _U32, fp + 16)
                value = self.view.read(self._field(16, POINTER_ACCESS) + fp, _DOUBLE)
            else:
                value = self.view.read(self._overflow_slot(8, 8), _DOUBLE)
        return value


def _concrete(view: StateView, value: Any, bits: int) -> int:
    if type(value) is int:
        return value & ((1 << bits) - 1)
    if type(value) is float:
        return int(value) & ((1 << bits) - 1)
    # the value printed is fixed on this path from here on (constraint recorded)
    return view.concretize(value, value.width, "printf argument") & ((1 << bits) - 1)


def _pad(body: bytes, width: int, left: bool) -> bytes:
    if len(body) >= width:
        return body
    return body + b" " * (width - len(body)) if left else b" " * (width - len(body)) + body


def _format_integer(value: int, conv: str, flags: str, width: int, precision: int | None,
                    bits: int) -> bytes:
    sign = ""
    if conv in "di":
        if value >> (bits - 1):
            value -= 1 << bits
        if value < 0:
            sign, value = "-", -value
        elif "+" in flags:
            sign = "+"
        elif " " in flags:
            sign = " "
    base = {"o": 8, "x": 16, "X": 16}.get(conv, 10)
    digits = "" if value == 0 and precision == 0 else format(value, {8: "o", 16: "x", 10: "d"}[base])
    if conv == "X":
        digits = digits.upper()
    if precision is not None and len(digits) < precision:
        digits = "0" * (precision - len(digits)) + digits
    prefix = sign
    if "#" in flags:
        if conv == "o" and not digits.startswith("0"):
            digits = "0" + digits
        elif conv in "xX" and value != 0:
            prefix += "0" + conv
    if "0" in flags and "-" not in flags and precision is None:
        digits = digits.rjust(width - len(prefix), "0")
    return _pad((prefix + digits).encode(), width, "-" in flags)


def _format_float(value: float, conv: str, flags: str, width: int, precision: int | None) -> bytes:
    if math.isinf(value) or math.isnan(value):
        text = ("-" if math.copysign(1.0, value) < 0 else "+" if "+" in flags else " " if " " in flags else "")
        text += "inf" if math.isinf(value) else "nan"
        text = text.upper() if conv.isupper() else text
        return _pad(text.encode(), width, "-" in flags)
    if conv in "aA":
        text = _hex_float(value, precision)
        if conv == "A":
            text = text.upper()
        text = ("+" if "+" in flags else " " if " " in flags else "") + text if value >= 0 else text
        return _pad(text.encode(), width, "-" in flags)
    spec = "%" + "".join(f for f in "-+ #0" if f in flags) + (str(width) if width else "")
    spec += f".{precision}" if precision is not None else ""
    return ((spec + conv) % value).encode()


def _hex_float(value: float, precision: int | None) -> str:
    """glibc's %a: ``0x1.8p+1``, trailing zero digits dropped unless a precision is given."""
    text = value.hex()  # like -0x1.8000000000000p+1
    sign = "-" if text.startswith("-") else ""
    mantissa, exponent = text.lstrip("-")[2:].split("p")
    lead, _, fraction = mantissa.partition(".")
    if precision is None:
        fraction = fraction.rstrip("0")
    else:
        fraction = fraction[:precision].ljust(precision, "0")
    return f"{sign}0x{lead}{'.' + fraction if fraction else ''}p{exponent}"


def format_arguments(view: StateView, fmt_address: Any, args: Arguments) -> bytes:
    """What C's printf prints for the format at ``fmt_address`` with ``args``. Handles the
    flags ``-+ #0``, width and precision (also ``*``), the length modifiers hh h l ll q j z t L,
    and the conversions d i u o x X c s p e E f F g G a A n %. Symbolic integers are
    concretized with the choice recorded as a path constraint; so are symbolic bytes of a
    ``%s`` string."""
    ex, state = view.machine, view.state
    fmt = view.read_c_string(fmt_address)
    out = bytearray()
    i = 0
    n = len(fmt)
    while i < n:
        c = fmt[i]
        if c != 0x25:  # '%'
            out.append(c)
            i += 1
            continue
        start = i
        i += 1
        flags = ""
        while i < n and chr(fmt[i]) in "-+ #0":
            flags += chr(fmt[i])
            i += 1
        width = 0
        if i < n and fmt[i] == 0x2A:  # '*'
            width = _signed(_concrete(view, args.next_int(32), 32), 32)
            if width < 0:
                flags += "-"
                width = -width
            i += 1
        else:
            while i < n and 0x30 <= fmt[i] <= 0x39:
                width = width * 10 + fmt[i] - 0x30
                i += 1
        precision: int | None = None
        if i < n and fmt[i] == 0x2E:  # '.'
            i += 1
            if i < n and fmt[i] == 0x2A:
                precision = _signed(_concrete(view, args.next_int(32), 32), 32)
                if precision < 0:
                    precision = None  # a negative precision counts as none
                i += 1
            else:
                precision = 0
                while i < n and 0x30 <= fmt[i] <= 0x39:
                    precision = precision * 10 + fmt[i] - 0x30
                    i += 1
        length = ""
        while i < n and chr(fmt[i]) in "hlLqjzt":
            length += chr(fmt[i])
            i += 1
        if i >= n:
            out += fmt[start:]
            break
        conv = chr(fmt[i])
        i += 1
        left = "-" in flags
        if conv == "%":
            out.append(0x25)
        elif conv in "diuoxX":
            bits = _LENGTH_BITS.get(length, 64)
            value = _concrete(view, args.next_int(bits), bits)
            out += _format_integer(value, conv, flags, width, precision, bits)
        elif conv == "c":
            out += _pad(bytes([_concrete(view, args.next_int(32), 8)]), width, left)
        elif conv == "s":
            address = args.next_int(64)
            if type(address) is not int:
                address = view.concretize(address, 64, "printf %s pointer")
            if address == 0:
                # glibc prints (null) unless the precision cuts it
                text = b"(null)" if precision is None or precision >= 6 else b""
            else:
                text = view.read_c_string(address, limit=precision if precision is not None else 1 << 16)
            out += _pad(text, width, left)
        elif conv == "p":
            value = _concrete(view, args.next_int(64), 64)
            out += _pad(b"(nil)" if value == 0 else f"0x{value:x}".encode(), width, left)
        elif conv in "eEfFgGaA":
            number = args.next_float(length == "L")
            if type(number) is not float:
                # the value printed is fixed on this path from here on (constraint recorded)
                number = fixed_float(ex, state, number, number.width, "printf argument")
            out += _format_float(number, conv, flags, width, precision)
        elif conv == "n":
            address = args.next_int(64)
            bits = {"hh": 8, "h": 16, "l": 64, "ll": 64, "j": 64, "z": 64, "t": 64}.get(length, 32)
            view.write(address, Access(ValueKind.INT, bits // 8, bits), len(out) & ((1 << bits) - 1))
        else:
            raise PathTerminated(PathStatus.PARTIAL,
                                 f"unsupported: printf conversion %{conv} in {fmt.decode('latin-1')!r}")
    return bytes(out)


def _signed(value: int, bits: int) -> int:
    return value - (1 << bits) if value >> (bits - 1) else value


def format_printf(view: StateView, fmt_address: Any, args: list[Any]) -> bytes:
    """What printf prints for a format and the call's variadic arguments."""
    return format_arguments(view, fmt_address, CallArguments(args))


# -- where output goes ---------------------------------------------------------------------

_STDOUT = 1
_STDERR = 2


#: the POSIX model's write (env/posix.py): (fd, buffer, count) -> count or -errno
_POSIX_WRITE = "__symex_write"
_FILE_FD = Access(ValueKind.INT, 4, 32)


def _write_fd(view: StateView, fd: int, data: bytes, what: str) -> bool:
    """Write ``data`` to descriptor ``fd``; False if the descriptor refuses it.

    With the POSIX model present, the text goes through its write, so descriptors the program
    opened (files, dup'ed outputs) and closed ones behave as write(2) would; without it, 1 and
    2 are the path's stdout and stderr and nothing else is supported.
    """
    ex, state = view.machine, view.state
    posix_write = ex.externals.get(_POSIX_WRITE)
    if posix_write is not None:
        if not data:
            return True
        os = state.allocate(len(data), ObjectKind.HEAP, f"{what} output")
        os.write_bytes(0, data)
        written = posix_write(StateView(ex, state, _NO_CALL), [fd, os.obj.address, len(data)])
        state.release(os.obj.segment)
        return type(written) is int and written == len(data)
    if fd == _STDOUT:
        state.stdout += data
    elif fd == _STDERR:
        state.stderr += data
    else:
        raise PathTerminated(PathStatus.PARTIAL, f"unsupported: {what} to file descriptor {fd}")
    return True


def write_standard_output(view: StateView, data: bytes, what: str) -> bool:
    """printf's, puts' and putchar's output: the path's stdout, or the pipe or socket that
    descriptor 1 leads to when the program moved it there (``dup2``), so a process of a
    pipeline feeds the next. (Moved onto a file, it still goes to the path's stdout: natively
    it sits in stdio's buffer until the program flushes it, typically after moving 1 back.)"""
    state = view.state
    world = state.posix
    if world is not None:
        opened = world.opened(_STDOUT)
        if opened is not None and opened.endpoint:
            return _write_fd(view, _STDOUT, data, what)
    state.stdout += data
    return True


def _stream_fd(view: StateView, stream: Any) -> int:
    """The descriptor a ``FILE *`` writes to.

    glibc's headers declare ``extern FILE *stdout;``. When the C library's stdio (stdio.c)
    is linked into the program, it defines these variables and FILE, whose first field is the
    descriptor. When the program calls no stdio function of that library, ``stdout`` and
    ``stderr`` stay undefined globals holding NULL, every stream the program can name is NULL,
    and formatted output to it goes to stdout.
    """
    if type(stream) is not int:
        stream = view.concretize(stream, 64, "FILE pointer")
    defined = False
    for name in ("stdout", "stderr", "stdin"):
        g = view.program.globals.get(name)
        if g is not None and g.size == 8:
            value = view.read(g.address, POINTER_ACCESS)
            defined = defined or type(value) is not int or value != 0
    if stream == 0:
        if defined:
            view.fail(ErrorKind.PTR, "formatted output to a NULL FILE pointer")
        return _STDOUT
    if not defined:
        raise PathTerminated(PathStatus.PARTIAL,
                             "unsupported: formatted output to a FILE other than stdout/stderr")
    fd = view.read(stream, _FILE_FD)
    if type(fd) is not int:
        fd = view.concretize(fd, 32, "FILE descriptor")
    return _signed(fd & 0xFFFFFFFF, 32)


def _store_string(view: StateView, buffer: Any, text: bytes, size: int | None) -> None:
    """Write what sprintf (size None) or snprintf (at most size-1 bytes plus NUL) stores."""
    if size is None:
        view.write_bytes(buffer, text + b"\0")
    elif size > 0:
        view.write_bytes(buffer, text[:size - 1] + b"\0")


def _size_argument(view: StateView, value: Any) -> int:
    if type(value) is not int:
        value = view.concretize(value, value.width, "snprintf size")
    return value


# dest: "stdout", "stream" (a FILE*), "fd" or "buffer"; the indices say which argument is the
# destination, the size (-1: none) and the format; va: the arguments come as a va_list
def _handler(dest: str, dest_index: int, size_index: int, fmt_index: int, va: bool) -> ExternalHandler:
    def handler(view: StateView, args: list[Any]) -> int:
        source: Arguments
        if va:
            source = VaListArguments(view, args[fmt_index + 1])
        else:
            source = CallArguments(args[fmt_index + 1:])
        text = format_arguments(view, args[fmt_index], source)
        if dest == "stdout":
            if not write_standard_output(view, text, "printf"):
                return -1
        elif dest == "stream":
            if not _write_fd(view, _stream_fd(view, args[dest_index]), text, "fprintf"):
                return -1
        elif dest == "fd":
            fd = args[dest_index]
            fd = fd if type(fd) is int else view.concretize(fd, 32, "dprintf descriptor")
            if not _write_fd(view, _signed(fd & 0xFFFFFFFF, 32), text, "dprintf"):
                return -1
        else:
            size = _size_argument(view, args[size_index]) if size_index >= 0 else None
            _store_string(view, args[dest_index], text, size)
        return len(text)
    return handler


def handlers() -> dict[str, ExternalHandler]:
    """The printf family by name (glibc's fortified ``__*_chk`` names included: their extra
    flag/size arguments are skipped)."""
    return {
        "printf": _handler("stdout", -1, -1, 0, False),
        "vprintf": _handler("stdout", -1, -1, 0, True),
        "fprintf": _handler("stream", 0, -1, 1, False),
        "vfprintf": _handler("stream", 0, -1, 1, True),
        "dprintf": _handler("fd", 0, -1, 1, False),
        "vdprintf": _handler("fd", 0, -1, 1, True),
        "sprintf": _handler("buffer", 0, -1, 1, False),
        "vsprintf": _handler("buffer", 0, -1, 1, True),
        "snprintf": _handler("buffer", 0, 1, 2, False),
        "vsnprintf": _handler("buffer", 0, 1, 2, True),
        "__printf_chk": _handler("stdout", -1, -1, 1, False),
        "__vprintf_chk": _handler("stdout", -1, -1, 1, True),
        "__fprintf_chk": _handler("stream", 0, -1, 2, False),
        "__vfprintf_chk": _handler("stream", 0, -1, 2, True),
        "__sprintf_chk": _handler("buffer", 0, -1, 3, False),
        "__vsprintf_chk": _handler("buffer", 0, -1, 3, True),
        "__snprintf_chk": _handler("buffer", 0, 1, 4, False),
        "__vsnprintf_chk": _handler("buffer", 0, 1, 4, True),
    }
