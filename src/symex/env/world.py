"""The program's world at the system calls: files, directories and descriptors, per state.

Each state holds a :class:`PosixWorld` (``State.posix``): immutable maps from path to file
node, node to contents, and descriptor to open file, so forks share the world and a state
that opens, reads or writes replaces its own reference. File contents are tuples of bytes,
each an ``int`` or an 8-bit expression, so symbolic file data is copied into program memory
as it is, without concretizing.

Paths. The root is the starting working directory (``getcwd`` says "/"); a path is held by
its key, the normalised path from the root without the leading slash (``A``,
``htdocs/A``, ``etc/passwd``; the root itself is ``.``), so ``/A``, ``./A`` and ``d/../A``
name one file, and a path relative to the working directory (``PosixWorld.cwd``, which
``chdir`` moves) resolves to the same key (:func:`resolve`). ``..`` of the root is the root.
A directory is a node whose mode says so; it lists the keys one level below it
(:func:`directory_entries`). The system's own files (``SYSTEM_FILES``) and host files named
by an absolute path are there to be opened, not listed, as KLEE's model lists only the
working directory's files: the directories every host has (``HOST_DIRECTORIES``: ``/tmp``,
where mktemp and mkstemp make files, ``/etc`` and ``/dev``, which holds ``/dev/null``)
exist, but the root does not list them; other directories of host files do not exist.
A symbolic link is a node of kind ``S_IFLNK`` whose data is its target; a path through
links is looked up component by component (:func:`lookup`).

The calls on this world are :mod:`symex.env.posix`'s (files, descriptors) and
:mod:`symex.env.directories`'s (mkdir, rmdir, chdir, getdents).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import attrs
import immutables

from symex import expr as E
from symex.core.interpreter.machine import StateView
from symex.core.memory.objects import ObjectKind
from symex.core.state import State
from symex.errors import ConfigError
from symex.symargs import FAILURE_OBJECTS, SYM_STDOUT_SIZE, ArgvSpec

__all__ = ["DIRENT_TYPES", "HOST_DIRECTORIES", "MAX_FDS", "MAX_LINKS", "NULL_NODE", "STAT_SIZE", "SYSTEM_FILES",
           "FileNode", "OpenFile", "PosixSetup", "PosixWorld", "directory_entries", "inode", "install_world",
           "lookup", "lowest_free_fd", "parent_of", "resolve", "world_of"]

#: sizeof(struct stat) on x86-64 Linux (glibc), the size of KLEE's ``*-stat`` objects
STAT_SIZE = 144

S_IFIFO, S_IFCHR, S_IFDIR, S_IFREG, S_IFLNK = 0o010000, 0o020000, 0o040000, 0o100000, 0o120000
O_ACCMODE, O_WRONLY, O_RDWR = 3, 1, 2
O_CREAT, O_EXCL, O_TRUNC, O_APPEND = 0o100, 0o200, 0o1000, 0o2000
O_DIRECTORY, O_NOFOLLOW = 0o200000, 0o400000
AT_SYMLINK_NOFOLLOW = 0x100
AT_FDCWD = -100
ENOENT, EIO, EBADF, EACCES, EEXIST, EINVAL, EMFILE, ENOTTY, ESPIPE = 2, 5, 9, 13, 17, 22, 24, 25, 29
ENOTDIR, EISDIR, EPERM, ELOOP = 20, 21, 1, 40
EBUSY, ERANGE, ENOTEMPTY = 16, 34, 39
S_IFMT = 0o170000
#: struct dirent64's d_type of each kind of node
DIRENT_TYPES = {S_IFIFO: 1, S_IFCHR: 2, S_IFDIR: 4, S_IFREG: 8, S_IFLNK: 10}
ENOSYS = 38

#: descriptors a state may hold open at once
MAX_FDS = 1024
#: symbolic links one lookup follows before it fails with ELOOP (Linux's MAXSYMLINKS)
MAX_LINKS = 40

#: node ids of the two output sinks (the path's stdout and stderr)
STDOUT_NODE, STDERR_NODE = -1, -2
#: the root, the starting working directory (getcwd says "/"): it holds the symbolic files
#: A, B, ... (without --sym-dir) and what the program creates there
DIRECTORY_NODE = -3
#: /dev/null: reads find its end, writes vanish (gnulib's *_safer functions open it to keep
#: the standard descriptors taken: without it shuf -o failed after closing stdin)
NULL_NODE = -4


@attrs.frozen
class FileNode:
    """The contents of one file: bytes as ints or 8-bit expressions."""

    data: tuple[Any, ...]
    mode: int = S_IFREG | 0o644
    stat_address: int = 0
    """Address of the file's symbolic ``*-stat`` object (0 for concrete files)."""
    read_only: bool = False
    """A host file: opening it for writing fails with EACCES."""
    unlisted: bool = False
    """One of the host's own directories (``HOST_DIRECTORIES``): it exists, but its parent,
    the root, does not list it."""


