"""musl, a real C library, built into LLVM IR once per machine, for programs to link.

With it a program's ``printf``, ``strtod``, ``getopt_long``, ``regcomp``, ``strftime`` ...
are musl's own code, interpreted like the program's, and the environment is modelled
underneath it, at the system calls (``runtime/musl/glue.c`` routes them to symex's POSIX
model). KLEE does the same with klee-uclibc.

The source is Debian's ``musl`` source package (the upstream release tarball, MIT), fetched
on first use from deb.debian.org and checked against its SHA-256; ``$SYMEX_MUSL_SOURCE``
names a tarball or an unpacked tree instead (a machine without the network). No musl code
is part of symex. The ``ziglang`` wheel ships most of musl's sources too, but not
``src/string``, ``src/stdlib`` and ``src/malloc``, which newer Zig replaced with Zig code.

The build replaces what cannot be interpreted: the x86-64 system-call, thread-pointer and
atomic headers (inline assembly) by ``runtime/musl/arch/*.h``, and every assembly source by
musl's generic C. What symex models itself is left out: the allocator (symex's gives each
object its own bounds), threads, ``setjmp``, ``abort``/``assert`` (they become error
reports) and ``errno``'s location (the thread scheduler saves it).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import attrs

from symex.errors import LoadError
from symex.ir.compile import Compiler, builtin_header_dir, default_cache_dir, find_compiler
from symex.ir.link import LibraryFile, indexed_library
from symex.ir.system_calls import header_dir, header_text

__all__ = [
    "CACHE_VARIABLE",
    "EXEC_START",
    "LIBC_START",
    "MUSL_SHA256",
    "MUSL_TARGET",
    "MUSL_URL",
    "MUSL_VERSION",
    "MuslTree",
    "SHIPPED_DIR",
    "musl_cache_root",
    "musl_ir_files",
    "musl_library",
    "musl_tree",
    "kernel_header_dirs",
    "program_flags",
    "syscall_name",
]

LIBC_START = "__symex_start"
"""The entry a program linked with musl starts at (``runtime/musl/glue.c``): it sets up what
musl's start-up would, then calls ``exit(main(argc, argv, envp))``."""

EXEC_START = "__symex_exec_start"
"""The entry a program ``execve`` runs starts at (``runtime/musl/glue.c``): ``LIBC_START`` for
the main function it is given (:mod:`symex.env.execve`)."""

MUSL_TARGET = "x86_64-linux-musl"
"""The target programs for musl are compiled for: their IR's triple names musl."""

MUSL_VERSION = "1.2.5"
MUSL_URL = f"https://deb.debian.org/debian/pool/main/m/musl/musl_{MUSL_VERSION}.orig.tar.gz"
MUSL_SHA256 = "a9a118bbe84d8764da0ea0d28b3ab3fae8477fc7e4085d90102b8596fc7c75e4"

#: source directories built (the rest is dynamic linking, the allocator, threads, asynchronous
#: I/O and IPC, which symex models itself or does not offer)
_DIRECTORIES = (
    "conf", "ctype", "dirent", "env", "errno", "exit", "fcntl", "internal", "legacy", "linux",
    "locale", "math", "misc", "mman", "multibyte", "network", "passwd", "prng", "process",
    "regex", "search", "select", "signal", "stat", "stdio", "stdlib", "string", "temp",
    "termios", "time", "unistd", "complex", "fenv", "crypt", "sched",
)
#: files left out: start-up and TLS (glue.c does it), what symex models, and the few that
#: need threads or the dynamic linker
_LEFT_OUT = frozenset({
    "env/__libc_start_main.c", "env/__init_tls.c", "env/__stack_chk_fail.c", "env/__reset_tls.c",
    "errno/__errno_location.c", "exit/abort.c", "exit/abort_lock.c", "exit/assert.c",
    "exit/_Exit.c", "unistd/_exit.c", "internal/vdso.c", "internal/defsysinfo.c",
    "process/fork.c", "process/_Fork.c", "process/vfork.c", "sched/sched_yield.c",
    "signal/setitimer.c", "linux/clone.c", "time/timer_create.c", "time/timer_delete.c",
    "time/timer_getoverrun.c", "time/timer_gettime.c", "time/timer_settime.c",
    "misc/dl_iterate_phdr.c", "misc/syscall.c", "unistd/sleep.c", "unistd/usleep.c", "time/nanosleep.c",
    "stdlib/abs.c", "stdlib/labs.c", "stdlib/llabs.c", "unistd/getpid.c", "unistd/getppid.c",
    "process/posix_spawn.c",  # glue's spawn.c: fork and exec, not a clone sharing memory
})
#: thread files musl's own code needs in a program with one thread
_THREAD_FILES = ("thread/__lock.c", "thread/__syscall_cp.c", "thread/__wait.c",
                 "thread/pthread_setcancelstate.c", "thread/pthread_cleanup_push.c",
                 "thread/__timedwait.c", "thread/default_attr.c", "thread/pthread_cancel.c",
                 "thread/pthread_testcancel.c")

