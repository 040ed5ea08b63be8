"""Writing a file so that a reader, or an interrupted run, never sees half of it.

Where Linux allows it, a new file is written complete as an unnamed file in its directory
(``O_TMPFILE``) and only then given its name (``linkat``): a run killed at any moment leaves
no partial file and no temporary one. That is one system call fewer than a temporary name
and a rename, and no random name to make: a run writes a file per test, and KLEE writes its
tests in place. A file that exists already (``info``, rewritten as a run goes), a system
without ``O_TMPFILE`` or ``/proc``, or a file system that refuses it take the other way: a
temporary name in the same directory, then a rename over the target.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

__all__ = ["write_atomically"]

#: whether O_TMPFILE + linkat may work in this process (False after the first refusal)
_UNNAMED_FIRST: list[bool] = [hasattr(os, "O_TMPFILE") and os.path.isdir("/proc/self/fd")]
#: errors that say the unnamed way is not available here (the file system, a sandbox's /proc)
_NOT_HERE = frozenset({errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT, errno.EXDEV,
                       errno.EPERM, errno.ENOSYS})


def write_atomically(path: str | os.PathLike[str], data: bytes | str) -> None:
    """Write ``data`` to ``path`` so that ``path`` is never seen half written (see the
    module docstring); an existing file is replaced."""
    payload = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    target = os.fspath(path)
    if _UNNAMED_FIRST[0] and _write_unnamed(target, payload):
        return
    _write_renamed(target, payload)


def _write_unnamed(target: str, payload: bytes) -> bool:
    """Write ``payload`` as an unnamed file, then name it ``target``; False where that is
    not possible (the file exists, or the system refuses: the caller renames instead)."""
    directory, name = os.path.split(target)
    try:
        folder = os.open(directory or ".", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return False  # the rename way reports the error in its own words
    try:
        try:
            # the mode as open(2) would create it: 0666 less the umask
            fd = os.open(".", os.O_WRONLY | os.O_TMPFILE | os.O_CLOEXEC, 0o666, dir_fd=folder)
        except OSError as exc:
            if exc.errno in _NOT_HERE:
                _UNNAMED_FIRST[0] = False
                return False
            raise
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view):]
            # the magic link of the descriptor, followed: the unnamed file gets its name
            os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=folder, follow_symlinks=True)
        except FileExistsError:
            return False  # replacing a file takes the rename way
        except OSError as exc:
            if exc.errno not in _NOT_HERE:
                raise
            _UNNAMED_FIRST[0] = False
            return False
        finally:
            os.close(fd)  # an unnamed file that was not linked vanishes here
    finally:
        os.close(folder)
    return True


def _write_renamed(target: str, payload: bytes) -> None:
    """Write ``payload`` under a temporary name beside ``target``, then rename it."""
    directory, name = os.path.split(target)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory or ".")
    try:
        # mkstemp makes the file private (0600); outputs get the usual permissions
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


_UMASK: list[int] = []


def _umask() -> int:
    if not _UMASK:
        current = os.umask(0o022)  # reading the umask means setting it: put it back at once
        os.umask(current)
        _UMASK.append(current)
    return _UMASK[0]
