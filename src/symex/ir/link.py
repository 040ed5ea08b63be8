"""Link symex's C library (``runtime/libc/*.c``, compiled to IR) into a program's module.

The library is C, not Python handlers, so symbolic bytes flow through it in the same
interpreter as the program: ``strlen`` of a symbolic string forks once per possible length,
as under KLEE's klee-libc. Only the library functions the program (transitively) calls are
linked, so a program pays lowering time for what it uses and nothing else. Every library
definition is weak and a function the module already defines is never taken from the
library: a program's own ``strlen`` wins.

The library is compiled without debug information: its instructions have no source
location, so they never count as program coverage, and an error inside it is reported with
the program's calling line (see :meth:`symex.core.interpreter.executor.Executor.make_error`).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import attrs

from symex.errors import LoadError
from symex.ir.build_cache import keep_file
from symex.ir.compile import Compiler, compile_c, default_cache_dir, find_compiler
from symex.ir.system_calls import header_dir

__all__ = ["RUNTIME_FLAGS", "LibraryFile", "index_files", "indexed_library", "link_libraries", "link_runtime",
           "runtime_ir_files", "runtime_library", "runtime_sources"]

#: How the library is compiled (after the defaults of :func:`compile_c`). ``-g0``: no debug
#: locations (not program coverage). ``-fno-builtin``: the compiler must not turn the byte
#: loops back into calls to the very functions they define (memset's loop into memset).
RUNTIME_FLAGS: tuple[str, ...] = ("-g0", "-fno-builtin")

_REFERENCE = re.compile(r'@("[^"]+"|[-\w.$]+)')


def runtime_sources() -> list[Path]:
    """The C files of symex's library, in a fixed order. A LoadError when there are none: an
    installation without them would end every call to ``strlen`` as an unsupported external
    call, silently."""
    root = Path(__file__).resolve().parent.parent / "runtime" / "libc"
    sources = sorted(root.glob("*.c"))
    if not sources:
        raise LoadError(f"symex's C library is missing from this installation (no "
                        f"runtime/libc/*.c in {root.parent}); reinstall symex (pip install "
                        f"--force-reinstall symex), or load the program with libc=False")
    return sources


_ir_files: dict[tuple[Any, ...], list[Path]] = {}
_DEFINE = re.compile(r'^define\b[^@\n]*@("[^"]+"|[-\w.$]+)\(', re.MULTILINE)
# a global variable definition (not an `external global` declaration), e.g. `@stdout = weak global`
_DEFINE_ALIAS = re.compile(r'^@("[^"]+"|[-\w.$]+) = [^\n]*\balias\b', re.MULTILINE)
_DEFINE_GLOBAL = re.compile(r'^@("[^"]+"|[-\w.$]+) = (?![^\n]*\bexternal\b)[^\n]*\b(?:global|constant)\b',
                            re.MULTILINE)


def runtime_ir_files(compiler: Compiler | None = None) -> list[Path]:
    """The library compiled to ``.ll`` files (cached like programs, by source and compiler)."""
    compiler = compiler if compiler is not None else find_compiler()
    sources = runtime_sources()
    # compile_c hashes sources and headers on every call; within a process the stat is enough
    key = (compiler, tuple((str(s), s.stat().st_mtime_ns, s.stat().st_size) for s in sources))
    files = _ir_files.get(key)
    if files is None:
        # unistd.c includes the system-call table's header
        flags = [*RUNTIME_FLAGS, "-I", str(header_dir(default_cache_dir()))]
        files = _ir_files[key] = [compile_c(source, flags, compiler=compiler) for source in sources]
    return files


def _parse(path: Path) -> Any:
    import llvmlite.binding as llvm  # noqa: PLC0415 (LLVM only where a module is parsed: ir/program_cache.py)

    try:
        module = llvm.parse_assembly(path.read_text())
        module.verify()
    except RuntimeError as exc:
        raise LoadError(f"symex's C library {path} is not valid IR: {str(exc).strip()} "
                        "(delete the IR cache directory and retry)") from None
    return module


_pass_builder: list[Any] = []


def _global_dce(module: Any) -> None:
    """Drop unreferenced internal functions and globals from ``module``."""
    import llvmlite.binding as llvm  # noqa: PLC0415 (LLVM only where a module is parsed: ir/program_cache.py)

    if not _pass_builder:
        llvm.initialize_native_target()
        machine = llvm.Target.from_default_triple().create_target_machine()
        _pass_builder.append(llvm.create_pass_builder(machine, llvm.create_pipeline_tuning_options(speed_level=0)))
    manager = llvm.create_new_module_pass_manager()
    manager.add_global_dead_code_eliminate_pass()
    manager.run(module, _pass_builder[0])


@attrs.frozen
class LibraryFile:
    """One ``.ll`` file of a library: the names it defines and the names it refers to, read
    from its text once (no parse)."""

    path: Path
    defines: frozenset[str]
    references: frozenset[str]

    @classmethod
    def read(cls, path: Path) -> LibraryFile:
        """Index ``path``."""
        text = path.read_text()
        defines = frozenset(m.group(1).strip('"') for pattern in (_DEFINE, _DEFINE_GLOBAL, _DEFINE_ALIAS)
                            for m in pattern.finditer(text))
        references = frozenset(m.group(1).strip('"') for m in _REFERENCE.finditer(text)) - defines
        return cls(path, defines, references)


_indexed: dict[Path, LibraryFile] = {}


def index_files(paths: list[Path]) -> list[LibraryFile]:
    """The files indexed (each file once per process)."""
    files = []
    for path in paths:
        entry = _indexed.get(path)
        if entry is None:
            entry = _indexed[path] = LibraryFile.read(path)
        files.append(entry)
    return files


def indexed_library(paths: list[Path], index_path: Path) -> list[LibraryFile]:
    """``paths`` indexed through the table at ``index_path`` (file name -> the names it
    defines and refers to), which is written when it is missing or lacks one of them.
    Scanning a library's text costs a process milliseconds (symex's own: 6 ms of every run;
    musl's thousand files: seconds); the table is read in a tenth of that. The caller names
    the table so that it changes with the files' contents."""
    try:
        table = json.loads(index_path.read_text())
        return [LibraryFile(path, frozenset(table[path.name][0]), frozenset(table[path.name][1]))
                for path in paths]
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        pass
    files = index_files(paths)
    # a read-only cache is no error: the next process scans the text again
    keep_file(index_path, json.dumps({f.path.name: [sorted(f.defines), sorted(f.references)]
                                      for f in files}).encode())
    return files


