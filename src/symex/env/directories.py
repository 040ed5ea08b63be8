"""The system calls on directories and their entries: ``mkdir``, ``rmdir``, ``chdir``,
``fchdir``, ``getcwd``, ``getdents64`` (what ``opendir``/``readdir`` read), ``mknod``, and the names of
files, ``link``, ``rename``, ``symlink`` and ``readlink`` (with their ``*at`` forms), over the
state's world (:mod:`symex.env.world`: a directory is a node, its entries the keys one level
below it; a hard link is a second key of the same node; a symbolic link is a node of kind
``S_IFLNK`` holding its target, followed where a path is looked up: ``world.lookup``).

Each returns ``-errno`` as the kernel does; the C libraries' wrappers set ``errno``.
"""

from __future__ import annotations

from typing import Any

import attrs

from symex.core.interpreter.machine import ExternalHandler, StateView
from symex.core.state import State
from symex.env.posix import concrete_int, open_directory, path_at, path_of, unlink_path
from symex.env.world import (
    DIRENT_TYPES, EBADF, EBUSY, EEXIST, EINVAL, EISDIR, ENOENT, ENOTDIR, ENOTEMPTY, EPERM, ERANGE,
    S_IFCHR, S_IFDIR, S_IFIFO, S_IFLNK, S_IFMT, S_IFREG, FileNode, directory_entries, inode, parent_of, world_of)

__all__ = ["HANDLERS"]

#: the process's file-mode creation mask (the glue's umask answers the same)
_UMASK = 0o022
_AT_REMOVEDIR = 0x200
_AT_SYMLINK_FOLLOW, _AT_EMPTY_PATH = 0x400, 0x1000
_RENAME_NOREPLACE, _RENAME_EXCHANGE = 1, 2
_S_IFBLK, _S_IFSOCK = 0o060000, 0o140000
#: the kinds mknod makes (0 is a regular file)
_MKNOD_KINDS = frozenset({0, S_IFREG, S_IFIFO, S_IFCHR, _S_IFBLK, _S_IFSOCK})


def _is_directory(world: Any, node_id: int | None) -> bool:
    return node_id is not None and world.nodes[node_id].mode & S_IFMT == S_IFDIR


def _make_node(state: State, path: str | None | int, kind: int, mode: int, data: tuple[int, ...] = ()) -> int:
    """A new node of ``kind`` (S_IFDIR, S_IFREG, S_IFIFO, S_IFLNK ...) holding ``data`` at
    ``path`` (a link's own key), in an existing directory; its permissions ``mode`` less the
    umask (a symbolic link's are always 0777)."""
    if isinstance(path, int):
        return path
    world = world_of(state)
    if not path:
        return -ENOENT
    if path in world.names:
        return -EEXIST
    missing = _directory_missing(world, path)
    if missing:
        return missing
    node = world.next_node
    permissions = 0o777 if kind == S_IFLNK else mode & 0o7777 & ~_UMASK
    state.posix = attrs.evolve(world, names=world.names.set(path, node), next_node=node + 1,
                               linked=world.linked or kind == S_IFLNK,
                               nodes=world.nodes.set(node, FileNode(data, mode=kind | permissions)))
    return 0


def _mkdir(view: StateView, args: list[Any]) -> int:
    """``mkdir(path, mode)``: in an existing directory; the mode less the umask."""
    state = view.state
    mode = concrete_int(view, args[1], 32, "mkdir mode")
    return _make_node(state, path_of(view, args[0], follow=False), S_IFDIR, mode)


def _mkdirat(view: StateView, args: list[Any]) -> int:
    state = view.state
    mode = concrete_int(view, args[2], 32, "mkdir mode")
    return _make_node(state, path_at(view, args[0], args[1], False), S_IFDIR, mode)


def _make_special(state: State, path: str | None | int, mode: int) -> int:
    kind = mode & S_IFMT
    if kind == S_IFDIR:
        return -EPERM  # mkdir's job
    if kind not in _MKNOD_KINDS:
        return -EINVAL
    return _make_node(state, path, kind or S_IFREG, mode)


def _mknod(view: StateView, args: list[Any]) -> int:
    """``mknod(path, mode, device)`` (mkfifo, mknod): a file, FIFO, socket or device node (the
    process is root), empty; opening a FIFO does not wait for the other end."""
    state = view.state
    return _make_special(state, path_of(view, args[0], follow=False),
                         concrete_int(view, args[1], 32, "mknod mode"))


