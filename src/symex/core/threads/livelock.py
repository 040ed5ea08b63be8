"""Livelocks: a path whose threads are all blocked, where the time-outs that wake them one at
a time only bring the whole state back to where it was.

Time passes in the model only when no thread can run (core.scheduling), and the model's
clock does not move. So when, at such a moment, a state equals the one it was in at an
earlier such moment, it repeats from there forever: no input can arrive (the universe is
closed) and it produces no output. A server run alone is the common case: memcached's
clock timer and logger thread wake on time-outs forever while nobody connects. Cloud9
reports that server as a hang; so does symex, with every thread's stack.

Equal means: every process's objects with the same contents, every thread at the same
instruction with the same registers and in the same wait, the same descriptors, files,
pipes and sockets, the same output and the same constraints, *up to the addresses of
objects made in between*. symex never reuses an address, so the stack objects of a call
made again (select's frame, each time the event loop comes round) have new ones: objects
one moment has and the other does not are paired (a frame's locals by position, the rest
by kind, size and allocation site, in order), and a pointer into one of a pair reads as
the same value as the pointer into the other. Anything else that differs (a counter, a
byte of output, one object more) makes the state new, so a program that sleeps a hundred
times and then exits is never reported.

A path that does not repeat exactly but goes on waking only from time-outs (memcached alone
does: a statistics counter and libevent's random seed move on every round) is *idle*: after
:data:`MAX_IDLE_TIME_OUTS` time-outs in a row (the run's ``max_idle_time_outs``) with no
other wake-up, no input and no output, it ends as partial with that reason. That is not
reported as a hang: nothing proves the program would not act after one more time-out.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, Protocol

import immutables

from symex.core.memory.objects import OFFSET_MASK, ObjectState
from symex.core.state import Frame, State
from symex.ir.program import SEGMENT_SHIFT

class ThreadView(Protocol):
    """What a snapshot reads of a thread."""

    tid: int
    pid: int
    finished: bool
    waiting: Any
    timed: bool
    errno: int


class ProcessView(Protocol):
    """What a snapshot reads of a process."""

    pid: int
    exit_status: int | None
    reaped: bool
    fds: Any


class Scheduler(Protocol):
    """What a snapshot reads of a path's processes and threads (core.scheduling's
    ``Threads``, which imports this module)."""

    current: int

    @property
    def threads(self) -> Mapping[int, ThreadView]:
        """Every thread, by id."""
        ...

    @property
    def processes(self) -> Mapping[int, ProcessView]:
        """Every process, by id."""
        ...

    def frames_of(self, state: State, thread: Any) -> list[Frame]:
        """The frames of ``thread`` (the running thread's are the state's)."""
        ...

    def objects_of(self, state: State, pid: int) -> Any:
        """The address space of process ``pid``."""
        ...


__all__ = ["Idleness", "IdleWatch", "MAX_IDLE_TIME_OUTS", "MAX_SNAPSHOTS", "ProcessView", "Scheduler", "Snapshot",
           "ThreadView"]

#: how many earlier moments a state is compared with (a cycle of several threads' time-outs
#: comes back after as many moments as it has steps)
MAX_SNAPSHOTS = 8

#: time-outs in a row, with nothing else happening, after which a path ends as idle, unless
#: the run says otherwise (``explore(max_idle_time_outs=N)``, ``--max-idle-time-outs``)
MAX_IDLE_TIME_OUTS = 256


class Idleness(enum.Enum):
    """What the moments time passed show about a path."""

    REPEATS = "the whole state repeats"
    IDLE = "only time-outs, for a long time"


class IdleWatch:
    """A path's last few moments when time passed, and how many time-outs in a row came
    with no other wake-up, no input and no output (``Threads.idle``)."""

    __slots__ = ("snapshots", "time_outs")

    def __init__(self) -> None:
        self.snapshots: list[Snapshot] = []
        self.time_outs = 0

    def copy(self) -> IdleWatch:
        """A copy for a forked state (snapshots are never changed: shared)."""
        other = IdleWatch()
        other.snapshots = list(self.snapshots)
        other.time_outs = self.time_outs
        return other

    def woke(self) -> None:
        """A thread woke because what it waited for happened: the path is not idle."""
        self.time_outs = 0

    def time_passes(self, state: State, threads: Scheduler, limit: int) -> Idleness | None:
        """Record this moment (no thread can run; one is about to time out) and tell what
        the moments so far show (IDLE after ``limit`` time-outs in a row with nothing else
        happening; 0: never). Later writes copy the objects the snapshot holds (a new
        ownership token, as a fork makes), so the snapshot keeps this moment's contents."""
        now = Snapshot(state, threads)
        state.cow = object()
        snapshots = self.snapshots
        last = snapshots[-1] if snapshots else None
        if last is None or not (last.posix is now.posix and last.stdout is now.stdout
                                and last.stderr is now.stderr):
            self.time_outs = 0
        self.time_outs += 1
        found = any(now.same_as(earlier) for earlier in snapshots)
        snapshots.append(now)
        if len(snapshots) > MAX_SNAPSHOTS:
            del snapshots[0]
        if found:
            return Idleness.REPEATS
        return Idleness.IDLE if 0 < limit <= self.time_outs else None


