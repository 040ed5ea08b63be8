"""How long the next query of a branch site may take, learned from the site's time-outs.

With a query time limit (``--max-solver-time T``), a query not answered in time leaves its
branch side unexplored and the path goes on along the side its inputs take. Some sites ask
the same hopeless question over and over: musl's ``fmt_x`` asking whether a byte of an MD5
digest is 0, once per byte and path; a CRC printed with ``%u``. Each such query holds the
full limit, and a 60-second run is spent on two of them (docs/benchmarks.md, md5sum beside
KLEE). KLEE ends the path at its first time-out instead, losing everything after it.

Here a site whose query timed out gets an eighth of that time for its next query, and so
on down to :data:`MIN_BUDGET`; below it the site's questions are not asked at all (the path
follows its inputs' side, counted as undecided), except every :data:`PROBE_EVERY`-th, which
is asked with :data:`MIN_BUDGET`. A query the site answers in time gives it eight times its
budget back, up to the limit. A site is a branch instruction together with the instruction
that called its function (one library loop serves many callers: ``memcmp`` comparing a
digest and comparing an option name are different sites). The question whether a pointer can be other than
the inputs' value, which only saves work, is asked within its site's budget too, and never
for longer than ``OPTIONAL_QUESTION_TIME`` (core/interpreter/decisions.py).
"""

from __future__ import annotations

from typing import Any

__all__ = ["MIN_BUDGET", "PROBE_EVERY", "SHRINK", "SiteBudgets", "site_key"]

#: a timed-out site's next budget is its last divided by this (a success multiplies it back)
SHRINK = 8.0
#: the smallest budget a site is asked with; below it the site is not asked
MIN_BUDGET = 0.02
#: a site not asked any more is asked once in this many times (with MIN_BUDGET), so that a
#: site whose questions became easy on other paths gets its time back
PROBE_EVERY = 16


def site_key(state: Any) -> tuple[int, int, int, int]:
    """The site ``state`` is at: its instruction and the one that called its function."""
    frames = state.frames
    frame = frames[-1]
    if len(frames) > 1:
        caller = frames[-2]
        return id(frame.block), frame.pc, id(caller.block), caller.pc
    return id(frame.block), frame.pc, 0, 0


class SiteBudgets:
    """The budgets of one run's branch sites (see the module docstring). Only sites that
    timed out are kept: every other site is asked with the run's own limit."""

    __slots__ = ("limit", "budgets", "skipped")

    def __init__(self, limit: float) -> None:
        """``limit``: the run's query time limit, in seconds."""
        self.limit = limit
        #: site -> its budget in seconds (0.0: not asked), for sites that timed out
        self.budgets: dict[tuple[int, int, int, int], float] = {}
        #: site -> questions not asked since its last probe
        self.skipped: dict[tuple[int, int, int, int], int] = {}

    def budget(self, site: tuple[int, int, int, int]) -> float | None:
        """The time the site's next query may take: None for the run's own limit, 0.0 for
        not asking (the caller follows the inputs' side)."""
        budget = self.budgets.get(site)
        if budget is None or budget > 0.0:
            return budget
        skipped = self.skipped.get(site, 0) + 1
        if skipped >= PROBE_EVERY:
            self.skipped[site] = 0
            return MIN_BUDGET
        self.skipped[site] = skipped
        return 0.0

    def timed_out(self, site: tuple[int, int, int, int], budget: float | None) -> None:
        """The site's query was not answered within ``budget`` (None: the run's limit)."""
        shrunk = (self.limit if budget is None else budget) / SHRINK
        self.budgets[site] = shrunk if shrunk >= MIN_BUDGET else 0.0

    def answered(self, site: tuple[int, int, int, int]) -> None:
        """The site's query was answered within its budget."""
        budget = self.budgets.get(site)
        if budget is None:
            return
        grown = max(budget, MIN_BUDGET) * SHRINK
        if grown >= self.limit:
            del self.budgets[site]
            self.skipped.pop(site, None)
        else:
            self.budgets[site] = grown
