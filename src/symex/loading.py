"""``symex.compile`` and ``symex.load``: from a C file or an LLVM IR file to a Program."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from symex.errors import LoadError
from symex.ir.compile import compile_c
from symex.ir.lower import lower_bitcode, lower_module
from symex.ir.program import Program


def load(path: str | os.PathLike[str]) -> Program:
    """Load an LLVM module from a ``.ll`` (text) or ``.bc`` (bitcode) file."""
    p = Path(path)
    if not p.is_file():
        raise LoadError(f"no such file: {p}")
    data = p.read_bytes()
    if data[:4] in (b"BC\xc0\xde", b"\xde\xc0\x17\x0b"):
        return lower_bitcode(data, str(p))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise LoadError(f"{p}: neither LLVM assembly (.ll) nor bitcode (.bc)") from None
    return lower_module(text, str(p))


def compile(source: str | os.PathLike[str], flags: Sequence[str] = ()) -> Program:  # noqa: A001
    """Compile a C file (clang, else zig cc) with symex's headers and load the result.

    Default flags are ``-O0 -g -Xclang -disable-O0-optnone``; ``flags`` pass through
    (``-O2``, ``-DNAME=1``, ``-Iinclude``). The IR is cached by source, flags and compiler."""
    ll = compile_c(source, flags)
    program = load(ll)
    program.path = str(Path(source))
    return program