#: files whose fast paths read whole words that may lie past the end of an object (within
#: its last aligned word), which symex would report as out of bounds: their ``#ifdef
#: __GNUC__`` fast paths are compiled out, leaving musl's byte loops
_BYTEWISE = ("string/", "multibyte/mbsrtowcs.c", "multibyte/mbsnrtowcs.c")

#: how the library is compiled (C99 as musl's Makefile; no builtins: musl defines them)
_LIBRARY_FLAGS = ("-std=c99", "-ffreestanding", "-nostdinc", "-fno-builtin", "-D_XOPEN_SOURCE=700",
                  "-O0", "-Xclang", "-disable-O0-optnone", "-g0", "-fno-stack-protector",
                  "-fno-sanitize=all", "-w", "-S", "-emit-llvm")


@attrs.frozen
class MuslTree:
    """An unpacked musl with symex's headers generated beside it."""

    source: Path
    """The unpacked release (``src/``, ``include/``, ``arch/``)."""
    generated: Path
    """``include/bits/alltypes.h``, ``include/bits/syscall.h``, ``internal/version.h`` and
    ``arch/`` (x86-64's headers with symex's overlay)."""

    @property
    def public_includes(self) -> tuple[Path, ...]:
        """Where a program's ``#include <stdio.h>`` is found: the architecture's ``bits``, the
        generic ``bits`` it falls back on (musl's install merges the two), the generated ones
        and musl's headers. zig cc adds its own copy of musl's headers behind these; clang
        adds none, so every directory must be here."""
        return (self.generated / "arch", self.source / "arch" / "generic", self.generated / "include",
                self.source / "include")

    @property
    def library_includes(self) -> tuple[Path, ...]:
        """musl's own include path for building the library (its Makefile's order)."""
        return (self.generated / "arch", self.source / "arch" / "generic", self.generated / "internal",
                self.source / "src" / "include", self.source / "src" / "internal",
                self.generated / "include", self.source / "include")


def _overlay_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "runtime" / "musl"


#: names a directory holding musl's source and IR, built by another process (the service's
#: jobs read the server's build, read-only, through it)
CACHE_VARIABLE = "SYMEX_MUSL_CACHE"


def musl_cache_root() -> Path:
    """Where musl's source, generated headers and IR are cached: ``$SYMEX_MUSL_CACHE``, else
    a directory of the IR cache."""
    given = os.environ.get(CACHE_VARIABLE)
    return Path(given) if given else default_cache_dir() / f"musl-{MUSL_VERSION}"


def _download(target: Path) -> None:
    """Fetch Debian's tarball into ``target``, checked against its SHA-256."""
    # urllib, tarfile and the thread pool are imported where used: every run imports this
    # module, and only the first build on a machine needs them (25 ms of start-up)
    import urllib.request  # noqa: PLC0415
    try:
        with urllib.request.urlopen(MUSL_URL, timeout=60) as response:  # noqa: S310 (https, fixed)
            data = response.read()
    except OSError as exc:
        raise LoadError(
            f"symex needs musl {MUSL_VERSION}'s source once to build its C library, and could "
            f"not download {MUSL_URL}: {exc}; download it elsewhere and set SYMEX_MUSL_SOURCE "
            f"to the tarball (or an unpacked tree)") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != MUSL_SHA256:
        raise LoadError(f"{MUSL_URL} has SHA-256 {digest}, not {MUSL_SHA256}: refusing to build "
                        f"from it (set SYMEX_MUSL_SOURCE to a genuine musl-{MUSL_VERSION} tarball)")
    target.write_bytes(data)


