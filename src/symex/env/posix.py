"""The program's files and standard streams: a per-state file-descriptor table and the system
calls over it, with KLEE's POSIX-runtime meanings.

Each state holds a :class:`PosixWorld` (``State.posix``): immutable maps from path to file
node, node to contents, and descriptor to open file, so forks share the world and a state
that opens, reads or writes replaces its own reference. File contents are tuples of bytes,
each an ``int`` or an 8-bit expression, so symbolic file data is copied into program memory
as it is, without concretizing; only the counts are concrete (``read`` returns
``min(requested, remaining)``, as KLEE's model does).

Files: ``--sym-files NUM N`` makes ``A``, ``B``... of N symbolic bytes (objects ``A-data``
and ``A-data-stat``), ``--sym-stdin N`` makes standard input N symbolic bytes (``stdin``,
``stdin-stat``), otherwise standard input is the bytes given to ``explore(stdin=...)`` (empty:
end of file at once). Host files are read only when named (``explore(host_files=...)``); they
are copied in when the exploration starts and are never written. Descriptors 1 and 2 append
to the path's ``stdout``/``stderr``; symbolic bytes written there are concretized with the
choice kept as a path constraint (as printf does).

``--sym-stdout`` makes standard output what KLEE makes it: a file of 1024 symbolic bytes
(objects ``stdout`` and ``stdout-stat``, made after stdin's) that ``write(1, ...)`` overwrites
at descriptor 1's offset; bytes past its end are dropped, the full count is still returned, and
``lseek``/``fstat`` work on it as on any file. What the path writes is still appended to its
``stdout`` as well, so the test case shows the program's output either way.

The handlers here are named ``__symex_*`` and return ``-errno`` on failure; the C wrappers
in ``runtime/libc/unistd.c`` (``open``, ``read``...) set ``errno`` and return -1, so
``errno`` stays the C library's own variable.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from typing import Any

import attrs
import immutables

from symex import expr as E
from symex.core.forks import ForkKind
from symex.core.machine import ExternalHandler, Machine
from symex.core.memory import ObjectKind, locate
from symex.core.shortfalls import ShortfallKind
from symex.core.state import State
from symex.env.klee import make_symbolic
from symex.errors import ConfigError
from symex.ir.program import Instruction
from symex.symargs import FAILURE_OBJECTS, SYM_STDOUT_SIZE, ArgvSpec

__all__ = ["STAT_SIZE", "FileNode", "OpenFile", "PosixSetup", "PosixWorld", "handlers",
           "injected_failure", "install_world", "concrete_int", "lowest_free_fd", "returning",
           "world_of"]

#: sizeof(struct stat) on x86-64 Linux (glibc), the size of KLEE's ``*-stat`` objects
STAT_SIZE = 144
_ST_INO, _ST_NLINK, _ST_MODE, _ST_SIZE, _ST_BLKSIZE, _ST_BLOCKS = 8, 16, 24, 48, 56, 64

S_IFIFO, S_IFCHR, S_IFDIR, S_IFREG = 0o010000, 0o020000, 0o040000, 0o100000
O_ACCMODE, O_WRONLY, O_RDWR = 3, 1, 2
O_CREAT, O_EXCL, O_TRUNC, O_APPEND = 0o100, 0o200, 0o1000, 0o2000
AT_FDCWD = -100
ENOENT, EIO, EBADF, EACCES, EEXIST, EINVAL, EMFILE, ENOTTY, ESPIPE = 2, 5, 9, 13, 17, 22, 24, 25, 29
ENOTDIR, EISDIR = 20, 21
S_IFMT = 0o170000
#: struct dirent64's d_type of each kind of node
_DIRENT_TYPES = {S_IFIFO: 1, S_IFCHR: 2, S_IFDIR: 4, S_IFREG: 8}
ENOSYS = 38

#: descriptors a state may hold open at once
MAX_FDS = 1024

#: node ids of the two output sinks (the path's stdout and stderr)
STDOUT_NODE, STDERR_NODE = -1, -2
#: the working directory, which is also the root (getcwd says "/", and both "." and "/" name
#: it): it holds the files named without a slash (the symbolic files A, B, ... and those the
#: program creates)
DIRECTORY_NODE = -3


@attrs.frozen
class FileNode:
    """The contents of one file: bytes as ints or 8-bit expressions."""

    data: tuple[Any, ...]
    mode: int = S_IFREG | 0o644
    stat_address: int = 0
    """Address of the file's symbolic ``*-stat`` object (0 for concrete files)."""
    read_only: bool = False
    """A host file: opening it for writing fails with EACCES."""


