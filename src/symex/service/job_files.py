"""The server's access to a job's directory, which the job's sandboxed processes write.

A job's processes run the tenant's code natively (its compiler, its replays), and its
directory is theirs to write: a file the server expects there may be a symbolic link to
anywhere (another job's results, the database, ``/etc/shadow``), a FIFO that blocks whoever
opens it, or huge. The server therefore reads and writes job files only through these
functions: a path is walked from the job's directory one name at a time, following no
symbolic link at any level (``O_NOFOLLOW``); only regular files are read, each read is
bounded, and a file the server writes is made beside its place and renamed over it
(``write_atomically``: a link standing there is replaced, never followed).
"""

from __future__ import annotations

import os
import re
import sqlite3
import stat
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path, PurePosixPath

import attrs

from symex.output.atomic_write import write_atomically

__all__ = ["MAX_FILE_BYTES", "JobRun", "job_database", "job_runs", "list_job_entries",
           "open_job_log", "read_job_bytes", "read_job_files", "read_job_text"]

#: the most the server reads of one job file (a test, a report, a coverage page)
MAX_FILE_BYTES = 64 << 20


def _names(relative: str | os.PathLike[str]) -> list[str]:
    parts = PurePosixPath(os.fspath(relative)).parts
    if not parts or any(part in ("", ".", "..", "/") for part in parts):
        raise OSError(f"not a path inside a job: {os.fspath(relative)!r}")
    return list(parts)


@contextmanager
def _directory(where: Path, names: list[str]) -> Iterator[int]:
    """A descriptor of the directory ``where/names...``, walked without following links."""
    fd = os.open(where, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in names:
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


def _open_regular(where: Path, relative: str | os.PathLike[str]) -> int:
    """A descriptor of the regular file ``where/relative`` (OSError for anything else)."""
    names = _names(relative)
    with _directory(where, names[:-1]) as directory:
        return _open_regular_in(directory, names[-1])


def _open_regular_in(directory: int, name: str) -> int:
    """A descriptor of the regular file ``name`` in the directory open as ``directory``."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=directory)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"{name} is not a regular file")
    return fd


def _read_limited(fd: int, limit: int) -> bytes | None:
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(limit + 1)
    return data if len(data) <= limit else None


def read_job_bytes(where: Path, relative: str | os.PathLike[str],
                   limit: int = MAX_FILE_BYTES) -> bytes | None:
    """The contents of the regular file ``relative`` of job directory ``where``; None if it
    is missing, not a regular file, reached through a link, or over ``limit`` bytes."""
    try:
        fd = _open_regular(where, relative)
    except OSError:
        return None
    return _read_limited(fd, limit)


def read_job_files(where: Path, relative: str | os.PathLike[str], names: Iterable[str],
                   limit: int = MAX_FILE_BYTES) -> Iterator[tuple[str, bytes | None]]:
    """Each of the files ``names`` of the directory ``relative`` of job directory ``where``
    with its contents, as :func:`read_job_bytes` reads them, the directory walked once (a
    run's 7,000 tests: the walk per file was a quarter of zipping them)."""
    with ExitStack() as stack:
        try:
            fd: int | None = stack.enter_context(_directory(where, _names(relative)))
        except OSError:
            fd = None
        for name in names:
            data = None
            if fd is not None and "/" not in name and name not in ("", ".", ".."):
                try:
                    data = _read_limited(_open_regular_in(fd, name), limit)
                except OSError:
                    data = None
            yield name, data


def read_job_text(where: Path, relative: str | os.PathLike[str],
                  limit: int = MAX_FILE_BYTES) -> str | None:
    """:func:`read_job_bytes` as text (undecodable bytes replaced)."""
    data = read_job_bytes(where, relative, limit)
    return None if data is None else data.decode("utf-8", "replace")


def list_job_entries(where: Path, relative: str | os.PathLike[str] = "",
                     directories: bool = False) -> list[str]:
    """The names of the regular files (or, with ``directories``, the directories) in the
    directory ``relative`` of job directory ``where``, sorted; links are neither."""
    try:
        with _directory(where, _names(relative) if os.fspath(relative) else []) as fd:
            found = []
            with os.scandir(fd) as entries:
                for entry in entries:
                    kind = entry.is_dir(follow_symlinks=False) if directories else \
                        entry.is_file(follow_symlinks=False)
                    if kind:
                        found.append(entry.name)
    except OSError:
        return []
    return sorted(found)


@contextmanager
def job_database(where: Path, relative: str | os.PathLike[str]) -> Iterator[sqlite3.Connection | None]:
    """A read-only SQLite connection to the database file ``relative`` of a job (a run's
    ``run.stats``), opened through the descriptor the safe walk gave, so that no link
    swapped in meanwhile is followed; None where there is no such regular file."""
    try:
        fd = _open_regular(where, relative)
    except OSError:
        yield None
        return
    try:
        try:
            db = sqlite3.connect(f"file:/proc/self/fd/{fd}?mode=ro", uri=True, timeout=2)
        except sqlite3.Error:
            yield None
            return
        try:
            yield db
        finally:
            db.close()
    finally:
        os.close(fd)


def open_job_log(where: Path, name: str) -> int:
    """A descriptor appending to the log ``name`` of job directory ``where`` (made if
    missing; anything but a regular file standing there is replaced by an empty log)."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        fd = os.open(where / name, flags, 0o644)
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
        os.close(fd)
    except OSError:
        pass
    write_atomically(where / name, b"")
    return os.open(where / name, flags, 0o644)


@attrs.frozen
class JobRun:
    """One attempt's output directory ``name`` (``run-N``) in job directory ``where``, read
    as the module docstring says."""

    where: Path
    name: str

    def read_bytes(self, file: str, limit: int = MAX_FILE_BYTES) -> bytes | None:
        """The run's file ``file`` (None: missing, not a regular file, or too big)."""
        return read_job_bytes(self.where, f"{self.name}/{file}", limit)

    def read_text(self, file: str, limit: int = MAX_FILE_BYTES) -> str | None:
        """The run's file ``file`` as text."""
        return read_job_text(self.where, f"{self.name}/{file}", limit)

    def read_files(self, files: Iterable[str]) -> Iterator[tuple[str, bytes | None]]:
        """Each of the run's files ``files`` with its contents (None as :meth:`read_bytes`)."""
        return read_job_files(self.where, self.name, files)

    def files(self) -> list[str]:
        """The names of the run's regular files, sorted."""
        return list_job_entries(self.where, self.name)

    def database(self, file: str) -> AbstractContextManager[sqlite3.Connection | None]:
        """A read-only connection to the run's SQLite file ``file`` (None: there is none)."""
        return job_database(self.where, f"{self.name}/{file}")


def job_runs(where: Path) -> list[JobRun]:
    """The output directories of a job's attempts (``run-1``, ``run-2``...), oldest first
    (not their orders, ``run-1.order``...)."""
    names = [name for name in list_job_entries(where, directories=True)
             if re.fullmatch(r"run-\d+", name)]
    return [JobRun(where, name) for name in sorted(names, key=lambda n: int(n.split("-")[1]))]
