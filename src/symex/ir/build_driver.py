"""``symex cc``: a C compiler driver for real build systems that keeps every object's IR.

It is wllvm (the whole-program LLVM driver KLEE's users build coreutils with) set up for
symex's compiler: each compile runs twice, once as asked (so ``configure``'s checks, archives,
libtool and the native executable behave exactly as with any C compiler) and once more to
LLVM bitcode beside the object (``.NAME.o.bc``), whose absolute path wllvm writes into the
object's ``.llvm_bc`` section. Linkers concatenate that section, archive members included, so
a built executable names the bitcode of exactly the objects it is made of
(:mod:`symex.ir.whole_program` reads it back).

wllvm calls a ``clang`` and an ``objcopy`` by path; symex gives it two small shell scripts
(written once per compiler into the cache directory):

- ``clang`` runs :func:`~symex.ir.compile.find_compiler`'s compiler (system clang, else
  ``zig cc``) with zig's surprises switched off for both builds (UBSan traps, NDEBUG). Both
  builds are unoptimised (``-O0`` comes last): an object optimised natively may have
  inlined or dropped calls its bitcode still makes (gnulib's ``imalloc``, an inline function
  whose one external definition sits in an archive member), and the native linker, which
  decides which archive members the executable lists, must see the calls the bitcode
  makes. For the bitcode build it appends symex's own IR flags: ``-O0 -g`` without ``optnone``, no
  stack protector, no fortified wrappers, symex's headers on the include path, and no
  dependency-file flags (the object's build already wrote that file, naming the object as
  its target; and zig cc writes no output at all when asked for both).
- ``symex-objcopy`` is the system's ``objcopy`` when there is one; otherwise (a machine with
  pip only) the section is assembled into an object of its own with zig and merged in with
  ``ld.lld -r``: zig's own objcopy cannot edit relocatable objects.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from symex.errors import ConfigError
from symex.ir.cc_shims import default_cache_dir, is_configure_check, record_shims, recorded_shims
from symex.ir.compile import Compiler, find_compiler, include_dir, zig_compiler, zig_executable

__all__ = ["BITCODE_SECTION", "IR_FLAGS", "driver_environment", "run_compiler_driver"]

BITCODE_SECTION = ".llvm_bc"
"""The ELF section wllvm writes the bitcode paths into (one absolute path per line)."""

IR_FLAGS: tuple[str, ...] = (
    "-O0", "-g", "-Xclang", "-disable-O0-optnone", "-fno-stack-protector", "-fno-sanitize=all",
    "-U_FORTIFY_SOURCE", "-D_FORTIFY_SOURCE=0", "-Wno-unused-command-line-argument",
)
"""Appended to the bitcode build (after the build's own flags, so they win): the IR symex
explores best, whatever optimisation or sanitizer the build asked for its native objects
(``CFLAGS=-fsanitize=address`` gives native executables that ``symex replay`` checks memory
errors with, and plain bitcode)."""

# zig cc instruments for UBSan by default and defines NDEBUG from -O1: neither is what a
# build system means by "cc" (a user's own -DNDEBUG comes later and still wins)
_ZIG_FLAGS: tuple[str, ...] = ("-fno-sanitize=all", "-UNDEBUG")

_CLANG_SHIM = """#!/bin/sh
# symex cc's compiler for wllvm (generated; see symex.ir.build_driver)
for argument in "$@"; do
  [ "$argument" = "-emit-llvm" ] || continue
  # the bitcode build: without the dependency-file flags, then symex's IR flags
  skip=no
  for argument in "$@"; do
    shift
    if [ $skip = yes ]; then skip=no; continue; fi
    case "$argument" in
      -MF|-MT|-MQ) skip=yes; continue ;;
      -M|-MM|-MD|-MMD|-MP|-MG|-MF*|-MT*|-MQ*|-Wp,-M*) continue ;;
    esac
    set -- "$@" "$argument"
  done
  exec {ir_compiler} "$@" {ir_flags}
done
# a link gets the klee_* functions natively (replay_runtime.c's, an archive beside this
# script: only a program calling them takes any); a compile, or a run naming no input, not
link=no
for argument in "$@"; do
  case "$argument" in
    -c|-S|-E|-M|-MM|-fsyntax-only) link=no; break ;;
    -*) ;;
    *.c|*.o|*.a|*.so|*.i|*.s|*.S|*.lo) link=yes ;;
  esac
done
if [ $link = yes ]; then
  exec {native_compiler} "$@" {native_flags} -O0 "$(dirname "$0")/{runtime_archive}"