_WORKING_DIRECTORY = FileNode((), mode=S_IFDIR | 0o755)

#: the system's own files every world has, the same on every machine: the user database with
#: root alone, as on a minimal Linux (musl's getpwnam/getgrgid read them: `id root`, `groups
#: root` and `ls -l`'s owner names work, and replay natively on any Linux, where root is 0)
SYSTEM_FILES = {"/etc/passwd": b"root:x:0:0:root:/root:/bin/sh\n", "/etc/group": b"root:x:0:\n"}


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


def _normal(path: str) -> str:
    while path.startswith("./"):
        path = path[2:]
    return os.path.normpath(path) if path else path


def _symbolic_object(ex: Machine, state: State, size: int, name: str) -> tuple[int, list[Any]]:
    os_ = state.allocate(size, ObjectKind.ARGUMENT, name)
    make_symbolic(ex, state, os_.obj.address, size, name)
    os_ = state.objects[os_.obj.segment]
    return os_.obj.address, os_.read_bytes(0, size)


def install_world(ex: Machine, state: State, spec: ArgvSpec, setup: PosixSetup) -> None:
    """Give ``state`` its initial world: the symbolic files (``A-data``, ``A-data-stat``...)
    and stdin (``stdin``, ``stdin-stat``) of ``spec`` in KLEE's order, or the concrete stdin
    and host files of ``setup``."""
    nodes: dict[int, FileNode] = {}
    names: dict[str, int] = {}
    files = spec.sym_files
    if files is not None:
        for k in range(files.count):
            letter = chr(ord("A") + k)
            _, data = _symbolic_object(ex, state, files.size, f"{letter}-data")
            stat, _ = _symbolic_object(ex, state, STAT_SIZE, f"{letter}-data-stat")
            names[letter] = len(nodes) + 1
            nodes[len(nodes) + 1] = FileNode(tuple(data), stat_address=stat)
    sym_stdin = spec.sym_stdin
    if sym_stdin is not None:
        _, data = _symbolic_object(ex, state, sym_stdin.size, "stdin")
        stat, _ = _symbolic_object(ex, state, STAT_SIZE, "stdin-stat")
        stdin = FileNode(tuple(data), stat_address=stat, read_only=True)
    else:
        stdin = FileNode(tuple(setup.stdin), mode=S_IFIFO | 0o600, read_only=True)
    stdin_node = len(nodes) + 1
    nodes[stdin_node] = stdin
    if spec.sym_stdout:
        # after stdin's objects, as KLEE's klee_init_fds makes them
        _, data = _symbolic_object(ex, state, SYM_STDOUT_SIZE, "stdout")
        stat, _ = _symbolic_object(ex, state, STAT_SIZE, "stdout-stat")
        nodes[STDOUT_NODE] = FileNode(tuple(data), stat_address=stat)
    else:
        nodes[STDOUT_NODE] = FileNode((), mode=S_IFIFO | 0o600)
    for path, content in setup.host_files:
        node = len(nodes) + 1
        nodes[node] = FileNode(tuple(content), read_only=True)
        names[_normal(path)] = node
        names[os.path.abspath(path)] = node
    _add_standard_files(nodes, names)
    nodes[STDERR_NODE] = FileNode((), mode=S_IFIFO | 0o600)
    fail_values: list[Any] = []
    if spec.max_fail:
        # after stdout's objects, as KLEE's klee_init_fds makes them
        for name in FAILURE_OBJECTS:
            _, data = _symbolic_object(ex, state, 4, name)
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
    """What every world's file system has: the working directory (as "." and "/") and the
    system files, unless a host file of the same name came first."""
    nodes[DIRECTORY_NODE] = _WORKING_DIRECTORY
    names["."] = names["/"] = DIRECTORY_NODE
    for path, text in SYSTEM_FILES.items():
        if path not in names:
            node = len(nodes) + 1
            nodes[node] = FileNode(tuple(text), read_only=True)
            names[path] = node


