"""The digest of a recorded segment: what decided it, hashed the same way by every recorder.

A tree is recorded by one process (:class:`~symex.memo.recorder.TreeRecorder`) or by the
workers of a parallel run (:mod:`symex.parallel.tree`); a later run replays it with the
tree recorder, which compares each replayed segment's digest with the recorded one. Both
recorders therefore build digests with these functions, in this order: the segment starts
from its decision, then mixes in every answer it got, then ends at a fork or at the path's
end. Expressions are hashed by :class:`~symex.expr.digest.StructureHasher`.
"""

from __future__ import annotations

from symex.core.forks import ForkKind, Site
from symex.core.outcome import PathStatus, PathTerminated
from symex.expr.digest import mix, mix_words, name_hash
from symex.memo.format import NodeStatus, error_code

__all__ = ["answer_digest", "end_details", "end_digest", "fork_digest", "segment_start", "signed", "site_hash",
           "status_of"]

# event words mixed into a segment's digest
_ANSWER = 0x41
_FORK = 0x46
_END = 0x45
_START = 0xCBF29CE484222325


def segment_start(decision: int) -> int:
    """The digest of a segment before anything happened in it (the root's decision is 0)."""
    return mix(_START, decision)


def answer_digest(digest: int, tag: int, expr_hash: int) -> int:
    """``digest`` after an answer of kind ``tag`` about an expression hashing to ``expr_hash``."""
    return mix_words(digest, (_ANSWER, tag, expr_hash))


def fork_digest(digest: int, kind: ForkKind, site: int, condition_hash: int,
                instructions: int) -> int:
    """The digest of a segment that ended in a fork of ``kind`` at the site hashing to
    ``site``, on a condition hashing to ``condition_hash`` (0: none), after ``instructions``."""
    return mix_words(digest, (_FORK, kind, site, condition_hash, instructions))


def end_digest(digest: int, end: PathTerminated, status: NodeStatus, site: int,
               instructions: int) -> int:
    """The digest of a segment whose path ended (``end``, recorded as ``status``) at the site
    hashing to ``site`` after ``instructions``. A cut path keeps ``digest``: a later run
    resumes it in this very segment."""
    if status is NodeStatus.CUT:
        return digest
    error = error_code(end.error.kind) if end.error is not None else 0
    return mix_words(digest, (_END, status, site, error, instructions))


def site_hash(site: Site | None) -> int:
    """The hash of a program point (0: none, the end of main)."""
    if site is None:
        return 0
    return mix(mix(name_hash(site.function), site.block), site.instruction)


def signed(value: int) -> int:
    """A 64-bit unsigned hash as SQLite's signed INTEGER."""
    return value - (1 << 64) if value >= 1 << 63 else value


def end_details(end: PathTerminated,
                status: NodeStatus) -> tuple[int | None, int | None, str | None]:
    """What a leaf row records of how its path ended: the error kind's code (ERROR), the exit
    code (COMPLETED), the reason (PARTIAL, CUT)."""
    if status is NodeStatus.ERROR and end.error is not None:
        return error_code(end.error.kind), None, None
    if status is NodeStatus.COMPLETED:
        return None, end.exit_code, None
    if status is NodeStatus.PARTIAL or status is NodeStatus.CUT:
        return None, None, end.reason
    return None, None, None


def status_of(end: PathTerminated) -> NodeStatus:
    """How a path's end is recorded."""
    if end.status is PathStatus.COMPLETED:
        return NodeStatus.COMPLETED
    if end.status is PathStatus.ERROR:
        return NodeStatus.ERROR
    return NodeStatus.CUT if end.limit else NodeStatus.PARTIAL