def _unpack(tarball: Path, into: Path) -> Path:
    """Unpack ``tarball`` into ``into`` atomically; the tree's path."""
    tree = into / f"musl-{MUSL_VERSION}"
    if tree.is_dir():
        return tree
    import tarfile  # noqa: PLC0415 (first build only, as urllib above)
    work = Path(tempfile.mkdtemp(prefix=".unpack.", dir=into))
    try:
        with tarfile.open(tarball) as archive:
            archive.extractall(work, filter="data")
        unpacked = [p for p in work.iterdir() if (p / "src").is_dir()]
        if len(unpacked) != 1:
            raise LoadError(f"{tarball} is not a musl source tarball (no src/ in it)")
        try:
            unpacked[0].rename(tree)
        except OSError:
            if not tree.is_dir():  # another process unpacked it first
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return tree


def _source_tree() -> Path:
    given = os.environ.get("SYMEX_MUSL_SOURCE")
    root = musl_cache_root()
    root.mkdir(parents=True, exist_ok=True)
    if given:
        path = Path(given).expanduser()
        if path.is_dir():
            if not (path / "src").is_dir():
                raise LoadError(f"SYMEX_MUSL_SOURCE={given} has no src/: give musl's unpacked "
                                f"source tree or its tarball")
            return path
        if not path.is_file():
            raise LoadError(f"SYMEX_MUSL_SOURCE={given} does not exist")
        return _unpack(path, root)
    tarball = root / f"musl_{MUSL_VERSION}.orig.tar.gz"
    if not (root / f"musl-{MUSL_VERSION}").is_dir():
        if not tarball.is_file():
            partial = tarball.with_suffix(f".{os.getpid()}.part")
            _download(partial)
            os.replace(partial, tarball)
    return _unpack(tarball, root)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


def _generate(source: Path, generated: Path) -> None:
    """What musl's Makefile generates, and the architecture directory with the overlay."""
    arch = source / "arch" / "x86_64"
    # tools/mkalltypes.sed, in Python: TYPEDEF/STRUCT/UNION lines become guarded definitions
    lines = []
    for path in (arch / "bits" / "alltypes.h.in", source / "include" / "alltypes.h.in"):
        for line in path.read_text().splitlines():
            words = line.rstrip(";").split()
            if line.startswith("TYPEDEF "):
                name = words[-1]
                lines += [f"#if defined(__NEED_{name}) && !defined(__DEFINED_{name})",
                          f"typedef {' '.join(words[1:-1])} {name};", f"#define __DEFINED_{name}",
                          "#endif", ""]
            elif line.startswith(("STRUCT ", "UNION ")):
                kind = words[0].lower()
                name = words[1]
                lines += [f"#if defined(__NEED_{kind}_{name}) && !defined(__DEFINED_{kind}_{name})",
                          f"{kind} {name} {' '.join(words[2:])};", f"#define __DEFINED_{kind}_{name}",
                          "#endif", ""]
            else:
                lines.append(line)
    _write(generated / "include" / "bits" / "alltypes.h", "\n".join(lines) + "\n")
    syscalls = (arch / "bits" / "syscall.h.in").read_text()
    _write(generated / "include" / "bits" / "syscall.h",
           syscalls + "".join(line.replace("__NR_", "SYS_") + "\n"
                              for line in syscalls.splitlines() if "__NR_" in line))
    _write(generated / "internal" / "version.h", f'#define VERSION "{MUSL_VERSION}"\n')
    for path in arch.rglob("*.h"):
        _write(generated / "arch" / path.relative_to(arch), path.read_text())
    for path in (_overlay_dir() / "arch").glob("*.h"):
        _write(generated / "arch" / path.name, path.read_text())


def _overlay_digest() -> str:
    digest = hashlib.sha256(header_text().encode())  # the glue includes the system-call table
    for path in sorted(_overlay_dir().rglob("*")):
        if path.is_file():
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


SHIPPED_DIR = f"prebuilt/musl-{MUSL_VERSION}"
"""Where a wheel carries musl, relative to the ``symex`` package: its headers, its IR (one
``.ll`` per source file, built with zig cc when the wheel is built), its index and its
licence. A checkout has none and builds musl into the cache on first use."""


def _shipped() -> Path | None:
    """The wheel's prebuilt musl, if it is there and was built from this overlay (an edited
    checkout's glue.c builds anew)."""
    root = Path(__file__).resolve().parent.parent / SHIPPED_DIR
    try:
        build = json.loads((root / "BUILD.json").read_text())
    except (OSError, ValueError):
        return None
    return root if build.get("overlay") == _overlay_digest() else None


