"""``RunJournal``: a parallel run's open jobs and finished paths, in SQLite, so that a run
whose coordinator was killed is resumed (``--continue-with DIR`` with ``--workers``).

The coordinator alone writes it (``jobs.db`` in the output directory): a row per open job
(its events, depth and inputs: everything a worker needs to rebuild its state), a row per
path that ended for good (its decision sequence and how it ended), and the identity of the
program and inputs spec. A job's row goes when the worker that holds it reports its subtree
done. Rows are committed once per worker report, after the report's tests went through the
hooks (so after their files are written): a killed coordinator loses at most the report it
was handling, whose paths are explored again on resume.

Resuming re-issues every open job and drops, by decision sequence, every path the journal
holds: the paths of the resumed run are those the first run did not finish, and the union of
both runs is one uninterrupted run's. Workers report the frontier of each job they hold
about every 0.25 s (a checkpoint: its exploring states, as jobs); the journal then holds
those pieces instead of the job, so a resumed run explores from them and redoes only what
was found since the last checkpoint. Paths a halt (time, instruction limit, Ctrl-C) ended as partial are
not finished: their jobs stay open.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

from symex.core.outcome import PathStatus, TestCase
from symex.errors import SymexError
from symex.memo.format import decode_varints, encode_varints
from symex.memo.opening import TreeIdentity, find_run_file
from symex.parallel.jobs import Job

__all__ = ["JOURNAL_FILE", "JOURNAL_FORMAT", "JournalError", "RunJournal", "find_journal"]

#: the journal's name in an output directory
JOURNAL_FILE = "jobs.db"
#: the format this code writes and reads
JOURNAL_FORMAT = "symex-jobs 3"
#: the formats this code reads (1 and 2 were written before objects moved to 38-bit
#: segments: the addresses their jobs' answers hold are no longer the program's)
_READ_FORMATS = {JOURNAL_FORMAT}
_OLDER_FORMATS = {"symex-jobs 1", "symex-jobs 2"}

_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # open jobs: events as varints (parallel/jobs.py), inputs as JSON [[name, hex], ...],
    # the node of the run's recorded tree (0: none), and for a piece of a checkpointed job
    # (one of its exploring states), that job's id
    "CREATE TABLE job (id INTEGER PRIMARY KEY, events BLOB NOT NULL, depth INTEGER NOT NULL, "
    "inputs TEXT, node INTEGER NOT NULL DEFAULT 0, parent INTEGER)",
    "CREATE INDEX job_parent ON job (parent)",
    # finished paths: the decision sequence as varints, the status (PathStatus value)
    "CREATE TABLE path (decisions BLOB PRIMARY KEY, status TEXT NOT NULL) WITHOUT ROWID",
)

_STATUS = {status.value: status for status in PathStatus}


def _row(job: Job) -> tuple[bytes, int, str | None, int]:
    """A job's events, depth, inputs (JSON) and node, as the job table holds them."""
    inputs = (json.dumps([[name, data.hex()] for name, data in job.inputs])
              if job.inputs is not None else None)
    return job.events, job.depth, inputs, job.node


class JournalError(SymexError):
    """A journal that cannot be used: missing, not symex's, or another run's."""


def find_journal(path: str | os.PathLike[str]) -> Path:
    """The journal of an output directory, or ``path`` itself when it is a file."""
    return find_run_file(path, JOURNAL_FILE, "symex run --workers N", JournalError)


def _new_file(path: str | os.PathLike[str]) -> Path:
    """``path``, where a journal is to be written: JournalError if something is there."""
    where = Path(path)
    if where.exists():
        raise JournalError(f"{os.fspath(where)} exists; give a new file for the journal")
    return where