class Snapshot:
    """The state at one moment when time passed (all threads blocked)."""

    __slots__ = ("summary", "frames", "objects", "posix", "constraints", "stdout", "stderr")

    def __init__(self, state: State, threads: Scheduler) -> None:
        #: what is cheap to compare: which thread ran last, each thread's wait and errno,
        #: each process's status and descriptors, how many symbolic objects
        self.summary = (threads.current, len(state.symbolics),
                        tuple((t.tid, t.pid, t.finished, t.waiting is None, t.timed, t.errno)
                              for t in threads.threads.values()),
                        tuple((p.pid, p.exit_status, p.reaped, p.fds) for p in threads.processes.values()))
        self.frames = {tid: [f.copy() for f in threads.frames_of(state, t)]
                       for tid, t in threads.threads.items() if not t.finished}
        self.objects = {pid: threads.objects_of(state, pid)
                        for pid, p in threads.processes.items() if p.exit_status is None}
        self.posix = state.posix
        self.constraints = state.constraints
        self.stdout = state.stdout
        self.stderr = state.stderr

    def same_as(self, other: Snapshot) -> bool:
        """Whether the two moments' states are equal (see the module's docstring)."""
        if (self.summary != other.summary or self.stdout != other.stdout or self.stderr != other.stderr
                or not _same_items(self.constraints, other.constraints, {})
                or self.frames.keys() != other.frames.keys() or self.objects.keys() != other.objects.keys()
                or not (self.posix is other.posix or self.posix == other.posix)):
            return False
        pairs = _paired_objects(self, other)
        if pairs is None:
            return False
        return (all(_same_frames(self.frames[tid], other.frames[tid], pairs) for tid in self.frames)
                and all(_same_memory(self.objects[pid], other.objects[pid], pairs) for pid in self.objects))


def _paired_objects(mine: Snapshot, theirs: Snapshot) -> dict[int, int] | None:
    """Segment pairs (mine -> theirs) of the objects only one moment has; None when they
    cannot be paired (then the states differ)."""
    pairs: dict[int, int] = {}
    for tid, frames in mine.frames.items():
        their_frames = theirs.frames[tid]
        if len(frames) != len(their_frames):
            return None
        for frame, other in zip(frames, their_frames):
            if len(frame.allocas) != len(other.allocas):
                return None
            for a, b in zip(frame.allocas, other.allocas):
                if a != b:
                    pairs[a] = b
    for pid, objects in mine.objects.items():
        others = theirs.objects[pid]
        only_mine = sorted(k for k in objects.keys() if k not in others and k not in pairs)
        paired = set(pairs.values())
        only_theirs = sorted(k for k in others.keys() if k not in objects and k not in paired)
        if len(only_mine) != len(only_theirs):
            return None
        for a, b in zip(only_mine, only_theirs):
            x, y = objects[a].obj, others[b].obj
            if (x.kind, x.size, x.site, x.name) != (y.kind, y.size, y.site, y.name):
                return None
            pairs[a] = b
    return pairs


def _moved(value: int, pairs: dict[int, int]) -> int:
    """``value`` with a pointer into a paired object moved to its pair."""
    target = pairs.get(value >> SEGMENT_SHIFT)
    return value if target is None else target << SEGMENT_SHIFT | value & OFFSET_MASK


def _same_items(a: Any, b: Any, pairs: dict[int, int]) -> bool:
    """Sequences of numbers and expressions (hash-consed: the same expression is the same
    object; a NaN is never equal, which only errs towards "not a repetition")."""
    if a is b:
        return True
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is y:
            continue
        kind = type(x)
        if kind is not type(y) or kind not in (int, float):
            return False
        if kind is int:
            if x != y and (not pairs or _moved(x, pairs) != y):
                return False
        elif x != y:
            return False
    return True


def _same_frames(a: list[Frame], b: list[Frame], pairs: dict[int, int]) -> bool:
    return all(
        x.function is y.function and x.block is y.block and x.pc == y.pc and x.ret_dest == y.ret_dest
        and _moved(x.varargs, pairs) == y.varargs and _same_items(x.regs, y.regs, pairs)
        for x, y in zip(a, b))


def _same_memory(a: immutables.Map[int, ObjectState], b: immutables.Map[int, ObjectState],
                 pairs: dict[int, int]) -> bool:
    if a is b:
        return True
    if len(a) != len(b):
        return False
    for segment, mine in a.items():
        theirs = b.get(pairs.get(segment, segment))
        if theirs is None:
            return False
        if mine is not theirs and not _same_contents(mine, theirs, pairs):
            return False
    return True


def _same_contents(a: ObjectState, b: ObjectState, pairs: dict[int, int]) -> bool:
    size = a.obj.size
    if size != b.obj.size:
        return False
    if not (a.is_concrete and b.is_concrete):
        return _same_items(a.read_bytes(0, size), b.read_bytes(0, size), {})
    mine, theirs = a.concrete(0, size), b.concrete(0, size)
    if mine == theirs:
        return True
    if not pairs:
        return False
    # the words that differ must be pointers into paired objects (pointers are aligned)
    for at in range(0, size, 8):
        x, y = mine[at:at + 8], theirs[at:at + 8]
        if x != y and (len(x) < 8 or _moved(int.from_bytes(x, "little"), pairs) != int.from_bytes(y, "little")):
            return False
    return True
