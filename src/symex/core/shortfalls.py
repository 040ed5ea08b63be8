"""Where a run fell short of exploring everything: symbolic values it fixed to one value
(a concretization) and calls to functions nothing models, counted by program line.

KLEE's users read these in ``messages.txt`` to know which paths a run could not follow and
what to model next. The executor tallies them as they happen; the run's
:class:`~symex.results.Result` carries them (summed over a parallel run's workers) and
``symex run`` writes one line for each to ``messages.txt``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

import attrs

__all__ = ["Shortfall", "ShortfallKind", "ShortfallTally", "merge_shortfalls"]


class ShortfallKind(enum.Enum):
    """What kind of shortfall."""

    CONCRETIZED = "concretized"
    """A symbolic value fixed to one feasible value (the others are not explored there)."""
    UNMODELLED = "unmodelled"
    """A call to a function neither the program, symex's C library nor its models define:
    the path ends there as partial."""
    UNMODELLED_SYSCALL = "unmodelled-syscall"
    """A system call the model does not answer: it returned ENOSYS and the path went on."""
    PARTIAL_LOAD = "partial-load"
    """An aligned word read that crosses the end of its object (a word-at-a-time search):
    the bytes past the end read as 0 instead of an out-of-bounds error."""
    UNKNOWN_PROGRAM = "unknown-program"
    """An ``execve`` of a program not named with ``--program``: it failed with ENOENT, as the
    kernel fails for a file that does not exist, and the path went on."""
    UNDECIDED = "undecided"
    """A branch side the solver could not decide within the query time limit: the path went
    on along the side its inputs take, and the other is not explored."""


@attrs.frozen
class Shortfall:
    """One kind of shortfall at one program line, and how often it happened."""

    kind: ShortfallKind
    what: str
    """Why a value was fixed ("printf argument"), or the function called ("perror")."""
    site: str
    """``file:line`` of the program line (its nearest caller's inside symex's library)."""
    count: int

    def describe(self) -> str:
        """One line for ``messages.txt`` and the end of ``symex run``."""
        times = "once" if self.count == 1 else f"{self.count} times"
        where = self.site or "a line without debug information"
        if self.kind is ShortfallKind.UNMODELLED_SYSCALL:
            return (f"symex: warning: the system call '{self.what}' at {where} returned ENOSYS "
                    f"{times}: symex does not model it")
        if self.kind is ShortfallKind.PARTIAL_LOAD:
            return (f"symex: warning: an aligned {self.what} at {where} crossed the end of its "
                    f"object {times}: the bytes past the end read as 0 (a word-at-a-time "
                    f"search; natively harmless, though AddressSanitizer reports it)")
        if self.kind is ShortfallKind.UNKNOWN_PROGRAM:
            return (f"symex: warning: execve of '{self.what}' at {where} failed with ENOENT "
                    f"{times}: name the program to run there with --program NAME=PATH")
        if self.kind is ShortfallKind.UNDECIDED:
            return (f"symex: warning: a {self.what} at {where} had a side the solver could not "
                    f"decide in time {times}: only the side the inputs take was explored "
                    f"(--max-solver-time)")
        if self.kind is ShortfallKind.UNMODELLED:
            paths = "1 path" if self.count == 1 else f"{self.count} paths"
            return (f"symex: warning: {paths} ended at a call to '{self.what}' at {where}, "
                    f"which symex does not model")
        return (f"symex: warning: a symbolic {self.what} at {where} was fixed to one of its "
                f"values {times} (the others are not explored there)")


class ShortfallTally:
    """The counts of one executor, by (kind, what, site)."""

    __slots__ = ("counts",)

    def __init__(self) -> None:
        self.counts: dict[tuple[ShortfallKind, str, str], int] = {}

    def add(self, kind: ShortfallKind, what: str, site: str) -> None:
        """Count one more."""
        key = (kind, what, site)
        self.counts[key] = self.counts.get(key, 0) + 1

    def items(self) -> tuple[Shortfall, ...]:
        """The tally as values, the most frequent first (then by site, for a stable order)."""
        return merge_shortfalls([Shortfall(kind, what, site, count)
                                 for (kind, what, site), count in self.counts.items()])


def merge_shortfalls(shortfalls: Iterable[Shortfall]) -> tuple[Shortfall, ...]:
    """Sum the counts of equal (kind, what, site); the most frequent first."""
    counts: dict[tuple[ShortfallKind, str, str], int] = {}
    for shortfall in shortfalls:
        key = (shortfall.kind, shortfall.what, shortfall.site)
        counts[key] = counts.get(key, 0) + shortfall.count
    return tuple(sorted((Shortfall(kind, what, site, count) for (kind, what, site), count in counts.items()),
                        key=lambda s: (-s.count, s.kind.value, s.site, s.what)))
