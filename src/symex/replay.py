"""Native replay: run a test case symex found on the real program, compiled by gcc.

The program is linked with ``runtime/replay_runtime.c``, which feeds it the objects of a
``.ktest`` file, and built with AddressSanitizer and UBSan so that memory and arithmetic
errors show up natively. :func:`classify` maps what the run shows to the same error kinds
symex (and KLEE, by its ``.err`` suffixes) reports, so the two can be compared.
"""

from __future__ import annotations

import glob
import hashlib
import math
import os
import re
import shutil
import signal as signal_module
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import attrs

from symex.env.fuzz_input import fuzz_driver_source
from symex.errors import CompileError, SymexError
from symex.ir.build_cache import BuildCache, list_headers
from symex.ir.compile import clang_candidates, include_dir, shipped_headers_digest
from symex.sandbox import NOBODY, Sandbox, SandboxLimits, hand_over
from symex.output.ktest import KTest, read_ktest, write_ktest
from symex.output.test_index import TestEntry, read_test_index
from symex.symargs import ArgvSpec, replay_argv

__all__ = [
    "NATIVE_FLAGS",
    "NativeOutcome",
    "ReplayEnvironment",
    "ReplayTarget",
    "build_native",
    "classify",
    "default_native_cache_dir",
    "describe_outcome",
    "expected_error_kind",
    "find_replay_targets",
    "replay_command_line",
    "replay_environment",
    "reproduces",
    "NativeSandbox",
    "run_native",
    "run_test",
    "runtime_source",
]

NATIVE_FLAGS: tuple[str, ...] = (
    "-g",
    "-O0",
    "-fsanitize=address,integer-divide-by-zero,shift,unreachable",
    "-fno-sanitize-recover=all",
)
"""gcc flags for replay builds: debug info, no optimisation, and the sanitizers whose reports
correspond to symex's error kinds; every sanitizer report ends the run."""

# Exit codes and stderr markers written by runtime/replay_runtime.c.
_EXIT_ASSUME = 86
_EXIT_USER = 87
_EXIT_REACH = 88
_MARK_ASSUME = "symex-replay: klee_assume failed"
_MARK_USER = "symex-replay: user error:"
_MARK_REACH = "symex-replay: reach_error"

_ASAN_OPTIONS = "detect_leaks=0:detect_stack_use_after_return=1:abort_on_error=0"
_UBSAN_OPTIONS = "print_stacktrace=1"

# Ordered: the first matching pattern decides. ASan's stack-overflow must win over the
# generic SEGV wording ASan also uses for it.
_SANITIZER_KINDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"AddressSanitizer: stack-overflow"), "exec"),
    (re.compile(r"AddressSanitizer: attempting double-free"), "free"),
    (re.compile(r"AddressSanitizer: attempting free on address which was not malloc"), "free"),
    (re.compile(r"AddressSanitizer: (?:bad-free|alloc-dealloc-mismatch|bad-malloc_usable_size)"), "free"),
    (
        re.compile(
            r"AddressSanitizer: (?:[\w-]*buffer-(?:overflow|underflow)|heap-use-after-free|"
            r"stack-use-after-return|stack-use-after-scope|use-after-poison|"
            r"SEGV on unknown address|unknown-crash|negative-size-param|memcpy-param-overlap|"
            r"strcpy-param-overlap|strncpy-param-overlap|strcat-param-overlap|wild-addr)"
        ),
        "ptr",
    ),
    (re.compile(r"runtime error: (?:integer )?division by zero"), "div"),
    (re.compile(r"runtime error: (?:shift exponent|left shift of)"), "overshift"),
    (re.compile(r"runtime error: execution reached (?:an )?unreachable program point"), "exec"),
    # symex's fuzz driver (runtime/fuzz_driver.c), as libFuzzer's says it
    (re.compile(r"fuzz target overwrites its const input"), "readonly"),
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSERTION_FAILED = re.compile(r"Assertion [`'].*[`'] failed")


