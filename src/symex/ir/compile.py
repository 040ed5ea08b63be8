"""Compile C source to LLVM IR text (``.ll``) with clang or, failing that, ``zig cc``.

The result is cached on disk by a hash of everything that can change the output, so
re-running symex on an unchanged program does not pay for the compiler again. That includes
every header the source includes (:mod:`symex.ir.build_cache`): editing one compiles anew.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import attrs

from symex.errors import CompileError, CompilerNotFound
from symex.ir.build_cache import BuildCache, list_headers
from symex.ir.cc_shims import default_cache_dir

__all__ = [
    "DEFAULT_FLAGS",
    "Compiler",
    "builtin_header_dir",
    "clang_candidates",
    "compile_c",
    "compiler_of",
    "describe_compiler",
    "default_cache_dir",
    "find_compiler",
    "include_dir",
    "zig_compiler",
    "zig_executable",
    "shipped_headers_digest",
]

DEFAULT_FLAGS: tuple[str, ...] = ("-O0", "-g", "-Xclang", "-disable-O0-optnone")
"""Flags used unless the user asks for optimisation: unoptimised IR with debug locations.

``-disable-O0-optnone`` keeps functions free of ``optnone`` so IR passes may still run on them.
"""

# Flags every compile gets: IR text with debug info, and nothing that hides memory errors
# from symbolic execution (stack protector, fortified libc wrappers).
_ALWAYS_FLAGS: tuple[str, ...] = (
    "-S",
    "-emit-llvm",
    "-g",
    "-fno-stack-protector",
    "-U_FORTIFY_SOURCE",
    "-D_FORTIFY_SOURCE=0",
)
# zig cc instruments for UBSan by default (the traps would become branches symex must explore)
# and defaults to the host's versioned triple; pin a plain one.
#: zig cc turns on UBSan instrumentation and, at -O1 and above, defines NDEBUG (its release
#: modes do); plain clang does neither, and asserts are bugs symex must see. A user's own
#: -DNDEBUG still wins: user flags come after these.
_ZIG_FLAGS: tuple[str, ...] = ("-fno-sanitize=all", "-target", "x86_64-linux-gnu", "-UNDEBUG")
_OPT_LEVEL = re.compile(r"-O(?:[0-4szg]|fast)?")
_CLANG_VERSIONED = re.compile(r"clang-(\d+)")
_ZIG_UNUSED_C_WARNING = re.compile(r"^.*argument unused during compilation: '-c'.*\n?", re.MULTILINE)


@attrs.frozen
class Compiler:
    """A C compiler able to emit LLVM IR: how to invoke it and which version it is."""

    kind: str
    """``"clang"`` or ``"zig"``."""
    command: tuple[str, ...]
    """Argument vector prefix that runs the compiler, e.g. ``("clang",)``."""
    version: str
    """First line of the compiler's ``--version`` output (part of the cache key)."""


def include_dir() -> Path:
    """Directory of the headers symex ships (``klee/klee.h``, ``symex.h``); passed with ``-I``."""
    return Path(__file__).resolve().parent.parent / "include"


