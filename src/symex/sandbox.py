"""Running programs one does not trust, isolated, with bubblewrap (``bwrap``).

The testing service compiles, links and replays strangers' programs; ``symex replay
--sandbox`` does the same for a user who wants it. A :class:`Sandbox` says what such a
process may see and do, and runs it under Debian's ``bwrap`` (what Flatpak uses: user,
mount, PID, network, IPC and UTS namespaces), never a home-made jail:

- it sees the system's ``/usr`` (the toolchain), the Python running symex and symex itself,
  all read-only, the ``readable`` paths read-only, the ``writable`` directories read-write,
  a private ``/tmp`` of bounded size, its own ``/proc`` and a minimal ``/dev``: nothing else
  of the host's filesystem (``hidden`` paths are masked even inside what it may read);
- an empty environment but for ``environment``, ``PATH`` and ``HOME``; no network (a network
  namespace with no interface); its own session, so it cannot reach the caller's terminal;
- an unprivileged user: run by root, the sandbox's setup switches to ``uid`` (``nobody``
  unless given) with ``setpriv``, dropping every capability; run by anyone else, the
  caller's own user in a user namespace;
- limits (:class:`SandboxLimits`): CPU seconds, processes, file size and no core files as
  resource limits (``prlimit``, inside), and memory: an address-space limit where the
  program tolerates one, and the resident memory of all its processes together, watched by
  :meth:`Sandbox.run` (and by the service's scheduler for the processes it starts) and killed
  above the limit (:func:`process_tree_rss`).

:func:`sandbox_problem` says why no sandbox can be made on this machine (no ``bwrap``, user
namespaces refused): callers refuse to run what needs one rather than run it unsandboxed.
``SYMEX_BWRAP`` names another ``bwrap`` executable (it must keep what it runs in /usr visible).
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import site
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import attrs
import psutil

from symex.errors import SymexError

__all__ = ["BWRAP_VARIABLE", "NOBODY", "Sandbox", "SandboxLimits", "SandboxUnavailable",
           "SandboxedRun", "hand_over", "interrupt_process_tree", "kill_process_tree",
           "process_tree_rss", "python_paths", "sandbox_problem"]

#: the environment variable naming the ``bwrap`` to use (default: the one under /usr)
BWRAP_VARIABLE = "SYMEX_BWRAP"
#: the user a root caller's sandbox runs as unless told otherwise
NOBODY = 65534
#: the size of a sandbox's private /tmp (a tmpfs: memory no process's resident size shows)
TMP_BYTES = 256 << 20
#: how often :meth:`Sandbox.run` looks at the memory its processes hold
MEMORY_POLL_SECONDS = 0.05
#: what :meth:`Sandbox.run` keeps of each output stream; the rest is read and dropped
OUTPUT_BYTES = 1 << 20
#: the directories of the system every sandbox sees, read-only (the toolchain, the loader)
SYSTEM_DIRECTORIES = ("/usr",)
#: top-level names that merged-/usr systems make links into /usr (else directories, bound)
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: single files of /etc a toolchain reads: the dynamic loader's cache, the alternatives
#: system's links (``cc``); no account, host or secret is among them
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives")


class SandboxUnavailable(SymexError):
    """No sandbox can be made on this machine (the message says why and what to install)."""


@attrs.frozen
class SandboxLimits:
    """What a sandboxed process and its children may use (None: no limit)."""

    memory_mb: int | None = None
    """Resident memory of all its processes together, watched; and, where
    ``address_space``, each process's address space (RLIMIT_AS)."""
    cpu_seconds: int | None = None
    """CPU time of each process (RLIMIT_CPU: SIGXCPU, then SIGKILL a second later)."""
    processes: int | None = None
    """Processes and threads of the sandbox's user (RLIMIT_NPROC)."""
    file_size_mb: int | None = None
    """The largest file it may write (RLIMIT_FSIZE: SIGXFSZ)."""
    address_space: bool = True
    """Whether ``memory_mb`` is also an address-space limit: not for AddressSanitizer's
    programs, which reserve terabytes of shadow memory at start."""


@attrs.frozen
class SandboxedRun:
    """How a :meth:`Sandbox.run` ended."""

    returncode: int
    """The exit status, or minus the signal that killed it (as :mod:`subprocess` says)."""
    stdout: bytes
    stderr: bytes
    """At most :data:`OUTPUT_BYTES` of each; the rest was read and dropped."""
    timed_out: bool = False
    """Killed at its time limit."""
    over_memory: bool = False
    """Killed for holding more resident memory than its limit."""