class RunJournal:
    """The journal of one parallel run (module docstring)."""

    def __init__(self, path: Path, db: sqlite3.Connection) -> None:
        self.path = path
        self._db = db

    @classmethod
    def create(cls, path: str | os.PathLike[str], identity: TreeIdentity) -> RunJournal:
        """A new, empty journal at ``path`` (an existing file there is an error)."""
        where = _new_file(path)
        db = cls._connect(where)
        with db:
            db.execute("BEGIN")
            for statement in _SCHEMA:
                db.execute(statement)
            db.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", [
                ("format", JOURNAL_FORMAT), ("program", identity.program),
                ("ir_hash", identity.ir_hash), ("inputs", identity.inputs),
                ("compiler", identity.compiler)])
        return cls(where, db)

    @classmethod
    def resume(cls, source: str | os.PathLike[str], identity: TreeIdentity,
               target: str | os.PathLike[str] | None) -> RunJournal:
        """The journal of a run to resume (an output directory or its ``jobs.db``), checked
        against ``identity``; with ``target``, a copy there is extended instead of it."""
        found = cls.check(source, identity)
        if target is not None:
            where = _new_file(target)
            shutil.copyfile(found, where)
            found = where
        db = cls._connect(found)
        with db:
            # the pieces of a checkpointed job are jobs of their own in the resumed run
            db.execute("BEGIN")
            db.execute("UPDATE job SET parent = NULL")
        return cls(found, db)

    @staticmethod
    def check(source: str | os.PathLike[str], identity: TreeIdentity) -> Path:
        """The journal file of ``source`` (an output directory or its ``jobs.db``) after
        checking that it is symex's and belongs to ``identity``; JournalError otherwise.
        Reads only (a journal left by a killed run is folded into its file first)."""
        found = find_journal(source)
        try:
            db = sqlite3.connect(found, isolation_level=None)
            try:
                # a killed run leaves its last commits in the write-ahead log: fold them in,
                # so a copy of the file alone holds them
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                meta = dict(db.execute("SELECT key, value FROM meta"))
            finally:
                db.close()
        except sqlite3.Error as exc:
            raise JournalError(f"{os.fspath(found)} is not a journal symex wrote ({exc}); "
                               f"continue with the output directory of 'symex run "
                               f"--workers N'") from None
        if meta.get("format") in _OLDER_FORMATS:
            raise JournalError(f"{os.fspath(found)} was written by an older symex, whose "
                               f"addresses differ from this one's; run the program again "
                               f"without --continue-with")
        if meta.get("format") not in _READ_FORMATS:
            raise JournalError(f"{os.fspath(found)} has format {meta.get('format')!r}, not "
                               f"{JOURNAL_FORMAT!r}; it was written by another symex")
        mismatch = [name for name, mine in (("program", identity.program),
                                            ("ir_hash", identity.ir_hash),
                                            ("inputs", identity.inputs))
                    if meta.get(name) != mine]
        recorded_by = meta.get("compiler", "")
        if mismatch == ["ir_hash"] and recorded_by and identity.compiler \
                and recorded_by != identity.compiler:
            raise JournalError(
                f"{os.fspath(found)} belongs to {identity.program} compiled by {recorded_by}; "
                f"it is compiled by {identity.compiler} now, so its IR differs; continue with "
                f"the compiler of the first run (SYMEX_CC), or run it again")
        if mismatch:
            raise JournalError(
                f"{os.fspath(found)} belongs to another run ({', '.join(mismatch)} differ: "
                f"it was {meta.get('program')!r} with {meta.get('inputs')!r}); continue with "
                f"the same program and inputs")
        return found

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(path, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            # a killed process loses nothing committed; only a machine crash could lose the
            # last commits, whose paths a resume explores again
            db.execute("PRAGMA synchronous=OFF")
        except sqlite3.Error as exc:
            raise JournalError(f"cannot open {os.fspath(path)} as a journal: {exc}") from None
        return db

    # -- reading (on resume) -------------------------------------------------------------

    def open_jobs(self) -> list[tuple[int, Job]]:
        """The jobs whose subtrees were not finished, by id."""
        return [(job_id, Job(bytes(events), depth,
                             tuple((name, bytes.fromhex(data)) for name, data in json.loads(inputs))
                             if inputs is not None else None, node=node_id))
                for job_id, events, depth, inputs, node_id in
                self._db.execute("SELECT id, events, depth, inputs, node FROM job ORDER BY id")]

    def tree_path(self) -> Path | None:
        """The tree the journaled run recorded (None: it recorded none)."""
        row = self._db.execute("SELECT value FROM meta WHERE key = 'tree'").fetchone()
        return None if row is None else Path(row[0])

    def set_tree_path(self, path: str | os.PathLike[str]) -> None:
        """Note the tree this run records (its open jobs name nodes of that tree)."""
        with self._db:
            self._db.execute("BEGIN")
            self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('tree', ?)",
                             (os.fspath(Path(path).resolve()),))

    def finished_paths(self) -> dict[tuple[int, ...], PathStatus]:
        """Every path that ended for good, by decision sequence."""
        return {tuple(decode_varints(decisions)): _STATUS[status]
                for decisions, status in self._db.execute("SELECT decisions, status FROM path")}

    def next_job_id(self) -> int:
        """An id no job of the journal has."""
        row = self._db.execute("SELECT MAX(id) FROM job").fetchone()
        return 0 if row[0] is None else row[0] + 1

    # -- writing (one transaction per report) ----------------------------------------------

    def record(self, opened: Iterable[tuple[int, Job]], finished: Iterable[int],
               paths: Iterable[TestCase],
               checkpoints: Iterable[tuple[int, Sequence[tuple[int, Job]]]] = ()) -> None:
        """Jobs created, jobs done, paths that ended for good, and checkpoints, in one
        transaction. A checkpoint of job J replaces J (and its earlier pieces) by its pieces:
        the exploring states of J's subtree, each a job with the id given (its parent J);
        a resumed run then explores from them instead of from J. J done removes them too."""
        opened, finished, paths = list(opened), list(finished), list(paths)
        checkpoints = list(checkpoints)
        if not (opened or finished or paths or checkpoints):
            return
        db = self._db
        with db:
            db.execute("BEGIN")
            db.executemany("INSERT OR REPLACE INTO job (id, events, depth, inputs, node) "
                           "VALUES (?, ?, ?, ?, ?)",
                           [(job_id, *_row(job)) for job_id, job in opened])
            for job_id, pieces in checkpoints:
                db.execute("DELETE FROM job WHERE id = ? OR parent = ?", (job_id, job_id))
                db.executemany("INSERT INTO job (id, events, depth, inputs, node, parent) "
                               "VALUES (?, ?, ?, ?, ?, ?)",
                               [(piece_id, *_row(piece), job_id) for piece_id, piece in pieces])
            db.executemany("DELETE FROM job WHERE id = ? OR parent = ?",
                           [(job_id, job_id) for job_id in finished])
            db.executemany("INSERT OR IGNORE INTO path (decisions, status) VALUES (?, ?)",
                           [(encode_varints(test.path), test.status.value) for test in paths])

    def close(self) -> None:
        """Write everything into the main file and close it."""
        try:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            self._db.close()
