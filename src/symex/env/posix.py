"""The system calls on files and descriptors, with KLEE's POSIX-runtime meanings, over the
state's world (:mod:`symex.env.world`). Only the counts are concrete (``read`` returns
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
from typing import Any

import attrs

from symex import expr as E
from symex.core.forks import ForkKind
from symex.core.interpreter.machine import ExternalHandler, StateView
from symex.core.memory.objects import locate
from symex.core.shortfalls import ShortfallKind
from symex.core.state import State
from symex.env.world import (
    AT_FDCWD, AT_SYMLINK_NOFOLLOW, EACCES, EBADF, EEXIST, EINVAL, EIO, EISDIR, ELOOP, EMFILE, ENOENT, ENOSYS,
    ENOTDIR, ENOTTY, ESPIPE, MAX_FDS, NULL_NODE, O_ACCMODE, O_APPEND, O_CREAT, O_DIRECTORY, O_EXCL, O_NOFOLLOW,
    O_RDWR, O_TRUNC, O_WRONLY, S_IFDIR, S_IFLNK, S_IFMT, S_IFREG, STAT_SIZE, STDERR_NODE, STDOUT_NODE, FileNode,
    OpenFile, PosixWorld, directory_entries, inode, lookup, lowest_free_fd, parent_of, resolve, world_of)

_ST_INO, _ST_NLINK, _ST_MODE, _ST_SIZE, _ST_BLKSIZE, _ST_BLOCKS = 8, 16, 24, 48, 56, 64

__all__ = ["concrete_int", "handlers", "injected_failure", "open_directory", "path_at", "path_of", "returning",
           "unlink_path"]


def concrete_int(view: StateView, value: Any, width: int, why: str,
                 signed: bool = True) -> int:
    """A call argument as a ``width``-bit int (signed unless told), fixed to one feasible
    value, with the choice kept as a path constraint, when it is symbolic."""
    if type(value) is not int:
        value = view.concretize(value, value.width, why)
    value &= (1 << width) - 1
    if signed and value >> (width - 1):
        value -= 1 << width
    return value


READ_CALL, WRITE_CALL, CLOSE_CALL = 0, 1, 2


def injected_failure(view: StateView, call: int) -> bool:
    """Whether this read, write or close (``call``) fails (``--max-fail``, KLEE's rule: when
    the call's ``*_fail`` object equals the call's number on the path). Where both can
    happen, a second state makes the call again knowing it does not fail."""
    ex, state = view.machine, view.state
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


def path_of(view: StateView, address: Any, directory: str | None = None, follow: bool = True) -> str | None | int:
    """The key of the path at ``address``, relative to ``directory`` (a key; default the
    working directory), its symbolic links followed (the last one only if ``follow``:
    :func:`~symex.env.world.lookup`): a symbolic one may name an existing file (see
    :func:`_symbolic_file_name`). None for a null pointer, ``-ELOOP`` for a loop of links."""
    state = view.state
    if type(address) is int and address == 0:
        return None
    world = world_of(state)
    base = world.cwd if directory is None else directory
    if type(address) is int:
        named = _symbolic_file_name(view, address, base)
        if named is not None:
            return lookup(world, ".", named, follow)
    return lookup(world, base, view.read_c_string(address).decode("utf-8", "surrogateescape"), follow)


def _listed_below(world: PosixWorld, directory: str) -> list[str]:
    """The files a listing reaches from ``directory`` (its entries, theirs ...), as paths
    relative to it: what a symbolic path may name."""
    found: list[str] = []
    pending = [("", directory)]
    while pending:
        prefix, key = pending.pop()
        for name, node_id in directory_entries(world, key):
            found.append(prefix + name)
            if world.nodes[node_id].mode & S_IFMT == S_IFDIR:
                pending.append((f"{prefix}{name}/", name if key == "." else f"{key}/{name}"))
    return sorted(found)


def _symbolic_file_name(view: StateView, address: int, base: str) -> str | None:
    """The name of an existing file that a path with symbolic bytes spells on this state,
    or None (then the path is fixed to one of its values, as before). Each name it may
    spell is a fork, as KLEE's POSIX runtime forks on "is it A": the state takes the name,
    a second one makes the call again knowing the path is not that name. Without this a
    tool given ``--sym-args`` and ``--sym-files`` would never open its symbolic file. The
    last name tried is ``.``, the directory itself: a tool's paths for a file that opens but
    cannot be read (``ferror``, EISDIR) or for a directory argument (``ls``, ``du``) are
    reached as KLEE's reach them when its runtime concretizes a name to a host directory."""
    ex, state = view.machine, view.state
    # the files of the working directory (the symbolic files, those the program made): a
    # symbolic argument is not also tried as /etc/passwd, which KLEE's runtime does not do
    world = world_of(state)
    names = [*_listed_below(world, base), "."]
    segment, offset = locate(address)
    held = state.objects.get(segment)
    if held is None or offset < 0 or offset >= held.obj.size:
        return None
    room = held.obj.size - offset
    longest = max(len(name.encode("utf-8", "surrogateescape")) for name in names) + 1
    spelled = view.read_bytes(address, min(room, longest))
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
                return resolve(base, name)
    return None