def _mknodat(view: StateView, args: list[Any]) -> int:
    state = view.state
    return _make_special(state, path_at(view, args[0], args[1], False),
                         concrete_int(view, args[2], 32, "mknod mode"))


def _remove_directory(state: State, path: str | None | int) -> int:
    if isinstance(path, int):
        return path
    world = world_of(state)
    node = world.names.get(path) if path else None
    if not path or node is None:
        return -ENOENT
    if not _is_directory(world, node):
        return -ENOTDIR
    if path == "." or path == world.cwd:
        return -EBUSY  # the root, or where the process stands
    if directory_entries(world, path):
        return -ENOTEMPTY
    state.posix = attrs.evolve(world, names=world.names.delete(path))
    return 0


def _rmdir(view: StateView, args: list[Any]) -> int:
    """``rmdir(path)``: an empty directory only."""
    state = view.state
    return _remove_directory(state, path_of(view, args[0], follow=False))


def _unlinkat(view: StateView, args: list[Any]) -> int:
    """``unlinkat(fd, path, flags)``: a directory with ``AT_REMOVEDIR`` (musl's remove(),
    rm -r), else a file, the path taken from the directory ``fd``."""
    state = view.state
    flags = concrete_int(view, args[2], 32, "unlinkat flags")
    path = path_at(view, args[0], args[1], False)
    if flags & _AT_REMOVEDIR:
        return _remove_directory(state, path)
    return path if isinstance(path, int) else unlink_path(state, path)


def _chdir(view: StateView, args: list[Any]) -> int:
    """``chdir(path)``: relative paths resolve from there from now on."""
    state = view.state
    world = world_of(state)
    path = path_of(view, args[0])
    if isinstance(path, int):
        return path
    node = world.names.get(path) if path else None
    if not path or node is None:
        return -ENOENT
    if not _is_directory(world, node):
        return -ENOTDIR
    state.posix = attrs.evolve(world, cwd=path)
    return 0


def _fchdir(view: StateView, args: list[Any]) -> int:
    """``fchdir(fd)``: to the directory ``fd`` was opened as (GNU find, fts)."""
    state = view.state
    world = world_of(state)
    fd = concrete_int(view, args[0], 32, "fchdir descriptor")
    directory = open_directory(world, fd)
    if isinstance(directory, int):
        return directory
    state.posix = attrs.evolve(world, cwd=directory)
    return 0


def _getcwd(view: StateView, args: list[Any]) -> int:
    """The kernel's ``getcwd(buf, size)``: the path and its NUL, and their length."""
    state = view.state
    size = concrete_int(view, args[1], 64, "getcwd size", signed=False)
    cwd = world_of(state).cwd
    text = ("/" if cwd == "." else "/" + cwd).encode("utf-8", "surrogateescape") + b"\0"
    if len(text) > size:
        return -ERANGE
    view.write_bytes(args[0], text)
    return len(text)


def _getdents64(view: StateView, args: list[Any]) -> int:
    """The open directory's entries as ``struct dirent64`` records: ".", "..", then its
    entries by name; the description's offset counts the entries already returned."""
    state = view.state
    world = world_of(state)
    fd = concrete_int(view, args[0], 32, "getdents descriptor")
    count = concrete_int(view, args[2], 64, "getdents count", signed=False)
    opened = world.opened(fd)
    if opened is None:
        return -EBADF
    if not _is_directory(world, opened.node):
        return -ENOTDIR
    key = opened.path or "."
    parent = world.names.get(parent_of(key), opened.node)
    entries = [(".", inode(opened.node), S_IFDIR), ("..", inode(parent), S_IFDIR)]
    entries += [(name, inode(node_id), world.nodes[node_id].mode & S_IFMT)
                for name, node_id in directory_entries(world, key)]
    index = opened.offset
    out = bytearray()
    while index < len(entries):
        name, number, kind = entries[index]
        encoded = name.encode("utf-8", "surrogateescape") + b"\0"
        length = (19 + len(encoded) + 7) & ~7  # d_ino, d_off, d_reclen, d_type, d_name
        if len(out) + length > count:
            break
        record = (number.to_bytes(8, "little") + (index + 1).to_bytes(8, "little")
                  + length.to_bytes(2, "little") + bytes([DIRENT_TYPES.get(kind, 0)]) + encoded)
        out += record.ljust(length, b"\0")
        index += 1
    if not out and index < len(entries):
        return -EINVAL  # the buffer holds not even one record
    if out:
        view.write_bytes(args[1], bytes(out))
    state.posix = world.moved(fd, index)
    return len(out)