def _directory_entries(world: PosixWorld) -> list[tuple[str, int]]:
    """The working directory's files, (name, node), by name: those named without a slash."""
    return [(name, node) for name, node in sorted(world.names.items())
            if "/" not in name and name != "."]


def _inode(node_id: int) -> int:
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


def concrete_int(ex: Machine, state: State, value: Any, width: int, why: str,
                 signed: bool = True) -> int:
    """A call argument as a ``width``-bit int (signed unless told), fixed to one feasible
    value, with the choice kept as a path constraint, when it is symbolic."""
    if type(value) is not int:
        value = ex.concretize(state, value, value.width, why)
    value &= (1 << width) - 1
    if signed and value >> (width - 1):
        value -= 1 << width
    return value


READ_CALL, WRITE_CALL, CLOSE_CALL = 0, 1, 2


def injected_failure(ex: Machine, state: State, call: int) -> bool:
    """Whether this read, write or close (``call``) fails (``--max-fail``, KLEE's rule: when
    the call's ``*_fail`` object equals the call's number on the path). Where both can
    happen, a second state makes the call again knowing it does not fail."""
    world = world_of(state)
    if not world.failures_left:
        return False
    number = world.calls[call] + 1
    condition = E.eq(world.fail_values[call], E.const(number, 32))
    # a second state makes the call again, under "does not fail"
    fails = ex.holds_or_retry(state, condition, ForkKind.SYSCALL_FAILURE)
    calls = world.calls[:call] + (number,) + world.calls[call + 1:]
    state.posix = attrs.evolve(world, calls=calls,
                               failures_left=world.failures_left - 1 if fails else world.failures_left)
    return fails


def _path(ex: Machine, state: State, address: Any) -> str | None:
    if type(address) is int and address == 0:
        return None
    if type(address) is int:
        named = _symbolic_file_name(ex, state, address)
        if named is not None:
            return named
    return _normal(ex.read_c_string(state, address).decode("utf-8", "surrogateescape"))


def _symbolic_file_name(ex: Machine, state: State, address: int) -> str | None:
    """The name of an existing file that a path with symbolic bytes spells on this state,
    or None (then the path is fixed to one of its values, as before). Each name it may
    spell is a fork, as KLEE's POSIX runtime forks on "is it A": the state takes the name,
    a second one makes the call again knowing the path is not that name. Without this a
    tool given ``--sym-args`` and ``--sym-files`` would never open its symbolic file."""
    # the files of the working directory (the symbolic files, those the program made): a
    # symbolic argument is not also tried as /etc/passwd, which KLEE's runtime does not do
    names = [name for name, _ in _directory_entries(world_of(state))]
    if not names:
        return None
    segment, offset = locate(address)
    held = state.objects.get(segment)
    if held is None or offset < 0 or offset >= held.obj.size:
        return None
    room = held.obj.size - offset
    longest = max(len(name.encode("utf-8", "surrogateescape")) for name in names) + 1
    spelled = ex.read_bytes(state, address, min(room, longest))
    for byte in spelled:
        if type(byte) is not int:
            break
        if byte == 0:
            return None  # a concrete string
    else:
        return None  # concrete and longer than every name
    for name in names:
        encoded = name.encode("utf-8", "surrogateescape") + b"\0"
        if len(encoded) > len(spelled):
            continue
        matches: list[Any] = []
        for byte, wanted in zip(spelled, encoded):
            if type(byte) is int:
                if byte != wanted:
                    break
            else:
                matches.append(E.eq(byte, E.const(wanted, 8)))
        else:
            if ex.holds_or_retry(state, functools.reduce(E.bool_and, matches), ForkKind.FILE_NAME):
                return name
    return None


def lowest_free_fd(world: PosixWorld, low: int = 0) -> int:
    """The lowest descriptor from ``low`` up that is not open (POSIX's rule for new ones)."""
    fd = low
    while fd in world.fds:
        fd += 1
    return fd