def _open(view: StateView, args: list[Any]) -> int:
    flags = concrete_int(view, args[1], 32, "open flags")
    return _open_path(view, path_of(view, args[0], follow=_follows(flags)), flags, args[0])


def _follows(flags: int) -> bool:
    """Whether open follows a symbolic link in the last component: not with O_NOFOLLOW
    (then a link is ELOOP), nor with O_CREAT | O_EXCL (a link there, even dangling, is
    EEXIST)."""
    return not (flags & O_NOFOLLOW or flags & O_CREAT and flags & O_EXCL)


def _open_path(view: StateView, path: str | None | int, flags: int, address: Any) -> int:
    """open() of a path already read from the program's memory (at ``address``), with its
    ``flags``."""
    state = view.state
    world = world_of(state)
    if isinstance(path, int):
        return path
    if path is None:
        return -EINVAL  # glibc gives EFAULT; the path was NULL either way
    if not path:
        return -ENOENT  # "" names no file, even with O_CREAT (tee "" fails so natively)
    access = flags & O_ACCMODE
    wants_write = access in (O_WRONLY, O_RDWR) or flags & O_TRUNC
    names, nodes, next_node = world.names, world.nodes, world.next_node
    node_id = names.get(path)
    if node_id is None:
        if not flags & O_CREAT:
            return -ENOENT
        if view.read_c_string(address).endswith(b"/"):
            return -EISDIR  # "name/" can only be a directory: Linux will not create a file so
        parent = names.get(parent_of(path))
        if parent is None:
            return -ENOENT  # no directory to make it in (the host's own are HOST_DIRECTORIES)
        if nodes[parent].mode & S_IFMT != S_IFDIR:
            return -ENOTDIR
        node_id = next_node
        next_node += 1
        names = names.set(path, node_id)
        nodes = nodes.set(node_id, FileNode(()))
    elif flags & O_CREAT and flags & O_EXCL:
        return -EEXIST
    node = nodes[node_id]
    if node.mode & S_IFMT == S_IFLNK:
        return -ELOOP  # O_NOFOLLOW's answer (a followed link is its target's node)
    if node.mode & S_IFMT == S_IFDIR and (wants_write or flags & O_CREAT):
        return -EISDIR  # a directory opens for reading only, and its reads fail
    if flags & O_DIRECTORY and node.mode & S_IFMT != S_IFDIR:
        return -ENOTDIR
    if wants_write and node.read_only:
        return -EACCES
    if flags & O_TRUNC and access != 0:
        nodes = nodes.set(node_id, attrs.evolve(node, data=()))
    fd = lowest_free_fd(world)
    if fd >= MAX_FDS:
        return -EMFILE
    opened = OpenFile(node_id, 0, access != O_WRONLY, access in (O_WRONLY, O_RDWR),
                      bool(flags & O_APPEND), path=path)
    key = world.next_description
    state.posix = attrs.evolve(world, names=names, nodes=nodes, fds=world.fds.set(fd, key),
                               descriptions=world.descriptions.set(key, opened),
                               next_node=next_node, next_description=key + 1)
    return fd


