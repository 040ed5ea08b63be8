"""``symex ktest [--trim-zeros] FILE|DIR...``: print ``.ktest`` files exactly as KLEE's
ktest-tool does; an output directory (``symex-out-N``, ``klee-out-N``) stands for every test
in it, in test order. ``symex ktest --write OUT.ktest --object NAME TEXT...`` writes one
(a seed for ``symex run --seed-file``), TEXT with C's escapes.

The layout is ktest-tool's (KLEE 2.x/3.x) byte for byte, so scripts written against
ktest-tool's output keep working: a header (file, args, number of objects), then per object
its name, size, data as a Python bytes literal, hex, the little-endian signed and unsigned
value when the size is 1, 2, 4 or 8, and printable ASCII text. A missing or malformed file is
one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import string
import sys
from typing import TextIO

from symex.output.ktest import KTest, KTestError, KTestObject, read_ktest, write_ktest

__all__ = ["add_parser", "format_ktest", "main", "unescape"]

# ktest-tool prints these characters as themselves in the `text` line and anything else as '.'
_PRINTABLE = frozenset(string.digits + string.ascii_letters + string.punctuation + " ")


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Declare ``symex ktest`` and its options."""
    parser = commands.add_parser(
        "ktest", help="print .ktest test cases (like KLEE's ktest-tool)",
        description="Print the arguments and symbolic objects of .ktest files, in the layout "
                    "of KLEE's ktest-tool.")
    parser.add_argument("files", nargs="*", metavar="FILE|DIR",
                        help="a .ktest file, or an output directory (every test in it, in order)")
    parser.add_argument("--trim-zeros", action="store_true",
                        help="drop trailing zero bytes from data, hex and text")
    parser.add_argument("--write", metavar="OUT.ktest",
                        help="write a test instead, of the --object's given (a seed for "
                             "symex run --seed-file)")
    parser.add_argument("--object", nargs=2, action="append", default=[], metavar=("NAME", "TEXT"),
                        help="with --write: an object NAME holding TEXT, where \\n \\r \\t "
                             "\\0 \\xNN and \\\\ are escapes (repeatable)")


def format_ktest(ktest: KTest, path: str, *, trim_zeros: bool = False) -> str:
    """The text ktest-tool prints for ``ktest`` read from ``path`` (as given on the command line)."""
    lines = [
        f"ktest file : {path!r}",
        f"args       : {list(ktest.args)!r}",
        f"num objects: {len(ktest.objects)!r}",
    ]
    # ktest-tool pads the object index to the width of the largest index
    width = len(str(max(1, len(ktest.objects) - 1)))
    for index, obj in enumerate(ktest.objects):
        prefix = f"object {index:{width}d}: "
        data = obj.data
        blob = data.rstrip(b"\x00") if trim_zeros else data
        text = "".join(chr(b) if chr(b) in _PRINTABLE else "." for b in blob)
        # a name that is not UTF-8 (kept as surrogate escapes) would not be printable
        name = obj.name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        lines.append(f"{prefix}name: '{name}'")
        lines.append(f"{prefix}size: {len(data)}")
        lines.append(f"{prefix}data: {blob!r}")
        lines.append(f"{prefix}hex : 0x{blob.hex()}")
        if len(data) in (1, 2, 4, 8):
            lines.append(f"{prefix}int : {int.from_bytes(data, 'little', signed=True)}")
            lines.append(f"{prefix}uint: {int.from_bytes(data, 'little', signed=False)}")
        lines.append(f"{prefix}text: {text}")
    return "\n".join(lines) + "\n"


_ESCAPES = {"n": b"\n", "r": b"\r", "t": b"\t", "0": b"\0", "\\": b"\\"}


def unescape(text: str) -> bytes:
    """The bytes ``text`` spells with C's escapes ``\\n \\r \\t \\0 \\xNN \\\\`` (other
    characters as UTF-8); ValueError names a bad escape."""
    out = bytearray()
    i = 0
    while i < len(text):
        char = text[i]
        if char != "\\":
            out += char.encode()
            i += 1
            continue
        code = text[i + 1:i + 2]
        if code == "x" and len(text[i + 2:i + 4]) == 2:
            try:
                out.append(int(text[i + 2:i + 4], 16))
            except ValueError:
                raise ValueError(f"bad escape \\x{text[i + 2:i + 4]}: give two hex digits") from None
            i += 4
        elif code in _ESCAPES:
            out += _ESCAPES[code]
            i += 2
        else:
            raise ValueError(f"unknown escape \\{code} (known: \\n \\r \\t \\0 \\xNN \\\\)")
    return bytes(out)


def _write(options: argparse.Namespace) -> int:
    if options.files or not options.object:
        sys.stderr.write("symex ktest: --write takes --object NAME TEXT (one or more) and no "
                         "files to print\n")
        return 2
    try:
        objects = tuple(KTestObject(name, unescape(text)) for name, text in options.object)
        write_ktest(options.write, KTest((), objects))
    except (ValueError, OSError) as exc:
        sys.stderr.write(f"symex ktest: {exc}\n")
        return 2
    return 0


def main(options: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run ``symex ktest`` with parsed ``options``; the exit status."""
    if options.write is not None:
        return _write(options)
    if not options.files:
        sys.stderr.write("symex ktest: give .ktest files or output directories to print, or "
                         "--write OUT.ktest --object NAME TEXT\n")
        return 2
    stream = out if out is not None else sys.stdout
    # Read everything first, so a malformed file gives one error line and no partial listing.
    tests: list[tuple[str, KTest]] = []
    for given in options.files:
        paths = [given]
        if os.path.isdir(given):
            paths = [os.path.join(given, name) for name in sorted(os.listdir(given))
                     if name.endswith(".ktest")]
            if not paths:
                sys.stderr.write(f"symex ktest: {given} holds no .ktest files; give a .ktest "
                                 f"file or an output directory of symex or KLEE\n")
                return 2
        for path in paths:
            try:
                tests.append((path, read_ktest(path)))
            except KTestError as exc:
                sys.stderr.write(f"symex ktest: {' '.join(str(exc).split())}\n")
                return 2
    for path, ktest in tests:
        stream.write(format_ktest(ktest, path, trim_zeros=options.trim_zeros))
    return 0
