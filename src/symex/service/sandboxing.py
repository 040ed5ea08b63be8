"""How the service isolates what it runs on a tenant's behalf.

Every job's process (compiling its program, running it symbolically, building and replaying
its crashes natively) and the compile check of an upload run in a
:class:`~symex.sandbox.Sandbox` (bubblewrap) that sees the job's directory, its only
writable place, and, read-only, the system's toolchain, the Python running symex and symex:
not the database, not the other jobs, not the service's directory. It has an empty
environment, no network (but for a job whose workers run on a Ray cluster), runs as an
unprivileged user (as root: a user of the job's own, :func:`job_uid`, so one job's processes
never count against another's limit), and under limits: memory (the scheduler watches the
resident memory of all its processes: :data:`JobIsolation.memory_mb`), CPU time, processes and
file size. Inside it, the native build and replay of a crash run in a sandbox of their own
(:class:`~symex.replay.NativeSandbox`), which sees only the program and a scratch directory.

Where no sandbox can be made (:func:`~symex.sandbox.sandbox_problem`), the service compiles
no C (compiling reads files by name: ``#include "/etc/shadow"``) and replays nothing; IR
uploads still run, their reports quoting source files only from inside the job's directory.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import attrs

from symex.errors import SymexError
from symex.ir.compile import default_cache_dir, find_compiler, shipped_headers_digest
from symex.ir.link import runtime_sources
from symex.ir.musl import CACHE_VARIABLE, musl_cache_root
from symex.memory_cap import default_max_memory_mb
from symex.plugins import plugin_directories
from symex.replay import NativeSandbox
from symex.sandbox import Sandbox, SandboxLimits, hand_over, python_paths, sandbox_problem

__all__ = ["CHECK_SECONDS", "JobIsolation", "default_job_memory_mb", "job_diagnostics", "job_uid",
           "shared_musl", "warm_caches"]

#: uids of the jobs' sandboxes when the server runs as root: job J runs as
#: ``JOB_UID_BASE + J % JOB_UIDS`` (no account has them; files they write stay theirs)
JOB_UID_BASE = 1_800_000_000
JOB_UIDS = 100_000_000
#: seconds the compile check of an upload may take
CHECK_SECONDS = 120.0
#: processes and threads of a job's sandbox: the job's process, its compiler, a replay's
#: processes; and per worker
JOB_PROCESSES = 128
WORKER_PROCESSES = 32
#: the largest file a job may write (its recorded tree, run.stats)
JOB_FILE_MB = 4096
#: what of a job's memory its run may hold (``max_memory``) and each native replay of a
#: crash (AddressSanitizer's limit; the replay's own sandbox kills it at twice that)
RUN_SHARE = 0.6
REPLAY_SHARE = 0.15
#: the service's variables a job's process keeps (the compiler choice, so that the check and
#: the run compile alike); every other variable of the server stays outside
KEPT_VARIABLES = ("SYMEX_CC",)


def job_uid(job_id: int) -> int:
    """The user job ``job_id``'s sandbox runs as when the server runs as root."""
    return JOB_UID_BASE + job_id % JOB_UIDS


