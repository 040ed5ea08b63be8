"""``run.stats``: the progress of a run as an SQLite database, one row per progress snapshot.

Table ``stats`` has one row per snapshot (columns named as KLEE's where the meaning is the same:
``WallTime``, ``Instructions``, ``CoveredInstructions``, ``UncoveredInstructions``,
``NumStates``, ``NumQueries``, ``SolverTime``; plus line and branch coverage, forks, path
counts, tests and memory; and MoKlee's ``Irepl``, ``Inew``, ``Ilost``, ``SDiv``, ``SPrepl``,
``Qrepl``, ``PTTime``, ``TreeBytes``, ``TreeNodes`` for runs over a recorded tree; and for a
run with workers ``Workers``, ``JobsInFlight``, ``BalancingMoves``, ``JobsMoved``,
``SharedCacheHits``). Table ``workers`` has a row per worker for each row of ``stats`` of a
run with workers (its ``Row``, ``Worker``, ``Searcher`` and the worker's counters, see
:data:`WORKER_COLUMNS`). Table ``solver_layers(name, value)`` holds the solver chain's
counters, written when the run ends. Each row is committed on its own, so the file is a valid
database whenever the run is interrupted. :func:`read_run_stats` reads it back for
``symex stats``.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any
from collections.abc import Mapping

import attrs

from symex.errors import SymexError

__all__ = ["COLUMNS", "WORKER_COLUMNS", "RunStats", "RunStatsError", "RunStatsWriter",
           "read_run_stats"]

#: column name -> (SQL type, attribute of the progress snapshot, or None when derived)
COLUMNS: dict[str, tuple[str, str | None]] = {
    "WallTime": ("REAL", "elapsed"),
    "Instructions": ("INTEGER", "instructions"),
    "CoveredInstructions": ("INTEGER", "covered_instructions"),
    "UncoveredInstructions": ("INTEGER", None),
    "NumStates": ("INTEGER", "live_states"),
    "NumQueries": ("INTEGER", "solver_queries"),
    "SolverTime": ("REAL", "solver_time"),
    "CoveredLines": ("INTEGER", "covered_lines"),
    "TotalLines": ("INTEGER", "total_lines"),
    "CoveredBranches": ("INTEGER", "covered_branches"),
    "TotalBranches": ("INTEGER", "total_branches"),
    "Forks": ("INTEGER", "forks"),
    "CompletedPaths": ("INTEGER", "completed"),
    "ErrorPaths": ("INTEGER", "errors"),
    "PartialPaths": ("INTEGER", "partial"),
    "Tests": ("INTEGER", "tests"),
    "MemoryMB": ("REAL", "memory_mb"),
    "ShedPaths": ("INTEGER", "shed_paths"),
    # MoKlee's columns (zero for a run without a recorded tree); see symex.memo
    "Irepl": ("INTEGER", "memo.replayed_instructions"),
    "Inew": ("INTEGER", "memo.new_instructions"),
    "Ilost": ("INTEGER", "memo.lost_instructions"),
    "SDiv": ("INTEGER", "memo.diverged_states"),
    "SPrepl": ("INTEGER", "memo.pruned_states"),
    "Qrepl": ("INTEGER", "memo.replayed_queries"),
    "PTTime": ("REAL", "memo.tree_time"),
    "TreeBytes": ("INTEGER", "memo.tree_bytes"),
    "TreeNodes": ("INTEGER", "memo.tree_nodes"),
    # parallel exploration (zero for a run without workers); see symex.parallel
    "Workers": ("INTEGER", "parallel.workers"),
    "JobsInFlight": ("INTEGER", "parallel.jobs_in_flight"),
    "BalancingMoves": ("INTEGER", "parallel.balancing_moves"),
    "JobsMoved": ("INTEGER", "parallel.jobs_moved"),
    "SharedCacheHits": ("INTEGER", "parallel.shared_cache_hits"),
}

#: ``workers`` table: column name -> (SQL type, attribute of a ``WorkerRow``)
WORKER_COLUMNS: dict[str, tuple[str, str]] = {
    "Worker": ("INTEGER", "worker"),
    "Searcher": ("TEXT", "searcher"),
    "Instructions": ("INTEGER", "instructions"),
    "CompletedPaths": ("INTEGER", "completed"),
    "ErrorPaths": ("INTEGER", "errors"),
    "PartialPaths": ("INTEGER", "partial"),
    "Jobs": ("INTEGER", "jobs"),
    "NumQueries": ("INTEGER", "solver_queries"),
    "SolverTime": ("REAL", "solver_time"),
    "ReplayedEvents": ("INTEGER", "replayed_events"),
    "SharedCacheHits": ("INTEGER", "shared_hits"),
}

_CREATE = (
    "CREATE TABLE IF NOT EXISTS stats (Row INTEGER PRIMARY KEY, "
    + ", ".join(f"{name} {sql}" for name, (sql, _) in COLUMNS.items()) + ")",
    "CREATE TABLE IF NOT EXISTS solver_layers (name TEXT PRIMARY KEY, value REAL)",
    "CREATE TABLE IF NOT EXISTS workers (Row INTEGER NOT NULL, "
    + ", ".join(f"{name} {sql}" for name, (sql, _) in WORKER_COLUMNS.items())
    + ", PRIMARY KEY (Row, Worker))",
)
_INSERT = (f"INSERT INTO stats ({', '.join(COLUMNS)}) "
           f"VALUES ({', '.join('?' for _ in COLUMNS)})")
_INSERT_WORKER = (f"INSERT INTO workers (Row, {', '.join(WORKER_COLUMNS)}) "
                  f"VALUES (?, {', '.join('?' for _ in WORKER_COLUMNS)})")


class RunStatsError(SymexError):
    """A ``run.stats`` file is missing or is not one symex wrote."""


def _row(snapshot: Any) -> tuple[Any, ...]:
    values = []
    parts = {"memo": getattr(snapshot, "memo", None),
             "parallel": getattr(snapshot, "parallel", None)}
    for _, attribute in COLUMNS.values():
        if attribute is not None and "." in attribute:
            part, field = attribute.split(".")
            values.append(getattr(parts[part], field) if parts[part] is not None else 0)
        elif attribute is not None:
            values.append(getattr(snapshot, attribute))
        else:  # UncoveredInstructions
            values.append(snapshot.total_instructions - snapshot.covered_instructions)
    return tuple(values)


class RunStatsWriter:
    """Appends progress snapshots to ``run.stats``, at most one row per ``min_interval`` s.

    A snapshot arriving sooner than that is held back and written by :meth:`close` if no
    later one replaced it, so the last row always describes the end of the run."""

    def __init__(self, path: str | os.PathLike[str], min_interval: float = 2.0) -> None:
        self.path = Path(path)
        self.min_interval = min_interval
        self.rows = 0
        self._last_written: float | None = None
        self._pending: Any = None
        # isolation_level=None: every statement is its own transaction, committed at once
        self._db = sqlite3.connect(self.path, isolation_level=None)
        # no fsync per commit (it cost 16 ms a row here, 1.6% of a run at a row a second): the
        # rollback journal still keeps the file consistent when the *process* stops at any
        # moment (Ctrl-C, kill); only a crash of the whole machine could lose the last rows
        self._db.execute("PRAGMA synchronous=OFF")
        for statement in _CREATE:
            self._db.execute(statement)

    def add(self, snapshot: Any) -> None:
        """Record a ``ProgressSnapshot`` (``symex.results``), or hold it back if too soon."""
        if self._last_written is not None and snapshot.elapsed - self._last_written < self.min_interval:
            self._pending = snapshot
            return
        self._write(snapshot)

    def _write(self, snapshot: Any) -> None:
        parallel = getattr(snapshot, "parallel", None)
        with self._db:  # the stats row and its worker rows in one transaction
            self._db.execute("BEGIN")
            row = self._db.execute(_INSERT, _row(snapshot)).lastrowid
            if parallel is not None:
                self._db.executemany(_INSERT_WORKER, [
                    (row, *(getattr(worker, attribute) for _, attribute in
                            WORKER_COLUMNS.values()))
                    for worker in parallel.per_worker])
        self._last_written = snapshot.elapsed
        self._pending = None
        self.rows += 1

    def write_solver_layers(self, counters: Mapping[str, float]) -> None:
        """Store the solver chain's counters (``Statistics.solver_layers``) in one transaction."""
        with self._db:  # one transaction: all counters or none
            self._db.execute("BEGIN")
            self._db.execute("DELETE FROM solver_layers")
            self._db.executemany("INSERT INTO solver_layers (name, value) VALUES (?, ?)",
                                 sorted((str(k), float(v)) for k, v in counters.items()))

    def close(self) -> None:
        """Write the held-back snapshot, if any, and close the database."""
        if self._pending is not None:
            self._write(self._pending)
            self._pending = None
        self._db.close()


