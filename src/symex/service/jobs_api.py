"""The routes of a job's life: submit, list, follow (its state, its event stream), cancel,
delete."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Depends, File, Form, HTTPException, UploadFile
from fastapi.responses import Response, StreamingResponse

from symex.core.memory.models import DEFAULT_MEMORY_MODEL
from symex.errors import SymexError
from symex.service.access import JobId, ServiceContext, context, last_run, own_job, tenant
from symex.service.jobs import (MAX_PROGRAM_BYTES, MAX_SEED_BYTES, MAX_SEEDS, JobSpec,
                                check_program_name, latest_progress)
from symex.service.scheduler import job_dir
from symex.service.store import JobRecord, Tenant
from symex.service.submission import (Refused, check_compiles, check_seed, check_submission,
                                      file_job)

__all__ = ["EVENT_SECONDS", "router", "shown"]

#: seconds between two looks at a job for its event stream
EVENT_SECONDS = 0.5

router = APIRouter()


def shown(ctx: ServiceContext, job: JobRecord) -> dict[str, Any]:
    """A job as the API shows it: with its latest progress row while it runs."""
    state = job.as_json()
    state["progress"] = None
    if not job.status.final:
        out = last_run(job_dir(ctx.storage, job))
        state["progress"] = latest_progress(out) if out is not None else None
    return state


@router.post("/api/jobs", status_code=201)
async def submit(program: UploadFile = File(...), goal: str = Form("all-paths"),
                 max_time: float = Form(60.0), workers: int = Form(1),
                 flags: str = Form(""), inputs: str = Form(""),
                 budget: float | None = Form(None), policy: str = Form("budget-first"),
                 arguments: str = Form(""), max_sym_array_size: int = Form(0),
                 entry: str = Form("main"), memory_model: str = Form(DEFAULT_MEMORY_MODEL),
                 seeds: list[UploadFile] | None = File(None),
                 who: Tenant = Depends(tenant),
                 ctx: ServiceContext = Depends(context)) -> dict[str, Any]:
    """Queue a job: ``program`` (.c, .ll or .bc), ``goal`` (all-paths, crashes,
    line-coverage:N, branch-coverage:N),
    ``max_time`` (seconds), ``workers``, ``flags`` (-DNAME[=V], -O LEVEL) and ``inputs``
    (``symex run``'s: --sym-arg N, --sym-args MIN MAX N, --sym-files N SIZE, --sym-stdin N,
    --sym-stdout, --sym-packets N SIZE, ...), ``arguments`` (the program's own, as a shell
    splits them), ``entry`` (the function the run starts from: main by default), ``seeds``
    (``.ktest`` files whose paths run first: ``symex run --seed-dir``),
    ``max_sym_array_size`` (``symex run --max-sym-array-size``; 0: never),
    ``memory_model`` (``symex run --memory-model``: forking, merged or a plug-in's);
    the resource policy: ``budget`` (worker-seconds) and ``policy`` (budget-first: stop when
    it is spent; goal-first: run on to max_time for the goal)."""
    try:
        name = check_program_name(program.filename or "")
        spec = JobSpec.parse(goal, max_time, workers, flags, inputs, budget, policy, arguments,
                             max_sym_array_size, entry, memory_model)
        data = await program.read(MAX_PROGRAM_BYTES + 1)
        seed_files = await _read_seeds(seeds or [])
        check_submission(ctx.store, who, name, data, spec, seed_files)
        job_id, where = file_job(ctx.store, ctx.storage, who, name, data, spec, seed_files)
        await asyncio.to_thread(check_compiles, ctx.store, job_id, where, name, spec,
                                ctx.scheduler.isolation)
    except Refused as exc:
        raise HTTPException(exc.status, str(exc)) from None
    except SymexError as exc:
        raise HTTPException(400, str(exc)) from None
    ctx.scheduler.wake()
    return {"id": job_id}


async def _read_seeds(uploads: list[UploadFile]) -> list[bytes]:
    """The bytes of a job's seed uploads, each checked (:func:`check_seed`)."""
    if len(uploads) > MAX_SEEDS:
        raise Refused(413, f"{len(uploads)} seeds; a job takes at most {MAX_SEEDS}")
    seeds = []
    for upload in uploads:
        data = await upload.read(MAX_SEED_BYTES + 1)
        if not upload.filename and not data:
            continue  # the page's seeds field left empty
        check_seed(upload.filename or "", data)
        seeds.append(data)
    return seeds


@router.get("/api/jobs")
def list_jobs(who: Tenant = Depends(tenant),
              ctx: ServiceContext = Depends(context)) -> list[dict[str, Any]]:
    """This tenant's jobs, oldest first (each running one with its latest progress row
    under ``progress``: paths, errors and coverage so far)."""
    return [shown(ctx, job) for job in ctx.store.jobs(who.id)]


@router.get("/api/jobs/{job_id}")
def get_job(job: JobRecord = Depends(own_job),
            ctx: ServiceContext = Depends(context)) -> dict[str, Any]:
    """One job: its status (queued, running, done, failed, cancelled), why it stopped,
    and while it runs its latest progress row (``progress``)."""
    return shown(ctx, job)


@router.post("/api/jobs/{job_id}/cancel")
def cancel(job_id: JobId, job: JobRecord = Depends(own_job), who: Tenant = Depends(tenant),
           ctx: ServiceContext = Depends(context)) -> dict[str, Any]:
    """Stop a job; what it found so far stays."""
    ctx.scheduler.cancel(job_id)
    again = ctx.store.job(job_id, who.id)
    return (again or job).as_json()


@router.delete("/api/jobs/{job_id}", status_code=204)
def delete(job: JobRecord = Depends(own_job), ctx: ServiceContext = Depends(context)) -> Response:
    """Forget an ended job and its files (a running one must be cancelled first)."""
    if not job.status.final:
        raise HTTPException(409, "the job has not ended: cancel it first, then delete it")
    shutil.rmtree(job_dir(ctx.storage, job), ignore_errors=True)
    ctx.store.delete_job(job.id)
    return Response(status_code=204)


@router.get("/api/jobs/{job_id}/events")
async def events(job_id: JobId, job: JobRecord = Depends(own_job), who: Tenant = Depends(tenant),
                 ctx: ServiceContext = Depends(context)) -> StreamingResponse:
    """Server-sent events: the job as JSON each time it or its progress changes (its
    latest progress row under ``progress`` while it runs), until it ends."""

    async def stream() -> AsyncIterator[str]:
        last = None
        while True:
            current = ctx.store.job(job_id, who.id)
            if current is None:
                return
            now = json.dumps(shown(ctx, current))
            if now != last:
                yield f"data: {now}\n\n"
                last = now
            if current.status.final:
                return
            await asyncio.sleep(EVENT_SECONDS)

    return StreamingResponse(stream(), media_type="text/event-stream")
