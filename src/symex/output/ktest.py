"""KLEE's ``.ktest`` test-case format, read and written byte-compatibly with KLEE.

Layout (all integers are unsigned 32-bit big-endian)::

    magic "KTEST" (legacy files: "BOUT\\n")   version
    numArgs, then per argument: length, bytes
    if version >= 2: symArgvs, symArgvLen
    numObjects, then per object: name length, name bytes, size, data bytes

Files written here use version 3, the version current KLEE writes and ``ktest-tool`` reads.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Sequence
from pathlib import Path

import attrs

from symex.output.atomic_write import write_atomically
from symex.core.search.seeding import Seed
from symex.errors import ConfigError, SymexError

__all__ = ["KTEST_VERSION", "KTest", "KTestError", "KTestObject", "read_ktest", "read_seeds",
           "write_ktest"]

KTEST_VERSION = 3
"""The format version :meth:`KTest.to_bytes` writes."""

_MAGIC = b"KTEST"
_LEGACY_MAGIC = b"BOUT\n"
_U32 = struct.Struct(">I")
# Text in .ktest files is raw bytes; surrogateescape lets any byte sequence round-trip through str.
_TEXT_ERRORS = "surrogateescape"


class KTestError(SymexError):
    """A ``.ktest`` file is missing, truncated or not in KLEE's format."""


@attrs.frozen
class KTestObject:
    """One named symbolic object of a test case and the concrete bytes chosen for it."""

    name: str
    data: bytes


@attrs.frozen
class KTest:
    """A test case: program arguments plus the concrete contents of every symbolic object."""

    args: tuple[str, ...]
    objects: tuple[KTestObject, ...]
    sym_argvs: int = 0
    sym_argv_len: int = 0

    def to_bytes(self) -> bytes:
        """Serialise in KLEE's format (version 3)."""
        parts: list[bytes] = [_MAGIC, _U32.pack(KTEST_VERSION), _U32.pack(len(self.args))]
        for arg in self.args:
            encoded = arg.encode("utf-8", _TEXT_ERRORS)
            parts.append(_U32.pack(len(encoded)))
            parts.append(encoded)
        parts.append(_U32.pack(self.sym_argvs))
        parts.append(_U32.pack(self.sym_argv_len))
        parts.append(_U32.pack(len(self.objects)))
        for obj in self.objects:
            name = obj.name.encode("utf-8", _TEXT_ERRORS)
            parts.append(_U32.pack(len(name)))
            parts.append(name)
            parts.append(_U32.pack(len(obj.data)))
            parts.append(bytes(obj.data))
        return b"".join(parts)

    @classmethod
    def from_bytes(cls, data: bytes) -> KTest:
        """Parse the contents of a ``.ktest`` file; raise :class:`KTestError` if malformed."""
        reader = _Reader(bytes(data))
        magic = reader.take(5, "magic")
        if magic not in (_MAGIC, _LEGACY_MAGIC):
            raise KTestError(
                f"not a .ktest file: starts with {magic!r}, expected {_MAGIC!r} "
                "(pass a test case written by symex or KLEE)"
            )
        version = reader.u32("version")
        if version < 1 or version > KTEST_VERSION:
            raise KTestError(
                f"unsupported .ktest version {version} (this symex reads versions 1 to {KTEST_VERSION})"
            )
        num_args = reader.count(4, "number of arguments")
        args = tuple(reader.text(f"argument {i}") for i in range(num_args))
        sym_argvs = sym_argv_len = 0
        if version >= 2:
            sym_argvs = reader.u32("symArgvs")
            sym_argv_len = reader.u32("symArgvLen")
        num_objects = reader.count(8, "number of objects")
        objects: list[KTestObject] = []
        for i in range(num_objects):
            name = reader.text(f"name of object {i}")
            size = reader.u32(f"size of object {i}")
            objects.append(KTestObject(name=name, data=reader.take(size, f"data of object {i} ({name!r})")))
        if not reader.at_end():
            raise KTestError(
                f"malformed .ktest file: {reader.remaining()} unexpected bytes after the last object "
                "(the file is corrupt; regenerate the test case)"
            )
        return cls(args=args, objects=tuple(objects), sym_argvs=sym_argvs, sym_argv_len=sym_argv_len)


class _Reader:
    """Cursor over the bytes of a .ktest file that turns every short read into a KTestError."""

    __slots__ = ("_data", "_pos")

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0

    def remaining(self) -> int:
        return len(self._data) - self._pos

    def at_end(self) -> bool:
        return self._pos == len(self._data)

    def take(self, n: int, what: str) -> bytes:
        if n > self.remaining():
            raise KTestError(
                f"truncated .ktest file: {what} needs {n} bytes at offset {self._pos}, "
                f"only {self.remaining()} left (the file is corrupt; regenerate the test case)"
            )
        chunk = self._data[self._pos : self._pos + n]
        self._pos += n
        return chunk

    def u32(self, what: str) -> int:
        value: int = _U32.unpack(self.take(4, what))[0]
        return value

    def count(self, min_entry_size: int, what: str) -> int:
        """Read an element count, rejecting counts the remaining bytes cannot possibly hold."""
        value = self.u32(what)
        if value * min_entry_size > self.remaining():
            raise KTestError(
                f"malformed .ktest file: {what} is {value} but only {self.remaining()} bytes follow "
                "(the file is corrupt; regenerate the test case)"
            )
        return value

    def text(self, what: str) -> str:
        length = self.u32(f"length of {what}")
        return self.take(length, what).decode("utf-8", _TEXT_ERRORS)


def read_ktest(path: str | os.PathLike[str]) -> KTest:
    """Read a ``.ktest`` file; raise :class:`KTestError` if it is missing or malformed."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise KTestError(f"cannot read .ktest file {os.fspath(path)}: {exc.strerror or exc}") from exc
    try:
        return KTest.from_bytes(data)
    except KTestError as exc:
        raise KTestError(f"{os.fspath(path)}: {exc}") from exc


def write_ktest(path: str | os.PathLike[str], ktest: KTest) -> None:
    """Write ``ktest`` to ``path`` atomically: readers never see a partly written file."""
    write_atomically(path, ktest.to_bytes())


def read_seeds(files: Sequence[str | os.PathLike[str]] = (),
               directories: Sequence[str | os.PathLike[str]] = ()) -> list[Seed]:
    """Seeds (KLEE's ``--seed-file``, ``--seed-dir``) from ``.ktest`` files and from every
    ``.ktest`` file of each directory (in name order), in the order given."""
    paths = [Path(p) for p in files]
    for directory in directories:
        found = sorted(Path(directory).glob("*.ktest"))
        if not found:
            raise ConfigError(f"--seed-dir {os.fspath(directory)}: no .ktest files there; give "
                              "a directory of tests (an earlier run's output directory)")
        paths.extend(found)
    seeds = []
    for path in paths:
        ktest = read_ktest(path)
        seeds.append(Seed(tuple((o.name, o.data) for o in ktest.objects), os.fspath(path)))
    return seeds