def _openat(view: StateView, args: list[Any]) -> int:
    flags = concrete_int(view, args[2], 32, "open flags")
    return _open_path(view, path_at(view, args[0], args[1], _follows(flags)), flags, args[1])


def path_at(view: StateView, directory_fd: Any, address: Any, follow: bool = True) -> str | None | int:
    """The key of ``address``'s path taken from the directory open as ``directory_fd``
    (``AT_FDCWD``: the working directory), a link in its last component followed only if
    ``follow`` (:func:`path_of`), or ``-errno``."""
    state = view.state
    fd = concrete_int(view, directory_fd, 32, "directory descriptor")
    if fd == AT_FDCWD:
        return path_of(view, address, follow=follow)
    directory = open_directory(world_of(state), fd)
    return directory if isinstance(directory, int) else path_of(view, address, directory, follow)


def open_directory(world: PosixWorld, fd: int) -> str | int:
    """The key of the directory open as ``fd`` (``openat``, ``fchdir``), or ``-errno``."""
    opened = world.opened(fd)
    if opened is None:
        return -EBADF
    if world.nodes[opened.node].mode & S_IFMT != S_IFDIR or not opened.path:
        return -ENOTDIR
    return opened.path


def _close(view: StateView, args: list[Any]) -> int:
    state = view.state
    world = world_of(state)
    fd = concrete_int(view, args[0], 32, "close descriptor")
    if fd not in world.fds:
        return -EBADF
    if injected_failure(view, CLOSE_CALL):
        return -EIO
    world = world_of(state)
    state.posix = attrs.evolve(world, fds=world.fds.delete(fd))
    return 0


def _read(view: StateView, args: list[Any]) -> int:
    state = view.state
    world = world_of(state)
    fd = concrete_int(view, args[0], 32, "read descriptor")
    count = concrete_int(view, args[2], 64, "read count", signed=False)
    opened = world.opened(fd)
    if opened is None or not opened.readable:
        return -EBADF
    if injected_failure(view, READ_CALL):
        return -EIO
    world = world_of(state)
    node = world.nodes[opened.node]
    if node.mode & S_IFMT == S_IFDIR:
        return -EISDIR
    chunk = node.data[opened.offset:opened.offset + count]
    if chunk:
        view.write_bytes(args[1], list(chunk))
    state.posix = world.moved(fd, opened.offset + len(chunk))
    return len(chunk)


def _concrete_bytes(view: StateView, data: list[Any]) -> bytes:
    return bytes(b if type(b) is int else view.concretize(b, 8, "byte written to output")
                 for b in data)


def _write(view: StateView, args: list[Any]) -> int:
    state = view.state
    world = world_of(state)
    fd = concrete_int(view, args[0], 32, "write descriptor")
    count = concrete_int(view, args[2], 64, "write count", signed=False)
    opened = world.opened(fd)
    if opened is None or not opened.writable:
        return -EBADF
    if injected_failure(view, WRITE_CALL):
        return -EIO
    world = world_of(state)
    data = view.read_bytes(args[1], count) if count else []
    if opened.node == STDOUT_NODE:
        state.stdout += _concrete_bytes(view, data)
        if world.nodes[STDOUT_NODE].stat_address:
            state.posix = _overwrite_symbolic_stdout(world, fd, opened.offset, data, count)
        return count
    if opened.node == STDERR_NODE:
        state.stderr += _concrete_bytes(view, data)
        return count
    if opened.node == NULL_NODE:
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