fi
exec {native_compiler} "$@" {native_flags} -O0
"""

_OBJCOPY_SHIM = """#!/bin/sh
# symex cc's objcopy for wllvm (generated; see symex.ir.build_driver)
exec {objcopy} "$@"
"""

# wllvm calls `objcopy --add-section NAME=FILE OBJECT` and expects OBJECT changed in place
_ZIG_OBJCOPY_SHIM = """#!/bin/sh
# symex cc's objcopy for wllvm without binutils (generated; see symex.ir.build_driver):
# `--add-section NAME=FILE OBJECT` as an assembled section merged in by a relocatable link
set -e
[ "$1" = "--add-section" ] || {{ echo "symex cc: objcopy $1 is not supported" >&2; exit 1; }}
name=${{2%%=*}}
file=${{2#*=}}
object=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '.section %s,"",@progbits\\n.incbin "%s"\\n' "$name" "$file" > "$work/section.s"
{zig} cc -c "$work/section.s" -o "$work/section.o"
{zig} ld.lld -r "$object" "$work/section.o" -o "$work/merged.o"
mv "$work/merged.o" "$object"
"""


def _quoted(words: Sequence[str]) -> str:
    return " ".join(shlex.quote(word) for word in words)


def _shim_texts(compiler: Compiler, libc: str) -> dict[str, str]:
    ir_command = list(compiler.command)
    if compiler.kind == "zig":
        ir_command.extend(_ZIG_FLAGS)
    native_command = list(ir_command)
    # symex's headers in both builds: a harness including <klee/klee.h> compiles natively too
    # (the native build's klee_* calls then need symex replay's runtime, as KLEE's do)
    shipped = ["-I", str(include_dir())]
    ir_flags = [*IR_FLAGS, *shipped]
    # an implicitly declared function (a C library's the headers lack) returns int in the IR
    # and truncates a pointer: always said, whatever -std the build chose
    native_flags = [*shipped, "-Wno-unused-command-line-argument", "-Wimplicit-function-declaration"]
    if libc == "musl":
        from symex.ir.musl import MUSL_TARGET, musl_tree, program_flags  # noqa: PLC0415

        # The bitcode against musl's headers (its triple then names musl: symex run links
        # musl), whichever compiler makes it. The native build against the same headers and
        # linked with the same musl release, zig's (a system clang has no musl to link):
        # configure's test programs then run on the library the IR is explored with.
        headers = program_flags(musl_tree(), compiler)
        ir_flags += headers
        zig = compiler if compiler.kind == "zig" else zig_compiler()
        if zig is None:
            raise ConfigError("symex cc builds against musl with zig's copy of it, and the ziglang "
                              "package is missing: pip install ziglang (or SYMEX_LIBC=symex for the "
                              "system's C library)")
        native_command = [*zig.command, *_ZIG_FLAGS, "-target", MUSL_TARGET]
        native_flags += program_flags(musl_tree(), zig)
    objcopy = shutil.which("objcopy")
    if objcopy is not None:
        objcopy_text = _OBJCOPY_SHIM.format(objcopy=shlex.quote(objcopy))
    else:
        objcopy_text = _ZIG_OBJCOPY_SHIM.format(zig=_quoted([str(zig_executable())]))
    return {"clang": _CLANG_SHIM.format(ir_compiler=_quoted(ir_command), ir_flags=_quoted(ir_flags),
                                        native_compiler=_quoted(native_command),
                                        native_flags=_quoted(native_flags), runtime_archive=RUNTIME_ARCHIVE),
            "symex-objcopy": objcopy_text,
            # not a script: how the archive is compiled (part of the directory's name)
            RUNTIME_RECIPE: shlex.join([*native_command, *native_flags, *_RUNTIME_FLAGS])}


RUNTIME_ARCHIVE = "libsymex-replay.a"
"""The archive of klee_* functions for native executables, in the scripts' directory."""
RUNTIME_RECIPE = "runtime-recipe"
_RUNTIME_FLAGS = ("-c", "-fPIC", "-O1", "-w", "-DSYMEX_REPLAY_INTRINSICS_ONLY")


def _build_runtime_archive(directory: Path, recipe: str) -> None:
    """Compile replay_runtime.c's klee_* functions natively into ``directory``'s archive."""
    source = Path(__file__).resolve().parent.parent / "runtime" / "replay_runtime.c"
    work = Path(tempfile.mkdtemp(prefix=".runtime.", dir=directory))
    try:
        subprocess.run([*shlex.split(recipe), str(source), "-o", str(work / "replay.o")],
                       check=True, capture_output=True, text=True)
        zig = zig_executable()
        archiver = [str(zig), "ar"] if zig is not None else [shutil.which("ar") or "ar"]
        subprocess.run([*archiver, "rcs", str(work / RUNTIME_ARCHIVE), str(work / "replay.o")],
                       check=True, capture_output=True, text=True)
        os.replace(work / RUNTIME_ARCHIVE, directory / RUNTIME_ARCHIVE)
    except subprocess.CalledProcessError as exc:
        raise ConfigError(f"symex cc could not build its native klee_* functions: "
                          f"{(exc.stderr or '').strip() or exc}") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _write_shims(texts: dict[str, str]) -> Path:
    """The directory holding ``texts`` as executable scripts, named by their contents (so
    two compilers, or two symex versions, never share one), written atomically once."""
    digest = hashlib.sha256(repr(sorted(texts.items())).encode()).hexdigest()[:16]
    directory = default_cache_dir() / "cc-shims" / digest
    if all((directory / name).is_file() for name in texts) and (directory / RUNTIME_ARCHIVE).is_file():
        return directory
    directory.mkdir(parents=True, exist_ok=True)
    _build_runtime_archive(directory, texts[RUNTIME_RECIPE])
    for name, text in texts.items():
        temporary = directory / f".{name}.{os.getpid()}.tmp"
        temporary.write_text(text)
        temporary.chmod(0o755)
        os.replace(temporary, directory / name)
    return directory


def driver_environment(compiler: Compiler | None = None, libc: str | None = None) -> dict[str, str]:
    """The environment variables that make wllvm compile with ``compiler`` (default: the one
    symex uses) through symex's shims, for the C library ``libc`` ("musl" or "symex";
    default ``$SYMEX_LIBC``, else "musl")."""
    libc = libc if libc is not None else os.environ.get("SYMEX_LIBC", "") or "musl"
    if libc not in ("symex", "musl"):
        raise ConfigError(f"SYMEX_LIBC={libc!r}: symex cc builds for 'musl' (the default: configure's "
                          f"checks and the IR both see musl) or 'symex' (symex's small library "
                          f"over the system's headers)")
    return _wllvm_environment(_write_shims(_shim_texts(compiler if compiler is not None else find_compiler(),
                                                      libc)))


def _wllvm_environment(directory: Path) -> dict[str, str]:
    return {
        "LLVM_COMPILER": "clang",
        "LLVM_COMPILER_PATH": str(directory),
        "LLVM_CC_NAME": "clang",
        # wllvm runs f"{prefix}-objcopy"
        "BINUTILS_TARGET_PREFIX": str(directory / "symex"),
    }


def _file_type(path: str) -> int:
    """wllvm's ``FileType`` of ``path`` from its header (wllvm runs the ``file`` utility,
    which a machine with pip only may not have: then it attached no bitcode, silently)."""
    from wllvm.filetype import FileType  # noqa: PLC0415

    try:
        with open(path, "rb") as stream:
            head = stream.read(18)
    except OSError:
        return int(FileType.UNKNOWN)
    if head.startswith(b"!<arch>\n"):
        return int(FileType.ARCHIVE)
    if head.startswith(b"!<thin>\n"):
        return int(FileType.THIN_ARCHIVE)
    if head.startswith(b"\x7fELF") and len(head) == 18:
        kind = int.from_bytes(head[16:18], "little")  # e_type (x86-64 is little-endian)
        return int({1: FileType.ELF_OBJECT, 2: FileType.ELF_EXECUTABLE,
                    3: FileType.ELF_SHARED}.get(kind, FileType.UNKNOWN))
    return int(FileType.UNKNOWN)


def run_compiler_driver(arguments: Sequence[str]) -> int:
    """Run ``symex cc ARGUMENTS`` as a compiler would run: the exit status of the build.

    Two things of wllvm's are replaced (it is no longer developed): how it tells objects
    from executables (see :func:`_file_type`), and that a failure to build or attach the
    bitcode was only logged and the compile still succeeded; here it fails the compile,
    as a broken build should, instead of leaving an object ``symex run`` cannot read."""
    # wllvm's warnings (unknown flags ...) on stderr would fail configure checks that
    # demand a silent compiler; its errors still show
    os.environ.setdefault("WLLVM_OUTPUT_LEVEL", "ERROR")
    import wllvm.compilers as compilers  # noqa: PLC0415 (only symex cc needs wllvm)
    from wllvm.filetype import FileType  # noqa: PLC0415

    FileType.getFileType = staticmethod(_file_type)
    attach = compilers.buildAndAttachBitcode

    def attach_or_fail(builder: Any, filtered: Any) -> None:
        try:
            attach(builder, filtered)
        except Exception as exc:  # noqa: BLE001 (whatever wllvm raises fails the compile)
            sys.stderr.write(f"symex cc: error: building the LLVM bitcode failed: {exc}\n")
            raise SystemExit(1) from None

    compilers.buildAndAttachBitcode = attach_or_fail
    recorded = recorded_shims()
    if recorded is not None:
        environment = _wllvm_environment(Path(recorded))
    else:
        environment = driver_environment()
        record_shims(Path(environment["LLVM_COMPILER_PATH"]))
    if is_configure_check(arguments):
        compiler = Path(environment["LLVM_COMPILER_PATH"]) / "clang"
        return subprocess.run([str(compiler), *arguments], check=False).returncode
    os.environ.update(environment)
    saved = sys.argv
    sys.argv = ["symex cc", *arguments]
    try:
        return int(compilers.wcompile("wllvm") or 0)
    except SystemExit as stop:
        # wllvm leaves by sys.exit after attaching the bitcode paths
        code = stop.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    finally:
        sys.argv = saved
        compilers.buildAndAttachBitcode = attach
