"""Who may see what: the service's state for its routes (:class:`ServiceContext`, on the
application) and the dependencies every route under ``/api`` takes, the tenant of the
request's token and a job of that tenant's (another tenant's job is a 404, as is a job that
does not exist)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import attrs
from fastapi import Depends, HTTPException, Request
from fastapi import Path as PathParam
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from symex.service.job_files import JobRun, job_runs
from symex.service.jobs import MAX_PROGRAM_BYTES, MAX_SEED_BYTES, MAX_SEEDS
from symex.service.scheduler import Scheduler
from symex.service.store import JobRecord, ServiceStore, Tenant

__all__ = ["UNAUTHORIZED", "JobId", "RequestGate", "ServiceContext", "bearer_tenant", "context",
           "last_run", "own_job", "tenant"]

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


#: what a request without a known token is told
UNAUTHORIZED = ("missing or unknown token: send 'Authorization: Bearer TOKEN' (symex tenant "
                "add NAME prints one)")


def bearer_tenant(store: ServiceStore, header: str) -> Tenant | None:
    """The tenant whose token an ``Authorization`` header carries (None: none, or unknown)."""
    scheme, _, token = header.partition(" ")
    return store.tenant_of(token.strip()) if scheme.lower() == "bearer" else None


def tenant(request: Request, ctx: ServiceContext = Depends(context)) -> Tenant:
    """The tenant of the request's ``Authorization: Bearer TOKEN`` (401 otherwise)."""
    found = bearer_tenant(ctx.store, request.headers.get("authorization", ""))
    if found is None:
        raise HTTPException(401, UNAUTHORIZED, headers={"WWW-Authenticate": "Bearer"})
    return found


class RequestGate:
    """ASGI middleware in front of the API: a request with a body is answered before its
    body is read when its token is missing or unknown (401) or the length it declares is
    over ``max_bytes`` (413), and cut off with a 413 once its body grows past that. (FastAPI
    reads a form before the routes' dependencies run: without this, anyone could make the
    server read 200 MB before it said 401.)"""

    def __init__(self, app: ASGIApp, store: ServiceStore, max_bytes: int) -> None:
        self.app = app
        self.store = store
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS") or \
                not scope["path"].startswith("/api/"):
            await self.app(scope, receive, send)
            return
        headers = {name.decode("latin-1").lower(): value.decode("latin-1")
                   for name, value in scope["headers"]}
        if bearer_tenant(self.store, headers.get("authorization", "")) is None:
            await _answer(send, 401, UNAUTHORIZED, {"www-authenticate": "Bearer"})
            return
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await _answer(send, 413, self._too_large())
            return
        received = 0
        answered = False

        async def counted() -> Message:
            nonlocal received, answered
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes and not answered:
                    answered = True
                    await _answer(send, 413, self._too_large())
                    return {"type": "http.disconnect"}
            return message

        async def unless_answered(message: Message) -> None:
            if not answered:
                await send(message)

        await self.app(scope, counted, unless_answered)

    def _too_large(self) -> str:
        return (f"the request is over {self.max_bytes} bytes: a program of at most "
                f"{MAX_PROGRAM_BYTES} bytes and at most {MAX_SEEDS} seeds of "
                f"{MAX_SEED_BYTES} bytes")


async def _answer(send: Send, status: int, detail: str, extra: dict[str, str] | None = None) -> None:
    """Send a JSON error response (``{"detail": ...}``, as FastAPI's) and close the exchange."""
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"connection", b"close"),
               *((k.encode(), v.encode()) for k, v in (extra or {}).items())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def own_job(job_id: JobId, who: Tenant = Depends(tenant),
            ctx: ServiceContext = Depends(context)) -> JobRecord:
    """The job ``job_id`` of the request's tenant (404 for any other)."""
    job = ctx.store.job(job_id, who.id)
    if job is None:
        raise HTTPException(404, f"no job {job_id} for this token")
    return job


def last_run(where: Path) -> JobRun | None:
    """The output directory of a job's latest attempt, if it has one."""
    runs = job_runs(where)
    return runs[-1] if runs else None