@attrs.frozen
class RunStats:
    """What ``symex stats`` needs from one ``run.stats``: the last row, the solver counters and
    the workers' rows of the last row."""

    last: dict[str, float]
    """Column name -> value of the last row (all zero for a run that wrote no row)."""
    rows: int
    solver_layers: dict[str, float]
    workers: tuple[dict[str, Any], ...] = ()
    """Per worker (a run with workers), :data:`WORKER_COLUMNS` -> value, of the last row."""

    @property
    def total_instructions(self) -> int:
        """Instructions of the program under test (KLEE's ICount)."""
        return int(self.last["CoveredInstructions"] + self.last["UncoveredInstructions"])

    @property
    def instruction_coverage(self) -> float:
        """ICov(%): share of the program's instructions some path executed."""
        total = self.total_instructions
        return 100.0 * self.last["CoveredInstructions"] / total if total else 0.0

    @property
    def branch_coverage(self) -> float:
        """BCov(%): share of branch outcomes some path took."""
        total = self.last["TotalBranches"]
        return 100.0 * self.last["CoveredBranches"] / total if total else 0.0

    @property
    def solver_share(self) -> float:
        """TSolver(%): share of the wall time spent in the core solver."""
        wall = self.last["WallTime"]
        return 100.0 * self.last["SolverTime"] / wall if wall else 0.0