#: a directory as the world makes one (the root, a --sym-dir's, a host file's)
_DIRECTORY = FileNode((), mode=S_IFDIR | 0o755)

#: the system's own files every world has, the same on every machine: the user database with
#: root alone, as on a minimal Linux (musl's getpwnam/getgrgid read them: `id root`, `groups
#: root` and `ls -l`'s owner names work, and replay natively on any Linux, where root is 0),
#: the mount table with one file system at the root, the ext4 one statfs describes (df
#: reads it: without it every df failed, "cannot read table of mounted file systems"), and
#: a machine up for an hour, idle (uptime: without it "couldn't get boot time")
SYSTEM_FILES = {"/etc/passwd": b"root:x:0:0:root:/root:/bin/sh\n", "/etc/group": b"root:x:0:\n",
                "/proc/self/mountinfo": b"1 0 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n",
                "/proc/uptime": b"3600.00 7200.00\n", "/proc/loadavg": b"0.00 0.00 0.00 1/100 100\n"}

#: the directories every Linux host has that programs name by absolute path, with their
#: modes: /tmp, where a path a program makes with mktemp, mkstemp or mkdtemp is made (it
#: replays natively so), /etc, which holds the system files, and /dev, which holds null.
#: The root stands for the working directory, so it does not list them (a native replay's
#: working directory has only the symbolic files), and a symbolic name does not spell them.
HOST_DIRECTORIES = {"/dev": S_IFDIR | 0o755, "/etc": S_IFDIR | 0o755, "/tmp": S_IFDIR | 0o1777}


@attrs.frozen
class OpenFile:
    """One open file description: which node, where, and how it was opened."""

    node: int
    offset: int = 0
    readable: bool = True
    writable: bool = False
    append: bool = False
    endpoint: int = 0
    """A pipe end or socket (``PosixWorld.endpoints``, env.network); 0 for a file."""
    nonblocking: bool = False
    """``O_NONBLOCK``: a call that would block fails with EAGAIN instead."""
    path: str = ""
    """The key it was opened by ("" for the standard streams, pipes, sockets): what a
    directory descriptor lists, and where ``openat``/``fchdir`` start from."""


_EMPTY: immutables.Map[Any, Any] = immutables.Map()