def default_job_memory_mb(max_running: int) -> int:
    """Memory each of ``max_running`` jobs may hold: what a run may hold by default (three
    quarters of the machine's), shared."""
    return max(512, default_max_memory_mb() // max(1, max_running))


def _plugin_path() -> tuple[Path, ...]:
    """The plug-ins' directories a sandbox would not otherwise see."""
    seen = python_paths()
    return tuple(p for p in plugin_directories() if not any(p.is_relative_to(q) for q in seen))


@attrs.frozen
class JobIsolation:
    """The sandboxes of a service whose jobs live under ``storage`` (its database ``database``),
    each job's processes holding at most ``memory_mb`` together."""

    storage: Path
    database: Path
    memory_mb: int
    plugin_path: tuple[Path, ...] = attrs.field(factory=_plugin_path)
    """Where installed plug-ins live outside Python's own directories (a ``pip install
    --target`` directory on the server's ``PYTHONPATH``): a job's Python imports from them
    too, so its runs find the plug-ins the server finds (read when the service starts)."""

    @property
    def problem(self) -> str | None:
        """Why no sandbox can be made here (None: jobs run sandboxed)."""
        return sandbox_problem()

    @property
    def run_memory_mb(self) -> int:
        """The memory cap of a job's run (``max_memory``): it stops forking near it."""
        return max(64, int(self.memory_mb * RUN_SHARE))

    @property
    def replay(self) -> NativeSandbox:
        """How a job's crashes are replayed (inside its sandbox, in one of their own)."""
        return NativeSandbox(memory_mb=max(64, int(self.memory_mb * REPLAY_SHARE)))

    def sandbox(self, where: Path, job_id: int, *, workers: int = 1, cpu_seconds: int | None = None,
                network: bool = False) -> Sandbox:
        """The sandbox of job ``job_id``'s processes, whose directory is ``where``."""
        cache = where / ".cache"
        environment = {"SYMEX_CACHE_DIR": str(cache), "ZIG_GLOBAL_CACHE_DIR": str(cache / "zig"),
                       "ZIG_LOCAL_CACHE_DIR": str(cache / "zig"), "PYTHONDONTWRITEBYTECODE": "1"}
        environment.update((name, os.environ[name]) for name in KEPT_VARIABLES
                           if name in os.environ)
        musl = _musl[0] if _musl else None
        if musl is not None:
            environment[CACHE_VARIABLE] = str(musl)
        limits = SandboxLimits(memory_mb=self.memory_mb, cpu_seconds=cpu_seconds,
                               processes=JOB_PROCESSES + WORKER_PROCESSES * workers,
                               file_size_mb=JOB_FILE_MB, address_space=False)
        return Sandbox(readable=() if musl is None else (musl,), writable=(where,),
                       hidden=(self.storage, self.database, self.database.parent),
                       limits=limits, environment=environment, uid=job_uid(job_id), python=True,
                       python_path=self.plugin_path, network=network)

    def prepare(self, where: Path, job_id: int) -> None:
        """Give job ``job_id``'s directory to its sandbox's user (as root), with a copy of the
        warm caches every job starts from (:func:`warm_caches`) if it has none yet."""
        cache = where / ".cache"
        if not cache.exists() and self.problem is None:
            try:
                shutil.copytree(warm_caches(), cache, symlinks=True)
            except (OSError, SymexError):
                pass  # a cold cache: the job compiles symex's library itself, slower
            shared_musl()
        hand_over(where, job_uid(job_id))

    def check_command(self, program: str, flags: tuple[str, ...]) -> list[str]:
        """The compile check of an upload (:mod:`symex.service.compile_check`)."""
        return [sys.executable, "-m", "symex.service.compile_check", program, *flags]


_warm: list[Path] = []
_warm_lock = threading.Lock()


def warm_caches() -> Path:
    """A directory holding what every job would otherwise compile first, in its own cache:
    symex's C library as IR (a dozen files) and zig's own cache (its first ``zig cc`` of a
    machine takes seconds). Made once per machine, compiler and symex, outside any sandbox
    from symex's own sources and a trivial program (nothing of a tenant's), in a process of
    its own (the caches are chosen by environment variables); each job gets a copy, so no
    job ever writes what another reads."""
    with _warm_lock:
        if _warm:
            return _warm[0]
        compiler = find_compiler()
        digest = hashlib.sha256("\0".join([compiler.version, *compiler.command,
                                            shipped_headers_digest(),
                                            *(p.read_text() for p in runtime_sources())])
                                .encode()).hexdigest()[:24]
        target = default_cache_dir().parent / f"service-warm-{digest}"
        if not (target / WARM_DONE).is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            building = Path(tempfile.mkdtemp(prefix=".service-warm-", dir=target.parent))
            try:
                # it calls the library, so that all of it is compiled
                (building / "trivial.c").write_text(
                    "#include <string.h>\nint main(int argc, char **argv) { "
                    "return (int)strlen(argv[0]); }\n")
                environment = {**os.environ, "SYMEX_CACHE_DIR": str(building / "cache"),
                               "ZIG_GLOBAL_CACHE_DIR": str(building / "cache" / "zig"),
                               "ZIG_LOCAL_CACHE_DIR": str(building / "cache" / "zig")}
                made = subprocess.run([sys.executable, "-c", "import symex; symex.compile("
                                       f"{str(building / 'trivial.c')!r})"], env=environment,
                                      capture_output=True, text=True, timeout=600, check=False)
                if made.returncode != 0:
                    raise SymexError(f"warming the jobs' caches failed: {made.stderr[-500:]}")
                (building / "cache" / WARM_DONE).write_text("")
                shutil.rmtree(target, ignore_errors=True)
                os.replace(building / "cache", target)
            finally:
                shutil.rmtree(building, ignore_errors=True)
        _warm.append(target)
        return target


#: the file that says a warm cache is complete
WARM_DONE = ".complete"

_musl: list[Path | None] = []


def shared_musl() -> Path | None:
    """The server's build of musl (:mod:`symex.ir.musl`), which every job's sandbox reads:
    a program calling a function symex's own library lacks links musl, and a job can neither
    download its source (no network) nor spend minutes building it. Built once per machine,
    outside any sandbox, in a process of its own, the first time a job is prepared; None
    where it cannot be built (no network and no ``SYMEX_MUSL_SOURCE``: such jobs fail
    saying so, as ``symex run`` would)."""
    with _warm_lock:
        if not _musl:
            made = subprocess.run([sys.executable, "-c", "from symex.ir.musl import musl_library; "
                                   "musl_library()"], capture_output=True, text=True,
                                  timeout=3600, check=False)
            # a wheel's prebuilt musl needs no cache (nothing is built there): none to show
            root = musl_cache_root().resolve()
            _musl.append(root if made.returncode == 0 and root.is_dir() else None)
        return _musl[0]


#: a compiler's diagnostic line that names a file: ``PATH:LINE[:COL]: ...``, or an include
#: chain's ``In file included from PATH:LINE:``
_LOCATED = re.compile(r"^(?:In file included from |\s+from )?(?P<path>[^:\s][^:]*):(?P<line>\d+)(?::\d+)?:"
                      r"(?P<rest>.*)$")
_SEVERITY = re.compile(r"^\s*(fatal error|error|warning|note):")


def job_diagnostics(text: str, where: Path) -> str:
    """A compiler's diagnostics about a job's upload, as the tenant may see them: paths in
    the job's directory by their names, and nothing quoted from any file outside it (a
    diagnostic located there keeps its place and kind, not its message or source lines)."""
    inside = {str(where), str(where.resolve())}
    shown: list[str] = []
    outside = False
    for line in text.splitlines():
        located = _LOCATED.match(line)
        if located is not None:
            path = located.group("path")
            outside = path.startswith("/") and not any(
                path == root or path.startswith(root + os.sep) for root in inside)
            if outside:
                severity = _SEVERITY.match(located.group("rest"))
                kind = f" {severity.group(1)}:" if severity else ""
                shown.append(f"{path}:{located.group('line')}:{kind} (in a file outside the "
                             f"job: not shown)")
                continue
        elif outside:
            continue  # the quoted source line and its marker, from that file
        shown.append(line)
    result = "\n".join(shown)
    for root in sorted(inside, key=len, reverse=True):
        result = result.replace(root + os.sep, "").replace(root, ".")
    return result
