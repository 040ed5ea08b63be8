"""The limits that hold for a whole run, checked in one place.

``max_time``, ``max_instructions``, the ``stop_at`` locations and the hooks' ``should_stop``
end the whole run, not one path. A single process checks them once per time slice
(``exploration.Exploration``); with workers, the coordinator checks them over the workers'
totals (``parallel.coordinator``). Both ask :meth:`RunLimits.halt_reason`, so that a limit
means the same thing and reads the same in the run's summary either way.
"""

from __future__ import annotations

from collections.abc import Callable

from symex.core.coverage import CoverageMap, reach_targets, reached_location
from symex.core.outcome import TIME_LIMIT_REASON
from symex.description import Limits

__all__ = ["INSTRUCTION_LIMIT_REASON", "RunLimits"]

#: why a run that executed its ``max_instructions`` stopped
INSTRUCTION_LIMIT_REASON = "max-instructions reached"


class RunLimits:
    """A run's whole-run limits (module docstring), with the blocks its ``stop_at``
    locations name resolved in ``coverage``'s program."""

    __slots__ = ("max_time", "max_instructions", "targets", "should_stop")

    def __init__(self, limits: Limits, coverage: CoverageMap,
                 should_stop: Callable[[], str | None] | None) -> None:
        self.max_time = limits.max_time
        self.max_instructions = limits.max_instructions
        #: blocks whose first visit halts the run (``stop_at``), with their location
        self.targets = reach_targets(coverage, limits.stop_at)
        self.should_stop = should_stop

    def halt_reason(self, elapsed: float, instructions: int,
                    blocks: set[tuple[str, int]]) -> str | None:
        """Why the run must halt after ``elapsed`` seconds and ``instructions`` executed,
        having visited ``blocks`` (function, block index); None: it goes on."""
        if self.should_stop is not None and (asked := self.should_stop()):
            return asked
        if self.max_time is not None and elapsed > self.max_time:
            return TIME_LIMIT_REASON
        if self.max_instructions is not None and instructions >= self.max_instructions:
            return INSTRUCTION_LIMIT_REASON
        if self.targets:
            reached = reached_location(self.targets, blocks)
            if reached is not None:
                return f"reached {reached}"
        return None

    def time_left(self, elapsed: float) -> float | None:
        """Seconds left of ``max_time`` after ``elapsed`` (None: no time limit)."""
        return None if self.max_time is None else max(0.0, self.max_time - elapsed)