def musl_tree() -> MuslTree:
    """musl's source (fetched and unpacked on first use) with the headers symex generates;
    with a wheel's prebuilt musl, its headers alone (nothing is fetched)."""
    shipped = _shipped()
    if shipped is not None:
        return MuslTree(shipped / "source", shipped / "generated")
    source = _source_tree()
    generated = musl_cache_root() / f"generated-{_overlay_digest()}"
    if not (generated / "include" / "bits" / "alltypes.h").is_file():
        _generate(source, generated)
    return MuslTree(source, generated)


_syscall_names: dict[int, str] = {}


def syscall_name(number: int) -> str:
    """The x86-64 name of system call ``number`` (from musl's table), or its number."""
    if not _syscall_names:
        text = (musl_tree().generated / "include" / "bits" / "syscall.h").read_text()
        for line in text.splitlines():
            words = line.split()
            if len(words) == 3 and words[0] == "#define" and words[1].startswith("SYS_") and words[2].isdigit():
                _syscall_names.setdefault(int(words[2]), words[1][4:])
    return _syscall_names.get(number, f"number {number}")


def program_flags(tree: MuslTree, compiler: Compiler | None = None) -> list[str]:
    """Flags compiling a program against musl's headers instead of the system's (and, last,
    the headers of ``compiler`` itself, default the one symex uses: ``-nostdinc`` drops them,
    and ``<stdatomic.h>`` is the compiler's, not the C library's)."""
    # the musl triple marks the IR, so loading it links musl without being told
    flags = ["-target", MUSL_TARGET, "-nostdinc"]
    builtin = builtin_header_dir(compiler if compiler is not None else find_compiler())
    for directory in (*tree.public_includes, *kernel_header_dirs(), *([builtin] if builtin else [])):
        flags += ["-isystem", str(directory)]
    return flags


def kernel_header_dirs() -> tuple[Path, ...]:
    """Linux's own headers (``<linux/xattr.h>``, ``<asm/ioctls.h>``: what the kernel gives
    user space, no C library), from the ``ziglang`` wheel symex depends on. zig cc searches
    them behind musl's headers by itself; clang with ``-nostdinc`` would not, and programs
    such as coreutils include them (empty if the wheel is missing)."""
    spec = importlib.util.find_spec("ziglang")
    if spec is None or spec.origin is None:
        return ()
    root = Path(spec.origin).parent / "lib" / "libc" / "include"
    return tuple(d for d in (root / "x86-linux-any", root / "any-linux-any") if d.is_dir())


def _library_sources(tree: MuslTree) -> Iterator[tuple[str, Path]]:
    """(name relative to src/, path) of every C file the library is built from: musl's, and
    symex's glue, named ``symex/...``."""
    src = tree.source / "src"
    for directory in _DIRECTORIES:
        for path in sorted((src / directory).glob("*.c")):
            name = f"{directory}/{path.name}"
            if name not in _LEFT_OUT:
                yield name, path
    for name in _THREAD_FILES:
        yield name, src / name
    for path in sorted(_overlay_dir().glob("*.c")):
        yield f"symex/{path.name}", path


def _compile(compiler: Compiler, tree: MuslTree, name: str, source: Path, output: Path) -> str | None:
    """Compile one file to ``output``; the compiler's complaint, or None."""
    includes = [f"-I{directory}" for directory in (*tree.library_includes, header_dir(default_cache_dir()))]
    if name.startswith("symex/"):
        includes.append(f"-I{tree.source / 'src' / 'process'}")  # spawn.c's fdop.h
    if name.startswith(_BYTEWISE):
        includes.append("-U__GNUC__")
    temporary = output.with_name(f".{output.name}.{os.getpid()}.tmp")
    command = [*compiler.command, *_LIBRARY_FLAGS, "-target", MUSL_TARGET, *includes,
               str(source), "-o", str(temporary)]
    proc = subprocess.run(command, capture_output=True, text=True, errors="replace", check=False)
    if proc.returncode != 0 or not temporary.is_file():
        temporary.unlink(missing_ok=True)
        return proc.stderr.strip() or f"exit status {proc.returncode}"
    os.replace(temporary, output)
    return None


def musl_library(compiler: Compiler | None = None) -> list[LibraryFile]:
    """musl's files indexed for :func:`~symex.ir.link.link_libraries` (the index is cached
    beside the IR, so a run reads one JSON file, not a thousand ``.ll`` files)."""
    paths = musl_ir_files(compiler)
    return indexed_library(paths, paths[0].parent / "index-2.json")


