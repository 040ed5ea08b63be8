"""What a job must be to be accepted, and how an accepted one is filed (the submission
policy, apart from HTTP).

:func:`check_submission` refuses a program that is too big, bitcode that is not bitcode, a
program with no symbolic input and no input options, seeds that are not ``.ktest`` files
(or too many, too large), and a job over its tenant's quota of worker-seconds;
:func:`file_job` stores an accepted one (the program and its seeds in the job's directory)
and checks that C source compiles, undoing the job if it does not. Each refusal is a
:class:`Refused` with the HTTP status it maps to and what to send instead.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from symex.errors import SymexError
from symex.output.ktest import KTest, KTestError
from symex.service.jobs import (MAX_PROGRAM_BYTES, MAX_SEED_BYTES, MAX_SEEDS, SEEDS_DIRECTORY,
                                JobSpec)
from symex.service.sandboxing import CHECK_SECONDS, JobIsolation, job_diagnostics
from symex.service.scheduler import CHECKING_MARKER, job_directory
from symex.service.store import ServiceStore, Tenant

__all__ = ["Refused", "check_compiles", "check_seed", "check_submission", "file_job"]

#: how LLVM bitcode starts: raw, or in the wrapper Darwin tools write
_BITCODE_MAGICS = (b"BC\xc0\xde", b"\xde\xc0\x17\x0b")
#: names that make a program's inputs symbolic without input options
_SYMBOLIC_MARKERS = (b"klee_make_symbolic", b"__VERIFIER_nondet", b"klee_int", b"klee_range")


class Refused(SymexError):
    """A submission the service does not take: ``status`` is the HTTP status (400 bad input,
    413 too large, 429 over quota), the message what to send instead."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def check_seed(name: str, data: bytes) -> None:
    """A seed upload must be a ``.ktest`` file of at most :data:`MAX_SEED_BYTES`."""
    if len(data) > MAX_SEED_BYTES:
        raise Refused(413, f"seed {name} is over {MAX_SEED_BYTES} bytes")
    try:
        KTest.from_bytes(data)
    except KTestError as exc:
        raise Refused(400, f"seed {name} is not a .ktest file ({exc}): upload tests of an "
                           "earlier run, or KLEE's") from None


def check_submission(store: ServiceStore, who: Tenant, name: str, data: bytes, spec: JobSpec,
                     seeds: Sequence[bytes]) -> None:
    """Refuse (:class:`Refused`) what the service does not run: see the module docstring.
    ``name`` is the program's checked file name."""
    if len(data) > MAX_PROGRAM_BYTES:
        raise Refused(413, f"the program is over {MAX_PROGRAM_BYTES} bytes; upload the source "
                           f"of the part to test")
    if len(seeds) > MAX_SEEDS:
        raise Refused(413, f"{len(seeds)} seeds; a job takes at most {MAX_SEEDS}")
    if name.endswith(".bc") and not data.startswith(_BITCODE_MAGICS):
        raise Refused(400, "the program is not LLVM bitcode (a .bc file starts with the bytes "
                           "'BC' 0xC0 0xDE): upload the output of clang -c -emit-llvm, or the C "
                           "source")
    if not spec.inputs and not any(marker in data for marker in _SYMBOLIC_MARKERS):
        raise Refused(400, "the program has no symbolic input: call klee_make_symbolic (or "
                           "__VERIFIER_nondet_*) in it, or send inputs such as '--sym-stdin 8'")
    if who.max_input_bytes is not None and spec.input_bytes > who.max_input_bytes:
        raise Refused(400, f"the input options make {spec.input_bytes} symbolic bytes; this "
                           f"tenant's jobs may make at most {who.max_input_bytes} (ask the "
                           f"service's operator to raise it: symex tenant set NAME "
                           f"--max-input-bytes B)")
    if who.worker_seconds is not None:
        held = store.worker_seconds_held(who.id)
        wanted = spec.reserved
        if held + wanted > who.worker_seconds:
            raise Refused(429, f"over this tenant's quota: its jobs hold {held:.0f} of "
                               f"{who.worker_seconds:g} worker-seconds and this one asks for "
                               f"{wanted:g} (its budget, or workers x max_time); ask for less "
                               f"or wait for jobs to end")


def file_job(store: ServiceStore, storage: Path, who: Tenant, name: str, data: bytes,
             spec: JobSpec, seeds: Sequence[bytes]) -> tuple[int, Path]:
    """Store an accepted job (its program and seeds in its directory) and leave it marked as
    being checked (the scheduler waits): its id and directory. :func:`check_compiles`, then
    removing the mark, make it runnable."""
    def make_directory(job_id: int) -> None:
        where = job_directory(storage, who.id, job_id)
        # a job id is new in this database, so a directory already there was left by another
        # one (a database deleted, its files kept): its runs would be taken for this job's
        shutil.rmtree(where, ignore_errors=True)
        where.mkdir(parents=True)
        # the scheduler leaves the job alone while it is checked; compiled where its run will
        # compile it, its IR is cached for the run
        (where / CHECKING_MARKER).touch()
        (where / name).write_bytes(data)
        if seeds:
            (where / SEEDS_DIRECTORY).mkdir()
            for i, seed in enumerate(seeds):
                (where / SEEDS_DIRECTORY / f"seed{i:03d}.ktest").write_bytes(seed)

    job_id = store.add_job(who.id, name, spec.as_json(), prepare=make_directory)
    return job_id, job_directory(storage, who.id, job_id)


def check_compiles(store: ServiceStore, job_id: int, where: Path, name: str,
                   spec: JobSpec, isolation: JobIsolation) -> None:
    """C source must compile: the compiler runs in the job's sandbox (compiling reads files
    the source names, and only the job's are there to read); otherwise the job is undone and
    :class:`Refused` says what the compiler said, quoting no file outside the job. Then the
    job is runnable (its checking mark goes)."""
    if name.endswith(".c"):
        try:
            _compile_in_sandbox(where, job_id, name, spec, isolation)
        except Refused:
            store.delete_job(job_id)
            shutil.rmtree(where, ignore_errors=True)
            raise
    (where / CHECKING_MARKER).unlink(missing_ok=True)


def _compile_in_sandbox(where: Path, job_id: int, name: str, spec: JobSpec,
                        isolation: JobIsolation) -> None:
    problem = isolation.problem
    if problem is not None:
        raise Refused(400, f"this service compiles no C: it has no sandbox to compile in "
                           f"({problem}); upload the program as LLVM IR (.ll or .bc) instead")
    isolation.prepare(where, job_id)
    sandbox = isolation.sandbox(where, job_id, cpu_seconds=int(CHECK_SECONDS))
    ran = sandbox.run(isolation.check_command(name, spec.flags), cwd=where,
                      timeout=CHECK_SECONDS)
    if ran.timed_out or ran.over_memory:
        what = f"{CHECK_SECONDS:g} s" if ran.timed_out else f"{isolation.memory_mb} MB of memory"
        raise Refused(400, f"the program does not compile: compiling it took more than {what}")
    if ran.returncode != 0:
        said = ran.stderr.decode("utf-8", "replace").strip()
        said = said.removeprefix("symex: error: ")
        raise Refused(400, f"the program does not compile: {job_diagnostics(said, where)}")