@attrs.frozen
class NativeOutcome:
    """What one native run of a test case did."""

    exit_code: int | None
    """Exit status if the process exited normally, else ``None``."""
    signal: int | None
    """Number of the signal that killed the process, else ``None``."""
    stdout: str
    stderr: str
    timed_out: bool
    """The run exceeded its time limit and was killed (``kind`` is then ``None``)."""
    kind: str | None
    """The error kind this run shows, in symex/KLEE names, or ``None`` for a clean run."""
    over_memory: bool = False
    """A sandboxed run killed for holding more memory than its sandbox allows (``kind`` is
    then ``None``, as for a timeout)."""


def runtime_source() -> Path:
    """Path of the C runtime that replays ``.ktest`` objects (``runtime/replay_runtime.c``)."""
    return Path(__file__).resolve().parent / "runtime" / "replay_runtime.c"


def default_native_cache_dir() -> Path:
    """Where replay executables are cached: ``$SYMEX_CACHE_DIR`` if set, else ``~/.cache/symex/native``."""
    env = os.environ.get("SYMEX_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "symex" / "native"


_gcc_versions: dict[str, str] = {}


def _gcc() -> tuple[str, str]:
    """Path and first ``--version`` line of gcc, or CompileError saying how to get it."""
    path = shutil.which("gcc")
    if path is None:
        raise CompileError("native replay needs gcc, which is not on PATH: install it (e.g. `apt-get install gcc`)")
    version = _gcc_versions.get(path)
    if version is None:
        try:
            proc = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise CompileError(f"could not run {path} --version: {exc}") from exc
        lines = proc.stdout.strip().splitlines()
        version = lines[0] if lines else ""
        _gcc_versions[path] = version
    return path, version


def build_native(
    source: str | os.PathLike[str],
    flags: Sequence[str] = (),
    *,
    out_dir: os.PathLike[str] | None = None,
    sandbox: NativeSandbox | None = None,
    entry: str = "main",
    fuzz_target: bool = False,
) -> Path:
    """Build ``source`` with gcc, sanitizers and the replay runtime; return the executable.

    The executable is cached by a hash of the source, flags, gcc version, shipped headers and
    runtime, and of every header the source includes (:mod:`symex.ir.build_cache`). With a
    ``sandbox``, gcc runs in it (seeing the source's directory and the ``-I`` directories of
    ``flags``, read-only, and writing a scratch directory), since building reads files the
    source names. A program run from another ``entry`` than main gets the runtime's main,
    which calls that function with no arguments; a ``fuzz_target`` (it defines
    ``LLVMFuzzerTestOneInput``) gets symex's fuzz driver, which runs it on the test's input
    in a heap buffer of exactly its size. Raises
    :class:`~symex.errors.CompileError` with gcc's diagnostics on failure.
    """
    source_path = Path(source).expanduser()
    if not source_path.is_file():
        raise CompileError(f"no such file: {source_path} (check the path of the C source to replay)")
    source_path = source_path.resolve()
    gcc, version = _gcc()
    runtime = runtime_source()
    command_flags = [*NATIVE_FLAGS, "-I", str(include_dir())]
    user_flags = list(flags)
    if entry != "main":
        if not _IDENTIFIER.fullmatch(entry):
            raise CompileError(f"entry {entry!r} is not a C function's name")
        user_flags.append(f"-DSYMEX_REPLAY_ENTRY={entry}")
    if fuzz_target:
        user_flags += ["-DSYMEX_FUZZ_REPLAY", str(fuzz_driver_source())]

    digest = hashlib.sha256()
    fields = [
        b"symex-build-native-v4",
        str(source_path).encode("utf-8", "surrogateescape"),
        source_path.read_bytes(),
        "\0".join(command_flags + user_flags).encode("utf-8", "surrogateescape"),
        version.encode(),
        shipped_headers_digest().encode(),
        runtime.read_bytes(),
        fuzz_driver_source().read_bytes() if fuzz_target else b"",
    ]
    for field in fields:
        digest.update(len(field).to_bytes(8, "little"))
        digest.update(field)
    key = digest.hexdigest()

    directory = Path(out_dir).expanduser() if out_dir is not None else default_native_cache_dir()
    cache = BuildCache(directory, source_path.stem, key, ".native")
    cached = cache.lookup()
    if cached is not None:
        return cached
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CompileError(f"cannot create {directory}: {exc} (pass a writable out_dir or set "
                           f"SYMEX_CACHE_DIR)") from exc
    fd, tmp_name = tempfile.mkstemp(prefix=f".{source_path.stem}.", suffix=".tmp", dir=directory)
    os.close(fd)
    tmp_path = Path(tmp_name)
    depfile = tmp_path.with_suffix(".d")
    try:
        # libm last, as the linker wants it: symex models the math functions, so a program
        # that calls them links natively as symex ran it
        compile_words = [gcc, *command_flags, str(source_path), str(runtime), *user_flags]
        if sandbox is not None:
            return cache.store(*_build_sandboxed(sandbox, compile_words, source_path, tmp_path,
                                                 [gcc, *command_flags, *user_flags]))
        command = [*compile_words, "-o", str(tmp_path), "-lm"]
        try:
            proc = subprocess.run(command, capture_output=True, text=True, errors="replace", check=False)
        except OSError as exc:
            raise CompileError(f"could not run gcc: {exc}") from exc
        if proc.returncode != 0:
            raise _build_failed(source_path, proc.returncode, (proc.stderr or proc.stdout).strip())
        # readable by all: a sandbox's user runs it, and a program it cannot read runs
        # undumpable, its /proc/self/environ closed to it (ASan would read no options there)
        os.chmod(tmp_path, 0o755)
        # the headers the program reads (the runtime's are fixed with gcc and symex)
        return cache.store(tmp_path, list_headers([gcc, *command_flags, *user_flags],
                                                  source_path, depfile))
    finally:
        tmp_path.unlink(missing_ok=True)
        depfile.unlink(missing_ok=True)


def _include_directories(flags: Sequence[str]) -> list[Path]:
    """The directories ``-I DIR`` / ``-IDIR`` flags name."""
    found = []
    for i, flag in enumerate(flags):
        if flag == "-I" and i + 1 < len(flags):
            found.append(Path(flags[i + 1]).resolve())
        elif flag.startswith("-I") and len(flag) > 2:
            found.append(Path(flag[2:]).resolve())
    return [path for path in found if path.is_dir()]


def _build_sandboxed(sandbox: NativeSandbox, compile_words: list[str], source: Path,
                     output: Path, preprocess_words: list[str]) -> tuple[Path, list[str] | None]:
    """Build in ``sandbox`` into ``output`` (outside it); the headers the build read (None
    where they could not be listed), for the cache."""
    with tempfile.TemporaryDirectory(prefix="symex-build-") as scratch:
        built, depfile = Path(scratch) / "program", Path(scratch) / "program.d"
        hand_over(Path(scratch), sandbox.uid)
        readable = [source.parent, include_dir(), runtime_source().parent,
                    *_include_directories(compile_words)]
        isolated = sandbox.isolation(readable, [Path(scratch)], cpu_seconds=BUILD_SECONDS)
        ran = isolated.run([*compile_words, "-o", str(built), "-lm"], cwd=source.parent,
                           timeout=BUILD_SECONDS)
        if ran.returncode != 0:
            said = (ran.stderr or ran.stdout).decode(errors="replace").strip()
            if ran.timed_out or ran.over_memory:
                said = f"(stopped: over its {'time' if ran.timed_out else 'memory'} limit)\n{said}"
            raise _build_failed(source, ran.returncode, said)
        shutil.copyfile(built, output)
        os.chmod(output, 0o755)
        headers = list_headers(preprocess_words, source, depfile, cwd=source.parent,
                               run=lambda command: isolated.run(
                                   command, cwd=source.parent, timeout=BUILD_SECONDS).returncode)
    return output, headers


def _build_failed(source: Path, status: int, said: str) -> CompileError:
    """What a failed native build raises: gcc's status, then what it said."""
    return CompileError(f"building {source} for native replay failed (gcc exited with "
                        f"{status}); fix what gcc reports (or adjust the flags) and retry", said)


def classify(exit_code: int | None, signal: int | None, stderr: str) -> str | None:
    """The error kind a native run shows, in symex/KLEE names, or ``None`` for a clean exit.

    Kinds: ``ptr``, ``free``, ``div``, ``overshift``, ``assert``, ``abort``, ``user``,
    ``reach_error``, ``exec``. A normal exit with any status code is clean.
    """
    if exit_code == _EXIT_REACH and _MARK_REACH in stderr:
        return "reach_error"
    if exit_code == _EXIT_USER and _MARK_USER in stderr:
        return "user"
    if exit_code == _EXIT_ASSUME and _MARK_ASSUME in stderr:
        return "user"
    for pattern, kind in _SANITIZER_KINDS:
        if pattern.search(stderr):
            return kind
    if signal is None:
        return None
    if signal == signal_module.SIGABRT:
        return "assert" if _ASSERTION_FAILED.search(stderr) else "abort"
    if signal == signal_module.SIGFPE:
        return "div"
    if signal in (signal_module.SIGSEGV, signal_module.SIGBUS):
        return "ptr"
    return "exec"


def replay_command_line(ktest: KTest) -> tuple[list[bytes], int]:
    """The native arguments (after ``argv[0]``) of a test case and how many of its leading
    objects they consume, as ``klee-replay`` rebuilds them: the ``args`` field in KLEE's
    syntax, each ``--sym-arg`` replaced by its ``argNN`` string, each ``--sym-args`` by the
    first ``n_args`` of its strings (see :func:`symex.symargs.replay_argv`)."""
    return replay_argv(ktest.args[1:], [(o.name, o.data) for o in ktest.objects])


@attrs.frozen
class ReplayEnvironment:
    """The files and standard input a test case gives the program, rebuilt for a native run
    as ``klee-replay`` does: files by name (``A`` from the ``A-data`` object...) and stdin
    bytes (from the ``stdin`` object; ``None``: no stdin object, the run gets end of file)."""

    files: tuple[tuple[str, bytes], ...] = ()
    stdin: bytes | None = None


def replay_environment(ktest: KTest) -> ReplayEnvironment:
    """The symbolic files (``X-data`` objects) and stdin (``stdin``) of a test case."""
    files = []
    stdin = None
    spec = ArgvSpec.parse(ktest.args[1:])  # --sym-dir puts the files in a directory
    for obj in ktest.objects:
        name = obj.name
        if len(name) == 6 and name.endswith("-data") and "A" <= name[0] <= "Z":
            files.append((spec.sym_file_path(name[0]), bytes(obj.data)))
        elif name == "stdin":
            stdin = bytes(obj.data)
    return ReplayEnvironment(tuple(files), stdin)


@attrs.frozen
class NativeSandbox:
    """Native replay of a program one does not trust (the testing service's uploads, ``symex
    replay --sandbox``): the build and every run happen in a :class:`~symex.sandbox.Sandbox`
    (bubblewrap), which sees the system's toolchain, the program's own directory and the
    include directories it is built with, read-only, and writes only a scratch directory;
    no network, an empty environment, an unprivileged user, and these limits. Where no
    sandbox can be made (:func:`~symex.sandbox.sandbox_problem`) nothing runs:
    :class:`~symex.sandbox.SandboxUnavailable` says why."""

    memory_mb: int | None = 1024
    """Resident memory above which AddressSanitizer stops the program (``hard_rss_limit_mb``:
    an address-space limit would break ASan, which reserves terabytes of shadow memory);
    every process of the sandbox together is killed at twice that (:data:`MEMORY_BACKSTOP`)."""
    file_size_mb: int | None = 64
    """The largest file the program may write (RLIMIT_FSIZE; no core files either)."""
    processes: int | None = 64
    """Processes and threads it may have (RLIMIT_NPROC, of its user)."""
    uid: int = NOBODY
    """The user it runs as when symex runs as root."""

    def isolation(self, readable: Sequence[Path], writable: Sequence[Path], *,
                  environment: dict[str, str] | None = None, cpu_seconds: int | None = None,
                  asan: bool = False) -> Sandbox:
        """The sandbox of one step: ``asan`` for a run of the sanitized program (whose memory
        is watched, not capped as address space)."""
        memory = None if self.memory_mb is None else \
            self.memory_mb * MEMORY_BACKSTOP + (64 if asan else 0)
        limits = SandboxLimits(memory_mb=memory, cpu_seconds=cpu_seconds,
                               processes=self.processes, file_size_mb=self.file_size_mb,
                               address_space=not asan)
        return Sandbox(readable=readable, writable=writable, environment=environment or {},
                       limits=limits, uid=self.uid)


#: how many times its ``memory_mb`` a sandboxed replay's processes may hold together before
#: they are killed (AddressSanitizer stops a process at ``memory_mb`` itself; this catches
#: what it does not see: children, memory mapped around its allocator)
MEMORY_BACKSTOP = 2
#: seconds a sandboxed native build may take
BUILD_SECONDS = 300


def run_native(
    executable: Path,
    ktest: KTest | os.PathLike[str],
    *,
    args: Sequence[str | bytes] = (),
    timeout: float = 10.0,
    first_object: int = 0,
    environment: ReplayEnvironment | None = None,
    sandbox: NativeSandbox | None = None,
) -> NativeOutcome:
    """Run a replay executable on one test case (a :class:`KTest` or a ``.ktest`` path).

    ``args`` are the program's command-line arguments (after ``argv[0]``). ``first_object``:
    the index of the object the program's first input call takes (the objects before it built
    the command line; see :func:`replay_command_line`). A run longer than ``timeout`` seconds
    is killed and reported with ``timed_out=True``. ``environment``: files to create in a
    fresh directory the program runs in, and bytes piped to its standard input (see
    :func:`replay_environment`); without one the program runs in the current directory with
    stdin at end of file. ``sandbox``: the program runs isolated, in a fresh directory, with
    limits (see :class:`NativeSandbox`; :class:`~symex.sandbox.SandboxUnavailable` where no
    sandbox can be made).
    """
    with tempfile.TemporaryDirectory(prefix="symex-replay-") as scratch:
        if isinstance(ktest, KTest) or sandbox is not None:
            # a sandboxed run sees its scratch directory, not the test's
            ktest_path = Path(scratch) / "input.ktest"
            write_ktest(ktest_path, ktest if isinstance(ktest, KTest) else read_ktest(ktest))
        else:
            ktest_path = Path(ktest)
        variables = {"KTEST_FILE": str(Path(ktest_path).resolve()),
                     "SYMEX_REPLAY_FIRST_OBJECT": str(first_object),
                     "ASAN_OPTIONS": _ASAN_OPTIONS, "UBSAN_OPTIONS": _UBSAN_OPTIONS}
        if sandbox is not None and sandbox.memory_mb is not None:
            variables["ASAN_OPTIONS"] += f":hard_rss_limit_mb={sandbox.memory_mb}"
        cwd = None
        if (environment is not None and environment.files) or sandbox is not None:
            cwd = Path(scratch) / "cwd"
            cwd.mkdir()
            for name, data in environment.files if environment is not None else ():
                (cwd / name).parent.mkdir(parents=True, exist_ok=True)
                (cwd / name).write_bytes(data)
        stdin_data = environment.stdin if environment is not None else None
        command: list[str | bytes] = [str(Path(executable).resolve()), *args]
        if sandbox is not None:
            hand_over(Path(scratch), sandbox.uid)
            isolated = sandbox.isolation([Path(executable).resolve()], [Path(scratch)],
                                         environment=variables, asan=True,
                                         cpu_seconds=max(1, math.ceil(timeout)))
            ran = isolated.run(command, cwd=cwd, timeout=timeout, input=stdin_data)
            returncode, out, err, timed_out = ran.returncode, ran.stdout, ran.stderr, ran.timed_out
            over_memory = ran.over_memory
            if ran.over_memory:
                err += (f"\nsymex: stopped: its processes held more than "
                        f"{isolated.limits.memory_mb} MB of memory\n").encode()
        else:
            returncode, out, err, timed_out = _run_plainly(command, {**os.environ, **variables},
                                                           cwd, timeout, stdin_data)
            over_memory = False
    exit_code = returncode if returncode >= 0 else None
    signal = -returncode if returncode < 0 else None
    stdout = out.decode("utf-8", "replace")
    stderr = err.decode("utf-8", "replace")
    kind = None if timed_out or over_memory else classify(exit_code, signal, stderr)
    return NativeOutcome(exit_code=exit_code, signal=signal, stdout=stdout, stderr=stderr,
                         timed_out=timed_out, kind=kind, over_memory=over_memory)


def _run_plainly(command: list[str | bytes], env: dict[str, str], cwd: Path | None, timeout: float,
                 stdin_data: bytes | None) -> tuple[int, bytes, bytes, bool]:
    """Run a replay executable as the user's own program: its status, outputs and whether
    it timed out (its process group is killed then)."""
    try:
        proc = subprocess.Popen(
            command, stdin=subprocess.DEVNULL if stdin_data is None else subprocess.PIPE,
            cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
            # own process group, so a timeout also kills anything the program forked
            start_new_session=True)
    except (OSError, subprocess.SubprocessError) as exc:
        raise SymexError(f"cannot run replay executable {command[0]!s}: {exc} (rebuild it "
                         f"with build_native)") from exc
    timed_out = False
    try:
        out, err = proc.communicate(input=stdin_data, timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(proc.pid, signal_module.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
    return proc.returncode, out, err, timed_out


def run_test(executable: Path, path: os.PathLike[str], ktest: KTest, *, timeout: float = 10.0,
             sandbox: NativeSandbox | None = None) -> NativeOutcome:
    """Run the test case ``ktest`` (read from ``path``) as ``klee-replay`` would: its
    symbolic arguments rebuilt from its objects, its symbolic files and stdin as files in a
    fresh directory and a pipe (see :func:`run_native` for ``timeout`` and ``sandbox``)."""
    args, first_object = replay_command_line(ktest)
    return run_native(executable, path, args=args, timeout=timeout, first_object=first_object,
                      environment=replay_environment(ktest), sandbox=sandbox)


# What a native run may show for each error kind symex reports. SV-COMP programs usually define
# reach_error() as assert(0) or abort(); a write to a constant object is a SEGV natively, which
# ASan reports like any wild access; a stack overflow ASan does not recognise as such is a SEGV.
_REPRODUCING_KINDS: dict[str, frozenset[str]] = {
    "reach_error": frozenset({"reach_error", "assert", "abort"}),
    "readonly": frozenset({"readonly", "ptr"}),
    "exec": frozenset({"exec", "ptr"}),
}


def reproduces(expected: str, outcome: NativeOutcome) -> bool:
    """Whether a native run shows the error kind ``expected`` (a KLEE ``.err`` suffix); a
    ``hang`` (every process blocked) shows natively as a run that times out."""
    if expected == "hang":
        return outcome.timed_out
    if outcome.kind is None:
        return False
    return outcome.kind in _REPRODUCING_KINDS.get(expected, frozenset({expected}))


def describe_outcome(outcome: NativeOutcome) -> str:
    """How a native run ended, in a few words: ``exit 0``, ``signal 11 (SIGSEGV)``, ``timeout``."""
    if outcome.timed_out:
        return "timeout"
    if outcome.signal is not None:
        try:
            name = signal_module.Signals(outcome.signal).name
        except ValueError:
            return f"signal {outcome.signal}"
        return f"signal {outcome.signal} ({name})"
    return f"exit {outcome.exit_code}"


def expected_error_kind(ktest_path: Path,
                        index: dict[int, TestEntry] | None = None) -> str | None:
    """The error kind a test case ended in: from the directory's ``tests.csv`` (``index``, or
    read here), which lists every test; else, for a directory without one (KLEE's), from the
    ``testNNNNNN.KIND.err`` file beside it, which KLEE writes for the first error at a site."""
    stem = ktest_path.name[: -len(".ktest")] if ktest_path.name.endswith(".ktest") else ktest_path.stem
    if index is None:
        index = read_test_index(ktest_path.parent)
    entry = _index_entry(stem, index)
    if entry is not None:
        return entry.error
    kinds = sorted(
        p.name[len(stem) + 1 : -len(".err")]
        for p in ktest_path.parent.glob(f"{glob.escape(stem)}.*.err")
    )
    return kinds[0] if kinds else None


def _index_entry(stem: str, index: dict[int, TestEntry] | None) -> TestEntry | None:
    """``tests.csv``'s line of the test named ``stem`` (``test000007``), if it has one."""
    number = stem[len("test"):]
    if index is None or not stem.startswith("test") or not number.isdigit():
        return None
    return index.get(int(number))


@attrs.frozen
class ReplayTarget:
    """A test case to replay natively and the error kind it should show (``None``: no error)."""

    path: Path
    expected: str | None
    cut_short: str | None = None
    """Why symex stopped the test's path before its end (``tests.csv``'s reason of a
    ``partial`` test): natively it runs on, and may fail past where symex looked."""


def find_replay_targets(path: str | os.PathLike[str]) -> list[ReplayTarget]:
    """The test cases named by ``path``: one ``.ktest`` file, or every ``*.ktest`` of an
    output directory (``symex-out-N`` or ``klee-out-N``), in name order.

    Raises :class:`SymexError` if ``path`` is neither, or the directory holds no test.
    """
    target = Path(path)
    if target.is_dir():
        files = sorted(target.glob("*.ktest"))
        if not files:
            raise SymexError(f"{target} holds no .ktest files (pass a symex-out-N directory or a .ktest file)")
    elif target.is_file():
        files = [target]
    else:
        raise SymexError(f"no such file or directory: {target} (pass a .ktest file or a symex-out-N directory)")
    index = read_test_index(files[0].parent)
    targets = []
    for f in files:
        entry = _index_entry(f.name[: -len(".ktest")], index)
        cut_short = (entry.reason or "stopped") if entry is not None and entry.status == "partial" else None
        targets.append(ReplayTarget(path=f, expected=expected_error_kind(f, index), cut_short=cut_short))
    return targets


# -- libFuzzer's own driver ---------------------------------------------------------------

#: libFuzzer leaves fatal signals to the process, so the classification by signal holds
_LIBFUZZER_FLAGS = ("-handle_abrt=0", "-handle_fpe=0", "-handle_ill=0", "-handle_bus=0",
                    "-handle_segv=0", "-handle_int=0", "-handle_term=0", "-handle_xfsz=0")
_libfuzzer_clang: list[str | None] = []


def libfuzzer_clang() -> str | None:
    """A clang that links a fuzz target with libFuzzer (``-fsanitize=fuzzer``; Debian's clang
    packages ship it), the first of the clangs symex compiles with, or None."""
    if not _libfuzzer_clang:
        found = None
        for path in clang_candidates():
            probe = subprocess.run(
                [path, "-fsanitize=fuzzer", "-x", "c", "-", "-o", os.devnull],
                input="int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }",
                capture_output=True, text=True, check=False)
            if probe.returncode == 0:
                found = path
                break
        _libfuzzer_clang.append(found)
    return _libfuzzer_clang[0]


def build_libfuzzer(sources: Sequence[str | os.PathLike[str]], flags: Sequence[str] = (), *,
                    out_dir: os.PathLike[str] | None = None) -> Path:
    """Build a fuzz target as its users run it: clang ``-fsanitize=fuzzer,address,undefined``
    (libFuzzer's own driver), cached by the sources, flags, clang and the headers the sources
    include. A CompileError without such a clang, or with the compiler's diagnostics."""
    clang = libfuzzer_clang()
    if clang is None:
        raise CompileError("no clang here links libFuzzer (-fsanitize=fuzzer): install Debian's "
                           "clang (apt-get install clang), or replay with symex's own driver "
                           "(symex replay without --libfuzzer)")
    paths = [Path(s).expanduser().resolve() for s in sources]
    missing = [p for p in paths if not p.is_file()]
    if missing:
        raise CompileError(f"no such file: {missing[0]}")
    command = [clang, "-g", "-fsanitize=fuzzer,address,undefined", "-fno-sanitize-recover=all",
               *flags]
    digest = hashlib.sha256(b"symex-libfuzzer-v1")
    fields = [word.encode("utf-8", "surrogateescape") for word in command]
    for data in [*fields, *(p.read_bytes() for p in paths)]:
        digest.update(len(data).to_bytes(8, "little") + data)
    directory = Path(out_dir).expanduser() if out_dir is not None else default_native_cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    cache = BuildCache(directory, paths[0].stem, digest.hexdigest(), ".libfuzzer")
    cached = cache.lookup()
    if cached is not None:
        return cached
    fd, name = tempfile.mkstemp(prefix=f".{paths[0].stem}.", suffix=".tmp", dir=directory)
    os.close(fd)
    target = Path(name)
    try:
        proc = subprocess.run([*command, *map(str, paths), "-o", str(target)],
                              capture_output=True, text=True, errors="replace", check=False)
        if proc.returncode != 0:
            raise CompileError(f"building {paths[0]} with libFuzzer failed ({clang} exited with "
                               f"{proc.returncode}); fix what it reports", proc.stderr.strip())
        os.chmod(target, 0o755)
        headers: list[str] | None = []
        depfile = target.with_suffix(".d")
        for path in paths:
            if path.suffix == ".c" and headers is not None:
                found = list_headers([clang, *flags], path, depfile)
                headers = None if found is None else headers + found
        depfile.unlink(missing_ok=True)
        return cache.store(target, headers)
    finally:
        target.unlink(missing_ok=True)


def run_libfuzzer(executable: Path, data: bytes, *, timeout: float = 10.0) -> NativeOutcome:
    """Run one input through a target built by :func:`build_libfuzzer` (``./fuzzer FILE``):
    how it ended, in symex's error kinds."""
    with tempfile.TemporaryDirectory(prefix="symex-libfuzzer-") as scratch:
        path = Path(scratch) / "input"
        path.write_bytes(data)
        command: list[str | bytes] = [str(Path(executable).resolve()), *_LIBFUZZER_FLAGS, str(path)]
        variables = {**os.environ, "ASAN_OPTIONS": _ASAN_OPTIONS, "UBSAN_OPTIONS": _UBSAN_OPTIONS}
        returncode, out, err, timed_out = _run_plainly(command, variables, Path(scratch), timeout, None)
    exit_code = returncode if returncode >= 0 else None
    signal = -returncode if returncode < 0 else None
    stderr = err.decode("utf-8", "replace")
    kind = None if timed_out else classify(exit_code, signal, stderr)
    return NativeOutcome(exit_code=exit_code, signal=signal, stdout=out.decode("utf-8", "replace"),
                         stderr=stderr, timed_out=timed_out, kind=kind)