def read_run_stats(path: str | os.PathLike[str]) -> RunStats:
    """Read a ``run.stats`` file; :class:`RunStatsError` if it is missing or not symex's."""
    where = os.fspath(path)
    if not Path(path).is_file():
        raise RunStatsError(f"{where} does not exist; pass a directory written by 'symex run'")
    try:
        # read-only: reading must not create a file or roll back somebody's journal
        db = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
        try:
            db.row_factory = sqlite3.Row
            count = db.execute("SELECT COUNT(*) FROM stats").fetchone()[0]
            row = db.execute("SELECT * FROM stats ORDER BY Row DESC LIMIT 1").fetchone()
            layers = {name: value for name, value in
                      db.execute("SELECT name, value FROM solver_layers ORDER BY name")}
            has_workers = db.execute("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' "
                                     "AND name = 'workers'").fetchone()[0]
            workers = tuple(
                dict(worker) for worker in db.execute(
                    "SELECT * FROM workers WHERE Row = ? ORDER BY Worker", (row["Row"],))
            ) if has_workers and row is not None else ()
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise RunStatsError(f"{where} is not a run.stats written by symex ({exc}); "
                            f"pass a directory written by 'symex run'") from exc
    present = set(row.keys()) if row is not None else set()
    # a column the file lacks (written by an older symex) reads as zero
    last = {name: (float(row[name]) if name in present and row[name] is not None else 0.0)
            for name in COLUMNS}
    return RunStats(last=last, rows=count, solver_layers=layers,
                    workers=tuple({k: v for k, v in w.items() if k != "Row"} for w in workers))
