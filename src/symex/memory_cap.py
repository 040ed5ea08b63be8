"""A run's memory cap (KLEE's ``--max-memory``): what the run does as its resident memory
nears and passes ``max_memory``.

A run never halts for memory while it can shed: near the cap (:data:`INHIBIT_SHARE` of it)
no state splits any more (every symbolic choice follows the side the state's inputs take,
as past ``max_forks``), and above it a share of the waiting states ends, partial, as a time
limit ends them (with a test, and open in a recorded tree, so that ``--continue-with``
explores them later): :class:`MemoryCap` says how many. Only when nothing is left to shed
and the run still grows past :data:`HALT_SHARE` of the cap does it halt (``max-memory
reached``). Forking comes back once memory falls below :data:`RESUME_SHARE` of the cap.

Python rarely gives freed memory back to the system, so the resident size is a ceiling on
what the run holds: after a shed the cap waits :data:`SHED_SECONDS` before shedding again,
giving the freed memory time to be reused rather than counting it twice.
"""

from __future__ import annotations

import os
import sys

import attrs

from symex.errors import ConfigError

__all__ = ["HALT_SHARE", "INHIBIT_SHARE", "MEMORY_CAP_REASON", "MemoryCap", "MemoryVerdict",
           "check_fits", "default_max_memory_mb", "resident_mb", "worker_cap"]

#: why a state the cap ended ended (its test's reason)
MEMORY_CAP_REASON = "memory cap"
#: the share of the cap above which no state splits
INHIBIT_SHARE = 0.9
#: the share of the cap below which states split again
RESUME_SHARE = 0.75
#: the share of the cap above which, with no state left to shed, the run halts
HALT_SHARE = 1.25
#: seconds between two sheds
SHED_SECONDS = 1.0
#: the share of the machine's memory a run may hold by default
MACHINE_SHARE = 0.75
#: about what one symbolic byte of input takes to set up (its array element and the
#: expression reading it: 877 MB for a million bytes of --sym-stdin, measured)
BYTES_PER_SYMBOLIC_BYTE = 800
#: about what a worker process takes before it explores (Python, the solver, the program)
WORKER_MB = 100
#: the share of the cap the workers of a parallel run hold together (the coordinator, which
#: gathers their tests, the rest)
WORKERS_SHARE = 0.8


def resident_mb() -> float:
    """Resident set size of this process in MB (the peak size where /proc is missing)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            pages = int(statm.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2 ** 20
    except (OSError, ValueError, IndexError):
        import resource  # not on Windows; only needed where /proc is missing
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        # ru_maxrss is in bytes on macOS, in KB elsewhere
        return peak / 2 ** 20 if sys.platform == "darwin" else peak / 2 ** 10


def default_max_memory_mb() -> int:
    """The cap a run gets unless told: :data:`MACHINE_SHARE` of the memory this machine (or
    the control group this process is in) has."""
    try:
        # the C library's own count: psutil (12 ms to import) only where sysconf lacks it
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        import psutil  # noqa: PLC0415
        total = psutil.virtual_memory().total
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(limit_file) as handle:
                text = handle.read().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return max(256, int(total * MACHINE_SHARE) >> 20)


def check_fits(max_mb: float | None, input_bytes: int, workers: int) -> None:
    """Refuse (ConfigError, one line saying what to do) a run that cannot fit its cap:
    symbolic inputs too big to set up, or more worker processes than the cap holds."""
    if max_mb is None:
        return
    needed = input_bytes * BYTES_PER_SYMBOLIC_BYTE / 2 ** 20
    if needed > max_mb:
        raise ConfigError(f"the symbolic inputs make {input_bytes} bytes, which take about "
                          f"{needed:,.0f} MB to set up (about {BYTES_PER_SYMBOLIC_BYTE} bytes "
                          f"each): more than the memory cap of {max_mb:,.0f} MB; ask for "
                          f"fewer bytes, or raise the cap (--max-memory MB)")
    if workers > 1 and workers * WORKER_MB > max_mb * WORKERS_SHARE:
        fit = max(1, int(max_mb * WORKERS_SHARE // WORKER_MB))
        raise ConfigError(f"{workers} workers are {workers} processes of about {WORKER_MB} MB "
                          f"each before they explore: at most {fit} fit in the memory cap of "
                          f"{max_mb:,.0f} MB; ask for fewer workers, or raise the cap "
                          f"(--max-memory MB)")


def worker_cap(max_mb: float | None, workers: int) -> float | None:
    """Each worker's share of a parallel run's cap (the workers share one cap)."""
    return None if max_mb is None else max_mb * WORKERS_SHARE / max(1, workers)


@attrs.frozen
class MemoryVerdict:
    """What the run does now about its memory."""

    inhibit_forks: bool
    """Whether states may not split (near or over the cap)."""
    shed: int = 0
    """How many waiting states to end now."""
    halt: bool = False
    """Whether the run must halt (over the cap, nothing left to shed)."""


class MemoryCap:
    """The decisions of a run capped at ``max_mb`` MB (module docstring)."""

    __slots__ = ("max_mb", "inhibited", "next_shed")

    def __init__(self, max_mb: float) -> None:
        self.max_mb = max_mb
        self.inhibited = False
        self.next_shed = 0.0

    def check(self, now: float, used_mb: float, waiting: int) -> MemoryVerdict:
        """The verdict at monotonic time ``now`` for ``used_mb`` MB held with ``waiting``
        states waiting besides the one that runs next (which is never shed: a run whose
        every state would go halts instead)."""
        if used_mb >= self.max_mb * INHIBIT_SHARE:
            self.inhibited = True
        elif used_mb < self.max_mb * RESUME_SHARE:
            self.inhibited = False
        if used_mb <= self.max_mb:
            return MemoryVerdict(self.inhibited)
        if waiting and now >= self.next_shed:
            self.next_shed = now + SHED_SECONDS
            # the share of the states memory is over by, at least one, at least a tenth
            excess = 1.0 - self.max_mb * RESUME_SHARE / used_mb
            return MemoryVerdict(True, min(waiting, max(1, round(waiting * max(0.1, excess)))))
        return MemoryVerdict(True, halt=not waiting and used_mb > self.max_mb * HALT_SHARE)
