"""``symex.compile`` and ``symex.load``: from a C file or an LLVM IR file to a Program."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from symex.env.fuzz_input import FUZZ_TARGET, fuzz_driver_source
from symex.errors import CompilerNotFound, ConfigError, LoadError
from symex.ir.compile import compile_c, compiler_of, default_cache_dir, describe_compiler, find_compiler
from symex.ir.exec_programs import check_program_names, renamed_program
from symex.ir.link import link_libraries, link_runtime, runtime_library, runtime_sources
from symex.ir.musl import EXEC_START, LIBC_START, musl_library, musl_tree, program_flags
from symex.ir.program import Program
from symex.ir.program_cache import cached_program, keep_program, program_key
from symex.ir.whole_program import bitcode_paths, is_native_build, link_modules, parse_module


#: the C libraries a program can be linked with: "auto" (the default: symex's own small one
#: when it defines every function the program calls, musl otherwise), symex's, musl (a real C
#: library, shipped with the wheel, with the environment modelled at its system calls), or none
LIBRARIES = ("auto", "symex", "musl", "none")


def _library(libc: bool | str) -> str:
    choice = {True: "auto", False: "none"}.get(libc, libc) if isinstance(libc, bool) else libc
    if choice not in LIBRARIES:
        raise ConfigError(f"unknown C library {libc!r}: choose one of {', '.join(LIBRARIES)}")
    return choice


def _unresolved(module: Any) -> list[str]:
    """The functions ``module`` calls that nothing defines: neither the module (with the
    libraries linked so far) nor one of the environment's handlers. A weak declaration
    (a fuzz target's optional ``LLVMFuzzerInitialize``) may stay undefined: it is null."""
    from symex.env import default_externals  # noqa: PLC0415 (the handlers' names only)

    handled = default_externals()
    return sorted(f.name for f in module.functions
                  if f.is_declaration and not f.name.startswith("llvm.") and f.name not in handled
                  and f.linkage.name != "external_weak")


def _musl_defines(names: Sequence[str]) -> list[str]:
    """Those of ``names`` musl defines (building musl first in a checkout without it)."""
    defined: set[str] = set()
    for entry in musl_library():
        defined |= entry.defines
    return [name for name in names if name in defined]


def _shown(names: Sequence[str], most: int = 4) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


class _NeedsMusl(Exception):
    """``auto`` found functions only musl defines: compile the program again for musl."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def load(path: str | os.PathLike[str], *, libc: bool | str = "auto") -> Program:
    """Load an LLVM module from a ``.ll`` (text) or ``.bc`` (bitcode) file, or the whole
    program of a native build made with ``symex cc`` (see :func:`_load`). ``libc="auto"``
    (the default) links musl into a module compiled for musl (its triple says so) and
    symex's small library into any other; ``Program.library`` and ``library_reason`` say
    which and why."""
    return _load(path, libc, may_recompile=False)


def _load(path: str | os.PathLike[str], libc: bool | str, *, may_recompile: bool) -> Program:
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
    reason = "asked for" if library != "auto" else ""
    p = Path(path)
    if not p.is_file():
        raise LoadError(f"no such file: {p}")
    source = p
    key = None
    if is_native_build(p):
        source = link_modules(bitcode_paths(p), name=p.name)
    elif library != "musl":
        # the same module loaded before, in another process: its lowered program
        # (ir/program_cache.py; neither LLVM nor llvmlite's import is needed then)
        key = _program_key(p, library, may_recompile)
        kept = cached_program(default_cache_dir(), key)
        if kept is not None:
            return kept
    module = parse_module(source)
    if any(f.name == LIBC_START and not f.is_declaration for f in module.functions):
        # a whole program linked before (a run's assembly.ll, or bitcode made of it): its
        # libraries are in; linking them again would define every name twice
        library, reason = "none", "the module was linked with its C library before"
    elif library == "auto" and "musl" in module.triple:
        # compiled for musl (compile(..., libc="musl"), or symex cc, whose default it is)
        library, reason = "musl", "the program was compiled against musl's headers"
    if library == "musl":
        compiler = find_compiler()
        runtime = [f for source, f in zip(runtime_sources(), runtime_library(compiler))
                   if source.stem not in _NOT_WITH_MUSL]
        link_libraries(module, [runtime, musl_library(compiler)], keep=frozenset({LIBC_START, EXEC_START}))
    elif library == "symex":
        try:
            compiler = find_compiler()
        except CompilerNotFound:
            compiler = None
        if compiler is not None:
            link_runtime(module, compiler)
    elif library == "auto":
        library, reason = "symex", "symex's library defines every function the program calls"
        try:
            link_runtime(module, find_compiler())
        except CompilerNotFound:
            pass
        missing = _unresolved(module)
        in_musl = _musl_defines(missing) if missing else []
        if in_musl and may_recompile:
            raise _NeedsMusl(f"symex's library lacks {_shown(in_musl)}")
        if in_musl:
            reason = (f"compiled against the system's headers, not musl's: {_shown(in_musl)} "
                      f"stay unsupported (compile the C sources instead, or with symex cc)")
        elif missing:
            reason = f"neither library defines {_shown(missing)}"
    # imported here: a program from the cache needs none of lowering's modules (their
    # classes cost a run 15 ms of start-up)
    from symex.ir.lower import Lowering  # noqa: PLC0415

    # llvmlite renames named structs that clash with earlier modules in the process
    # (%struct.S -> %struct.S.0) and renumbers metadata: lowering reads its own printout
    program = Lowering(module, str(module), str(p)).run()
    program.library, program.library_reason = library, reason
    if key is not None:
        keep_program(default_cache_dir(), key, program)
    return program


def _program_key(path: Path, library: str, may_recompile: bool) -> str:
    """The key of the program :func:`_load` makes of ``path`` (ir/program_cache.py)."""
    compiler = None
    if library != "none":
        try:
            compiler = find_compiler()  # it builds symex's library, which linking reads
        except CompilerNotFound:
            pass
    return program_key(path, path.read_bytes(), f"{library} {may_recompile}", compiler)


#: symex's library files a musl program does not get: its stdio (musl's FILE is another)
_NOT_WITH_MUSL = frozenset({"stdio"})


#: what ``compile`` takes as a program: a C file, a ``.ll``/``.bc`` file, a symex cc build, or
#: several of them
Sources = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def _with_fuzz_driver(sources: Sources) -> list[str | os.PathLike[str]]:
    """``sources`` and the fuzz driver; a LoadError for a C++ target, which symex does not
    compile."""
    files = [sources] if isinstance(sources, (str, os.PathLike)) else list(sources)
    cxx = [os.fspath(f) for f in files if Path(f).suffix in (".cc", ".cpp", ".cxx", ".C")]
    if cxx:
        raise LoadError(f"{cxx[0]} is C++: symex compiles C, and a fuzz target written in C++ "
                        f"is out of its scope (a C target, or its library built with symex cc, "
                        f"runs)")
    return [*files, fuzz_driver_source()]


def program_ir(sources: Sources, flags: Sequence[str] = (), *, libc: bool | str = "auto",
               programs: Mapping[str, Sources] | None = None, fuzz_target: bool = False) -> Path:
    """One IR file holding the whole program of ``sources``: each C file compiled (with
    ``flags``), ``.ll``/``.bc`` files and ``symex cc`` builds taken as they are, all linked
    into one module when there are several; with ``programs``, each of them built the same
    way and linked in under its own names (:mod:`symex.ir.exec_programs`); with
    ``fuzz_target``, ``runtime/fuzz_driver.c`` as its main (:mod:`symex.env.fuzz_input`)."""
    main = _one_program_ir(_with_fuzz_driver(sources) if fuzz_target else sources, flags, libc)
    if not programs:
        return main
    check_program_names(programs)
    parts = [main] + [renamed_program(_one_program_ir(other, flags, libc), name)
                      for name, other in programs.items()]
    shown = [_first_name(sources)] + [f"{_first_name(other)} (--program {name})"
                                     for name, other in programs.items()]
    return link_modules(parts, name=Path(_first_name(sources)).stem, shown=shown)


def _first_name(sources: Sources) -> str:
    return os.fspath(sources if isinstance(sources, (str, os.PathLike)) else next(iter(sources)))


def _one_program_ir(sources: Sources, flags: Sequence[str], libc: bool | str) -> Path:
    files = [sources] if isinstance(sources, (str, os.PathLike)) else list(sources)
    if _library(libc) == "auto" and _prebuilt_for_musl(files):
        # C files linked with a symex cc build (a fuzz target and its library's archive)
        # see the headers that build saw: musl's
        libc = "musl"
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


def _prebuilt_for_musl(files: Sequence[str | os.PathLike[str]]) -> bool:
    """Whether C files are given with a part already built for musl (an ``.ll``/``.bc`` file
    or a symex cc build whose triple names musl)."""
    if not any(Path(f).suffix == ".c" for f in files):
        return False
    for file in files:
        path = Path(file)
        if path.suffix == ".c" or not path.is_file():
            continue
        parts = bitcode_paths(path) if path.suffix not in (".ll", ".bc") and is_native_build(path) \
            else [path] if path.suffix in (".ll", ".bc") else []
        if any("musl" in parse_module(part).triple for part in parts[:1]):
            return True
    return False


def compile(sources: Sources, flags: Sequence[str] = (), *,  # noqa: A001
            libc: bool | str = "auto", programs: Mapping[str, Sources] | None = None,
            fuzz_target: bool = False) -> Program:
    """Compile a C program (one file or several, clang else zig cc) with symex's headers,
    link its parts and load the result.

    ``sources`` are C files, or ``.ll``/``.bc`` files and ``symex cc`` builds to link with
    them. Default flags are ``-O0 -g -Xclang -disable-O0-optnone``; ``flags`` pass through
    to every C file (``-O2``, ``-DNAME=1``, ``-Iinclude``). The IR is cached by source,
    flags, compiler and included headers. ``libc``: as for :func:`load`; with "musl" the C
    files are compiled against musl's headers. ``programs``: the programs ``execve`` runs,
    by name (a command such as ``"diff"``, matching any directory, or a path such as
    ``"/usr/bin/diff"``), each given as ``sources`` are (``symex run --program NAME=PATH``);
    they are built with the same flags and library. ``fuzz_target``: ``sources`` are a
    libFuzzer fuzz target (they define ``LLVMFuzzerTestOneInput`` and no ``main``), linked
    with a driver that calls it once per path on an input of up to ``max_input`` symbolic
    bytes (:func:`symex.explore`'s option; :mod:`symex.env.fuzz_input`)."""
    files = [sources] if isinstance(sources, (str, os.PathLike)) else list(sources)
    for other in (programs or {}).values():
        files += [other] if isinstance(other, (str, os.PathLike)) else list(other)
    compiled = any(Path(f).suffix == ".c" for f in files)
    try:
        program = _load(program_ir(sources, flags, libc=libc, programs=programs,
                                   fuzz_target=fuzz_target), libc, may_recompile=compiled)
    except _NeedsMusl as needs:
        # compiled again against musl's headers: its FILE, its struct layouts
        program = _load(program_ir(sources, flags, libc="musl", programs=programs,
                                   fuzz_target=fuzz_target), "musl", may_recompile=False)
        program.library_reason = needs.reason
    first = sources if isinstance(sources, (str, os.PathLike)) else next(iter(sources))
    target = program.functions.get(FUZZ_TARGET)
    if fuzz_target and (target is None or target.is_declaration):
        raise LoadError(f"{os.fspath(first)} defines no {FUZZ_TARGET}: it is not a libFuzzer "
                        f"fuzz target (link the file that defines it, or run without "
                        f"--fuzz-target)")
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