def shipped_headers_digest() -> str:
    """SHA-256 over the names and contents of the shipped headers.

    Part of every cache key: editing ``klee.h`` must invalidate previously compiled IR.
    """
    digest = hashlib.sha256()
    root = include_dir()
    for path in sorted(root.rglob("*.h")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


#: the file in the IR cache that remembers compilers' versions (see _first_version_line)
_VERSIONS_FILE = "compiler-versions.json"


def _first_version_line(command: Sequence[str]) -> str | None:
    """The first line of ``command --version``, None where it does not run.

    Remembered in the IR cache by the executable's identity (its real path, size and
    modification time; an upgrade changes them): every run needs the version for its cache
    keys, even of a ``.bc`` program, and asking the compiler costs 30 ms of start-up."""
    identity = _executable_identity(command)
    versions = _remembered_versions() if identity is not None else {}
    if identity is not None and identity in versions:
        return versions[identity]
    version = _ask_version(command)
    if identity is not None and version is not None:
        versions[identity] = version
        _remember_versions(versions)
    return version


def _executable_identity(command: Sequence[str]) -> str | None:
    found = shutil.which(command[0])
    if found is None:
        return None
    real = os.path.realpath(found)
    try:
        status = os.stat(real)
    except OSError:
        return None
    return "\0".join((real, str(status.st_size), str(status.st_mtime_ns), *command[1:]))


def _remembered_versions() -> dict[str, str]:
    try:
        table = json.loads((default_cache_dir() / _VERSIONS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # none yet, or damaged: ask the compilers again
    return {k: v for k, v in table.items() if isinstance(k, str) and isinstance(v, str)} \
        if isinstance(table, dict) else {}


def _remember_versions(versions: dict[str, str]) -> None:
    directory = default_cache_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{_VERSIONS_FILE}.", dir=directory)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(versions, handle)
        os.replace(name, directory / _VERSIONS_FILE)  # whole or not at all, as every cache file
    except OSError:
        pass  # an unwritable cache only means asking again next time


def _ask_version(command: Sequence[str]) -> str | None:
    try:
        proc = subprocess.run(
            [*command, "--version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    lines = proc.stdout.strip().splitlines()
    return lines[0].strip() if lines else None


def clang_candidates() -> list[str]:
    """Plain ``clang`` first, then ``clang-NN`` names on PATH, newest version first."""
    found: list[str] = []
    plain = shutil.which("clang")
    if plain:
        found.append(plain)
    versioned: list[tuple[int, str]] = []
    seen: set[str] = set()
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not directory or not os.path.isdir(directory):
            continue
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        for name in names:
            match = _CLANG_VERSIONED.fullmatch(name)
            if match is None or name in seen:
                continue
            full = os.path.join(directory, name)
            if os.access(full, os.X_OK):
                seen.add(name)
                versioned.append((int(match.group(1)), full))
    found.extend(path for _, path in sorted(versioned, reverse=True))
    return found


_found_compiler: dict[tuple[str, str, str], Compiler] = {}


_builtin_dirs: dict[tuple[str, ...], Path | None] = {}


def builtin_header_dir(compiler: Compiler) -> Path | None:
    """The compiler's own headers (``stdatomic.h``, ``immintrin.h``, ``cpuid.h``: what a C
    library does not provide), for builds with ``-nostdinc``, which drops them too."""
    if compiler.command not in _builtin_dirs:
        found: Path | None = None
        zig = zig_executable()
        if compiler.kind == "zig" and zig is not None:
            found = zig.parent / "lib" / "include"
        else:
            try:
                proc = subprocess.run([*compiler.command, "-print-resource-dir"], capture_output=True,
                                      text=True, timeout=60, check=False)
                found = Path(proc.stdout.strip()) / "include" if proc.returncode == 0 else None
            except (OSError, subprocess.TimeoutExpired):
                found = None
        _builtin_dirs[compiler.command] = found if found is not None and found.is_dir() else None
    return _builtin_dirs[compiler.command]


def zig_compiler() -> Compiler | None:
    """``zig cc`` of the ``ziglang`` package as a Compiler, or None where it does not run."""
    zig = zig_executable()
    if zig is None:
        return None
    command = (str(zig), "cc")
    version = _first_version_line(command)
    return None if version is None else Compiler(kind="zig", command=command, version=version)


def zig_executable() -> Path | None:
    """The ``zig`` binary of the ``ziglang`` package, or None without it. Run directly, not
    as ``python -m ziglang``: a build's hundreds of compiles would each start a Python."""
    spec = importlib.util.find_spec("ziglang")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "zig"
    return path if os.access(path, os.X_OK) else None


def find_compiler() -> Compiler:
    """Return the compiler symex uses: system clang (or ``clang-NN``) if on PATH, else ``zig cc``.

    ``$SYMEX_CC`` overrides the choice: ``zig``, ``clang``, or the path of a clang executable.

    Raises :class:`~symex.errors.CompilerNotFound` naming what to install when neither works.
    """
    choice = os.environ.get("SYMEX_CC", "").strip()
    key = (os.environ.get("PATH", ""), sys.executable, choice)
    cached = _found_compiler.get(key)
    # a compiler uninstalled since it was found is looked for again (the next one may be zig)
    if cached is not None and shutil.which(cached.command[0]) is not None:
        return cached
    compiler: Compiler | None = None
    if choice and choice != "zig" and choice != "clang":
        version = _first_version_line([choice])
        if version is None:
            raise CompilerNotFound(f"SYMEX_CC={choice!r} does not run as a compiler; "
                                   "set it to 'zig', 'clang' or a clang executable")
        compiler = Compiler(kind="clang", command=(choice,), version=version)
    for candidate in ([] if compiler is not None or choice == "zig" else clang_candidates()):
        version = _first_version_line([candidate])
        if version is not None:
            compiler = Compiler(kind="clang", command=(candidate,), version=version)
            break
    if compiler is None:
        compiler = zig_compiler()
    if compiler is None:
        raise CompilerNotFound(
            "no C compiler that emits LLVM IR was found: install clang (e.g. `apt-get install clang`) "
            "or the ziglang Python package (`pip install ziglang`), or pass an existing .ll/.bc file"
        )
    _found_compiler[key] = compiler
    return compiler


def _final_flags(compiler: Compiler, user_flags: Sequence[str]) -> list[str]:
    """The complete flag list (without source and output) for one compile."""
    user = list(user_flags)
    levels = [flag for flag in user if _OPT_LEVEL.fullmatch(flag)]
    # As for the compiler itself, the last -O flag wins.
    optimising = bool(levels) and levels[-1] != "-O0"
    flags = list(_ALWAYS_FLAGS)
    if compiler.kind == "zig":
        flags.extend(_ZIG_FLAGS)
    flags.extend(["-I", str(include_dir())])
    if optimising:
        # optnone would pin every function to -O0 behaviour; it only makes sense with -O0.
        flags.extend(flag for flag in DEFAULT_FLAGS if flag not in ("-O0", "-Xclang", "-disable-O0-optnone"))
    else:
        flags.extend(DEFAULT_FLAGS)
    flags.extend(user)
    return flags


def _cache_key(source_path: Path, source_bytes: bytes, flags: Sequence[str], compiler: Compiler) -> str:
    digest = hashlib.sha256()
    # Each field is length-prefixed so that no two different inputs concatenate to the same bytes.
    fields: list[bytes] = [
        b"symex-compile-c-v3",
        # The path ends up in debug info (file names in error reports), so it is part of the key.
        str(source_path).encode("utf-8", "surrogateescape"),
        source_bytes,
        "\0".join(flags).encode("utf-8", "surrogateescape"),
        compiler.kind.encode(),
        compiler.version.encode(),
        shipped_headers_digest().encode(),
    ]
    for field in fields:
        digest.update(len(field).to_bytes(8, "little"))
        digest.update(field)
    return digest.hexdigest()


def _clean_stderr(stderr: str) -> str:
    return _ZIG_UNUSED_C_WARNING.sub("", stderr).strip()


def compile_c(
    source: str | os.PathLike[str],
    flags: Sequence[str] = (),
    *,
    compiler: Compiler | None = None,
    cache_dir: os.PathLike[str] | None = None,
) -> Path:
    """Compile a C file to LLVM IR text and return the path of the (cached) ``.ll`` file.

    ``flags`` pass through to the compiler (``-O2``, ``-DNAME=1``, ``-Ipath`` ...); an
    optimisation level replaces the default ``-O0``. A cached result is returned without
    running the compiler. Raises :class:`~symex.errors.CompileError` with the compiler's own
    diagnostics if compilation fails or the source does not exist.
    """
    source_path = Path(source).expanduser()
    if not source_path.is_file():
        raise CompileError(f"no such file: {source_path} (check the path of the C source to analyse)")
    source_path = source_path.resolve()
    source_bytes = source_path.read_bytes()
    compiler = compiler if compiler is not None else find_compiler()
    final_flags = _final_flags(compiler, flags)
    key = _cache_key(source_path, source_bytes, final_flags, compiler)

    directory = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    cache = BuildCache(directory, source_path.stem, key, ".ll")
    cached = cache.lookup()
    if cached is not None:
        return cached
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CompileError(
            f"cannot create the IR cache directory {directory}: {exc} (set SYMEX_CACHE_DIR to a writable directory)"
        ) from exc

    fd, tmp_name = tempfile.mkstemp(prefix=f".{source_path.stem}.", suffix=".tmp", dir=directory)
    os.close(fd)
    tmp_path = Path(tmp_name)
    depfile = tmp_path.with_suffix(".d")
    try:
        older = _older_than_reader(compiler)
        # an older clang's IR text may not parse in the newer LLVM that reads it: its bitcode
        # does (LLVM upgrades bitcode), and becomes the cached text (_upgrade_to_text)
        flags_used = [("-c" if f == "-S" else f) for f in final_flags] if older else final_flags
        command = [*compiler.command, *flags_used, str(source_path), "-o", str(tmp_path)]
        try:
            proc = subprocess.run(command, capture_output=True, text=True, errors="replace", check=False)
        except OSError as exc:
            raise CompileError(f"could not run the compiler {compiler.command[0]}: {exc}") from exc
        if proc.returncode != 0:
            diagnostics = _clean_stderr(proc.stderr) or _clean_stderr(proc.stdout)
            raise CompileError(
                f"compiling {source_path} failed ({compiler.kind} exited with {proc.returncode}); "
                f"fix what the compiler reports (or adjust the compiler flags) and retry",
                diagnostics)
        if tmp_path.stat().st_size == 0:
            raise CompileError(f"compiling {source_path} produced no output; compiler said:\n"
                               f"{_clean_stderr(proc.stderr)}")
        if older:
            _upgrade_to_text(tmp_path)
        return cache.store(tmp_path, list_headers([*compiler.command, *final_flags],
                                                  source_path, depfile))
    finally:
        tmp_path.unlink(missing_ok=True)
        depfile.unlink(missing_ok=True)


_CLANG_MAJOR = re.compile(r"clang version (\d+)\.")


def _older_than_reader(compiler: Compiler) -> bool:
    """Whether ``compiler`` is a clang older than the LLVM symex reads IR with (llvmlite's).
    LLVM reads older bitcode, not always older text: clang-14's constant ``icmp``
    expressions, for one, are gone from LLVM 19's IR."""
    found = _CLANG_MAJOR.search(compiler.version) if compiler.kind == "clang" else None
    if found is None:
        return False
    import llvmlite.binding as llvm  # noqa: PLC0415 (a compile that runs the compiler only)
    return int(found.group(1)) < llvm.llvm_version_info[0]


def _upgrade_to_text(path: Path) -> None:
    """Replace the bitcode at ``path`` by its IR text as this LLVM writes it."""
    import llvmlite.binding as llvm  # noqa: PLC0415 (as in _older_than_reader)
    # in a context of its own: named struct types outlive their module in a context, and
    # in the global one they would rename the program's own later (%struct.stat.13), so
    # the IR a process links would depend on what it had compiled before
    context = llvm.create_context()
    try:
        module = llvm.parse_bitcode(path.read_bytes(), context=context)
        text = str(module)
        module.close()
    except RuntimeError as exc:
        raise CompileError(f"the compiler's bitcode does not load in LLVM "
                           f"{'.'.join(map(str, llvm.llvm_version_info))}: {exc}; set "
                           f"SYMEX_CC to a newer clang, or to zig") from None
    finally:
        context.close()
    path.write_text(text)


_IDENT = re.compile(r"^!llvm\.ident = !\{([^}\n]*)\}", re.MULTILINE)
_STRING_NODE = re.compile(r'^!(\d+) = !\{!"([^"\n]*)"\}$', re.MULTILINE)


def compiler_of(ir_text: str) -> str:
    """The compilers a module's ``!llvm.ident`` names (several after linking), in order."""
    found = _IDENT.search(ir_text)
    if found is None:
        return ""
    strings = {m.group(1): m.group(2) for m in _STRING_NODE.finditer(ir_text)}
    names = [strings.get(ref.strip().lstrip("!"), "") for ref in found.group(1).split(",")]
    return ", ".join(dict.fromkeys(name for name in names if name))


def describe_compiler(compiler: Compiler) -> str:
    """A compiler as a run's ``info`` names it: its command and its version."""
    return f"{' '.join(compiler.command)} ({compiler.version})"
