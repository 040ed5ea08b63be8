"""``symex.compile`` and ``symex.load``: from a C file or an LLVM IR file to a Program."""

from __future__ import annotations

import os
from pathlib import Path
from collections.abc import Sequence

import llvmlite.binding as llvm

from symex.errors import CompilerNotFound, LoadError
from symex.ir.compile import compile_c, find_compiler
from symex.ir.link import link_runtime
from symex.ir.lower import Lowering
from symex.ir.program import Program


def load(path: str | os.PathLike[str], *, libc: bool = True) -> Program:
    """Load an LLVM module from a ``.ll`` (text) or ``.bc`` (bitcode) file.

    With ``libc`` (the default), the functions of symex's C library the module calls and
    does not define (``strlen``, ``atoi``, ``isdigit`` ...) are linked in first; this needs a
    C compiler once (the library's IR is cached). Without a compiler the module loads as it
    is, and calls to those functions end their paths as unsupported."""
    p = Path(path)
    if not p.is_file():
        raise LoadError(f"no such file: {p}")
    data = p.read_bytes()
    bitcode = data[:4] in (b"BC\xc0\xde", b"\xde\xc0\x17\x0b")
    try:
        if bitcode:
            module = llvm.parse_bitcode(data)
        else:
            module = llvm.parse_assembly(data.decode("utf-8"))
        module.verify()
    except UnicodeDecodeError:
        raise LoadError(f"{p}: neither LLVM assembly (.ll) nor bitcode (.bc)") from None
    except RuntimeError as exc:
        what = "bitcode" if bitcode else "IR"
        raise LoadError(f"{p}: not valid LLVM {what}: {str(exc).strip()}") from None
    if libc:
        try:
            compiler = find_compiler()
        except CompilerNotFound:
            compiler = None
        if compiler is not None:
            link_runtime(module, compiler)
    # llvmlite renames named structs that clash with earlier modules in the process
    # (%struct.S -> %struct.S.0) and renumbers metadata: lowering reads its own printout
    return Lowering(module, str(module), str(p)).run()


def compile(source: str | os.PathLike[str], flags: Sequence[str] = ()) -> Program:  # noqa: A001
    """Compile a C file (clang, else zig cc) with symex's headers and load the result.

    Default flags are ``-O0 -g -Xclang -disable-O0-optnone``; ``flags`` pass through
    (``-O2``, ``-DNAME=1``, ``-Iinclude``). The IR is cached by source, flags and compiler."""
    ll = compile_c(source, flags)
    program = load(ll)
    program.path = str(Path(source))
    return program

