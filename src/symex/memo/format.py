"""The file format of a recorded execution tree (``tree.db``): schema, node kinds, encodings.

One SQLite database (WAL journal). docs/memo.md describes it for other tools; this module is
the one place that knows it, for the writer (:mod:`symex.memo.store`) and the reader
(:mod:`symex.memo.tree`).

A node is a *segment* of a path: from its parent's fork (or the start, for the root) to the
point where the path forked again or ended. Its row is written once, when the segment ends;
a resumed segment (a path cut by a limit and continued by a later run) is written again,
whole. A fork's children get consecutive ids from ``first_child``; a child whose row is
missing has not been explored yet (its path was still running when its run stopped).
"""

from __future__ import annotations

import enum
import zlib

from symex.core.forks import ForkKind
from symex.core.outcome import ErrorKind

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "OLDEST_FORMAT_VERSION",
    "NodeStatus",
    "SCHEMA",
    "TREE_FILE",
    "decode_varints",
    "default_decisions",
    "encode_varints",
    "error_code",
    "error_kind",
    "pack_inputs",
    "split_inputs",
    "stored_decisions",
    "unpack_inputs",
]

#: the file name inside an output directory
TREE_FILE = "tree.db"
#: ``meta.format``: what the file is
FORMAT_NAME = "symex-execution-tree"
#: ``meta.version``: the format version this symex writes (and the newest it reads)
FORMAT_VERSION = 2
#: the oldest version it reads: trees of version 1 were recorded before objects moved to
#: 38-bit segments, and the addresses in their answers and digests are not this symex's
OLDEST_FORMAT_VERSION = 2


class NodeStatus(enum.IntEnum):
    """How a node's segment ended (``node.status``)."""

    OPEN = 0
    """Not explored yet: no row (a path still running when its run stopped)."""
    FORK = 1
    """The path forked; ``kind`` says why (a :class:`~symex.core.forks.ForkKind`)."""
    COMPLETED = 2
    """The program exited; ``detail`` is the exit code."""
    ERROR = 3
    """The path ended in an error; ``kind`` is the error kind (see :func:`error_code`)."""
    PARTIAL = 4
    """The path ended early for a reason of its own (an unsupported call, the solver gave up);
    ``detail`` is the reason's id in table ``reason``. Not resumed."""
    CUT = 5
    """A limit stopped the path (time, instructions, depth, states, memory, Ctrl-C): a later
    run resumes it; ``detail`` is the reason's id."""

    @property
    def resumable(self) -> bool:
        """Whether a continuing run explores on from here."""
        return self is NodeStatus.OPEN or self is NodeStatus.CUT

    @property
    def is_leaf(self) -> bool:
        """Whether the path ended (or stopped) in this segment."""
        return self is not NodeStatus.FORK


SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # where forks happened and paths ended (instruction of a function's block) and its source
    "CREATE TABLE location (id INTEGER PRIMARY KEY, function TEXT NOT NULL, "
    "block INTEGER NOT NULL, instruction INTEGER NOT NULL, file TEXT, line INTEGER)",
    # the reasons of partial and cut paths
    "CREATE TABLE reason (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE)",
    # the symbolic objects of a path's test: JSON [[name, size], ...]
    "CREATE TABLE layout (id INTEGER PRIMARY KEY, objects TEXT NOT NULL UNIQUE)",
    "CREATE TABLE node ("
    " id INTEGER PRIMARY KEY,"
    " parent INTEGER,"  # NULL for the root
    " decision INTEGER NOT NULL,"  # the parent's outcome this segment follows
    " status INTEGER NOT NULL,"  # NodeStatus
    " kind INTEGER,"  # FORK: ForkKind; ERROR: error kind code
    " detail INTEGER,"  # COMPLETED: exit code; PARTIAL/CUT: reason id
    " location INTEGER,"  # location id of the fork or the end (NULL: main returned)
    " instructions INTEGER NOT NULL,"  # executed in the segment
    " solver_us INTEGER NOT NULL,"  # microseconds in the solver during the segment
    " queries INTEGER NOT NULL,"  # solver calls during the segment
    " hash INTEGER NOT NULL,"  # digest of what decided the segment (divergence check)
    " first_child INTEGER,"  # FORK: id of the first child (the others follow)
    " decisions BLOB,"  # FORK: children's decisions as varints (NULL: the kind's default)
    " log BLOB,"  # answers the path got in the segment (tagged varints); NULL: none
    " inputs BLOB)",  # leaf: the test's inputs (layout id, deflated bytes); NULL: none
)