def _process_tree(pid: int) -> list[psutil.Process]:
    """Process ``pid`` and its descendants now (none once it is gone)."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def process_tree_rss(pid: int) -> int:
    """Bytes of resident memory held by process ``pid`` and all its descendants (0 once it
    is gone). A sandbox with its own PID namespace keeps every process it starts among the
    descendants of its ``bwrap``: an orphan is adopted by the namespace's first process."""
    total = 0
    for process in _process_tree(pid):
        try:
            total += process.memory_info().rss
        except psutil.Error:
            pass  # ended while we looked
    return total


def interrupt_process_tree(pid: int, signum: int = signal.SIGINT) -> None:
    """Send ``signum`` to process ``pid`` and its descendants, but to no ``bwrap`` among them:
    a sandbox's processes hear it, while its ``bwrap`` (which would die of it, and take them
    with it) goes on waiting for them."""
    for process in _process_tree(pid):
        try:
            if process.name() != "bwrap":
                process.send_signal(signum)
        except psutil.Error:
            pass


def kill_process_tree(pid: int) -> None:
    """SIGKILL process ``pid`` and every descendant it has now."""
    for process in _process_tree(pid):
        try:
            process.kill()
        except psutil.Error:
            pass


def hand_over(path: Path, uid: int) -> None:
    """Make directory ``path`` and what it holds the sandbox user's, so that a sandbox run
    by root (as ``uid``) can write there; a caller that is not root keeps it (its sandbox
    runs as itself)."""
    if os.geteuid() != 0:
        return
    os.chown(path, uid, uid)
    for directory, names, files in os.walk(path):
        for name in (*names, *files):
            os.chown(os.path.join(directory, name), uid, uid, follow_symlinks=False)


def python_paths() -> tuple[Path, ...]:
    """What a sandboxed ``python -m symex...`` must read: the interpreter's installation, the
    virtual environment's, the site-packages directories and the directory symex is imported
    from (an editable install's source tree). Never the working directory or ``PYTHONPATH``
    entries, which may be anything."""
    found = {Path(p) for p in (sys.base_prefix, sys.base_exec_prefix, sys.prefix, sys.exec_prefix)}
    found.update(Path(p) for p in site.getsitepackages())
    user_site = site.getusersitepackages()
    if user_site and Path(user_site).is_dir():
        found.add(Path(user_site))
    found.add(_symex_root())
    return tuple(sorted(p.resolve() for p in found if p.is_dir()))


def _symex_root() -> Path:
    """The directory the running symex package is imported from."""
    import symex

    return Path(symex.__file__).resolve().parent.parent


@functools.cache
def _tool(name: str) -> str | None:
    """The path of a host tool the sandbox uses, if it is under /usr (so visible inside)."""
    found = shutil.which(name, path="/usr/bin:/usr/sbin:/bin:/sbin")
    return os.path.realpath(found) if found else None


@attrs.frozen
class _Host:
    """What the probe found this machine allows."""

    bwrap: str
    fresh_proc: bool
    """Whether a sandbox gets a PID namespace and a /proc of its own (not inside another
    sandbox made by root: there it shares its parent sandbox's /proc, read-only)."""


def _probe() -> _Host | str:
    """How sandboxes are made here, or why none can be."""
    if not sys.platform.startswith("linux"):
        return f"sandboxes need Linux namespaces; this is {sys.platform}"
    chosen = os.environ.get(BWRAP_VARIABLE)
    bwrap = (chosen if chosen and os.access(chosen, os.X_OK) else None) if chosen else _tool("bwrap")
    if bwrap is None:
        return ("bubblewrap is not installed (Debian, Ubuntu: apt-get install bubblewrap; "
                "Fedora: dnf install bubblewrap)" +
                (f"; {BWRAP_VARIABLE}={chosen} is not an executable" if chosen else ""))
    for tool in ("prlimit", "setpriv"):
        if _tool(tool) is None:
            return f"{tool} (util-linux) is not installed: apt-get install util-linux"
    problem = ""
    for fresh_proc in (True, False):
        host = _Host(bwrap, fresh_proc)
        command = Sandbox()._command(host, [_tool("prlimit") or "prlimit", "--version"], None,
                                     False)
        try:
            proc = subprocess.run(command, capture_output=True, timeout=60, check=False,
                                  stdin=subprocess.DEVNULL, env=_launch_environment())
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bwrap could not run: {exc}"
        if proc.returncode == 0:
            return host
        said = proc.stderr.decode(errors="replace").strip().splitlines()
        problem = said[-1] if said else f"exit status {proc.returncode}"
    return (f"bwrap cannot make a sandbox here ({problem}): it needs unprivileged user "
            f"namespaces (sysctl kernel.unprivileged_userns_clone=1, or "
            f"user.max_user_namespaces > 0) or root")