@attrs.frozen
class PosixWorld:
    """A state's files and descriptors (persistent maps; change by replacing)."""

    names: immutables.Map[str, int]
    nodes: immutables.Map[int, FileNode]
    fds: immutables.Map[int, int]
    """descriptor -> open file description (dup'ed descriptors share one, and its offset)"""
    descriptions: immutables.Map[int, OpenFile]
    next_node: int
    next_description: int
    endpoints: immutables.Map[int, Any] = _EMPTY
    """Pipe ends and sockets by id (env.endpoints.Endpoint)."""
    bound: immutables.Map[Any, int] = _EMPTY
    """Socket addresses in use -> the endpoint bound there."""
    next_endpoint: int = 1
    packets: tuple[int, int] | None = None
    """``--sym-packets COUNT SIZE`` not delivered yet (env.network)."""
    fragments: int = 0
    """``--sym-fragments N``: how many more received segments this path may split."""
    failures_left: int = 0
    """``--max-fail N``: how many more calls this path may fail."""
    calls: tuple[int, ...] = (0, 0, 0)
    """How many read, write and close calls the path made (numbering them for their
    ``*_fail`` object)."""
    fail_values: tuple[Any, ...] = ()
    """The 32-bit values of the objects ``read_fail``, ``write_fail``, ``close_fail``."""
    cwd: str = "."
    """The working directory's key (``chdir`` moves it)."""
    linked: bool = False
    """Whether the path has made a symbolic link: until it has, a path is looked up by its
    spelling alone (:func:`lookup`)."""
    session_over: str | None = None
    """Why no input can reach the program any more and what it was given has been answered
    (env.network: it closed the ``--sym-packets`` client's connection); the path then ends,
    completed, the next time every thread waits (core.scheduling)."""

    def with_fds(self, fds: immutables.Map[int, int]) -> PosixWorld:
        """The world with another process's descriptor table (core.scheduling)."""
        return attrs.evolve(self, fds=fds)

    def opened(self, fd: int) -> OpenFile | None:
        """The open file description of ``fd``, or None if ``fd`` is not open."""
        key = self.fds.get(fd)
        return None if key is None else self.descriptions[key]

    def moved(self, fd: int, offset: int) -> PosixWorld:
        """The world with ``fd``'s description at ``offset``."""
        key = self.fds[fd]
        return attrs.evolve(self, descriptions=self.descriptions.set(
            key, attrs.evolve(self.descriptions[key], offset=offset)))


@attrs.frozen
class PosixSetup:
    """What the exploration's initial world holds besides the symbolic specs: concrete
    standard input, and host files that may be read (path -> contents)."""

    stdin: bytes = b""
    host_files: tuple[tuple[str, bytes], ...] = ()

    @classmethod
    def make(cls, stdin: bytes | str | None, host_files: Iterable[str | os.PathLike[str]] | None) -> PosixSetup:
        """Read the host files now (a missing one is a ConfigError)."""
        if isinstance(stdin, str):
            stdin = stdin.encode()
        files = []
        for path in host_files or ():
            try:
                with open(path, "rb") as handle:
                    files.append((os.fspath(path), handle.read()))
            except OSError as exc:
                raise ConfigError(f"cannot read host file {os.fspath(path)!r}: {exc.strerror}; "
                                  f"pass an existing readable file in host_files") from None
        return cls(stdin or b"", tuple(files))


def resolve(cwd: str, path: str) -> str:
    """The key of ``path`` (absolute, or relative to the working directory ``cwd``, a key)."""
    if not path:
        return path  # "" names no file (ENOENT)
    joined = path if path.startswith("/") or cwd == "." else f"{cwd}/{path}"
    key = os.path.normpath("/" + joined).lstrip("/")  # normpath drops ".." above "/"
    return key or "."


def lookup(world: PosixWorld, cwd: str, path: str, follow: bool = True) -> str | int:
    """The key of ``path`` (absolute, or relative to the directory keyed ``cwd``) as the
    kernel looks it up, component by component: a symbolic link met on the way is replaced
    by its target (relative to the link's directory, or to the root), the last component
    only when ``follow`` or the path ends in a slash (``lstat``, ``unlink``, ``rename`` and
    ``readlink`` name the link itself); ``..`` is taken where the walk stands. ``-ELOOP``
    after :data:`MAX_LINKS` links. A world without links is looked up by spelling
    (:func:`resolve`), the same key."""
    if not world.linked or not path:
        return resolve(cwd, path)
    follow = follow or path.endswith("/")
    pending = path.split("/")[::-1]  # the next component last
    current = "." if path.startswith("/") else cwd
    names, nodes = world.names, world.nodes
    links = 0
    while pending:
        name = pending.pop()
        if name in ("", "."):
            continue
        if name == "..":
            current = parent_of(current)
            continue
        key = name if current == "." else f"{current}/{name}"
        node_id = names.get(key)
        if node_id is not None and nodes[node_id].mode & S_IFMT == S_IFLNK and (follow or any(pending)):
            links += 1
            if links > MAX_LINKS:
                return -ELOOP
            target = bytes(nodes[node_id].data).decode("utf-8", "surrogateescape")
            if target.startswith("/"):
                current = "."
            pending.extend(target.split("/")[::-1])
            continue
        current = key
    return current