def runtime_library(compiler: Compiler | None = None) -> list[LibraryFile]:
    """symex's C library indexed (:func:`indexed_library`), in the order of
    :func:`runtime_sources`; its table beside the IR files is named by their names, sizes
    and modification times (the names carry a digest of the sources and flags)."""
    paths = runtime_ir_files(compiler)
    identity = hashlib.sha256()
    for path in paths:
        stat = path.stat()
        identity.update(f"{path.name}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return indexed_library(paths, paths[0].parent / f"runtime-index-{identity.hexdigest()[:16]}.json")


def link_runtime(module: Any, compiler: Compiler | None = None) -> list[str]:
    """Link into ``module`` the library functions it calls and does not define, with
    everything they need. Returns the names of the functions linked, sorted."""
    declared = {f.name for f in module.functions if f.is_declaration}
    declared_globals = {g.name for g in module.global_variables if g.is_declaration}
    if not declared and not declared_globals:
        return []
    # parsing the library costs milliseconds: only when the module calls one of its functions
    return link_libraries(module, [runtime_library(compiler)])


def link_libraries(module: Any, tiers: list[list[LibraryFile]], *, keep: frozenset[str] = frozenset()) -> list[str]:
    """Link into ``module`` what it calls (or names) and does not define, from the first of
    ``tiers`` defining each name, with everything that needs; and the names in ``keep``
    (an entry point the library provides). Returns the functions linked, sorted."""
    declared = {f.name for f in module.functions if f.is_declaration}
    # a program may use only `stderr` (with fprintf, a Python handler): the library file that
    # defines the global must come in too
    declared_globals = {g.name for g in module.global_variables if g.is_declaration}
    provider: dict[str, LibraryFile] = {}
    for tier in tiers:
        for entry in tier:
            for name in entry.defines:
                provider.setdefault(name, entry)
    chosen: list[LibraryFile] = []
    taken: set[Path] = set()
    pending = sorted(declared | declared_globals | keep)
    seen: set[str] = set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        found = provider.get(name)
        if found is None or found.path in taken:
            continue
        taken.add(found.path)
        chosen.append(found)
        # sorted: a set's order changes with each process's string hashes, and the order the
        # files are linked in gives the globals their order, their addresses and their names
        pending.extend(sorted(found.references - seen))
    if not chosen:
        return []
    library = _parse(chosen[0].path)
    for entry in chosen[1:]:
        try:
            library.link_in(_parse(entry.path))
        except RuntimeError as exc:
            raise LoadError(f"linking the C library's {entry.path.name} failed: {str(exc).strip()} "
                            "(delete the IR cache directory and retry)") from None
    definitions: dict[str, Any] = {f.name: f for f in library.functions if not f.is_declaration}
    # what each library definition refers to (functions and globals, by name)
    wanted = sorted((declared | keep) & definitions.keys())
    # functions the wanted globals' initializers refer to stay too
    for variable in library.global_variables:
        if variable.name in declared_globals and not variable.is_declaration:
            wanted.extend(m.group(1).strip('"') for m in _REFERENCE.finditer(str(variable))
                          if m.group(1).strip('"') in definitions)
    needed: set[str] = set()
    while wanted:
        name = wanted.pop()
        if name in needed:
            continue
        needed.add(name)
        for match in _REFERENCE.finditer(str(definitions[name])):
            target = match.group(1).strip('"')
            if target in definitions and target not in needed:
                wanted.append(target)
    provides_globals = any(v.name in declared_globals and not v.is_declaration
                           for v in library.global_variables)
    if not needed and not provides_globals:
        return []
    for name, fn in definitions.items():
        if name not in needed:
            fn.linkage = "internal"
    _global_dce(library)
    # the library is built for the same target; a user .ll may name another one
    library.triple = module.triple
    library.data_layout = module.data_layout
    try:
        module.link_in(library)
    except RuntimeError as exc:
        raise LoadError(f"linking symex's C library into the program failed: {str(exc).strip()}") from None
    return sorted(needed)