def _directory_missing(world: Any, path: str) -> int:
    """0 if the directory that would hold ``path`` exists, else ``-errno``."""
    parent = world.names.get(parent_of(path))
    if parent is None:
        return -ENOENT
    return 0 if _is_directory(world, parent) else -ENOTDIR


def _entry_checks(world: Any, old: str | None | int, new: str | None | int) -> int:
    """0 if link or rename may go on from ``old`` (which exists) to ``new`` (whose directory
    does), else ``-errno`` in the kernel's order: old's lookup, then new's directory."""
    if isinstance(old, int):
        return old
    if isinstance(new, int):
        return new
    if not old or old not in world.names or not new:
        return -ENOENT
    return _directory_missing(world, new)


def _link_entry(state: State, old: str | None | int, new: str | None | int) -> int:
    world = world_of(state)
    refused = _entry_checks(world, old, new)
    if refused:
        return refused
    assert isinstance(old, str) and isinstance(new, str)
    node = world.names[old]
    if new in world.names:
        return -EEXIST
    if _is_directory(world, node):
        return -EPERM  # no hard links to directories
    state.posix = attrs.evolve(world, names=world.names.set(new, node))
    return 0


def _link(view: StateView, args: list[Any]) -> int:
    """``link(old, new)``: ``new`` names old's file too (Linux's link does not follow a
    symbolic link ``old``: ``new`` names the link)."""
    state = view.state
    return _link_entry(state, path_of(view, args[0], follow=False), path_of(view, args[1], follow=False))


def _linkat(view: StateView, args: list[Any]) -> int:
    """``linkat(olddirfd, old, newdirfd, new, flags)`` (coreutils' ln)."""
    state = view.state
    flags = concrete_int(view, args[4], 32, "linkat flags")
    if flags & ~(_AT_SYMLINK_FOLLOW | _AT_EMPTY_PATH):
        return -EINVAL
    return _link_entry(state, path_at(view, args[0], args[1], bool(flags & _AT_SYMLINK_FOLLOW)),
                       path_at(view, args[2], args[3], False))


def _under(key: str, top: str) -> bool:
    return key == top or key.startswith(top + "/")


def _moved(key: str, old: str, new: str) -> str:
    return new + key[len(old):]


def _rename_entry(state: State, old: str | None | int, new: str | None | int, flags: int) -> int:
    """rename with renameat2's flags: a file or a directory (its whole subtree, and the
    working directory and open directories in it) moves to ``new``, replacing a file there
    or an empty directory; ``RENAME_NOREPLACE`` refuses to replace, ``RENAME_EXCHANGE`` swaps."""
    world = world_of(state)
    if flags & ~(_RENAME_NOREPLACE | _RENAME_EXCHANGE) or flags == _RENAME_NOREPLACE | _RENAME_EXCHANGE:
        return -EINVAL
    refused = _entry_checks(world, old, new)
    if refused:
        return refused
    assert isinstance(old, str) and isinstance(new, str)
    node = world.names[old]
    target = world.names.get(new)
    if old == "." or new == ".":
        return -EBUSY
    if target is not None and flags & _RENAME_NOREPLACE:
        return -EEXIST
    if target is None and flags & _RENAME_EXCHANGE:
        return -ENOENT
    if target == node:
        return 0  # two names of one file: nothing happens
    is_directory = _is_directory(world, node)
    if (is_directory and _under(new, old)) or (flags & _RENAME_EXCHANGE and _under(old, new)):
        return -EINVAL  # into itself
    if target is not None and not flags & _RENAME_EXCHANGE:
        if is_directory and not _is_directory(world, target):
            return -ENOTDIR
        if not is_directory and _is_directory(world, target):
            return -EISDIR
        if _is_directory(world, target) and directory_entries(world, new):
            return -ENOTEMPTY
    exchange = bool(flags & _RENAME_EXCHANGE)

    def place(key: str) -> str:
        if _under(key, old):
            return _moved(key, old, new)
        return _moved(key, new, old) if exchange and _under(key, new) else key

    names = world.names.mutate()
    for key in list(world.names.keys()):
        if _under(key, old) or _under(key, new):
            del names[key]
    for key, value in world.names.items():
        if _under(key, old) or (exchange and _under(key, new)):
            names[place(key)] = value
    descriptions = world.descriptions
    for number, opened in world.descriptions.items():
        if opened.path and place(opened.path) != opened.path:
            descriptions = descriptions.set(number, attrs.evolve(opened, path=place(opened.path)))
    state.posix = attrs.evolve(world, names=names.finish(), descriptions=descriptions,
                               cwd=place(world.cwd) if world.cwd != "." else world.cwd)
    return 0


