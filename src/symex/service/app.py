"""The HTTP API (FastAPI): submit a program with a goal and a budget, follow the job, fetch its
tests, coverage and crash reports.

Every route under ``/api`` needs ``Authorization: Bearer TOKEN``; a job is found only through
its own tenant's token (another tenant's job is a 404, as is a job that does not exist).
Bad input is a 4xx whose ``detail`` says what to send instead.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path
from typing import Annotated, Any
from collections.abc import AsyncIterator

from fastapi import Depends, FastAPI, File, Form, HTTPException, Request, UploadFile
from fastapi import Path as PathParam
from fastapi.responses import HTMLResponse, PlainTextResponse, Response, StreamingResponse

from symex.errors import CompileError, SymexError
from symex.ir.compile import compile_c
from symex.output.ktest import KTest, KTestError
from symex.service.jobs import (MAX_PROGRAM_BYTES, MAX_SEED_BYTES, MAX_SEEDS, SEEDS_DIRECTORY,
                                JobSpec, check_program_name,
                                latest_progress, progress, test_suite_zip, tests_zip,
                                without_job_paths)
from symex.service.page import PAGE
from symex.service.scheduler import (CHECKING_MARKER, JOB_CRASHES_FILE, Scheduler, job_dir,
                                     job_runs)
from symex.service.store import JobRecord, ServiceStore, Tenant

__all__ = ["create_app"]

#: seconds between two looks at a job for its event stream
EVENT_SECONDS = 0.5
#: a job id in a route: SQLite's integers are 64-bit
JobId = Annotated[int, PathParam(ge=1, le=2**63 - 1, description="the job's id")]
_TEST_NAME = re.compile(r"^test[0-9]{6}\.ktest$")
#: how LLVM bitcode starts: raw, or in the wrapper Darwin tools write
_BITCODE_MAGICS = (b"BC\xc0\xde", b"\xde\xc0\x17\x0b")
#: names that make a program's inputs symbolic without input options
_SYMBOLIC_MARKERS = (b"klee_make_symbolic", b"__VERIFIER_nondet", b"klee_int", b"klee_range")


def create_app(store: ServiceStore, storage: Path, scheduler: Scheduler) -> FastAPI:
    """The application over ``store``, with files under ``storage``, jobs run by
    ``scheduler`` (started and stopped with the application)."""
    app = FastAPI(title="symex", description="Symbolic execution as a testing service: upload "
                  "a C program, a goal and a budget; get tests, coverage and crash reports.",
                  version="0.1.0")

    @app.on_event("startup")
    def _start() -> None:
        scheduler.start()

    @app.on_event("shutdown")
    def _stop() -> None:
        scheduler.stop()

    def tenant(request: Request) -> Tenant:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        found = store.tenant_of(token.strip()) if scheme.lower() == "bearer" else None
        if found is None:
            raise HTTPException(401, "missing or unknown token: send 'Authorization: Bearer "
                                     "TOKEN' (symex tenant add NAME prints one)",
                                headers={"WWW-Authenticate": "Bearer"})
        return found

    def own_job(job_id: JobId, who: Tenant) -> JobRecord:
        job = store.job(job_id, who.id)
        if job is None:
            raise HTTPException(404, f"no job {job_id} for this token")
        return job

    @app.post("/api/jobs", status_code=201)
    async def submit(program: UploadFile = File(...), goal: str = Form("all-paths"),
                     max_time: float = Form(60.0), workers: int = Form(1),
                     flags: str = Form(""), inputs: str = Form(""),
                     budget: float | None = Form(None), policy: str = Form("budget-first"),
                     arguments: str = Form(""), max_sym_array_size: int = Form(0),
                     seeds: list[UploadFile] | None = File(None),
                     who: Tenant = Depends(tenant)) -> dict[str, Any]:
        """Queue a job: ``program`` (.c, .ll or .bc), ``goal`` (all-paths, crashes,
        line-coverage:N, branch-coverage:N),
        ``max_time`` (seconds), ``workers``, ``flags`` (-DNAME[=V], -O LEVEL) and ``inputs``
        (``symex run``'s: --sym-arg N, --sym-args MIN MAX N, --sym-files N SIZE, --sym-stdin N,
        --sym-stdout, --sym-packets N SIZE, ...), ``arguments`` (the program's own, as a shell splits them),
        ``seeds`` (``.ktest`` files whose paths run first: ``symex run --seed-dir``),
        ``max_sym_array_size`` (``symex run --max-sym-array-size``; 0: never); the
        resource policy: ``budget`` (worker-seconds) and ``policy`` (budget-first: stop when
        it is spent; goal-first: run on to max_time for the goal)."""
        try:
            name = check_program_name(program.filename or "")
            spec = JobSpec.parse(goal, max_time, workers, flags, inputs, budget, policy, arguments,
                                 max_sym_array_size)
        except SymexError as exc:
            raise HTTPException(400, str(exc)) from None
        data = await program.read(MAX_PROGRAM_BYTES + 1)
        if len(data) > MAX_PROGRAM_BYTES:
            raise HTTPException(413, f"the program is over {MAX_PROGRAM_BYTES} bytes; upload "
                                     f"the source of the part to test")
        seed_files = await _read_seeds(seeds or [])
        if name.endswith(".bc") and not data.startswith(_BITCODE_MAGICS):
            raise HTTPException(400, "the program is not LLVM bitcode (a .bc file starts with "
                                     "the bytes 'BC' 0xC0 0xDE): upload the output of clang "
                                     "-c -emit-llvm, or the C source")
        if not spec.inputs and not any(marker in data for marker in _SYMBOLIC_MARKERS):
            raise HTTPException(400, "the program has no symbolic input: call "
                                     "klee_make_symbolic (or __VERIFIER_nondet_*) in it, or "
                                     "send inputs such as '--sym-stdin 8'")
        if who.worker_seconds is not None:
            held = store.worker_seconds_held(who.id)
            wanted = spec.reserved
            if held + wanted > who.worker_seconds:
                raise HTTPException(429, f"over this tenant's quota: its jobs hold "
                                         f"{held:.0f} of {who.worker_seconds:g} worker-seconds "
                                         f"and this one asks for {wanted:g} (its budget, or "
                                         f"workers x max_time); ask for less or wait for jobs "
                                         f"to end")
        job_id = store.add_job(who.id, name, spec.as_json())
        job = store.job(job_id)
        assert job is not None
        where = job_dir(storage, job)
        # a job id is new in this database, so a directory already there was left by another
        # one (a database deleted, its files kept): its runs would be taken for this job's
        shutil.rmtree(where, ignore_errors=True)
        where.mkdir(parents=True)
        # the scheduler leaves the job alone while it is checked; compiled where its run
        # will compile it, its IR is cached for the run
        (where / CHECKING_MARKER).touch()
        (where / name).write_bytes(data)
        if seed_files:
            (where / SEEDS_DIRECTORY).mkdir()
            for i, seed in enumerate(seed_files):
                (where / SEEDS_DIRECTORY / f"seed{i:03d}.ktest").write_bytes(seed)
        if name.endswith(".c"):
            problem = await asyncio.to_thread(_compile_problem, where / name, spec.flags)
            if problem is not None:
                store.delete_job(job_id)
                shutil.rmtree(where, ignore_errors=True)
                raise HTTPException(400, f"the program does not compile: {problem}")
        (where / CHECKING_MARKER).unlink()
        scheduler.wake()
        return {"id": job_id}

    def shown(job: JobRecord) -> dict[str, Any]:
        """A job as the API shows it: with its latest progress row while it runs."""
        state = job.as_json()
        state["progress"] = None
        if not job.status.final:
            out = _last_run(job_dir(storage, job))
            state["progress"] = latest_progress(out) if out is not None else None
        return state

    @app.get("/api/jobs")
    def list_jobs(who: Tenant = Depends(tenant)) -> list[dict[str, Any]]:
        """This tenant's jobs, oldest first (each running one with its latest progress row
        under ``progress``: paths, errors and coverage so far)."""
        return [shown(job) for job in store.jobs(who.id)]

    @app.get("/api/jobs/{job_id}")
    def get_job(job_id: JobId, who: Tenant = Depends(tenant)) -> dict[str, Any]:
        """One job: its status (queued, running, done, failed, cancelled), why it stopped,
        and while it runs its latest progress row (``progress``)."""
        return shown(own_job(job_id, who))

    @app.post("/api/jobs/{job_id}/cancel")
    def cancel(job_id: JobId, who: Tenant = Depends(tenant)) -> dict[str, Any]:
        """Stop a job; what it found so far stays."""
        own_job(job_id, who)
        scheduler.cancel(job_id)
        return own_job(job_id, who).as_json()

    @app.delete("/api/jobs/{job_id}", status_code=204)
    def delete(job_id: JobId, who: Tenant = Depends(tenant)) -> Response:
        """Cancel a job if it runs, and forget it and its files."""
        job = own_job(job_id, who)
        if not job.status.final:
            raise HTTPException(409, "the job has not ended: cancel it first, then delete it")
        shutil.rmtree(job_dir(storage, job), ignore_errors=True)
        store.delete_job(job_id)
        return Response(status_code=204)

    @app.get("/api/jobs/{job_id}/crashes")
    def get_crashes(job_id: JobId, who: Tenant = Depends(tenant)) -> list[dict[str, Any]]:
        """The job's crashes, most severe first: kind, message, location, stack, input and
        whether the native build failed the same way (empty until the job ends)."""
        path = job_dir(storage, own_job(job_id, who)) / JOB_CRASHES_FILE
        return json.loads(path.read_text()) if path.is_file() else []

    @app.get("/api/jobs/{job_id}/tests.zip")
    def get_tests(job_id: JobId, who: Tenant = Depends(tenant)) -> Response:
        """Every test of the job's last run (``.ktest``, with the ``.err`` reports)."""
        where = job_dir(storage, own_job(job_id, who))
        return Response(tests_zip(_last_run(where) or where), media_type="application/zip")

    @app.get("/api/jobs/{job_id}/test-suite.zip")
    def get_test_suite(job_id: JobId, who: Tenant = Depends(tenant)) -> Response:
        """The job's tests as a Test-Comp suite (test-format 1.1: ``metadata.xml`` and one
        ``testNNNNNN.xml`` per test, the values of its ``__VERIFIER_nondet_*`` calls)."""
        job = own_job(job_id, who)
        where = job_dir(storage, job)
        return Response(test_suite_zip(_last_run(where) or where, where / job.program_name),
                        media_type="application/zip")

    @app.get("/api/jobs/{job_id}/coverage.info")
    def get_coverage(job_id: JobId, who: Tenant = Depends(tenant)) -> PlainTextResponse:
        """The job's line and branch coverage as lcov ``.info`` (404 until it has one)."""
        where = job_dir(storage, own_job(job_id, who))
        out = _last_run(where)
        if out is None or not (out / "coverage.info").is_file():
            raise HTTPException(404, "no coverage yet: the job has not ended")
        return PlainTextResponse(without_job_paths((out / "coverage.info").read_text(),
                                                       where))

    @app.get("/api/jobs/{job_id}/coverage.html", response_class=HTMLResponse)
    def get_coverage_page(job_id: JobId, who: Tenant = Depends(tenant)) -> str:
        """The job's coverage as one self-contained HTML page (404 until the job ends)."""
        where = job_dir(storage, own_job(job_id, who))
        out = _last_run(where)
        if out is None or not (out / "coverage.html").is_file():
            raise HTTPException(404, "no coverage yet: the job has not ended")
        return without_job_paths((out / "coverage.html").read_text(errors="replace"), where)

    @app.get("/api/jobs/{job_id}/progress")
    def get_progress(job_id: JobId, who: Tenant = Depends(tenant)) -> list[dict[str, float]]:
        """The job's progress, a row a second: elapsed seconds, completed, error and partial
        paths, covered and total lines and branches, solver seconds, live states."""
        out = _last_run(job_dir(storage, own_job(job_id, who)))
        return progress(out) if out is not None else []

    @app.get("/api/jobs/{job_id}/tests/{name}")
    def get_test(job_id: JobId, name: str, who: Tenant = Depends(tenant)) -> Response:
        """One test of the job (``testNNNNNN.ktest``): the input that reproduces a crash."""
        out = _last_run(job_dir(storage, own_job(job_id, who)))
        if not _TEST_NAME.match(name) or out is None or not (out / name).is_file():
            raise HTTPException(404, f"no test {name!r} in this job (names are "
                                     f"testNNNNNN.ktest, as /crashes gives them)")
        return Response((out / name).read_bytes(), media_type="application/octet-stream",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def page() -> str:
        """The web page: jobs, their progress, coverage and crashes."""
        return PAGE

    @app.get("/api/jobs/{job_id}/events")
    async def events(job_id: JobId, who: Tenant = Depends(tenant)) -> StreamingResponse:
        """Server-sent events: the job as JSON each time it or its progress changes (its
        latest progress row under ``progress`` while it runs), until it ends."""
        own_job(job_id, who)

        async def stream() -> AsyncIterator[str]:
            last = None
            while True:
                job = store.job(job_id, who.id)
                if job is None:
                    return
                now = json.dumps(shown(job))
                if now != last:
                    yield f"data: {now}\n\n"
                    last = now
                if job.status.final:
                    return
                await asyncio.sleep(EVENT_SECONDS)

        return StreamingResponse(stream(), media_type="text/event-stream")

    return app


async def _read_seeds(uploads: list[UploadFile]) -> list[bytes]:
    """The bytes of a job's seed uploads, each checked to be a ``.ktest`` file (400: what is
    wrong, 413: too many or too large)."""
    if len(uploads) > MAX_SEEDS:
        raise HTTPException(413, f"{len(uploads)} seeds; a job takes at most {MAX_SEEDS}")
    seeds = []
    for upload in uploads:
        data = await upload.read(MAX_SEED_BYTES + 1)
        if not upload.filename and not data:
            continue  # the page's seeds field left empty
        if len(data) > MAX_SEED_BYTES:
            raise HTTPException(413, f"seed {upload.filename} is over {MAX_SEED_BYTES} bytes")
        try:
            KTest.from_bytes(data)
        except KTestError as exc:
            raise HTTPException(400, f"seed {upload.filename} is not a .ktest file ({exc}): "
                                     "upload tests of an earlier run, or KLEE's") from None
        seeds.append(data)
    return seeds


def _compile_problem(source: Path, flags: tuple[str, ...]) -> str | None:
    """The compiler's message when ``source`` does not compile (None: it does), the job's
    directory taken out of it. Only the compiler runs (a process of its own)."""
    try:
        compile_c(source, list(flags))
    except CompileError as exc:
        return without_job_paths(str(exc), source.parent)
    return None


def _last_run(where: Path) -> Path | None:
    runs = job_runs(where)
    return runs[-1] if runs else None