def _open(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    return _open_path(ex, state, _path(ex, state, args[0]), args[1])


def _open_path(ex: Machine, state: State, path: str | None, flags_arg: Any) -> int:
    """open() of a path already read from the program's memory."""
    world = world_of(state)
    flags = concrete_int(ex, state, flags_arg, 32, "open flags")
    if path is None:
        return -EINVAL  # glibc gives EFAULT; the path was NULL either way
    access = flags & O_ACCMODE
    wants_write = access in (O_WRONLY, O_RDWR) or flags & O_TRUNC
    names, nodes, next_node = world.names, world.nodes, world.next_node
    node_id = names.get(path)
    if node_id is None:
        if not flags & O_CREAT:
            return -ENOENT
        node_id = next_node
        next_node += 1
        names = names.set(path, node_id)
        nodes = nodes.set(node_id, FileNode(()))
    elif flags & O_CREAT and flags & O_EXCL:
        return -EEXIST
    node = nodes[node_id]
    if node.mode & S_IFMT == S_IFDIR and (wants_write or flags & O_CREAT):
        return -EISDIR  # a directory opens for reading only, and its reads fail
    if wants_write and node.read_only:
        return -EACCES
    if flags & O_TRUNC and access != 0:
        nodes = nodes.set(node_id, attrs.evolve(node, data=()))
    fd = lowest_free_fd(world)
    if fd >= MAX_FDS:
        return -EMFILE
    opened = OpenFile(node_id, 0, access != O_WRONLY, access in (O_WRONLY, O_RDWR),
                      bool(flags & O_APPEND))
    key = world.next_description
    state.posix = attrs.evolve(world, names=names, nodes=nodes, fds=world.fds.set(fd, key),
                               descriptions=world.descriptions.set(key, opened),
                               next_node=next_node, next_description=key + 1)
    return fd


def _openat(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    directory = concrete_int(ex, state, args[0], 32, "openat directory")
    path = _path(ex, state, args[1])
    if directory != AT_FDCWD and path is not None and not path.startswith("/"):
        return -EBADF  # no directory descriptors in this model
    return _open_path(ex, state, path, args[2])


def _close(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world = world_of(state)
    fd = concrete_int(ex, state, args[0], 32, "close descriptor")
    if fd not in world.fds:
        return -EBADF
    if injected_failure(ex, state, CLOSE_CALL):
        return -EIO
    world = world_of(state)
    state.posix = attrs.evolve(world, fds=world.fds.delete(fd))
    return 0


def _read(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world = world_of(state)
    fd = concrete_int(ex, state, args[0], 32, "read descriptor")
    count = concrete_int(ex, state, args[2], 64, "read count", signed=False)
    opened = world.opened(fd)
    if opened is None or not opened.readable:
        return -EBADF
    if injected_failure(ex, state, READ_CALL):
        return -EIO
    world = world_of(state)
    node = world.nodes[opened.node]
    if node.mode & S_IFMT == S_IFDIR:
        return -EISDIR
    chunk = node.data[opened.offset:opened.offset + count]
    if chunk:
        ex.write_bytes(state, args[1], list(chunk))
    state.posix = world.moved(fd, opened.offset + len(chunk))
    return len(chunk)


def _concrete_bytes(ex: Machine, state: State, data: list[Any]) -> bytes:
    return bytes(b if type(b) is int else ex.concretize(state, b, 8, "byte written to output")
                 for b in data)


def _write(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world = world_of(state)
    fd = concrete_int(ex, state, args[0], 32, "write descriptor")
    count = concrete_int(ex, state, args[2], 64, "write count", signed=False)
    opened = world.opened(fd)
    if opened is None or not opened.writable:
        return -EBADF
    if injected_failure(ex, state, WRITE_CALL):
        return -EIO
    world = world_of(state)
    data = ex.read_bytes(state, args[1], count) if count else []
    if opened.node == STDOUT_NODE:
        state.stdout += _concrete_bytes(ex, state, data)
        if world.nodes[STDOUT_NODE].stat_address:
            state.posix = _overwrite_symbolic_stdout(world, fd, opened.offset, data, count)
        return count
    if opened.node == STDERR_NODE:
        state.stderr += _concrete_bytes(ex, state, data)
        return count
    node = world.nodes[opened.node]
    start = len(node.data) if opened.append else opened.offset
    old = node.data
    grown = old[:start] + (0,) * (start - len(old)) + tuple(data) + old[start + count:]
    world = attrs.evolve(world, nodes=world.nodes.set(opened.node, attrs.evolve(node, data=grown)))
    state.posix = world.moved(fd, start + count)
    return count


def _overwrite_symbolic_stdout(world: PosixWorld, fd: int, start: int, data: list[Any],
                               count: int) -> PosixWorld:
    """``--sym-stdout``'s file after writing ``data`` at ``start``: as KLEE's model, the file
    keeps its size (bytes past its end are dropped) and the offset moves by the full count."""
    node = world.nodes[STDOUT_NODE]
    kept = tuple(data[:max(0, len(node.data) - start)])
    if kept:
        contents = node.data[:start] + kept + node.data[start + len(kept):]
        world = attrs.evolve(world, nodes=world.nodes.set(STDOUT_NODE,
                                                          attrs.evolve(node, data=contents)))
    return world.moved(fd, start + count)


def _lseek(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world = world_of(state)
    fd = concrete_int(ex, state, args[0], 32, "lseek descriptor")
    offset = concrete_int(ex, state, args[1], 64, "lseek offset")
    whence = concrete_int(ex, state, args[2], 32, "lseek whence")
    opened = world.opened(fd)
    if opened is None:
        return -EBADF
    # the output streams are pipes, unless --sym-stdout made standard output a file
    piped = opened.node == STDERR_NODE or (opened.node == STDOUT_NODE
                                           and not world.nodes[STDOUT_NODE].stat_address)
    if piped:
        return -ESPIPE
    base = {0: 0, 1: opened.offset, 2: len(world.nodes[opened.node].data)}.get(whence)
    if base is None or base + offset < 0:
        return -EINVAL
    state.posix = world.moved(fd, base + offset)
    return base + offset


def _fill_stat(ex: Machine, state: State, node_id: int, node: FileNode, buffer: Any) -> int:
    if node.stat_address:
        # KLEE's *-stat object: unconstrained, except what the model must get right
        image: list[Any] = ex.read_bytes(state, node.stat_address, STAT_SIZE)
    else:
        image = [0] * STAT_SIZE

    def put(offset: int, value: int, size: int) -> None:
        image[offset:offset + size] = list(value.to_bytes(size, "little"))

    put(_ST_INO, _inode(node_id), 8)
    put(_ST_NLINK, 1, 8)
    put(_ST_MODE, node.mode, 4)
    put(_ST_SIZE, len(node.data), 8)
    put(_ST_BLKSIZE, 4096, 8)
    put(_ST_BLOCKS, (len(node.data) + 511) // 512, 8)
    ex.write_bytes(state, buffer, image)
    return 0


def _stat(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world = world_of(state)
    path = _path(ex, state, args[0])
    node_id = world.names.get(path) if path is not None else None
    if node_id is None:
        return -ENOENT
    return _fill_stat(ex, state, node_id, world.nodes[node_id], args[1])


def _fstat(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world = world_of(state)
    fd = concrete_int(ex, state, args[0], 32, "fstat descriptor")
    opened = world.opened(fd)
    if opened is None:
        return -EBADF
    return _fill_stat(ex, state, opened.node, world.nodes[opened.node], args[1])


def _access(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world = world_of(state)
    path = _path(ex, state, args[0])
    mode = concrete_int(ex, state, args[1], 32, "access mode")
    node_id = world.names.get(path) if path is not None else None
    if node_id is None:
        return -ENOENT
    if mode & 2 and world.nodes[node_id].read_only:  # W_OK
        return -EACCES
    return 0


def _isatty(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world = world_of(state)
    fd = concrete_int(ex, state, args[0], 32, "isatty descriptor")
    # no descriptor is a terminal: symbolic stdin is not (as KLEE), and native replay pipes
    # all three standard streams
    return -EBADF if fd not in world.fds else -ENOTTY


def _dup(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world = world_of(state)
    fd = concrete_int(ex, state, args[0], 32, "dup descriptor")
    key = world.fds.get(fd)
    if key is None:
        return -EBADF
    new = lowest_free_fd(world)
    if new >= MAX_FDS:
        return -EMFILE
    state.posix = attrs.evolve(world, fds=world.fds.set(new, key))
    return new


def _dup2(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world = world_of(state)
    fd = concrete_int(ex, state, args[0], 32, "dup2 descriptor")
    new = concrete_int(ex, state, args[1], 32, "dup2 target")
    key = world.fds.get(fd)
    if key is None or not 0 <= new < MAX_FDS:
        return -EBADF
    if new != fd:
        state.posix = attrs.evolve(world, fds=world.fds.set(new, key))
    return new


def _unlink(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world = world_of(state)
    path = _path(ex, state, args[0])
    node_id = world.names.get(path) if path is not None else None
    if path is None or node_id is None:
        return -ENOENT
    if world.nodes[node_id].mode & S_IFMT == S_IFDIR:
        return -EISDIR  # Linux's answer for unlink of a directory
    if world.nodes[node_id].read_only:
        return -EACCES
    state.posix = attrs.evolve(world, names=world.names.delete(path))
    return 0


def _getdents64(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    """The working directory's entries as ``struct dirent64`` records: ".", "..", then its
    files by name; the description's offset counts the entries already returned."""
    world = world_of(state)
    fd = concrete_int(ex, state, args[0], 32, "getdents descriptor")
    count = concrete_int(ex, state, args[2], 64, "getdents count", signed=False)
    opened = world.opened(fd)
    if opened is None:
        return -EBADF
    if world.nodes[opened.node].mode & S_IFMT != S_IFDIR:
        return -ENOTDIR
    here = _inode(DIRECTORY_NODE)  # ".." too: the working directory is the root
    entries = [(".", here, S_IFDIR), ("..", here, S_IFDIR)]
    entries += [(name, _inode(node_id), world.nodes[node_id].mode & S_IFMT)
                for name, node_id in _directory_entries(world)]
    index = opened.offset
    out = bytearray()
    while index < len(entries):
        name, inode, kind = entries[index]
        encoded = name.encode("utf-8", "surrogateescape") + b"\0"
        length = (19 + len(encoded) + 7) & ~7  # d_ino, d_off, d_reclen, d_type, d_name
        if len(out) + length > count:
            break
        record = (inode.to_bytes(8, "little") + (index + 1).to_bytes(8, "little")
                  + length.to_bytes(2, "little") + bytes([_DIRENT_TYPES.get(kind, 0)]) + encoded)
        out += record.ljust(length, b"\0")
        index += 1
    if not out and index < len(entries):
        return -EINVAL  # the buffer holds not even one record
    if out:
        ex.write_bytes(state, args[1], bytes(out))
    state.posix = world.moved(fd, index)
    return len(out)


def _unmodelled_syscall(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    """``__symex_unmodelled_syscall(number)`` (musl's system calls, runtime/musl/glue.c): one
    the model does not answer returns -ENOSYS, counted in the run's shortfalls by program
    line, and the path goes on (as under KLEE's POSIX runtime)."""
    from symex.ir.musl import syscall_name  # noqa: PLC0415 (only programs linked with musl)

    number = concrete_int(ex, state, args[0], 64, "system call number")
    ex.shortfalls.add(ShortfallKind.UNMODELLED_SYSCALL, syscall_name(number), ex.program_site(state))
    return -ENOSYS


def returning(width: int, handler: ExternalHandler) -> ExternalHandler:
    """``handler`` with its (possibly negative) result as the C return type's bits."""
    mask = (1 << width) - 1

    def call(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
        return handler(ex, state, args, ins) & mask
    return call


def handlers() -> dict[str, ExternalHandler]:
    """The system calls, by the names ``runtime/libc/unistd.c`` calls them."""
    ints = {"__symex_open": _open, "__symex_openat": _openat, "__symex_close": _close,
            "__symex_stat": _stat, "__symex_fstat": _fstat, "__symex_access": _access,
            "__symex_isatty": _isatty, "__symex_dup": _dup, "__symex_dup2": _dup2,
            "__symex_unlink": _unlink}
    longs = {"__symex_read": _read, "__symex_write": _write, "__symex_lseek": _lseek,
             "__symex_getdents64": _getdents64}
    table = {name: returning(32, handler) for name, handler in ints.items()}
    table.update({name: returning(64, handler) for name, handler in longs.items()})
    table["__symex_unmodelled_syscall"] = returning(64, _unmodelled_syscall)
    return table