def parent_of(key: str) -> str:
    """The key of the directory holding ``key`` (the root's is the root)."""
    parent = os.path.dirname(key)
    return parent or "."


def _make_parents(nodes: dict[int, FileNode], names: dict[str, int], key: str) -> None:
    """The directories above ``key`` (a host file's, a --sym-dir file's), made as needed."""
    parent = parent_of(key)
    missing = []
    while parent != "." and parent not in names:  # the root comes with the standard files
        missing.append(parent)
        parent = parent_of(parent)
    for directory in reversed(missing):
        node = len(nodes) + 1
        nodes[node] = _DIRECTORY
        names[directory] = node


#: where struct stat's three times keep their nanoseconds (st_atim, st_mtim, st_ctim)
_STAT_NANOSECONDS = (80, 96, 112)


def _symbolic_stat(view: StateView, name: str) -> int:
    """A file's symbolic ``*-stat`` object (KLEE's, unconstrained), except that each time's
    nanoseconds are below a second, as every kernel's are: gnulib's utimens checks them
    (``touch -`` failed with EINVAL on stat images no file has)."""
    address, data = _symbolic_object(view, STAT_SIZE, name)
    for offset in _STAT_NANOSECONDS:
        nanoseconds = data[offset + 7]
        for byte in reversed(data[offset:offset + 7]):
            nanoseconds = E.concat(nanoseconds, byte)
        view.state.add_constraint(E.ult(nanoseconds, E.const(1_000_000_000, 64)))
    return address


def _symbolic_object(view: StateView, size: int, name: str) -> tuple[int, list[Any]]:
    state = view.state
    os_ = state.allocate(size, ObjectKind.ARGUMENT, name)
    view.make_symbolic(os_.obj.address, size, name)
    os_ = state.objects[os_.obj.segment]
    return os_.obj.address, os_.read_bytes(0, size)


def install_world(view: StateView, spec: ArgvSpec, setup: PosixSetup) -> None:
    """Give ``state`` its initial world: the symbolic files (``A-data``, ``A-data-stat``...)
    and stdin (``stdin``, ``stdin-stat``) of ``spec`` in KLEE's order, or the concrete stdin
    and host files of ``setup``."""
    state = view.state
    nodes: dict[int, FileNode] = {}
    names: dict[str, int] = {}
    files = spec.sym_files
    if files is not None:
        for k in range(files.count):
            letter = chr(ord("A") + k)
            _, data = _symbolic_object(view, files.size, f"{letter}-data")
            stat = _symbolic_stat(view, f"{letter}-data-stat")
            key = resolve(".", spec.sym_file_path(letter))
            _make_parents(nodes, names, key)
            names[key] = len(nodes) + 1
            nodes[len(nodes) + 1] = FileNode(tuple(data), stat_address=stat)
    sym_stdin = spec.sym_stdin
    if sym_stdin is not None:
        _, data = _symbolic_object(view, sym_stdin.size, "stdin")
        stat = _symbolic_stat(view, "stdin-stat")
        stdin = FileNode(tuple(data), stat_address=stat, read_only=True)
    else:
        stdin = FileNode(tuple(setup.stdin), mode=S_IFIFO | 0o600, read_only=True)
    stdin_node = len(nodes) + 1
    nodes[stdin_node] = stdin
    if spec.sym_stdout:
        # after stdin's objects, as KLEE's klee_init_fds makes them
        _, data = _symbolic_object(view, SYM_STDOUT_SIZE, "stdout")
        stat = _symbolic_stat(view, "stdout-stat")
        nodes[STDOUT_NODE] = FileNode(tuple(data), stat_address=stat)
    else:
        nodes[STDOUT_NODE] = FileNode((), mode=S_IFIFO | 0o600)
    for path, content in setup.host_files:
        node = len(nodes) + 1
        nodes[node] = FileNode(tuple(content), read_only=True)
        if not os.path.isabs(path):
            # data/page.html: in data/, which the program can list and chdir into
            _make_parents(nodes, names, resolve(".", path))
            names[resolve(".", path)] = node
        names[resolve(".", os.path.abspath(path))] = node
    _add_standard_files(nodes, names)
    nodes[STDERR_NODE] = FileNode((), mode=S_IFIFO | 0o600)
    fail_values: list[Any] = []
    if spec.max_fail:
        # after stdout's objects, as KLEE's klee_init_fds makes them
        for name in FAILURE_OBJECTS:
            _, data = _symbolic_object(view, 4, name)
            fail_values.append(E.concat(data[3], E.concat(data[2], E.concat(data[1], data[0]))))
    packets = spec.sym_packets
    fragments = spec.sym_fragments
    state.posix = PosixWorld(immutables.Map(names), immutables.Map(nodes), _STANDARD_FDS,
                             _standard_descriptions(stdin_node), len(nodes) + 1, 3,
                             packets=None if packets is None else (packets.count, packets.size),
                             fragments=0 if fragments is None else fragments.count,
                             failures_left=spec.max_fail, fail_values=tuple(fail_values))