def musl_ir_files(compiler: Compiler | None = None) -> list[Path]:
    """The library as one ``.ll`` per source file, built on first use (a few minutes, on
    every core; progress on stderr) and cached by compiler, musl version and overlay."""
    shipped = _shipped()
    if shipped is not None:
        # llvmlite reads IR of any clang up to its own LLVM, whichever compiler builds programs
        return [shipped / "ir" / name for name in json.loads((shipped / "BUILD.json").read_text())["files"]]
    compiler = compiler if compiler is not None else find_compiler()
    tree = musl_tree()
    # everything that changes the IR: the compiler, the overlay and glue, and the recipe
    recipe = repr((_LIBRARY_FLAGS, _BYTEWISE, _DIRECTORIES, sorted(_LEFT_OUT), _THREAD_FILES))
    identity = f"{compiler.kind}\0{compiler.version}\0{_overlay_digest()}\0{recipe}"
    key = hashlib.sha256(identity.encode()).hexdigest()[:16]
    directory = musl_cache_root() / f"ir-{key}"
    sources = list(_library_sources(tree))
    outputs = [directory / (name.replace("/", "__")[:-2] + ".ll") for name, _ in sources]
    missing = [(name, path, output) for (name, path), output in zip(sources, outputs) if not output.is_file()]
    if missing:
        directory.mkdir(parents=True, exist_ok=True)
        with _build_lock(directory):
            # another process may have built them while this one waited
            missing = [item for item in missing if not item[2].is_file()]
            if missing:
                _build(compiler, tree, missing)
    return outputs


@contextlib.contextmanager
def _build_lock(directory: Path) -> Iterator[None]:
    """Held while musl's files are built into ``directory``: two runs started at once on a
    fresh machine (or after the glue changed) build the library once, not each on every
    core. A directory that cannot be written (another's build, read-only) is not locked."""
    try:
        handle = open(directory / ".build-lock", "a")  # noqa: SIM115 (held across the build)
    except OSError:
        yield
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            sys.stderr.write("symex: waiting for another process building the C library ...\n")
            sys.stderr.flush()
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield  # the lock goes with the descriptor


def _build(compiler: Compiler, tree: MuslTree, missing: list[tuple[str, Path, Path]]) -> None:
    """Compile the ``missing`` (name, source, output) files, on every core."""
    sys.stderr.write(f"symex: building the C library (musl {MUSL_VERSION}) into LLVM IR, once "
                     f"for this machine: {len(missing)} files ...\n")
    sys.stderr.flush()
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415 (first build only)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        failures = [(path, error) for (_, path, _), error in
                    zip(missing, pool.map(lambda item: _compile(compiler, tree, *item), missing))
                    if error is not None]
    if failures:
        path, error = failures[0]
        raise LoadError(f"building musl's {path} failed ({len(failures)} files failed): {error}")
    sys.stderr.write("symex: the C library is built\n")


def ship(destination: Path) -> None:
    """Build musl with zig cc and copy what programs need into ``destination`` (a wheel's
    ``symex/prebuilt/musl-VERSION``): the headers, the IR files with their index, musl's
    licence and ``BUILD.json`` (version, overlay digest, the files in link order)."""
    from symex.ir.compile import zig_compiler  # noqa: PLC0415

    compiler = zig_compiler()
    if compiler is None:
        raise LoadError("shipping musl needs the ziglang package (pip install ziglang)")
    tree = musl_tree()
    files = musl_library(compiler)
    if destination.exists():
        shutil.rmtree(destination)
    for name in ("include", "arch/generic"):
        shutil.copytree(tree.source / name, destination / "source" / name)
    for name in ("include", "arch"):
        shutil.copytree(tree.generated / name, destination / "generated" / name)
    (destination / "ir").mkdir(parents=True)
    for library_file in files:
        shutil.copyfile(library_file.path, destination / "ir" / library_file.path.name)
    shutil.copyfile(files[0].path.parent / "index-2.json", destination / "ir" / "index-2.json")
    shutil.copyfile(tree.source / "COPYRIGHT", destination / "COPYRIGHT")
    _write(destination / "BUILD.json", json.dumps({
        "version": MUSL_VERSION, "overlay": _overlay_digest(), "compiler": compiler.version,
        "files": [f.path.name for f in files]}, indent=1))


if __name__ == "__main__":  # python -m symex.ir.musl ship DIR (setup.py, when a wheel is built)
    if len(sys.argv) != 3 or sys.argv[1] != "ship":
        raise SystemExit("usage: python -m symex.ir.musl ship DIRECTORY")
    ship(Path(sys.argv[2]))