def _rename(view: StateView, args: list[Any]) -> int:
    """``rename(old, new)``."""
    state = view.state
    return _rename_entry(state, path_of(view, args[0], follow=False), path_of(view, args[1], follow=False), 0)


def _renameat2(view: StateView, args: list[Any]) -> int:
    """``renameat2(olddirfd, old, newdirfd, new, flags)`` (``renameat`` is flags 0; mv)."""
    state = view.state
    flags = concrete_int(view, args[4], 32, "renameat2 flags")
    return _rename_entry(state, path_at(view, args[0], args[1], False), path_at(view, args[2], args[3], False),
                         flags)


def _symlink(view: StateView, args: list[Any]) -> int:
    """``symlink(target, path)`` (ln -s): a symbolic link at ``path`` holding ``target``,
    which need not exist; looked up only when a path through the link is."""
    return _make_link(view, args[0], path_of(view, args[1], follow=False))


def _symlinkat(view: StateView, args: list[Any]) -> int:
    """``symlinkat(target, dirfd, path)``, ``path`` taken from the directory ``dirfd``."""
    return _make_link(view, args[0], path_at(view, args[1], args[2], False))


def _make_link(view: StateView, target_address: Any, path: str | None | int) -> int:
    if isinstance(path, int):
        return path
    if path is None or type(target_address) is int and target_address == 0:
        return -EINVAL  # Linux gives EFAULT; NULL either way
    target = view.read_c_string(target_address)
    if not target:
        return -ENOENT  # an empty target, as Linux refuses it
    return _make_node(view.state, path, S_IFLNK, 0o777, tuple(target))


def _readlink(view: StateView, args: list[Any]) -> int:
    """``readlink(path, buffer, size)``: the link's target, cut to ``size`` bytes, without a
    terminating zero; EINVAL for a file that is not a link."""
    return _read_link(view, path_of(view, args[0], follow=False), args[1], args[2])


def _readlinkat(view: StateView, args: list[Any]) -> int:
    """``readlinkat(dirfd, path, buffer, size)`` (musl's realpath reads every component so)."""
    return _read_link(view, path_at(view, args[0], args[1], False), args[2], args[3])


def _read_link(view: StateView, path: str | None | int, buffer: Any, size_arg: Any) -> int:
    size = concrete_int(view, size_arg, 64, "readlink size")
    if size <= 0:
        return -EINVAL
    if isinstance(path, int):
        return path
    world = world_of(view.state)
    node_id = world.names.get(path) if path else None
    if node_id is None:
        return -ENOENT
    node = world.nodes[node_id]
    if node.mode & S_IFMT != S_IFLNK:
        return -EINVAL
    target = list(node.data[:size])
    view.write_bytes(buffer, target)
    return len(target)


HANDLERS: dict[str, ExternalHandler] = {
    "mkdir": _mkdir, "mkdirat": _mkdirat, "rmdir": _rmdir, "unlinkat": _unlinkat,
    "chdir": _chdir, "fchdir": _fchdir, "getcwd": _getcwd, "getdents64": _getdents64,
    "link": _link, "linkat": _linkat, "rename": _rename, "renameat2": _renameat2,
    "mknod": _mknod, "mknodat": _mknodat, "symlink": _symlink, "symlinkat": _symlinkat,
    "readlink": _readlink, "readlinkat": _readlinkat,
}
"""The handlers by system call name (their declarations: :mod:`symex.ir.system_calls`)."""
