"""``symex.compile`` and ``symex.load``: from a C file or an LLVM IR file to a Program."""

from __future__ import annotations

import os
from pathlib import Path
from collections.abc import Sequence

from symex.errors import CompilerNotFound, ConfigError, LoadError
from symex.ir.compile import compile_c, compiler_of, describe_compiler, find_compiler
from symex.ir.link import index_files, link_libraries, link_runtime, runtime_ir_files, runtime_sources
from symex.ir.musl import LIBC_START, musl_library, musl_tree, program_flags
from symex.ir.lower import Lowering
from symex.ir.program import Program
from symex.ir.whole_program import bitcode_paths, is_native_build, link_modules, parse_module


#: the C libraries a program can be linked with: symex's own small one (the default), musl
#: (a real C library, built on first use, with the environment modelled at its system calls),
#: or none
LIBRARIES = ("symex", "musl", "none")


def _library(libc: bool | str) -> str:
    choice = {True: "symex", False: "none"}.get(libc, libc) if isinstance(libc, bool) else libc
    if choice not in LIBRARIES:
        raise ConfigError(f"unknown C library {libc!r}: choose one of {', '.join(LIBRARIES)}")
    return choice


def load(path: str | os.PathLike[str], *, libc: bool | str = True) -> Program:
    """Load an LLVM module from a ``.ll`` (text) or ``.bc`` (bitcode) file, or the whole
    program of a native build made with ``symex cc`` (an executable, object or archive: the
    bitcode of every object it was linked from, linked into one module).

    With ``libc`` ("symex"; or True, the default, for a module not compiled for musl), the
    functions of symex's C library the module calls and does not define (``strlen``,
    ``atoi``, ``isdigit`` ...) are linked in first; this needs a C compiler once (the
    library's IR is cached). Without a compiler the module loads as it is, and calls to
    those functions end their paths as unsupported.
    ``libc="musl"`` links musl instead (see :mod:`symex.ir.musl`; the module should have
    been compiled against musl's headers, as ``compile(..., libc="musl")`` does: a module
    whose triple names musl gets musl by default), keeping symex's allocator, string and
    number functions; ``libc=False`` links nothing."""
    library = _library(libc)
    p = Path(path)
    if not p.is_file():
        raise LoadError(f"no such file: {p}")
    source = p
    if is_native_build(p):
        source = link_modules(bitcode_paths(p), name=p.name)
    module = parse_module(source)
    if any(f.name == LIBC_START and not f.is_declaration for f in module.functions):
        # a whole program linked before (a run's assembly.ll, or bitcode made of it): its
        # libraries are in; linking them again would define every name twice
        library = "none"
    elif libc is True and "musl" in module.triple:
        # compiled for musl (compile(..., libc="musl"), or SYMEX_LIBC=musl symex cc)
        library = "musl"
    if library == "musl":
        compiler = find_compiler()
        runtime = [f for source, f in zip(runtime_sources(), index_files(runtime_ir_files(compiler)))
                   if source.stem not in _NOT_WITH_MUSL]
        link_libraries(module, [runtime, musl_library(compiler)], keep=frozenset({LIBC_START}))
    elif library == "symex":
        try:
            compiler = find_compiler()
        except CompilerNotFound:
            compiler = None
        if compiler is not None:
            link_runtime(module, compiler)
    # llvmlite renames named structs that clash with earlier modules in the process
    # (%struct.S -> %struct.S.0) and renumbers metadata: lowering reads its own printout
    return Lowering(module, str(module), str(p)).run()


#: symex's library files a musl program does not get: its stdio (musl's FILE is another)
_NOT_WITH_MUSL = frozenset({"stdio"})


def program_ir(sources: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
               flags: Sequence[str] = (), *, libc: bool | str = True) -> Path:
    """One IR file holding the whole program of ``sources``: each C file compiled (with
    ``flags``), ``.ll``/``.bc`` files and ``symex cc`` builds taken as they are, all linked
    into one module when there are several."""
    files = [sources] if isinstance(sources, (str, os.PathLike)) else list(sources)
    if _library(libc) == "musl":
        # the program sees musl's headers (its FILE, its struct layouts), not the system's
        flags = [*program_flags(musl_tree()), *flags]
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
            flags: Sequence[str] = (), *, libc: bool | str = True) -> Program:
    """Compile a C program (one file or several, clang else zig cc) with symex's headers,
    link its parts and load the result.

    ``sources`` are C files, or ``.ll``/``.bc`` files and ``symex cc`` builds to link with
    them. Default flags are ``-O0 -g -Xclang -disable-O0-optnone``; ``flags`` pass through
    to every C file (``-O2``, ``-DNAME=1``, ``-Iinclude``). The IR is cached by source,
    flags, compiler and included headers. ``libc``: as for :func:`load`; with "musl" the C
    files are compiled against musl's headers."""
    program = load(program_ir(sources, flags, libc=libc), libc=libc)
    first = sources if isinstance(sources, (str, os.PathLike)) else next(iter(sources))
    program.path = str(Path(first))
    return program


def compiler_used(sources: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
                  ir_text: str) -> str:
    """Which compiler made a program's IR, for a run's ``info``: the one this machine runs
    (its command and version) when C sources were compiled, else what the IR's
    ``!llvm.ident`` says. Two clangs installed side by side compile the same file apart."""
    files = [sources] if isinstance(sources, (str, os.PathLike)) else list(sources)
    if any(os.fspath(f).endswith(".c") for f in files):
        return describe_compiler(find_compiler())
    return compiler_of(ir_text) or "unknown (the IR does not say)"