def default_decisions(kind: ForkKind) -> tuple[int, ...]:
    """The children's decisions of a two-way fork in child order (the forking state first),
    stored as NULL; other forks store theirs."""
    if kind is ForkKind.ERROR_CHECK:
        return (0, 1)
    return (1, 0)


def stored_decisions(kind: ForkKind, decisions: tuple[int, ...]) -> bytes | None:
    """``node.decisions`` of a fork of ``kind`` whose children took ``decisions``: NULL for
    the kind's default, else the varints."""
    return None if decisions == default_decisions(kind) else encode_varints(decisions)


_ERROR_KINDS = tuple(ErrorKind)


def error_code(kind: ErrorKind) -> int:
    """The code of an error kind in ``node.kind`` (its position in KLEE's list of suffixes as
    symex orders them, starting at 1)."""
    return _ERROR_KINDS.index(kind) + 1


def error_kind(code: int) -> ErrorKind | None:
    """The error kind of a ``node.kind`` code (None for an unknown code)."""
    return _ERROR_KINDS[code - 1] if 0 < code <= len(_ERROR_KINDS) else None


def encode_varints(values: list[int] | tuple[int, ...]) -> bytes:
    """Unsigned integers as LEB128 varints (7 bits a byte, low first)."""
    out = bytearray()
    for value in values:
        while value > 0x7F:
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        out.append(value)
    return bytes(out)


def decode_varints(data: bytes) -> list[int]:
    """The integers of :func:`encode_varints`; ValueError for a truncated one."""
    values: list[int] = []
    value = shift = 0
    for byte in data:
        value |= (byte & 0x7F) << shift
        if byte & 0x80:
            shift += 7
        else:
            values.append(value)
            value = shift = 0
    if shift:
        raise ValueError("truncated varint")
    return values


#: inputs longer than this (after trailing zeros are cut) are deflated
DEFLATE_OVER = 48
_RAW = 0
_DEFLATED = 1


def pack_inputs(layout: int, data: bytes) -> bytes:
    """A leaf's test inputs: the layout id, a form byte, then all objects' bytes without their
    trailing zeros (the layout gives the full length): as they are (form 0), or raw-deflated
    when long (form 1). Most input bytes are zeros (unconstrained stat fields)."""
    trimmed = data.rstrip(b"\0")
    if len(trimmed) > DEFLATE_OVER:
        packed = zlib.compress(trimmed, 6, -15)
        if len(packed) < len(trimmed):
            return encode_varints([layout, _DEFLATED]) + packed
    return encode_varints([layout, _RAW]) + trimmed


def unpack_inputs(blob: bytes) -> tuple[int, bytes]:
    """(layout id, bytes) of :func:`pack_inputs`, without the trailing zeros (pad them to the
    layout's size); ValueError for a damaged blob."""
    end = 0
    while end < len(blob) and blob[end] & 0x80:
        end += 1
    if end + 1 >= len(blob):
        raise ValueError("inputs without a layout and a form")
    layout = decode_varints(blob[:end + 1])[0]
    form = blob[end + 1]
    body = blob[end + 2:]
    if form == _DEFLATED:
        try:
            return layout, zlib.decompress(body, -15)
        except zlib.error as exc:
            raise ValueError(f"damaged inputs: {exc}") from None
    if form != _RAW:
        raise ValueError(f"inputs in an unknown form {form}")
    return layout, body


def split_inputs(objects: list[tuple[str, int]], data: bytes) -> dict[str, bytes]:
    """The bytes of :func:`unpack_inputs` as one entry per object of the layout (name, size),
    the trailing zeros put back; ValueError when there are more bytes than the objects hold."""
    total = sum(size for _, size in objects)
    if len(data) > total:
        raise ValueError(f"{len(data)} bytes of inputs for objects of {total}")
    data = data.ljust(total, b"\0")
    out: dict[str, bytes] = {}
    offset = 0
    for name, size in objects:
        out[name] = data[offset:offset + size]
        offset += size
    return out
