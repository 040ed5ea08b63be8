"""The service's state in one SQLite file: tenants (their tokens hashed) and jobs.

The schema is versioned: ``PRAGMA user_version`` says which of :data:`MIGRATIONS` have run,
and opening a file runs the missing ones in one transaction each, so a file made by an older
symex is brought forward and a newer one is refused. WAL journaling lets the HTTP handlers
read while the scheduler writes. Every method opens its own short transaction; the store is
shared between threads through one connection guarded by a lock.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import threading
import time
from pathlib import Path
from collections.abc import Callable
from typing import Any

import attrs

from symex.errors import ConfigError
from symex.service import DEFAULT_MAX_INPUT_BYTES
from symex.service.job_status import JobStatus
from symex.service.jobs import JobSpec

__all__ = ["MIGRATIONS", "JobRecord", "JobStatus", "ServiceStore", "Tenant", "hash_token"]

#: the schema, one step per version (version k is reached by running MIGRATIONS[k - 1])
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE tenant (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        token_hash TEXT NOT NULL UNIQUE,
        created REAL NOT NULL
    );
    CREATE TABLE job (
        id INTEGER PRIMARY KEY,
        tenant INTEGER NOT NULL REFERENCES tenant(id),
        status TEXT NOT NULL,
        reason TEXT,
        program_name TEXT NOT NULL,
        spec TEXT NOT NULL,
        created REAL NOT NULL,
        started REAL,
        finished REAL,
        summary TEXT
    );
    CREATE INDEX job_tenant ON job(tenant, id);
    CREATE INDEX job_status ON job(status, id);
    """,
    """
    ALTER TABLE tenant ADD COLUMN max_jobs INTEGER;
    ALTER TABLE tenant ADD COLUMN worker_seconds REAL;
    ALTER TABLE job ADD COLUMN used_seconds REAL NOT NULL DEFAULT 0;
    """,
    # job ids never come back: a plain INTEGER PRIMARY KEY gives the id of a deleted newest
    # job to the next one, and a stale link or client would reach another job
    """
    CREATE TABLE job_new (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        tenant INTEGER NOT NULL REFERENCES tenant(id),
        status TEXT NOT NULL,
        reason TEXT,
        program_name TEXT NOT NULL,
        spec TEXT NOT NULL,
        created REAL NOT NULL,
        started REAL,
        finished REAL,
        summary TEXT,
        used_seconds REAL NOT NULL DEFAULT 0
    );
    INSERT INTO job_new SELECT id, tenant, status, reason, program_name, spec, created,
        started, finished, summary, used_seconds FROM job;
    DROP TABLE job;
    ALTER TABLE job_new RENAME TO job;
    CREATE INDEX job_tenant ON job(tenant, id);
    CREATE INDEX job_status ON job(status, id);
    """,
    # each tenant's policy bounds the symbolic input a job may ask for (a job asking for a
    # gigabyte of symbolic files grew to 3.8 GB while it set up)
    f"""
    ALTER TABLE tenant ADD COLUMN max_input_bytes INTEGER DEFAULT {DEFAULT_MAX_INPUT_BYTES};
    """,
)


#: a tenant row's columns, in :class:`Tenant`'s order
_TENANT_COLUMNS = "id, name, max_jobs, worker_seconds, max_input_bytes"


def _check_quotas(max_jobs: int | None, worker_seconds: float | None,
                  max_input_bytes: int | None) -> None:
    if (max_jobs is not None and max_jobs < 1) or \
            (worker_seconds is not None and worker_seconds <= 0) or \
            (max_input_bytes is not None and max_input_bytes < 1):
        raise ConfigError("quotas are positive: --max-jobs and --max-input-bytes at least 1, "
                          "--worker-seconds above 0")


def hash_token(token: str) -> str:
    """The stored form of an API token. Tokens are 256 random bits, so a plain SHA-256
    suffices: there is nothing to guess that a slow hash would protect."""
    return hashlib.sha256(token.encode()).hexdigest()


@attrs.frozen
class Tenant:
    """A user of the service: its jobs are its own."""

    id: int
    name: str
    max_jobs: int | None = None
    """Jobs of this tenant that may run at once (None: no limit)."""
    worker_seconds: float | None = None
    """Worker-seconds its jobs may use in all (None: no limit); a queued or running job
    holds its whole budget (workers x max_time), a finished one what it used."""
    max_input_bytes: int | None = DEFAULT_MAX_INPUT_BYTES
    """The symbolic bytes of data one job's input options may make (None: no limit)."""


