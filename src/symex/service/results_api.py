"""The routes of a job's results: crashes (also as a SARIF log), tests (one, all, as a
Test-Comp suite), coverage (lcov and a page) and progress rows."""

from __future__ import annotations

import json
import re
from typing import Any

from fastapi import APIRouter, Depends, HTTPException
from fastapi.responses import HTMLResponse, PlainTextResponse, Response

from symex.service.access import ServiceContext, context, last_run, own_job
from symex.service.job_files import JobRun, read_job_text
from symex.service.job_process import SARIF_FILE
from symex.service.jobs import progress, test_suite_zip, tests_zip, without_job_paths
from symex.service.scheduler import JOB_CRASHES_FILE, job_dir
from symex.service.store import JobRecord

__all__ = ["router"]

_TEST_NAME = re.compile(r"^test[0-9]{6}\.ktest$")
#: a zip file with nothing in it (a job with no run yet has no tests)
_EMPTY_ZIP = b"PK\x05\x06" + bytes(18)

router = APIRouter()


@router.get("/api/jobs/{job_id}/crashes")
def get_crashes(job: JobRecord = Depends(own_job),
                ctx: ServiceContext = Depends(context)) -> list[dict[str, Any]]:
    """The job's crashes, most severe first: kind, message, location, stack, input and
    whether the native build failed the same way (empty until the job ends)."""
    text = read_job_text(job_dir(ctx.storage, job), JOB_CRASHES_FILE)
    try:
        found = json.loads(text) if text is not None else []
    except ValueError:
        found = []
    return found if isinstance(found, list) else []


@router.get("/api/jobs/{job_id}/results.sarif")
def get_sarif(job: JobRecord = Depends(own_job), ctx: ServiceContext = Depends(context)) -> Response:
    """The job's errors as a SARIF 2.1.0 log (one result per distinct error, paths relative
    to the upload), for a CI system to show; it grows as the job runs (404 before its run
    starts)."""
    where = job_dir(ctx.storage, job)
    out = last_run(where)
    text = out.read_text(SARIF_FILE) if out is not None else None
    if text is None:
        raise HTTPException(404, "no SARIF log yet: the job's run has not started")
    return Response(without_job_paths(text, where), media_type="application/sarif+json")


@router.get("/api/jobs/{job_id}/tests.zip")
def get_tests(job: JobRecord = Depends(own_job), ctx: ServiceContext = Depends(context)) -> Response:
    """Every test of the job's last run (``.ktest``, with the ``.err`` reports)."""
    out = last_run(job_dir(ctx.storage, job))
    return Response(tests_zip(out) if out is not None else _EMPTY_ZIP,
                    media_type="application/zip")


@router.get("/api/jobs/{job_id}/test-suite.zip")
def get_test_suite(job: JobRecord = Depends(own_job),
                   ctx: ServiceContext = Depends(context)) -> Response:
    """The job's tests as a Test-Comp suite (test-format 1.1: ``metadata.xml`` and one
    ``testNNNNNN.xml`` per test, the values of its ``__VERIFIER_nondet_*`` calls)."""
    where = job_dir(ctx.storage, job)
    return Response(test_suite_zip(last_run(where) or JobRun(where, "."), job.program_name),
                    media_type="application/zip")


@router.get("/api/jobs/{job_id}/coverage.info")
def get_coverage(job: JobRecord = Depends(own_job),
                 ctx: ServiceContext = Depends(context)) -> PlainTextResponse:
    """The job's line and branch coverage as lcov ``.info`` (404 until it has one)."""
    return PlainTextResponse(_coverage(ctx, job, "coverage.info"))


@router.get("/api/jobs/{job_id}/coverage.html", response_class=HTMLResponse)
def get_coverage_page(job: JobRecord = Depends(own_job),
                      ctx: ServiceContext = Depends(context)) -> str:
    """The job's coverage as one self-contained HTML page (404 until the job ends)."""
    return _coverage(ctx, job, "coverage.html")


def _coverage(ctx: ServiceContext, job: JobRecord, name: str) -> str:
    """The job's coverage file ``name``, the job's directory taken out of it (404: none yet)."""
    where = job_dir(ctx.storage, job)
    out = last_run(where)
    text = out.read_text(name) if out is not None else None
    if text is None:
        raise HTTPException(404, "no coverage yet: the job has not ended")
    return without_job_paths(text, where)


@router.get("/api/jobs/{job_id}/progress")
def get_progress(job: JobRecord = Depends(own_job),
                 ctx: ServiceContext = Depends(context)) -> list[dict[str, float]]:
    """The job's progress, a row a second: elapsed seconds, completed, error and partial
    paths, covered and total lines and branches, solver seconds, live states."""
    out = last_run(job_dir(ctx.storage, job))
    return progress(out) if out is not None else []


@router.get("/api/jobs/{job_id}/tests/{name}")
def get_test(name: str, job: JobRecord = Depends(own_job),
             ctx: ServiceContext = Depends(context)) -> Response:
    """One test of the job (``testNNNNNN.ktest``): the input that reproduces a crash."""
    out = last_run(job_dir(ctx.storage, job))
    data = out.read_bytes(name) if out is not None and _TEST_NAME.match(name) else None
    if data is None:
        raise HTTPException(404, f"no test {name!r} in this job (names are "
                                 f"testNNNNNN.ktest, as /crashes gives them)")
    return Response(data, media_type="application/octet-stream",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})