@functools.cache
def _host_or_problem() -> _Host | str:
    return _probe()


def sandbox_problem() -> str | None:
    """Why no sandbox can be made on this machine (None: one can). Probed once a process."""
    found = _host_or_problem()
    return found if isinstance(found, str) else None


def _launch_environment() -> dict[str, str]:
    """The environment ``bwrap`` itself starts with (the sandboxed program gets none of it)."""
    return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


def _paths(paths: Iterable[str | os.PathLike[str]]) -> tuple[Path, ...]:
    """A sandbox's directory list, as paths."""
    return tuple(Path(p) for p in paths)


@attrs.frozen
class Sandbox:
    """Where and how an untrusted process runs (module docstring)."""

    readable: tuple[Path, ...] = attrs.field(default=(), converter=_paths)
    """Files and directories it may read, besides the system and Python (:func:`python_paths`)."""
    writable: tuple[Path, ...] = attrs.field(default=(), converter=_paths)
    """Directories it may write (they must exist; run by root, owned by ``uid``)."""
    hidden: tuple[Path, ...] = attrs.field(default=(), converter=_paths)
    """Directories and files masked (an empty directory, an empty file in their place) where
    a readable path holds them."""
    limits: SandboxLimits = SandboxLimits()
    environment: Mapping[str, str] = attrs.field(factory=dict)
    """Variables its environment holds besides ``PATH`` and ``HOME`` (the first writable
    directory, else ``/tmp``)."""
    uid: int = NOBODY
    """The user it runs as when the caller is root (and its group)."""
    python: bool = False
    """Whether it runs symex's Python (:func:`python_paths` become readable)."""
    python_path: tuple[Path, ...] = attrs.field(default=(), converter=_paths)
    """More directories its Python imports from, after symex's (readable, and on its
    ``PYTHONPATH``): where installed plug-ins live outside :func:`python_paths`."""
    network: bool = False
    """Whether it keeps the host's network (a job whose workers run on a Ray cluster);
    otherwise it has a network namespace with no interface."""

    def command(self, argv: Sequence[str | bytes], cwd: str | os.PathLike[str] | None = None) -> list[str | bytes]:
        """The command line that runs ``argv`` in this sandbox, in directory ``cwd`` (one it
        can see). Raises :class:`SandboxUnavailable` where no sandbox can be made."""
        host = _host_or_problem()
        if isinstance(host, str):
            raise SandboxUnavailable(f"no sandbox can be made: {host}")
        return self._command(host, argv, cwd, self.python)

    def _command(self, host: _Host, argv: Sequence[str | bytes],
                 cwd: str | os.PathLike[str] | None, python_visible: bool) -> list[str | bytes]:
        root = os.geteuid() == 0
        if root:
            self._check_readable()
        words: list[str | bytes] = [host.bwrap, "--die-with-parent", "--new-session", "--clearenv",
                                    "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        if not self.network:
            words.append("--unshare-net")
        if not root:
            words.append("--unshare-user")
        if host.fresh_proc:
            words += ["--unshare-pid", "--proc", "/proc"]
        else:
            words += ["--ro-bind", "/proc", "/proc"]
        words += ["--dev", "/dev", "--perms", "1777", "--size", str(TMP_BYTES), "--tmpfs", "/tmp"]
        for directory in SYSTEM_DIRECTORIES:
            words += ["--ro-bind", directory, directory]
        for link in SYSTEM_LINKS:
            if os.path.islink(link):
                words += ["--symlink", os.readlink(link), link]
            elif os.path.isdir(link):
                words += ["--ro-bind", link, link]
        words += ["--perms", "0755", "--dir", "/etc"]
        for name in SYSTEM_FILES:
            words += ["--ro-bind-try", name, name]
        made = {Path("/"), Path("/tmp"), Path("/etc"), Path("/proc"), Path("/dev"),
                *(Path(d) for d in SYSTEM_DIRECTORIES), *(Path(d) for d in SYSTEM_LINKS)}
        bound: list[Path] = [Path(d) for d in SYSTEM_DIRECTORIES]
        readable = [*(python_paths() if python_visible else ()),
                    *(self.python_path if python_visible else ()), *self.readable]
        for path in _outermost(p.resolve() for p in readable):
            if any(path.is_relative_to(b) for b in bound):
                continue
            words += _parents(path, made, bound)
            words += ["--ro-bind", str(path), str(path)]
            bound.append(path)
        masked: list[Path] = []
        for path in (p.resolve() for p in self.hidden):
            if not any(path.is_relative_to(b) for b in bound) or \
                    any(b.is_relative_to(path) for b in bound):
                continue  # not visible anyway, or holding what must be
            if path.is_dir():
                words += ["--tmpfs", str(path)]
                masked.append(path)
            elif path.exists():
                words += ["--ro-bind", "/dev/null", str(path)]
        for path in (p.resolve() for p in self.writable):
            words += _parents(path, made, [b for b in bound if not any(
                m.is_relative_to(b) for m in masked)])
            words += ["--bind", str(path), str(path)]
            bound.append(path)
        home = str(self.writable[0].resolve()) if self.writable else "/tmp"
        environment = {**_launch_environment(), "HOME": home, "TMPDIR": "/tmp",
                       **self.environment}
        if self.python:
            # the symex this process runs, however it was found (an install, an editable
            # one, PYTHONPATH): a sandbox's python imports the same
            environment["PYTHONPATH"] = os.pathsep.join(
                [str(_symex_root()), *(str(p.resolve()) for p in self.python_path)])
        for name, value in environment.items():
            words += ["--setenv", name, value]
        if cwd is not None:
            words += ["--chdir", str(Path(cwd).resolve())]
        words.append("--")
        if root:
            words += [_tool("setpriv") or "setpriv", f"--reuid={self.uid}", f"--regid={self.uid}",
                      "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
                      "--no-new-privs", "--"]
        words += [_tool("prlimit") or "prlimit", *self._rlimits(), "--", *argv]
        return words

    def _check_readable(self) -> None:
        """Run by root, the sandbox's user reads what it is shown by the permissions anybody
        has (the directories leading there are the sandbox's own): say what it cannot."""
        for path in (*self.readable, *(self.python_path if self.python else ())):
            try:
                info = path.stat()
            except OSError:
                continue  # not there: the program will say so
            wanted = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(info.st_mode) else 0)
            if info.st_uid != self.uid and info.st_mode & wanted != wanted:
                raise SymexError(f"the sandbox runs as an unprivileged user (uid {self.uid}), "
                                 f"which cannot read {path}: make it readable by others "
                                 f"(chmod o+rX {path}), or run symex as its owner")

    def _rlimits(self) -> list[str]:
        limits = self.limits
        words = ["--core=0"]
        if limits.cpu_seconds is not None:
            words.append(f"--cpu={limits.cpu_seconds}:{limits.cpu_seconds + 1}")
        if limits.processes is not None:
            words.append(f"--nproc={limits.processes}")
        if limits.file_size_mb is not None:
            words.append(f"--fsize={limits.file_size_mb << 20}")
        if limits.memory_mb is not None and limits.address_space:
            words.append(f"--as={limits.memory_mb << 20}")
        return words

    def popen(self, argv: Sequence[str | bytes], *, cwd: str | os.PathLike[str] | None = None,
              stdin: Any = subprocess.DEVNULL, stdout: Any = None,
              stderr: Any = None) -> subprocess.Popen[bytes]:
        """Start ``argv`` in the sandbox (a session of its own); the caller watches its memory
        (:func:`process_tree_rss`) and waits for it."""
        return subprocess.Popen(self.command(argv, cwd), stdin=stdin, stdout=stdout,
                                stderr=stderr, env=_launch_environment(), start_new_session=True)

    def run(self, argv: Sequence[str | bytes], *, cwd: str | os.PathLike[str] | None = None,
            timeout: float | None = None, input: bytes | None = None) -> SandboxedRun:  # noqa: A002
        """Run ``argv`` in the sandbox to its end, its time limit (``timeout`` seconds of wall
        clock) or its memory limit, whichever comes first; ``input`` is its standard input
        (None: end of file at once). Its exit status is told apart from a death by signal
        (``bwrap`` alone reports signal N as exit status 128 + N): a small Python parent
        inside the sandbox waits for it and writes how it ended to a pipe of its own."""
        status_read, status_write = os.pipe()
        try:
            host = _host_or_problem()
            if isinstance(host, str):
                raise SandboxUnavailable(f"no sandbox can be made: {host}")
            # the reporter is Python (isolated: it reads no PYTHON* variable), so the
            # interpreter is visible; the program's environment stays as given
            command = self._command(host, [sys.executable, "-I", "-S", "-c", _STATUS_REPORTER,
                                           str(status_write), *argv], cwd, True)
            process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL if input is None else subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_launch_environment(),
                start_new_session=True, pass_fds=(status_write,))
        finally:
            os.close(status_write)
        with os.fdopen(status_read, "rb") as status_pipe:
            ended = self._watch(process, timeout, input)
            said = status_pipe.read(64).decode(errors="replace").split()
        returncode = process.returncode
        if len(said) == 2 and said[1].isdigit():
            returncode = -int(said[1]) if said[0] == "signal" else int(said[1])
        return attrs.evolve(ended, returncode=returncode)

    def _watch(self, process: subprocess.Popen[bytes], timeout: float | None,
               input: bytes | None) -> SandboxedRun:  # noqa: A002
        """Wait for ``process`` while keeping its time and memory limits; its outputs."""
        assert process.stdout is not None and process.stderr is not None
        outputs: list[bytearray] = [bytearray(), bytearray()]
        readers = [threading.Thread(target=_drain, args=(stream, kept), daemon=True)
                   for stream, kept in zip((process.stdout, process.stderr), outputs)]
        for reader in readers:
            reader.start()
        if input is not None:
            threading.Thread(target=_feed, args=(process.stdin, input), daemon=True).start()
        deadline = None if timeout is None else time.monotonic() + timeout
        limit = None if self.limits.memory_mb is None else self.limits.memory_mb << 20
        timed_out = over_memory = False
        while process.poll() is None:
            if limit is not None and process_tree_rss(process.pid) > limit:
                over_memory = True
                break
            if deadline is not None and time.monotonic() > deadline:
                timed_out = True
                break
            try:
                process.wait(MEMORY_POLL_SECONDS)
            except subprocess.TimeoutExpired:
                pass
        if process.poll() is None:
            kill_process_tree(process.pid)
            process.wait()
        for reader in readers:
            reader.join()
        return SandboxedRun(process.returncode, bytes(outputs[0]), bytes(outputs[1]),
                            timed_out, over_memory)