def _lseek(view: StateView, args: list[Any]) -> int:
    state = view.state
    world = world_of(state)
    fd = concrete_int(view, args[0], 32, "lseek descriptor")
    offset = concrete_int(view, args[1], 64, "lseek offset")
    whence = concrete_int(view, args[2], 32, "lseek whence")
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


def _fill_stat(view: StateView, node_id: int, node: FileNode, buffer: Any) -> int:
    if node.stat_address:
        # KLEE's *-stat object: unconstrained, except what the model must get right
        image: list[Any] = view.read_bytes(node.stat_address, STAT_SIZE)
    else:
        image = [0] * STAT_SIZE

    def put(offset: int, value: int, size: int) -> None:
        image[offset:offset + size] = list(value.to_bytes(size, "little"))

    put(_ST_INO, inode(node_id), 8)
    put(_ST_NLINK, 1, 8)
    put(_ST_MODE, node.mode, 4)
    put(_ST_SIZE, len(node.data), 8)
    put(_ST_BLKSIZE, 4096, 8)
    put(_ST_BLOCKS, (len(node.data) + 511) // 512, 8)
    view.write_bytes(buffer, image)
    return 0


def _stat_path(view: StateView, path: str | None | int, buffer: Any) -> int:
    """stat() of a path's key already looked up."""
    if isinstance(path, int):
        return path
    world = world_of(view.state)
    node_id = world.names.get(path) if path is not None else None
    if node_id is None:
        return -ENOENT
    return _fill_stat(view, node_id, world.nodes[node_id], buffer)


def _stat(view: StateView, args: list[Any]) -> int:
    return _stat_path(view, path_of(view, args[0]), args[1])


def _lstat(view: StateView, args: list[Any]) -> int:
    """``lstat(path, buffer)``: a symbolic link's own stat (``S_IFLNK``, its target's length)."""
    return _stat_path(view, path_of(view, args[0], follow=False), args[1])


def _fstat(view: StateView, args: list[Any]) -> int:
    state = view.state
    world = world_of(state)
    fd = concrete_int(view, args[0], 32, "fstat descriptor")
    opened = world.opened(fd)
    if opened is None:
        return -EBADF
    return _fill_stat(view, opened.node, world.nodes[opened.node], args[1])


def _access(view: StateView, args: list[Any]) -> int:
    state = view.state
    return _access_check(state, path_of(view, args[0]),
                         concrete_int(view, args[1], 32, "access mode"))


def _faccessat(view: StateView, args: list[Any]) -> int:
    """The kernel's ``faccessat(dirfd, path, mode)``: ``access`` with the path taken from the
    directory ``dirfd`` (musl's faccessat and faccessat2 come here, flags checked in C)."""
    state = view.state
    path = path_at(view, args[0], args[1])
    if isinstance(path, int):
        return path
    return _access_check(state, path, concrete_int(view, args[2], 32, "access mode"))


def _access_check(state: State, path: str | None | int, mode: int) -> int:
    """access's answer for a path's key: ENOENT, EACCES for writing a read-only file or for
    running a file without an execute bit, or 0 (the process is root: reading and writing
    need no permission bits, running a file one of its three, a directory none)."""
    if isinstance(path, int):
        return path
    world = world_of(state)
    node_id = world.names.get(path) if path is not None else None
    if node_id is None:
        return -ENOENT
    node = world.nodes[node_id]
    if mode & 2 and node.read_only:  # W_OK
        return -EACCES
    if mode & 1 and node.mode & S_IFMT != S_IFDIR and not node.mode & 0o111:  # X_OK
        return -EACCES
    return 0


def _isatty(view: StateView, args: list[Any]) -> int:
    state = view.state
    world = world_of(state)
    fd = concrete_int(view, args[0], 32, "isatty descriptor")
    # no descriptor is a terminal: symbolic stdin is not (as KLEE), and native replay pipes
    # all three standard streams
    return -EBADF if fd not in world.fds else -ENOTTY


def _dup(view: StateView, args: list[Any]) -> int:
    state = view.state
    world = world_of(state)
    fd = concrete_int(view, args[0], 32, "dup descriptor")
    key = world.fds.get(fd)
    if key is None:
        return -EBADF
    new = lowest_free_fd(world)
    if new >= MAX_FDS:
        return -EMFILE
    state.posix = attrs.evolve(world, fds=world.fds.set(new, key))
    return new


def _dup2(view: StateView, args: list[Any]) -> int:
    state = view.state
    world = world_of(state)
    fd = concrete_int(view, args[0], 32, "dup2 descriptor")
    new = concrete_int(view, args[1], 32, "dup2 target")
    key = world.fds.get(fd)
    if key is None or not 0 <= new < MAX_FDS:
        return -EBADF
    if new != fd:
        state.posix = attrs.evolve(world, fds=world.fds.set(new, key))
    return new


def _unlink(view: StateView, args: list[Any]) -> int:
    state = view.state
    return unlink_path(state, path_of(view, args[0], follow=False))


def unlink_path(state: State, path: str | None | int) -> int:
    """unlink() of a path already read (a symbolic link's own key): a file only, not
    read-only."""
    if isinstance(path, int):
        return path
    world = world_of(state)
    node_id = world.names.get(path) if path is not None else None
    if path is None or node_id is None:
        return -ENOENT
    if world.nodes[node_id].mode & S_IFMT == S_IFDIR:
        return -EISDIR  # Linux's answer for unlink of a directory
    if world.nodes[node_id].read_only:
        return -EACCES
    state.posix = attrs.evolve(world, names=world.names.delete(path))
    return 0


def _fstatat(view: StateView, args: list[Any]) -> int:
    """``fstatat(fd, path, buffer, flags)``, the path taken from the directory ``fd`` (fts,
    find); ``AT_SYMLINK_NOFOLLOW`` stats a link itself (``AT_EMPTY_PATH`` is the glue's)."""
    flags = concrete_int(view, args[3], 32, "fstatat flags")
    return _stat_path(view, path_at(view, args[0], args[1], not flags & AT_SYMLINK_NOFOLLOW), args[2])


def _change_mode(state: State, node_id: int | None, mode: int) -> int:
    """A node's permission bits become ``mode``'s (the process is root: any file's)."""
    if node_id is None:
        return -ENOENT
    world = world_of(state)
    node = world.nodes[node_id]
    changed = attrs.evolve(node, mode=(node.mode & S_IFMT) | (mode & 0o7777))
    state.posix = attrs.evolve(world, nodes=world.nodes.set(node_id, changed))
    return 0


def _chmod(view: StateView, args: list[Any]) -> int:
    """``chmod(path, mode)``: what ``stat`` then says."""
    state = view.state
    path = path_of(view, args[0])
    mode = concrete_int(view, args[1], 32, "chmod mode")
    if isinstance(path, int):
        return path
    return _change_mode(state, world_of(state).names.get(path) if path else None, mode)


def _fchmod(view: StateView, args: list[Any]) -> int:
    """``fchmod(fd, mode)``."""
    state = view.state
    opened = world_of(state).opened(concrete_int(view, args[0], 32, "fchmod descriptor"))
    if opened is None:
        return -EBADF
    return _change_mode(state, opened.node, concrete_int(view, args[1], 32, "chmod mode"))


def _fchmodat(view: StateView, args: list[Any]) -> int:
    """The kernel's ``fchmodat(dirfd, path, mode)`` (no flags; musl handles
    ``AT_SYMLINK_NOFOLLOW`` itself)."""
    state = view.state
    path = path_at(view, args[0], args[1])
    if isinstance(path, int):
        return path
    mode = concrete_int(view, args[2], 32, "chmod mode")
    return _change_mode(state, world_of(state).names.get(path) if path else None, mode)


def _resize(state: State, node_id: int, length: int) -> int:
    """A regular file's contents cut or padded with zero bytes to ``length`` (truncate)."""
    world = world_of(state)
    node = world.nodes[node_id]
    if length < 0 or node_id in (STDOUT_NODE, STDERR_NODE) or node.mode & S_IFMT != S_IFREG:
        return -EINVAL  # the sinks are the replay's pipes and terminals, not files
    data = node.data[:length] + (0,) * (length - len(node.data))
    state.posix = attrs.evolve(world, nodes=world.nodes.set(node_id, attrs.evolve(node, data=data)))
    return 0


def _ftruncate(view: StateView, args: list[Any]) -> int:
    """``ftruncate(fd, length)`` (split, shred, dd's ``of=``): a regular file open for writing
    becomes ``length`` bytes long; the offset stays."""
    state = view.state
    opened = world_of(state).opened(concrete_int(view, args[0], 32, "ftruncate descriptor"))
    length = concrete_int(view, args[1], 64, "truncate length")
    if opened is None:
        return -EBADF
    if not opened.writable:
        return -EINVAL  # as Linux answers a descriptor not open for writing
    return _resize(state, opened.node, length)


def _truncate(view: StateView, args: list[Any]) -> int:
    """``truncate(path, length)``: the file at ``path`` (a directory is EISDIR, a file of the
    host EACCES)."""
    state = view.state
    path = path_of(view, args[0])
    length = concrete_int(view, args[1], 64, "truncate length")
    if isinstance(path, int):
        return path
    world = world_of(state)
    node_id = world.names.get(path) if path else None
    if node_id is None:
        return -ENOENT
    node = world.nodes[node_id]
    if node.mode & S_IFMT == S_IFDIR:
        return -EISDIR
    if node.read_only:
        return -EACCES
    return _resize(state, node_id, length)


def _unmodelled_syscall(view: StateView, args: list[Any]) -> int:
    """``__symex_unmodelled_syscall(number)`` (musl's system calls, runtime/musl/glue.c): one
    the model does not answer returns -ENOSYS, counted in the run's shortfalls by program
    line, and the path goes on (as under KLEE's POSIX runtime)."""
    ex = view.machine
    from symex.ir.musl import syscall_name  # noqa: PLC0415 (only programs linked with musl)

    number = concrete_int(view, args[0], 64, "system call number")
    ex.shortfalls.add(ShortfallKind.UNMODELLED_SYSCALL, syscall_name(number), view.program_site())
    return -ENOSYS


def returning(width: int, handler: ExternalHandler) -> ExternalHandler:
    """``handler`` with its (possibly negative) result as the C return type's bits."""
    mask = (1 << width) - 1

    def call(view: StateView, args: list[Any]) -> int:
        return handler(view, args) & mask
    return call


HANDLERS: dict[str, ExternalHandler] = {
    "open": _open, "openat": _openat, "close": _close, "read": _read, "write": _write, "lseek": _lseek,
    "stat": _stat, "lstat": _lstat, "fstat": _fstat, "fstatat": _fstatat, "access": _access,
    "faccessat": _faccessat, "isatty": _isatty, "dup": _dup, "dup2": _dup2, "unlink": _unlink, "chmod": _chmod,
    "fchmod": _fchmod, "fchmodat": _fchmodat, "ftruncate": _ftruncate, "truncate": _truncate,
}
"""The handlers by system call name (their declarations: :mod:`symex.ir.system_calls`)."""


def handlers() -> dict[str, ExternalHandler]:
    """What musl's glue calls for a system call the model does not answer (the declared
    calls' handlers are registered from the table: ``env.system_call_handlers``)."""
    return {"__symex_unmodelled_syscall": returning(64, _unmodelled_syscall)}
