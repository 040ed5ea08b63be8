"""``tree.db`` on disk: create, open and check it; read its nodes; write rows in batches.

One writer (the recording run). Rows wait in memory and are written in one transaction at
least every :data:`FLUSH_INTERVAL` seconds, and when the run ends; the journal is SQLite's
write-ahead log, so the file is a valid tree at every moment: a process killed with SIGKILL
loses only the rows of the last batch, and the next run explores those paths again.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any
from collections.abc import Iterator, Mapping, Sequence

from symex.errors import SymexError
from symex.core.forks import ForkKind
from symex.memo.format import (
    FORMAT_NAME,
    FORMAT_VERSION,
    OLDEST_FORMAT_VERSION,
    SCHEMA,
    decode_varints,
    default_decisions,
)

__all__ = ["FLUSH_INTERVAL", "FLUSH_ROWS", "NodeRow", "TreeFileError", "TreeStore"]

#: seconds a recorded row may wait in memory before it is written
FLUSH_INTERVAL = 0.5
#: rows that are written at once, however little time passed
FLUSH_ROWS = 20_000

#: the columns of ``node`` a run loads to replay (the inputs are read when a path gets there)
NodeRow = tuple[int, "int | None", int, int, "int | None", "int | None", "int | None", int,
                int, int, int, "int | None", "bytes | None", "bytes | None"]
_ROW_COLUMNS = ("id, parent, decision, status, kind, detail, location, instructions, "
                "solver_us, queries, hash, first_child, decisions, log")
_INSERT = ("INSERT OR REPLACE INTO node (id, parent, decision, status, kind, detail, location, "
           "instructions, solver_us, queries, hash, first_child, decisions, log, inputs) "
           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")


class TreeFileError(SymexError):
    """A ``tree.db`` that cannot be used: missing, not a tree, damaged, from a newer symex, or
    recorded for another program or other inputs."""


class TreeStore:
    """An open ``tree.db`` (see the module docstring)."""

    def __init__(self, path: Path, db: sqlite3.Connection, meta: dict[str, str],
                 writable: bool) -> None:
        self.path = path
        self.meta = meta
        self.writable = writable
        self._db = db
        self._pending: list[tuple[Any, ...]] = []
        self._deleted: list[int] = []
        self._last_flush = time.monotonic()
        self._locations: dict[tuple[Any, ...], int] = {}
        self._reasons: dict[str, int] = {}
        self._layouts: dict[str, int] = {}
        self._layout_keys: dict[tuple[tuple[str, int], ...], int] = {}
        self.rows_written = 0

    # -- opening ---------------------------------------------------------------------------

    @classmethod
    def create(cls, path: str | os.PathLike[str], meta: Mapping[str, str]) -> TreeStore:
        """A new, empty tree at ``path`` (which must not exist, or be an empty file)."""
        path = Path(path)
        if path.exists() and (not path.is_file() or path.stat().st_size):
            raise TreeFileError(f"{os.fspath(path)} already exists; record the tree into a new "
                                f"output directory or file")
        try:
            db = sqlite3.connect(path, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("BEGIN")
            for statement in SCHEMA:
                db.execute(statement)
            values = {"format": FORMAT_NAME, "version": str(FORMAT_VERSION), **meta}
            db.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", sorted(values.items()))
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise TreeFileError(f"cannot create the execution tree {os.fspath(path)}: {exc}; "
                                f"check that its directory is writable") from exc
        return cls(path, db, dict(values), writable=True)

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, writable: bool) -> TreeStore:
        """An existing tree; :class:`TreeFileError` if it is missing, damaged or newer."""
        path = Path(path)
        where = os.fspath(path)
        if not path.is_file():
            raise TreeFileError(f"{where} does not exist; pass a directory or tree.db written "
                                f"by 'symex run --record-tree'")
        db: sqlite3.Connection | None = None
        try:
            if writable:
                db = sqlite3.connect(path, isolation_level=None)
            else:
                db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True,
                                     isolation_level=None)
            meta = dict(db.execute("SELECT key, value FROM meta"))
            tables = {name for (name,) in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            # a truncated or overwritten file can still have a readable first page
            problems = [row[0] for row in db.execute("PRAGMA quick_check(3)")]
            if problems != ["ok"]:
                raise sqlite3.DatabaseError("; ".join(problems))
        except sqlite3.Error as exc:
            if db is not None:
                db.close()
            raise TreeFileError(f"{where} is not an execution tree written by symex ({exc}); "
                                f"pass a tree.db written by 'symex run --record-tree'") from exc
        if meta.get("format") != FORMAT_NAME:
            db.close()
            raise TreeFileError(f"{where} is not an execution tree written by symex; pass a "
                                f"tree.db written by 'symex run --record-tree'")
        try:
            version = int(meta.get("version", ""))
        except ValueError:
            version = -1
        if version > FORMAT_VERSION:
            db.close()
            raise TreeFileError(f"{where} was written by a newer symex (tree format {version}; "
                                f"this one reads up to {FORMAT_VERSION}); upgrade symex")
        if 1 <= version < OLDEST_FORMAT_VERSION:
            db.close()
            raise TreeFileError(f"{where} was recorded by an older symex (tree format "
                                f"{version}), whose addresses differ from this one's; record "
                                f"the tree again with --record-tree")
        if version < 1 or not {"node", "location", "reason", "layout"} <= tables:
            db.close()
            raise TreeFileError(f"{where} is a damaged execution tree (format "
                                f"{meta.get('version')!r}, tables {sorted(tables)}); record a "
                                f"new tree with --record-tree")
        if writable:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
        return cls(path, db, meta, writable)

    # -- reading ---------------------------------------------------------------------------

    def node_rows(self) -> Iterator[NodeRow]:
        """Every node row (its log, but not its inputs), in id order."""
        try:
            yield from self._db.execute(f"SELECT {_ROW_COLUMNS} FROM node ORDER BY id")
        except sqlite3.Error as exc:
            raise TreeFileError(f"{os.fspath(self.path)} is damaged ({exc}); record a new tree "
                                f"with --record-tree") from exc

    def inputs(self, node: int) -> bytes | None:
        """The ``inputs`` of a node (None if it has none, or no row)."""
        row = self._db.execute("SELECT inputs FROM node WHERE id = ?", (node,)).fetchone()
        return None if row is None else row[0]

    def log(self, node: int) -> bytes | None:
        """The ``log`` of a node (None if it has none, or no row)."""
        row = self._db.execute("SELECT log FROM node WHERE id = ?", (node,)).fetchone()
        return None if row is None else row[0]

    def table(self, name: str) -> dict[int, tuple[Any, ...]]:
        """A small table (``location``, ``reason``, ``layout``) by id."""
        columns = {"location": "id, function, block, instruction, file, line",
                   "reason": "id, text", "layout": "id, objects"}[name]
        return {row[0]: row[1:] for row in self._db.execute(f"SELECT {columns} FROM {name}")}

    def node_count(self) -> int:
        """Rows in ``node``."""
        return int(self._db.execute("SELECT COUNT(*) FROM node").fetchone()[0])

    def max_id(self) -> int:
        """The largest node id in use, recorded or reserved for a fork's children (a fork
        reserves one id per child: the last child of the last fork may have no row yet)."""
        largest = self._db.execute("SELECT MAX(id) FROM node").fetchone()[0] or 0
        for first, kind, decisions in self._db.execute(
                "SELECT first_child, kind, decisions FROM node WHERE first_child IS NOT NULL"):
            children = (len(default_decisions(ForkKind(kind))) if decisions is None
                        else len(decode_varints(decisions)))
            largest = max(largest, first + children - 1)
        return largest

    # -- writing ---------------------------------------------------------------------------

    def location_id(self, function: str, block: int, instruction: int, file: str | None,
                    line: int | None) -> int:
        """The id of a location, added to ``location`` at the next flush if new."""
        if not self._locations:
            self._locations = {tuple(v[:3]): k for k, v in self.table("location").items()}
        key = (function, block, instruction)
        known = self._locations.get(key)
        if known is None:
            known = len(self._locations) + 1  # ids are 1..n: rows are never deleted
            self._locations[key] = known
            self._pending.append(("location", (known, function, block, instruction, file, line)))
        return known

    def reason_id(self, text: str) -> int:
        """The id of a partial path's reason, added to ``reason`` if new."""
        return self._small_table_id("reason", self._reasons, text)

    def layout_id(self, objects: Sequence[tuple[str, int]]) -> int:
        """The id of a list of symbolic objects (name, size), added to ``layout`` if new."""
        key = tuple(objects)
        known = self._layout_keys.get(key)
        if known is None:
            known = self._small_table_id("layout", self._layouts,
                                         json.dumps([list(o) for o in objects]))
            self._layout_keys[key] = known
        return known

    def _small_table_id(self, table: str, cache: dict[str, int], text: str) -> int:
        if not cache:
            cache.update({v[0]: k for k, v in self.table(table).items()})
        known = cache.get(text)
        if known is None:
            known = max(cache.values(), default=0) + 1
            cache[text] = known
            self._pending.append((table, (known, text)))
        return known

    def write_node(self, row: Sequence[Any]) -> None:
        """Queue a node row (the 15 columns of ``node``, in order); replaces an older row."""
        self._pending.append(("node", row))
        if len(self._pending) >= FLUSH_ROWS:
            self.flush()

    def delete_nodes(self, ids: Sequence[int]) -> None:
        """Queue the removal of nodes (a subtree found diverged)."""
        self._pending.append(("delete", tuple(ids)))

    def maybe_flush(self) -> None:
        """Write the queued rows if the oldest waited :data:`FLUSH_INTERVAL` seconds."""
        if self._pending and time.monotonic() - self._last_flush >= FLUSH_INTERVAL:
            self.flush()

    def flush(self) -> None:
        """Write every queued row in one transaction."""
        self._last_flush = time.monotonic()
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            nodes: list[tuple[Any, ...]] = []
            for what, row in pending:
                if what == "node":
                    nodes.append(row)
                    continue
                if nodes:  # keep the order of writes and deletions
                    db.executemany(_INSERT, nodes)
                    nodes = []
                if what == "delete":
                    for start in range(0, len(row), 500):
                        chunk = row[start:start + 500]
                        db.execute(f"DELETE FROM node WHERE id IN ({','.join('?' * len(chunk))})",
                                   chunk)
                elif what == "location":
                    db.execute("INSERT INTO location (id, function, block, instruction, file, "
                               "line) VALUES (?, ?, ?, ?, ?, ?)", row)
                else:
                    db.execute(f"INSERT INTO {what} (id, {'text' if what == 'reason' else 'objects'})"
                               f" VALUES (?, ?)", row)
            if nodes:
                db.executemany(_INSERT, nodes)
            db.execute("COMMIT")
        except BaseException as exc:
            # a Ctrl-C mid-write too: a transaction left open would make every later write
            # and the closing checkpoint fail ("database table is locked")
            if db.in_transaction:
                db.execute("ROLLBACK")
            if not isinstance(exc, sqlite3.Error):
                self._pending[:0] = pending  # queued again: the next flush (close) writes them
                raise
            raise TreeFileError(f"cannot write the execution tree {os.fspath(self.path)}: {exc}; "
                                f"check the disk space and permissions") from exc
        self.rows_written += sum(1 for what, _ in pending if what == "node")

    def set_meta(self, values: Mapping[str, str]) -> None:
        """Set ``meta`` entries (at once, in their own transaction)."""
        self.flush()
        self._db.execute("BEGIN IMMEDIATE")
        self._db.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                             sorted(values.items()))
        self._db.execute("COMMIT")
        self.meta.update(values)

    def checkpoint(self) -> None:
        """Write the queued rows and fold the write-ahead log into the file (so its size is
        the tree's)."""
        self.flush()
        if self.writable:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def copy_to(self, target: Path) -> None:
        """Write a consistent copy of the tree to ``target`` (SQLite's online backup)."""
        try:
            copy = sqlite3.connect(target)
            try:
                self._db.backup(copy)
                copy.execute("PRAGMA journal_mode=WAL")
            finally:
                copy.close()
        except sqlite3.Error as exc:
            raise TreeFileError(f"cannot copy {os.fspath(self.path)} to {os.fspath(target)}: "
                                f"{exc}; check the disk space and permissions") from exc

    def size_bytes(self) -> int:
        """Bytes of the database file and its write-ahead log."""
        total = 0
        for suffix in ("", "-wal"):
            try:
                total += os.stat(f"{self.path}{suffix}").st_size
            except OSError:
                pass
        return total

    def close(self) -> None:
        """Write what is queued, fold the log into the file, and close."""
        try:
            if self.writable:
                self.flush()
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            self._db.close()
