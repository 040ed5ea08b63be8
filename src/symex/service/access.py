"""Who may see what: the service's state for its routes (:class:`ServiceContext`, on the
application) and the dependencies every route under ``/api`` takes, the tenant of the
request's token and a job of that tenant's (another tenant's job is a 404, as is a job that
does not exist)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import attrs
from fastapi import Depends, HTTPException, Request
from fastapi import Path as PathParam

from symex.service.scheduler import Scheduler, job_runs
from symex.service.store import JobRecord, ServiceStore, Tenant

__all__ = ["JobId", "ServiceContext", "context", "last_run", "own_job", "tenant"]

#: a job id in a route: SQLite's integers are 64-bit
JobId = Annotated[int, PathParam(ge=1, le=2**63 - 1, description="the job's id")]


@attrs.frozen
class ServiceContext:
    """What the routes work on: the store, the files' directory and the scheduler."""

    store: ServiceStore
    storage: Path
    scheduler: Scheduler


def context(request: Request) -> ServiceContext:
    """The application's :class:`ServiceContext` (``app.state.context``)."""
    found: ServiceContext = request.app.state.context
    return found


def tenant(request: Request, ctx: ServiceContext = Depends(context)) -> Tenant:
    """The tenant of the request's ``Authorization: Bearer TOKEN`` (401 otherwise)."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    found = ctx.store.tenant_of(token.strip()) if scheme.lower() == "bearer" else None
    if found is None:
        raise HTTPException(401, "missing or unknown token: send 'Authorization: Bearer "
                                 "TOKEN' (symex tenant add NAME prints one)",
                            headers={"WWW-Authenticate": "Bearer"})
    return found


def own_job(job_id: JobId, who: Tenant = Depends(tenant),
            ctx: ServiceContext = Depends(context)) -> JobRecord:
    """The job ``job_id`` of the request's tenant (404 for any other)."""
    job = ctx.store.job(job_id, who.id)
    if job is None:
        raise HTTPException(404, f"no job {job_id} for this token")
    return job


def last_run(where: Path) -> Path | None:
    """The output directory of a job's latest attempt, if it has one."""
    runs = job_runs(where)
    return runs[-1] if runs else None
