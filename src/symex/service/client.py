"""A Python client of the testing service: ``Client(url, token).submit(...)``, then ``wait()``
and ``results()`` on the job it returns."""

from __future__ import annotations

import io
import time
import zipfile
from pathlib import Path
from typing import Any
from collections.abc import Sequence

import attrs

from symex.errors import SymexError
from symex.service.job_status import JobStatus

__all__ = ["Client", "JobResults", "RemoteJob", "ServiceError"]

#: seconds between two looks at a job while waiting for it
WAIT_POLL_SECONDS = 0.5


class ServiceError(SymexError):
    """The service refused a request or could not be reached (the message says which)."""


@attrs.frozen
class JobResults:
    """What a finished job produced."""

    job: dict[str, Any]
    """The job as the API shows it (status, reason, summary)."""
    crashes: list[dict[str, Any]]
    """Most severe first: kind, message, location, stack, test, input, replayed."""
    tests: dict[str, bytes]
    """The ``.ktest`` files by name."""
    coverage: str | None
    """lcov ``.info`` text (None when the run wrote none)."""
    reports: dict[str, str] = attrs.field(factory=dict)
    """The ``.err`` reports by name (``testNNNNNN.KIND.err``: message, location, stack)."""
    sarif: dict[str, Any] | None = None
    """The errors as a SARIF 2.1.0 log (None when the run wrote none)."""


class RemoteJob:
    """A job on the service."""

    def __init__(self, client: Client, job_id: int) -> None:
        """The job ``job_id`` seen through ``client``."""
        self.client = client
        self.id = job_id

    def status(self) -> dict[str, Any]:
        """The job now: status, reason, summary."""
        return self.client._json("GET", f"/api/jobs/{self.id}")

    def wait(self, timeout: float | None = None) -> dict[str, Any]:
        """Wait until the job has ended (done, failed or cancelled); the job then.
        TimeoutError after ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            state = self.status()
            if JobStatus(state["status"]).final:
                return state
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"job {self.id} is still {state['status']} after {timeout} s")
            time.sleep(WAIT_POLL_SECONDS)

    def cancel(self) -> dict[str, Any]:
        """Ask the service to stop the job."""
        return self.client._json("POST", f"/api/jobs/{self.id}/cancel")

    def results(self) -> JobResults:
        """Crashes, tests, coverage and the SARIF log of the job (as far as it got)."""
        crashes = self.client._json("GET", f"/api/jobs/{self.id}/crashes")
        archive = zipfile.ZipFile(io.BytesIO(
            self.client._request("GET", f"/api/jobs/{self.id}/tests.zip").content))
        tests = {name: archive.read(name) for name in archive.namelist()
                 if name.endswith(".ktest")}
        reports = {name: archive.read(name).decode("utf-8", "replace")
                   for name in archive.namelist() if name.endswith(".err")}
        response = self.client._request("GET", f"/api/jobs/{self.id}/coverage.info",
                                        allowed=(404,))
        coverage = response.text if response.status_code == 200 else None
        response = self.client._request("GET", f"/api/jobs/{self.id}/results.sarif",
                                        allowed=(404,))
        sarif = response.json() if response.status_code == 200 else None
        return JobResults(self.status(), crashes, tests, coverage, reports, sarif)


class Client:
    """The service at ``url`` (``http://HOST:PORT``) with one tenant's ``token``."""

    def __init__(self, url: str, token: str, timeout: float = 60.0) -> None:
        """A client; nothing is sent until a request is made."""
        try:
            import httpx
        except ImportError:
            raise ServiceError("httpx is not installed; install it with: "
                               "pip install 'symex[service]'") from None
        self._http = httpx.Client(base_url=url.rstrip("/"), timeout=timeout,
                                  headers={"Authorization": f"Bearer {token}"})
        self._httpx = httpx

    def submit(self, program: str | Path, *, goal: str = "all-paths", max_time: float = 60.0,
               workers: int = 1, flags: str = "", inputs: str = "",
               arguments: str = "", seeds: Sequence[str | Path] = (),
               max_sym_array_size: int = 0, entry: str = "main",
               memory_model: str | None = None) -> RemoteJob:
        """Upload ``program`` (a .c, .ll or .bc file) as a new job, with the program's own
        ``arguments`` (split as a shell splits them), ``seeds`` (``.ktest`` files whose
        paths run first), ``max_sym_array_size`` (``symex run --max-sym-array-size``), the
        function it starts from (``entry``) and its ``memory_model`` (``symex run
        --memory-model``; None: the service's default); the job."""
        files: list[tuple[str, tuple[str, bytes]]] = []
        for field, name in [("program", program), *(("seeds", seed) for seed in seeds)]:
            path = Path(name)
            try:
                files.append((field, (path.name, path.read_bytes())))
            except OSError as exc:
                raise ServiceError(f"cannot read {path}: {exc.strerror or exc}") from None
        response = self._request("POST", "/api/jobs", files=files,
                                 data={"goal": goal, "max_time": str(max_time),
                                       "workers": str(workers), "flags": flags,
                                       "inputs": inputs, "arguments": arguments,
                                       "max_sym_array_size": str(max_sym_array_size),
                                       "entry": entry,
                                       **({} if memory_model is None
                                          else {"memory_model": memory_model})})
        return RemoteJob(self, int(response.json()["id"]))

    def jobs(self) -> list[dict[str, Any]]:
        """This tenant's jobs."""
        return self._json("GET", "/api/jobs")

    def job(self, job_id: int) -> RemoteJob:
        """Job ``job_id`` of this tenant."""
        return RemoteJob(self, job_id)

    def close(self) -> None:
        """Close the connection."""
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _json(self, method: str, route: str) -> Any:
        return self._request(method, route).json()

    def _request(self, method: str, route: str, allowed: tuple[int, ...] = (),
                 **kwargs: Any) -> Any:
        try:
            response = self._http.request(method, route, **kwargs)
        except self._httpx.HTTPError as exc:
            raise ServiceError(f"cannot reach the service at {self._http.base_url}: {exc}") \
                from None
        if response.status_code >= 400 and response.status_code not in allowed:
            try:
                detail = response.json().get("detail", response.text)
            except ValueError:
                detail = response.text
            raise ServiceError(f"the service answered {response.status_code}: {detail}")
        return response