#: the sandboxed parent of :meth:`Sandbox.run`'s program: runs it, waits, and writes
#: ``exit N`` or ``signal N`` to the descriptor it is given (which the program does not inherit)
_STATUS_REPORTER = """\
import os, sys
fd = int(sys.argv[1])
os.set_inheritable(fd, False)
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    except OSError as exc:
        os.write(2, f"cannot run {sys.argv[2]}: {exc.strerror}\\n".encode())
    os._exit(127)
status = os.waitpid(pid, 0)[1]
ended = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit {os.WEXITSTATUS(status)}"
os.write(fd, ended.encode())
"""


def _drain(stream: IO[bytes], kept: bytearray) -> None:
    """Read ``stream`` to its end, keeping its first :data:`OUTPUT_BYTES`."""
    with stream:
        while chunk := stream.read(65536):
            room = OUTPUT_BYTES - len(kept)
            if room > 0:
                kept += chunk[:room]


def _feed(stream: IO[bytes] | None, data: bytes) -> None:
    """Write ``data`` to a process's standard input and close it (it may stop reading)."""
    if stream is None:
        return
    try:
        with stream:
            stream.write(data)
    except OSError:
        pass


def _outermost(paths: Iterable[Path]) -> list[Path]:
    """``paths`` without those inside another of them, sorted."""
    kept: list[Path] = []
    for path in sorted(set(paths)):
        if not any(path.is_relative_to(k) for k in kept):
            kept.append(path)
    return kept


def _parents(path: Path, made: set[Path], bound: list[Path]) -> list[str]:
    """bwrap words making ``path``'s missing parent directories, each readable by anyone
    (bwrap makes them 0700, which an unprivileged user could not pass through)."""
    words: list[str] = []
    for parent in reversed(path.parents):
        if parent in made or any(parent.is_relative_to(b) for b in bound):
            continue
        made.add(parent)
        words += ["--perms", "0755", "--dir", str(parent)]
    return words
