"""The scheduler: starts queued jobs as ``symex run`` processes, watches them, and files their
results.

One thread does it all, in rounds of :data:`POLL_SECONDS` (and at once when a job is
submitted): it starts the oldest queued jobs
while fewer than ``max_running`` run (tenants take turns: one tenant's queue cannot hold
back another's), collects the ones that ended, and stops the ones cancelled. A cancelled or
over-budget run is sent SIGINT, on which ``symex run`` stops and writes what it found. A
job's process (:mod:`symex.service.job_process`) replays every crash natively when its run
ends (with limits of time, memory and file size, without the network); the scheduler files
the result as the job's ``crashes.json``.

A job that was running when the server died is queued again when the server starts: its run
goes on from its recorded tree (``--continue-with``) rather than from the start.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import attrs

from symex.core.outcome import TIME_LIMIT_REASON
from symex.output.directory import parse_info
from symex.service.job_process import CRASHES_FILE
from symex.sandbox import interrupt_process_tree, kill_process_tree, process_tree_rss
from symex.output.atomic_write import write_atomically
from symex.service.job_files import JobRun, job_runs, open_job_log, read_job_text
from symex.service.jobs import (SEEDS_DIRECTORY, JobSpec, Policy, crashes, latest_progress,
                                job_order, without_job_paths)
from symex.service.sandboxing import JobIsolation, default_job_memory_mb
from symex.service.job_status import JobStatus
from symex.service.store import JobRecord, ServiceStore

__all__ = ["JOB_CRASHES_FILE", "POLL_SECONDS", "Scheduler", "job_dir", "job_directory"]

#: seconds between two rounds of the scheduler (a submitted job wakes it at once)
POLL_SECONDS = 0.1
#: seconds a run may go past its budget (writing its outputs) before it is stopped
BUDGET_GRACE = 30.0
#: seconds between the SIGINT that stops a job (its open paths end, its tests are written)
#: and a second one (stop at once, ``info`` from the last progress row): one SIGINT a round
#: would cut a loaded run's outputs short
INTERRUPT_AGAIN_SECONDS = 10.0
#: seconds a job's program may take to compile, link, load and set up before its clock starts
#: (the run's clock starts when it starts exploring: memcached whole, 1.7 MB of bitcode,
#: takes 25 s to get there, and a job of 60 s was stopped while it wrote its tests)
LOAD_ALLOWANCE = 300.0
#: seconds a job's process may spend after its run, replaying its crashes (counted in its CPU
#: limit)
REPLAY_ALLOWANCE = 600.0
#: the file in a job's directory naming its running attempt's process and output directory
RUN_PID_FILE = "run.pid"
#: seconds an upload may take to be written and checked; a queued job still without its
#: upload after that has lost it, and fails
FILING_SECONDS = 300.0
#: present in a job's directory while its upload is written and checked: not to be started
CHECKING_MARKER = ".checking"
#: the job's crashes, as the API serves them (its last run's, filed when the run ends)
JOB_CRASHES_FILE = "crashes.json"


def job_dir(storage: Path, job: JobRecord) -> Path:
    """Where a job's upload and results live: inside its tenant's directory."""
    return job_directory(storage, job.tenant, job.id)


def job_directory(storage: Path, tenant: int, job_id: int) -> Path:
    """Where job ``job_id`` of tenant ``tenant`` lives (:func:`job_dir` of its record)."""
    return storage / f"tenant-{tenant}" / f"job-{job_id}"


class Scheduler:
    """Runs the store's jobs (module docstring)."""

    def __init__(self, store: ServiceStore, storage: Path, max_running: int = 2,
                 cluster: str | None = None, max_workers: int | None = None,
                 job_memory_mb: int | None = None) -> None:
        """A scheduler for ``store``'s jobs, whose files live under ``storage``: at most
        ``max_running`` jobs at once, holding at most ``max_workers`` workers together (None:
        no limit); jobs with workers run them on the Ray cluster at ``cluster`` when given.
        Each job's processes hold at most ``job_memory_mb`` together (default: three
        quarters of the machine's memory, shared by ``max_running`` jobs)."""
        self.store = store
        self.storage = storage
        self.max_running = max_running
        self.cluster = cluster
        self.max_workers = max_workers
        self.isolation = JobIsolation(storage, store.path, job_memory_mb or
                                      default_job_memory_mb(max_running))
        self._running: dict[int, subprocess.Popen[bytes]] = {}
        #: running jobs stopped for holding more memory than a job may
        self._over_memory: set[int] = set()
        #: the last error message of a round, and when it was printed (said once a minute)
        self._said: tuple[str, float] = ("", 0.0)
        self._cancelled: set[int] = set()
        #: jobs whose coverage goal was met (they are being stopped), and how
        self._reached: dict[int, str] = {}
        #: when each running job's run began exploring (its first progress row)
        self._exploring: dict[int, float] = {}
        #: running jobs stopped for going on past their time limit and the grace
        self._stopped_late: set[int] = set()
        #: running jobs sent SIGINT, and when they were last sent it
        self._interrupted: dict[int, float] = {}
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Queue again the jobs a dead server left running (stopping their runs, which
        outlive a killed server), and start the thread."""
        for job in self.store.jobs(status=JobStatus.RUNNING):
            _stop_orphan(job_dir(self.storage, job))
            self.store.set_status(job.id, JobStatus.QUEUED, "the server restarted")
        for job in self.store.jobs(status=JobStatus.QUEUED):
            # a check the dead server did not finish: the run will compile it anyway
            (job_dir(self.storage, job) / CHECKING_MARKER).unlink(missing_ok=True)
        self._thread = threading.Thread(target=self._loop, name="symex-scheduler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread; running jobs are interrupted and stay queued for the next start."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(5)
        for job_id, process in list(self._running.items()):
            self._interrupt(job_id, process)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
            self.store.set_status(job_id, JobStatus.QUEUED, "the server stopped")
        self._running.clear()

    def cancel(self, job_id: int) -> None:
        """Stop a job: a queued one at once, a running one at the next round."""
        job = self.store.job(job_id)
        if job is None or job.status.final:
            return
        if job.status is JobStatus.QUEUED and job_id not in self._running:
            self.store.set_status(job_id, JobStatus.CANCELLED, "cancelled")
        else:
            self._cancelled.add(job_id)

    # -- the loop ----------------------------------------------------------------------------

    def wake(self) -> None:
        """Look at the queue now (a job was submitted), not at the next round."""
        self._wake.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(POLL_SECONDS)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                self._round()
            except Exception as exc:  # noqa: BLE001 - the scheduler must outlive anything
                self._say(f"symex serve: scheduler error: {type(exc).__name__}: {exc}")

    def _say(self, message: str) -> None:
        """Print a scheduler error on stderr, the same one at most once a minute."""
        now = time.monotonic()
        if message != self._said[0] or now - self._said[1] > 60:
            print(message, file=sys.stderr, flush=True)
            self._said = (message, now)

    def _fail(self, job: JobRecord, what: str, exc: BaseException) -> None:
        """End ``job`` alone as failed: something about it made ``what`` fail."""
        reason = without_job_paths(f"{what}: {type(exc).__name__}: {exc}", job_dir(self.storage, job))
        self._say(f"symex serve: job {job.id}: {reason}")
        try:
            self.store.set_status(job.id, JobStatus.FAILED, reason[:500])
        except Exception as again:  # noqa: BLE001
            self._say(f"symex serve: job {job.id}: cannot mark it failed: {again}")

    def _round(self) -> None:
        running: list[JobRecord] = []
        for job_id, process in list(self._running.items()):
            job = self.store.job(job_id)
            if process.poll() is not None:
                del self._running[job_id]
                self._exploring.pop(job_id, None)
                self._interrupted.pop(job_id, None)
                if job is not None:
                    try:
                        self._finished(job, process.returncode)
                    except Exception as exc:  # noqa: BLE001 - this job's, no other's
                        self._fail(job, "filing its results failed", exc)
                continue
            if job is None or job_id in self._cancelled or job_id in self._reached:
                self._interrupt(job_id, process)
                continue
            if job_id not in self._over_memory and \
                    process_tree_rss(process.pid) > self.isolation.memory_mb << 20:
                # the run keeps within its own cap; this is what it did not see (a replay,
                # a worker running away): the job's processes go, at once
                self._over_memory.add(job_id)
                kill_process_tree(process.pid)
                continue
            running.append(job)
            try:
                self._watch(job, process)
            except Exception as exc:  # noqa: BLE001 - this job's, no other's
                self._say(f"symex serve: job {job_id}: watching it failed: {exc}")
        queued = self.store.jobs(status=JobStatus.QUEUED)
        # tenants take turns: each tenant's oldest job first, then each one's second, ...
        turns: dict[int, int] = {}
        ordered = []
        for job in queued:
            turns[job.tenant] = turns.get(job.tenant, 0) + 1
            ordered.append((turns[job.tenant], job.id, job))
        running_of: dict[int, int] = {}
        workers_busy = 0
        for job in running:
            running_of[job.tenant] = running_of.get(job.tenant, 0) + 1
            workers_busy += int(job.spec["workers"])
        for _, _, job in sorted(ordered, key=lambda t: (t[0], t[1])):
            if len(self._running) >= self.max_running:
                break
            where = job_dir(self.storage, job)
            if not (where / job.program_name).is_file() or (where / CHECKING_MARKER).exists():
                # the directory is made before the job can be seen (ServiceStore.add_job)
                if time.time() - job.created > FILING_SECONDS or not where.is_dir():
                    self._fail(job, "it cannot start", FileNotFoundError(
                        "its upload is gone from its directory"))
                continue  # submitted this instant: its upload is being written or checked
            owner = self.store.tenant(job.tenant)
            if owner is not None and owner.max_jobs is not None and \
                    running_of.get(job.tenant, 0) >= owner.max_jobs:
                continue  # the tenant's quota of jobs at once: it waits, others go on
            wanted = int(job.spec["workers"])
            if self.max_workers is not None and workers_busy and \
                    workers_busy + wanted > self.max_workers:
                break  # it waits for workers (alone, a job may use more than the limit)
            try:
                self._launch(job)
            except Exception as exc:  # noqa: BLE001 - this job fails, the queue goes on
                self._fail(job, "it could not be started", exc)
                continue
            running_of[job.tenant] = running_of.get(job.tenant, 0) + 1
            workers_busy += wanted

    def _watch(self, job: JobRecord, process: subprocess.Popen[bytes]) -> None:
        """Stop a running job at its coverage goal, or once it is past its time limit."""
        spec = JobSpec.from_json(job.spec)
        if spec.target is not None:
            # the last row only: every 0.1 s, the whole run.stats would be read
            runs = job_runs(job_dir(self.storage, job))
            row = latest_progress(runs[-1]) if runs else None
            reached = spec.goal_reached(row) if row is not None else None
            if reached is not None:
                self._reached[job.id] = reached
                self._interrupt(job.id, process)
                return
        if job.started is not None and job.id not in self._stopped_late \
                and self._overdue(job, spec):
            self._stopped_late.add(job.id)
            self._interrupt(job.id, process)

    def _launch(self, job: JobRecord) -> None:
        where = job_dir(self.storage, job)
        attempts = job_runs(where)
        spec = JobSpec.from_json(job.spec)
        previous = attempts[-1] if attempts and "tree.db" in attempts[-1].files() else None
        if previous is not None and spec.workers > 1:
            # symex run replays a recorded tree (--restart-all-states, so that the new
            # attempt holds every test) in one process only: a job with workers goes on
            # from its tree in one process, rather than from its journal with workers,
            # whose new attempt would lack the old attempt's tests
            spec = attrs.evolve(spec, workers=1)
        out_dir = Path(f"run-{len(attempts) + 1}")
        # paths relative to the job's directory (the run's cwd): what the run writes
        # (.err files, the Test-Comp metadata) names no server directory
        order_file = f"{out_dir.name}.order"
        order = job_order(spec, Path(job.program_name), out_dir,
                          Path(previous.name) if previous is not None else None,
                          self.cluster if spec.workers > 1 else None,
                          Path(SEEDS_DIRECTORY) if (where / SEEDS_DIRECTORY).is_dir() else None,
                          root=where, replay=self.isolation.replay,
                          max_memory=self.isolation.run_memory_mb)
        order.write(where / order_file)
        command = [sys.executable, "-m", "symex.service.job_process", order_file]
        log = open_job_log(where, "log.txt")
        try:
            if self.isolation.problem is None:
                self.isolation.prepare(where, job.id)
                cpu = int(spec.time_limit + LOAD_ALLOWANCE + 2 * BUDGET_GRACE + REPLAY_ALLOWANCE)
                sandbox = self.isolation.sandbox(where, job.id, workers=spec.workers,
                                                 cpu_seconds=cpu,
                                                 network=order.description.parallel.cluster is not None)
                process = sandbox.popen(command, cwd=where, stdout=log, stderr=subprocess.STDOUT)
            else:
                # no sandbox here: only IR is accepted (submission.py), and nothing is replayed
                process = subprocess.Popen(command, cwd=where, stdout=log,
                                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                           start_new_session=True)
        finally:
            os.close(log)
        write_atomically(where / RUN_PID_FILE, f"{process.pid} {out_dir.name}\n")
        self._running[job.id] = process
        self.store.set_status(job.id, JobStatus.RUNNING)

    def _interrupt(self, job_id: int, process: subprocess.Popen[bytes]) -> None:
        """Ask a running job to stop: one SIGINT, and another only if it is still running
        INTERRUPT_AGAIN_SECONDS later."""
        now = time.monotonic()
        last = self._interrupted.get(job_id)
        if last is not None and now - last < INTERRUPT_AGAIN_SECONDS:
            return
        self._interrupted[job_id] = now
        # the job's process and its workers, not the sandbox's bwrap (it would die of it)
        interrupt_process_tree(process.pid, signal.SIGINT)

    def _overdue(self, job: JobRecord, spec: JobSpec) -> bool:
        """Whether a running job is past its time limit and the grace: counted from when its
        run began exploring (its first progress row says how long ago), or, before that,
        from its start plus LOAD_ALLOWANCE."""
        now = time.time()
        begun = self._exploring.get(job.id)
        if begun is None:
            runs = job_runs(job_dir(self.storage, job))
            row = latest_progress(runs[-1]) if runs else None
            if row is not None:
                begun = self._exploring[job.id] = now - row["elapsed"]
        limit = spec.time_limit + BUDGET_GRACE
        if begun is not None:
            return now - begun > limit
        assert job.started is not None
        return now - job.started > limit + LOAD_ALLOWANCE

    def _finished(self, job: JobRecord, code: int) -> None:
        where = job_dir(self.storage, job)
        cancelled = job.id in self._cancelled
        self._cancelled.discard(job.id)
        reached = self._reached.pop(job.id, None)
        late = job.id in self._stopped_late
        self._stopped_late.discard(job.id)
        over_memory = job.id in self._over_memory
        self._over_memory.discard(job.id)
        runs = job_runs(where)
        out = runs[-1] if runs and runs[-1].read_text("info") is not None else None
        if over_memory:
            self.store.set_status(job.id, JobStatus.FAILED, (
                f"stopped: its processes held more than {self.isolation.memory_mb} MB of "
                "memory, the most a job may"))
            return
        if out is None or (code != 0 and not cancelled and reached is None and not late):
            if cancelled:
                self.store.set_status(job.id, JobStatus.CANCELLED, "cancelled")
                return
            if late:
                self.store.set_status(job.id, JobStatus.FAILED, (
                    f"stopped: still running {BUDGET_GRACE:g} s past its time limit, before "
                    "it had written its results"))
                return
            log = read_job_text(where, "log.txt") or ""
            tail = without_job_paths(log, where).strip().splitlines()[-3:]
            self.store.set_status(job.id, JobStatus.FAILED,
                                  " / ".join(tail) or f"symex run exited with status {code}")
            return
        # the job's process replayed its crashes into the run's crashes.json; a run it did
        # not finish (killed) has its crashes without a verdict
        filed = out.read_bytes(CRASHES_FILE)
        if filed is None:
            filed = json.dumps([c.as_json() for c in crashes(out)]).encode()
        write_atomically(where / JOB_CRASHES_FILE, filed)
        summary = _summary(out)
        if cancelled:
            self.store.set_status(job.id, JobStatus.CANCELLED, "cancelled", summary)
            return
        reason = reached or summary["stopped"] or "finished"
        if late:
            # its results were written; what it did after them (replaying crashes) was cut
            reason = f"{reason}; stopped {BUDGET_GRACE:g} s past its time limit"
        spec = JobSpec.from_json(job.spec)
        if reason == TIME_LIMIT_REASON and spec.budget is not None and \
                spec.time_limit < spec.max_time:
            reason = f"budget of {spec.budget:g} worker-seconds spent"
        if spec.location is not None:
            reason = (f"goal reached: {reason}" if reason.startswith("reached ")
                      else f"{reason}; goal {spec.goal_text} not reached")
        elif reached is None and spec.target is not None:
            final = spec.goal_reached(_final_coverage(summary))
            reason = final or f"{reason}; goal {spec.goal_text} not reached"
        if spec.budget is not None and job.started is not None:
            used = (time.time() - job.started) * spec.workers
            summary["worker_seconds"] = round(used, 1)
            # (budget-first: the run's time limit is the budget's; what it used beyond is
            # start-up and writing the outputs, which summary["worker_seconds"] shows)
            if spec.policy is Policy.GOAL_FIRST and used > spec.budget:
                reason += f"; over its budget: {used:.0f} of {spec.budget:g} worker-seconds"
        self.store.set_status(job.id, JobStatus.DONE, reason, summary)


def _final_coverage(summary: dict[str, Any]) -> dict[str, float]:
    """The finished run's coverage as a progress row (from ``info``'s "P% (C of T ...)")."""
    row: dict[str, float] = {}
    for kind in ("line", "branch"):
        match = re.search(r"\((\d+) of (\d+)", summary.get(f"{kind}_coverage", ""))
        if match:
            row[f"covered_{kind}s"] = float(match.group(1))
            row[f"total_{kind}s"] = float(match.group(2))
    return row


def _stop_orphan(where: Path) -> None:
    """Kill the run a killed server left behind in job directory ``where`` (its process
    group, recorded in :data:`RUN_PID_FILE`), and wait until it is gone: its recorded tree is
    then as a SIGKILL leaves it, which the next attempt continues from. (A sandboxed run
    dies with the server that started it; one started without a sandbox outlives it.)"""
    try:
        pid_text, run_name = (read_job_text(where, RUN_PID_FILE, 100) or "").split()
        pid = int(pid_text)
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        return
    try:
        cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
    except OSError:
        return
    if cwd != where.resolve() or f"{run_name}.order".encode() not in command.split(b"\0"):
        return  # the pid was reused by another program
    kill_process_tree(pid)
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie nobody reaped has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _summary(out: JobRun) -> dict[str, Any]:
    """Counters of a finished run, from its ``info`` file."""
    info = parse_info(out.read_text("info") or "")

    def count(key: str) -> int:
        value = info.get(key, "0")
        return int(value) if value.isdigit() else 0

    return {"stopped": info.get("stopped", ""), "paths": count("explored paths"),
            "completed": count("completed paths"), "errors": count("error paths"),
            "partial": count("partial paths"), "tests": count("generated tests"),
            "instructions": count("total instructions"),
            "line_coverage": info.get("line coverage", ""),
            "branch_coverage": info.get("branch coverage", ""), "output": out.name}