_STANDARD_FDS: immutables.Map[int, int] = immutables.Map({0: 0, 1: 1, 2: 2})


def _add_standard_files(nodes: dict[int, FileNode], names: dict[str, int]) -> None:
    """What every world's file system has: the root (the starting working directory), the
    host's directories, /dev/null and the system files, unless a file of the same name came
    first."""
    nodes[DIRECTORY_NODE] = _DIRECTORY
    names["."] = DIRECTORY_NODE
    for path, mode in HOST_DIRECTORIES.items():
        if resolve(".", path) not in names:
            node = len(nodes) + 1
            nodes[node] = FileNode((), mode=mode, unlisted=True)
            names[resolve(".", path)] = node
    if "dev/null" not in names:
        nodes[NULL_NODE] = FileNode((), mode=S_IFCHR | 0o666)
        names["dev/null"] = NULL_NODE
    for path, text in SYSTEM_FILES.items():
        if resolve(".", path) not in names:
            node = len(nodes) + 1
            nodes[node] = FileNode(tuple(text), read_only=True)
            names[resolve(".", path)] = node


def directory_entries(world: PosixWorld, directory: str = ".") -> list[tuple[str, int]]:
    """The entries of the directory keyed ``directory``, (name, node), by name."""
    nodes = world.nodes
    return [(os.path.basename(key), node) for key, node in sorted(world.names.items())
            if key != "." and parent_of(key) == directory and not nodes[node].unlisted]


def inode(node_id: int) -> int:
    """A node's inode number (stat's st_ino, readdir's d_ino)."""
    return 1000 + node_id if node_id > 0 else 10 - node_id


def _standard_descriptions(stdin_node: int) -> immutables.Map[int, OpenFile]:
    return immutables.Map({0: OpenFile(stdin_node),
                           1: OpenFile(STDOUT_NODE, readable=False, writable=True),
                           2: OpenFile(STDERR_NODE, readable=False, writable=True)})


def world_of(state: State) -> PosixWorld:
    """The state's world, made (empty stdin, standard outputs) if the state has none."""
    world = state.posix
    if world is None:
        # a state started without install_world (a caller-made entry state): empty stdin
        nodes = {1: FileNode((), mode=S_IFIFO | 0o600, read_only=True),
                 STDOUT_NODE: FileNode((), mode=S_IFIFO | 0o600),
                 STDERR_NODE: FileNode((), mode=S_IFIFO | 0o600)}
        names: dict[str, int] = {}
        _add_standard_files(nodes, names)
        world = state.posix = PosixWorld(immutables.Map(names), immutables.Map(nodes),
                                         _STANDARD_FDS, _standard_descriptions(1),
                                         len(nodes) + 1, 3)
    return world


def lowest_free_fd(world: PosixWorld, low: int = 0) -> int:
    """The lowest descriptor from ``low`` up that is not open (POSIX's rule for new ones)."""
    fd = low
    while fd in world.fds:
        fd += 1
    return fd


