"""Where a service job is in its life: the statuses the store keeps, the API reports and the
page and the client test (one list for all of them; this module imports nothing heavy, so
the client can use it without the engine)."""

from __future__ import annotations

import enum

__all__ = ["JobStatus"]


class JobStatus(enum.Enum):
    """Where a job is in its life."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def final(self) -> bool:
        """Whether the job will not run again."""
        return self in (JobStatus.DONE, JobStatus.FAILED, JobStatus.CANCELLED)
