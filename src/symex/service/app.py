"""The HTTP API (FastAPI): submit a program with a goal and a budget, follow the job, fetch its
tests, coverage and crash reports.

Every route under ``/api`` needs ``Authorization: Bearer TOKEN``; a job is found only through
its own tenant's token (another tenant's job is a 404, as is a job that does not exist).
Bad input is a 4xx whose ``detail`` says what to send instead. The routes are in
:mod:`~symex.service.jobs_api` (a job's life), :mod:`~symex.service.results_api` (its results)
and here (the page); what a submission must be is :mod:`~symex.service.submission`'s.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import HTMLResponse

from symex.service import jobs_api, results_api
from symex.service.access import RequestGate, ServiceContext
from symex.service.jobs import MAX_PROGRAM_BYTES, MAX_SEED_BYTES, MAX_SEEDS
from symex.service.page import PAGE
from symex.service.scheduler import Scheduler
from symex.service.store import ServiceStore

__all__ = ["MAX_REQUEST_BYTES", "create_app"]

#: the largest request the API reads: a program, every seed, and room for the form's fields
MAX_REQUEST_BYTES = MAX_PROGRAM_BYTES + MAX_SEEDS * MAX_SEED_BYTES + (1 << 20)


def create_app(store: ServiceStore, storage: Path, scheduler: Scheduler) -> FastAPI:
    """The application over ``store``, with files under ``storage``, jobs run by
    ``scheduler`` (started and stopped with the application)."""
    app = FastAPI(title="symex", description="Symbolic execution as a testing service: upload "
                  "a C program, a goal and a budget; get tests, coverage and crash reports.",
                  version="0.1.0")
    app.state.context = ServiceContext(store, storage, scheduler)
    app.add_middleware(RequestGate, store=store, max_bytes=MAX_REQUEST_BYTES)

    @app.on_event("startup")
    def _start() -> None:
        scheduler.start()

    @app.on_event("shutdown")
    def _stop() -> None:
        scheduler.stop()

    app.include_router(jobs_api.router)
    app.include_router(results_api.router)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def page() -> str:
        """The web page: jobs, their progress, coverage and crashes."""
        return PAGE

    return app