@attrs.frozen
class JobRecord:
    """One job as stored."""

    id: int
    tenant: int
    status: JobStatus
    reason: str | None
    """Why it stopped (the goal reached, the budget spent, cancelled, the failure)."""
    program_name: str
    spec: dict[str, Any]
    """What to run: goal, budget, workers, flags, inputs (see :mod:`symex.service.jobs`)."""
    created: float
    started: float | None
    finished: float | None
    summary: dict[str, Any] | None
    """Counters of the finished run (paths, errors, coverage)."""

    def as_json(self) -> dict[str, Any]:
        """The job as the API shows it."""
        # as the job runs: a job stored before a field existed took its default
        spec = JobSpec.from_json(self.spec)
        return {"id": self.id, "status": self.status.value, "reason": self.reason,
                "program": self.program_name, "goal": spec.goal_text,
                "max_time": spec.max_time, "workers": spec.workers, "budget": spec.budget,
                "policy": spec.policy.value, "entry": spec.entry,
                "memory_model": spec.memory_model,
                "created": self.created, "started": self.started, "finished": self.finished,
                "summary": self.summary}


class ServiceStore:
    """Tenants and jobs in one SQLite file (module docstring)."""

    def __init__(self, path: str | Path) -> None:
        """Open (creating if needed) the store at ``path`` and bring its schema up to date."""
        self.path = Path(path)
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        except sqlite3.Error as exc:
            raise ConfigError(f"cannot open the service database {self.path}: {exc}") from None
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._migrate()

    def _migrate(self) -> None:
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > len(MIGRATIONS):
            raise ConfigError(f"{self.path} was written by a newer symex (schema version "
                              f"{version}, this one knows {len(MIGRATIONS)}); upgrade symex")
        for number in range(version, len(MIGRATIONS)):
            # one transaction per step (executescript would commit a transaction begun
            # outside the script): a step is whole or absent
            try:
                self._db.executescript(f"BEGIN IMMEDIATE;\n{MIGRATIONS[number]}\n"
                                       f"PRAGMA user_version = {number + 1};\nCOMMIT;")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._db.close()

    # -- tenants ---------------------------------------------------------------------------

    def add_tenant(self, name: str, max_jobs: int | None = None,
                   worker_seconds: float | None = None,
                   max_input_bytes: int | None = DEFAULT_MAX_INPUT_BYTES) -> str:
        """Create tenant ``name`` with its quotas (None: none); its new API token (only the
        hash is kept)."""
        if not name or len(name) > 100:
            raise ConfigError("a tenant name is 1 to 100 characters")
        _check_quotas(max_jobs, worker_seconds, max_input_bytes)
        token = secrets.token_urlsafe(32)
        with self._lock:
            try:
                self._db.execute("INSERT INTO tenant (name, token_hash, created, max_jobs, "
                                 "worker_seconds, max_input_bytes) VALUES (?, ?, ?, ?, ?, ?)",
                                 (name, hash_token(token), time.time(), max_jobs,
                                  worker_seconds, max_input_bytes))
            except sqlite3.IntegrityError:
                raise ConfigError(f"tenant {name!r} exists already; choose another name") \
                    from None
        return token

    def set_quotas(self, name: str, max_jobs: int | None, worker_seconds: float | None,
                   max_input_bytes: int | None = DEFAULT_MAX_INPUT_BYTES) -> tuple[Tenant, Tenant]:
        """Change tenant ``name``'s quotas (None: no limit); the tenant before and after."""
        _check_quotas(max_jobs, worker_seconds, max_input_bytes)
        with self._lock:
            row = self._db.execute(f"SELECT {_TENANT_COLUMNS} FROM tenant WHERE name = ?",
                                   (name,)).fetchone()
            if row is None:
                raise ConfigError(f"no tenant {name!r}; add it with: symex tenant add {name}")
            self._db.execute("UPDATE tenant SET max_jobs = ?, worker_seconds = ?, "
                             "max_input_bytes = ? WHERE name = ?",
                             (max_jobs, worker_seconds, max_input_bytes, name))
        before = Tenant(*row)
        return before, attrs.evolve(before, max_jobs=max_jobs, worker_seconds=worker_seconds,
                                    max_input_bytes=max_input_bytes)

    def tenants(self) -> list[Tenant]:
        """Every tenant, in the order they were added."""
        with self._lock:
            rows = self._db.execute(f"SELECT {_TENANT_COLUMNS} FROM tenant "
                                    "ORDER BY id").fetchall()
        return [Tenant(*row) for row in rows]

    def job_counts(self) -> dict[int, dict[str, int]]:
        """Jobs of each tenant by status (tenant id -> status -> count)."""
        with self._lock:
            rows = self._db.execute("SELECT tenant, status, COUNT(*) FROM job "
                                    "GROUP BY tenant, status").fetchall()
        counts: dict[int, dict[str, int]] = {}
        for tenant, status, count in rows:
            counts.setdefault(tenant, {})[status] = count
        return counts

    def tenant_of(self, token: str) -> Tenant | None:
        """The tenant whose token this is (None: no such token)."""
        with self._lock:
            row = self._db.execute(f"SELECT {_TENANT_COLUMNS} FROM tenant "
                                   "WHERE token_hash = ?", (hash_token(token),)).fetchone()
        return Tenant(*row) if row else None

    def tenant(self, tenant_id: int) -> Tenant | None:
        """Tenant ``tenant_id``."""
        with self._lock:
            row = self._db.execute(f"SELECT {_TENANT_COLUMNS} FROM tenant "
                                   "WHERE id = ?", (tenant_id,)).fetchone()
        return Tenant(*row) if row else None

    def worker_seconds_held(self, tenant_id: int) -> float:
        """What a tenant's jobs hold of its worker-seconds: the budget of each queued or
        running job, what each finished one used."""
        with self._lock:
            rows = self._db.execute("SELECT status, spec, used_seconds FROM job WHERE "
                                    "tenant = ?", (tenant_id,)).fetchall()
        held = 0.0
        for status, spec, used in rows:
            if JobStatus(status).final:
                held += used
            else:
                held += JobSpec.from_json(json.loads(spec)).reserved
        return held

    # -- jobs --------------------------------------------------------------------------------

    def add_job(self, tenant: int, program_name: str, spec: dict[str, Any],
                prepare: Callable[[int], None] | None = None) -> int:
        """A new queued job; its id. ``prepare(id)`` (making the job's directory) runs before
        anyone else can see the job, in the same transaction: if it raises, there is no job;
        so a queued job without its directory has lost it, and a scheduler need not wait to
        be sure."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                cursor = self._db.execute(
                    "INSERT INTO job (tenant, status, program_name, spec, created) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (tenant, JobStatus.QUEUED.value, program_name, json.dumps(spec), time.time()))
                job_id = int(cursor.lastrowid or 0)
                if prepare is not None:
                    prepare(job_id)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        return job_id

    def job(self, job_id: int, tenant: int | None = None) -> JobRecord | None:
        """Job ``job_id`` (None when it does not exist or belongs to another tenant)."""
        if not 0 < job_id < 2**63:
            return None
        query = "SELECT * FROM job WHERE id = ?"
        args: tuple[Any, ...] = (job_id,)
        if tenant is not None:
            query += " AND tenant = ?"
            args += (tenant,)
        with self._lock:
            row = self._db.execute(query, args).fetchone()
        return _record(row) if row else None

    def jobs(self, tenant: int | None = None, status: JobStatus | None = None) -> list[JobRecord]:
        """Jobs of a tenant (None: all), of one status (None: any), oldest first."""
        query = "SELECT * FROM job WHERE 1 = 1"
        args: tuple[Any, ...] = ()
        if tenant is not None:
            query += " AND tenant = ?"
            args += (tenant,)
        if status is not None:
            query += " AND status = ?"
            args += (status.value,)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY id", args).fetchall()
        return [_record(row) for row in rows]

    def set_status(self, job_id: int, status: JobStatus, reason: str | None = None,
                   summary: dict[str, Any] | None = None) -> None:
        """Move a job to ``status`` (stamping when it started or finished; a job that ends
        is charged its workers times the seconds since it started)."""
        now = time.time()
        with self._lock:
            if status.final:
                row = self._db.execute("SELECT started, spec FROM job WHERE id = ?",
                                       (job_id,)).fetchone()
                if row is not None and row[0] is not None:
                    used = (now - row[0]) * float(json.loads(row[1])["workers"])
                    self._db.execute("UPDATE job SET used_seconds = used_seconds + ? "
                                     "WHERE id = ?", (used, job_id))
            if status is JobStatus.RUNNING:
                self._db.execute("UPDATE job SET status = ?, reason = NULL, started = "
                                 "COALESCE(started, ?) WHERE id = ?", (status.value, now, job_id))
            elif status.final:
                self._db.execute("UPDATE job SET status = ?, reason = ?, finished = ?, "
                                 "summary = ? WHERE id = ?",
                                 (status.value, reason, now,
                                  json.dumps(summary) if summary is not None else None, job_id))
            else:
                self._db.execute("UPDATE job SET status = ?, reason = ? WHERE id = ?",
                                 (status.value, reason, job_id))

    def delete_job(self, job_id: int) -> None:
        """Forget a job."""
        with self._lock:
            self._db.execute("DELETE FROM job WHERE id = ?", (job_id,))


def _record(row: tuple[Any, ...]) -> JobRecord:
    (job_id, tenant, status, reason, program_name, spec, created, started, finished,
     summary) = row[:10]
    return JobRecord(job_id, tenant, JobStatus(status), reason, program_name, json.loads(spec),
                     created, started, finished, json.loads(summary) if summary else None)
