"""``symex.compile`` and ``symex.load``: from a C file or an LLVM IR file to a Program."""

from __future__ import annotations

import os
from pathlib import Path
from collections.abc import Sequence

from symex.errors import CompilerNotFound, LoadError
from symex.ir.compile import compile_c, find_compiler
from symex.ir.link import link_runtime
from symex.ir.lower import Lowering
from symex.ir.program import Program
from symex.ir.whole_program import bitcode_paths, is_native_build, link_modules, parse_module


def load(path: str | os.PathLike[str], *, libc: bool = True) -> Program:
    """Load an LLVM module from a ``.ll`` (text) or ``.bc`` (bitcode) file, or the whole
    program of a native build made with ``symex cc`` (an executable, object or archive: the
    bitcode of every object it was linked from, linked into one module).

    With ``libc`` (the default), the functions of symex's C library the module calls and
    does not define (``strlen``, ``atoi``, ``isdigit`` ...) are linked in first; this needs a
    C compiler once (the library's IR is cached). Without a compiler the module loads as it
    is, and calls to those functions end their paths as unsupported."""
    p = Path(path)
    if not p.is_file():
        raise LoadError(f"no such file: {p}")
    source = p
    if is_native_build(p):
        source = link_modules(bitcode_paths(p), name=p.name)
    module = parse_module(source)
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


def program_ir(sources: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
               flags: Sequence[str] = ()) -> Path:
    """One IR file holding the whole program of ``sources``: each C file compiled (with
    ``flags``), ``.ll``/``.bc`` files and ``symex cc`` builds taken as they are, all linked
    into one module when there are several."""
    files = [sources] if isinstance(sources, (str, os.PathLike)) else list(sources)
    if not files:
        raise LoadError("no program given: name at least one .c, .ll or .bc file")
    parts: list[Path] = []
    shown: list[str] = []
    for file in files:
        path = Path(file)
        if path.suffix in (".ll", ".bc"):
            if not path.is_file():
                raise LoadError(f"no such file: {path}")
            parts.append(path)
        elif path.suffix != ".c" and path.is_file() and is_native_build(path):
            built = bitcode_paths(path)
            parts.extend(built)
            shown.extend(f"{path}({part.name})" for part in built)
            continue
        else:
            parts.append(compile_c(path, flags))
        shown.append(str(path))
    if len(parts) == 1:
        return parts[0]
    return link_modules(parts, name=Path(files[0]).stem, shown=shown)


def compile(sources: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],  # noqa: A001
            flags: Sequence[str] = ()) -> Program:
    """Compile a C program (one file or several, clang else zig cc) with symex's headers,
    link its parts and load the result.

    ``sources`` are C files, or ``.ll``/``.bc`` files and ``symex cc`` builds to link with
    them. Default flags are ``-O0 -g -Xclang -disable-O0-optnone``; ``flags`` pass through
    to every C file (``-O2``, ``-DNAME=1``, ``-Iinclude``). The IR is cached by source,
    flags, compiler and included headers."""
    program = load(program_ir(sources, flags))
    first = sources if isinstance(sources, (str, os.PathLike)) else next(iter(sources))
    program.path = str(Path(first))
    return program
