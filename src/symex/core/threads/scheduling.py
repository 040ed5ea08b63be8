"""Processes and threads inside one state, as Cloud9 runs them, and the scheduler that
switches between them at blocking calls.

A state starts with one process and one thread and no :class:`Threads` at all
(``State.threads`` is None), so a program that never forks or starts a thread pays nothing.
The first ``fork``, ``pthread_create`` or blocking call makes one. From then on:

- The running thread's frames are the state's own (``State.frames``), so the interpreter loop
  is unchanged; every other thread keeps its frames in its :class:`ThreadContext`. Switching
  swaps them, and when the other thread is in another process, also the address space
  (``State.objects``) and the descriptor table (``State.posix.fds``), which every other process
  keeps in its :class:`ProcessContext`. Processes share files, pipes and sockets (the rest of
  ``State.posix``) and the path's standard output.
- A process made by ``fork`` starts with its parent's address space: the same persistent map,
  and the state's copy-on-write token is renewed, so whichever process writes an object
  first copies it (the same mechanism that lets forked states share memory).
- Scheduling is cooperative, as in Cloud9: the running thread runs until it blocks (a read
  with nothing to read, ``accept`` with no connection, ``waitpid``, ``pthread_join``, a locked
  mutex...), yields or exits. A blocked thread waits on a *wait condition*, a function of the
  state asked again at every switch; the next thread is the first runnable one after the
  current in thread-id order. With ``schedule_forks`` left (``explore(schedule_forks=N)``), a
  switch with several runnable threads forks one state per choice instead (``ForkKind.
  SCHEDULE``), at most N times per path.
- Time passes only when nobody can run: then a thread waiting with a time-out (``poll``,
  ``select``, ``sleep``) wakes with its time-out, the first such after the running thread
  (so two threads' time-outs take turns). When every thread is blocked without one, the
  path ends with error kind ``hang`` and every thread's stack; so it does when the whole
  state comes back to what it was at an earlier such moment (core.livelock: a server alone,
  waking on its timers forever).
- ``errno`` is per thread: the C library's variable is saved and restored at each switch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from collections.abc import Callable

import immutables

from symex.core.threads import livelock
from symex.core.memory.objects import OFFSET_MASK
from symex.core.forks import ForkKind
from symex.core.outcome import ErrorKind, PathStatus, PathTerminated, ProgramError, StackEntry
from symex.core.state import Frame, State
from symex.ir.program import SEGMENT_SHIFT, Function

if TYPE_CHECKING:
    from symex.core.interpreter.machine import Machine

__all__ = ["ERRNO_VARIABLE", "word_at", "FIRST_PID", "ProcessContext", "ThreadContext", "Threads", "WaitCondition",
           "block", "current_thread", "exit_process", "exit_thread", "fork_process",
           "spawn_thread", "thread_returned", "threads_of", "yield_thread"]

#: the pid of the program's first process (``getpid()`` returned it before processes existed)
FIRST_PID = 42

#: the C library's errno variable (runtime/libc/errno.c), saved and restored per thread
ERRNO_VARIABLE = "__symex_errno_value"

#: a blocked thread's condition: true when the call it blocked in may go on
WaitCondition = Callable[[State], bool]


class ThreadContext:
    """One thread: its frames while it is not running, and what it waits for."""

    __slots__ = ("tid", "pid", "frames", "start", "waiting", "timed", "for_input", "timed_out",
                 "errno", "result", "finished", "detached", "specific")

    def __init__(self, tid: int, pid: int, frames: list[Frame] | None) -> None:
        self.tid = tid
        self.pid = pid
        #: None while the thread runs (its frames are the state's)
        self.frames = frames
        #: a thread not yet started: the function and arguments of its first frame
        self.start: tuple[Function, list[Any]] | None = None
        self.waiting: WaitCondition | None = None
        #: the wait may end by time-out (when no other thread can run)
        self.timed = False
        #: the wait is for a descriptor (data, a connection, room), not for another thread
        self.for_input = False
        #: the wait just ended by time-out; the call it blocked in reads and clears this
        self.timed_out = False
        self.errno = 0
        #: what the thread's function returned (or pthread_exit gave), once finished
        self.result: Any = 0
        self.finished = False
        self.detached = False
        #: thread-specific data: pthread key -> value
        self.specific: dict[int, Any] = {}

    def copy(self) -> ThreadContext:
        """A copy for a forked state (frames copied: each state moves its own)."""
        other = ThreadContext(self.tid, self.pid,
                              None if self.frames is None else [f.copy() for f in self.frames])
        other.start = self.start
        other.waiting = self.waiting
        other.timed = self.timed
        other.for_input = self.for_input
        other.timed_out = self.timed_out
        other.errno = self.errno
        other.result = self.result
        other.finished = self.finished
        other.detached = self.detached
        other.specific = dict(self.specific)
        return other


class ProcessContext:
    """One process: its address space and descriptors while none of its threads runs."""

    __slots__ = ("pid", "ppid", "objects", "fds", "exit_status", "reaped")

    def __init__(self, pid: int, ppid: int) -> None:
        self.pid = pid
        self.ppid = ppid
        #: None while one of its threads runs (then they are the state's)
        self.objects: immutables.Map[int, Any] | None = None
        self.fds: immutables.Map[int, int] | None = None
        #: the status it exited with (None: alive)
        self.exit_status: int | None = None
        #: its parent collected the status with wait/waitpid
        self.reaped = False

    def copy(self) -> ProcessContext:
        """A copy for a forked state (the maps are persistent: shared)."""
        other = ProcessContext(self.pid, self.ppid)
        other.objects = self.objects
        other.fds = self.fds
        other.exit_status = self.exit_status
        other.reaped = self.reaped
        return other


class Threads:
    """Every process and thread of a state, and which thread runs (``State.threads``)."""

    __slots__ = ("current", "threads", "processes", "next_pid", "schedule_forks", "next_key", "idle")

    def __init__(self, schedule_forks: int) -> None:
        self.current = FIRST_PID
        self.threads: dict[int, ThreadContext] = {FIRST_PID: ThreadContext(FIRST_PID, FIRST_PID, None)}
        self.processes: dict[int, ProcessContext] = {FIRST_PID: ProcessContext(FIRST_PID, 1)}
        #: the next pid or tid (Linux numbers both from one counter)
        self.next_pid = FIRST_PID + 1
        #: scheduling choices this path may still fork on
        self.schedule_forks = schedule_forks
        #: the next pthread key (keys are never reused)
        self.next_key = 0
        #: what the moments time passed show (core.livelock)
        self.idle = livelock.IdleWatch()

    def copy(self) -> Threads:
        """A copy for a forked state."""
        other = Threads.__new__(Threads)
        other.current = self.current
        other.threads = {tid: t.copy() for tid, t in self.threads.items()}
        other.processes = {pid: p.copy() for pid, p in self.processes.items()}
        other.next_pid = self.next_pid
        other.schedule_forks = self.schedule_forks
        other.next_key = self.next_key
        other.idle = self.idle.copy()
        return other

    @property
    def thread(self) -> ThreadContext:
        """The running thread."""
        return self.threads[self.current]

    @property
    def process(self) -> ProcessContext:
        """The running thread's process."""
        return self.processes[self.threads[self.current].pid]

    def live_threads(self) -> list[ThreadContext]:
        """Threads not finished, in tid order."""
        return [t for tid, t in sorted(self.threads.items()) if not t.finished]

    def descriptor_tables(self, state: State) -> list[immutables.Map[int, int]]:
        """The descriptor tables of every live process (the running one's from the state)."""
        running = self.threads[self.current].pid
        tables = []
        for pid, process in self.processes.items():
            if process.exit_status is not None:
                continue
            if pid == running:
                if state.posix is not None:
                    tables.append(state.posix.fds)
            elif process.fds is not None:
                tables.append(process.fds)
        return tables

    def frames_of(self, state: State, thread: ThreadContext) -> list[Frame]:
        """The frames of ``thread`` (the running one's are the state's)."""
        return state.frames if thread.tid == self.current else (thread.frames or [])

    def objects_of(self, state: State, pid: int) -> immutables.Map[int, Any]:
        """The address space of process ``pid``."""
        if pid == self.threads[self.current].pid:
            return state.objects
        objects = self.processes[pid].objects
        assert objects is not None
        return objects


def threads_of(ex: Machine, state: State) -> Threads:
    """The state's processes and threads, made on first use."""
    threads = state.threads
    if threads is None:
        threads = state.threads = Threads(ex.schedule_forks)
    return threads


def current_thread(state: State) -> ThreadContext | None:
    """The running thread's context, None while the state has only its first thread."""
    threads = state.threads
    return None if threads is None else threads.thread


# -- creating processes and threads ---------------------------------------------------------

def fork_process(ex: Machine, state: State, result_slot: int) -> int:
    """``fork()``: a child process that is a copy of the running thread's process with only
    that thread, about to return 0 from the call whose result goes to ``result_slot``.
    Returns the child's pid (the parent's result); the parent keeps running."""
    threads = threads_of(ex, state)
    pid = threads.next_pid
    threads.next_pid += 1
    child = ProcessContext(pid, threads.thread.pid)
    child.objects = state.objects
    child.fds = state.posix.fds if state.posix is not None else None
    # both processes now hold the same objects: the first to write one copies it
    state.cow = object()
    frames = [f.copy() for f in state.frames]
    if result_slot >= 0:
        frames[-1].regs[result_slot] = 0
    thread = ThreadContext(pid, pid, frames)
    errno = ex.program.globals.get(ERRNO_VARIABLE)
    if errno is not None:
        # the child starts with the errno its parent's thread has now
        thread.errno = _read_errno(state, errno.address)
    threads.processes[pid] = child
    threads.threads[pid] = thread
    return pid


def spawn_thread(ex: Machine, state: State, fn: Function, args: list[Any]) -> int:
    """``pthread_create``: a thread of the running process that will call ``fn(*args)`` when
    first scheduled. Returns its id."""
    threads = threads_of(ex, state)
    tid = threads.next_pid
    threads.next_pid += 1
    thread = ThreadContext(tid, threads.thread.pid, [])
    thread.start = (fn, args)
    threads.threads[tid] = thread
    return tid


# -- blocking and switching -----------------------------------------------------------------

def block(ex: Machine, state: State, ready: WaitCondition, *, timed: bool = False,
          for_input: bool = False) -> None:
    """Block the running thread in the external call it is making until ``ready(state)``
    holds (or, ``timed``, until nothing else can run); the call runs again then. Another
    thread runs meanwhile, or the path ends as a hang. ``for_input``: it waits for a
    descriptor, not for another thread (a lock, a join)."""
    threads = threads_of(ex, state)
    thread = threads.thread
    thread.waiting = ready
    thread.timed = timed
    thread.for_input = for_input
    frame = state.frame
    assert frame is not None, "a blocking call is made from a frame"
    frame.pc -= 1  # the call runs again when the thread wakes
    _switch_to_next(ex, state, threads)


def yield_thread(ex: Machine, state: State) -> None:
    """``sched_yield``: let the next runnable thread run (the caller stays runnable)."""
    threads = state.threads
    if threads is None or len(threads.threads) == 1:
        return
    _switch_to_next(ex, state, threads)


def thread_returned(ex: Machine, state: State, value: Any) -> None:
    """The running thread's first frame returned: a thread ends with ``value``, a process's
    main function exits the process with it."""
    threads = state.threads
    assert threads is not None
    thread = threads.thread
    if thread.tid == thread.pid:
        code = 0
        if value is not None:
            if type(value) is not int:
                value = ex.concretize(state, value, value.width, "exit code")
            code = value & 0xFF
        exit_process(ex, state, code)
    else:
        exit_thread(ex, state, value if value is not None else 0)


def exit_thread(ex: Machine, state: State, result: Any) -> None:
    """``pthread_exit`` (or the thread's function returned): the thread ends with
    ``result``; the last thread of a process ends the process with status 0."""
    threads = threads_of(ex, state)
    thread = threads.thread
    process_threads = [t for t in threads.threads.values()
                       if t.pid == thread.pid and not t.finished and t is not thread]
    if not process_threads:
        exit_process(ex, state, 0)
        return
    for frame in state.frames:
        state.release_frame(frame)
    state.frames = []
    thread.finished = True
    thread.result = result
    _switch_to_next(ex, state, threads)


def exit_process(ex: Machine, state: State, code: int) -> None:
    """The running process exits with ``code`` (``exit``, ``_exit``, main's return): its
    threads end and its descriptors close. When it was the last process, the path ends,
    with the first process's exit status."""
    threads = state.threads
    if threads is None:
        raise PathTerminated(PathStatus.COMPLETED, "exit", exit_code=code)
    pid = threads.thread.pid
    process = threads.processes[pid]
    process.exit_status = code
    for thread in threads.threads.values():
        if thread.pid == pid:
            thread.finished = True
            thread.waiting = None
    if state.posix is not None:
        state.posix = state.posix.with_fds(immutables.Map())
    if all(t.finished for t in threads.threads.values()):
        raise PathTerminated(PathStatus.COMPLETED, "exit",
                             exit_code=threads.processes[FIRST_PID].exit_status)
    state.frames = []
    _switch_to_next(ex, state, threads)


def _in_turn(threads: Threads) -> list[ThreadContext]:
    """Live threads in scheduling order: the first after the running one."""
    current = threads.current
    live = threads.live_threads()
    return [t for t in live if t.tid > current] + [t for t in live if t.tid <= current]


def _runnable(state: State, threads: Threads) -> list[ThreadContext]:
    """Threads that can run now, in scheduling order."""
    return [t for t in _in_turn(threads) if t.waiting is None or t.waiting(state)]


def _switch_to_next(ex: Machine, state: State, threads: Threads) -> None:
    candidates = _runnable(state, threads)
    if not candidates:
        timed = [t for t in _in_turn(threads) if t.timed]
        # once no input can come (env.network's session_over), threads waiting only for
        # descriptors or time-outs are a server waiting for a next client that does not
        # exist: the path is done; threads waiting for each other are still a deadlock
        session_over = getattr(state.posix, "session_over", None)
        if session_over is not None and (timed or all(t.for_input for t in _in_turn(threads))):
            raise PathTerminated(PathStatus.COMPLETED, session_over)
        if not timed:
            raise PathTerminated(PathStatus.ERROR, "hang (possible deadlock)", _hang_error(
                ex, state, "hang (possible deadlock): every process and thread is blocked"))
        idleness = threads.idle.time_passes(state, threads, ex.max_idle_time_outs)
        if idleness is livelock.Idleness.REPEATS:
            raise PathTerminated(PathStatus.ERROR, "hang (livelock)", _hang_error(
                ex, state, "hang (livelock): every process and thread is blocked or waits out a "
                "time-out, and the whole state repeats: nothing can make it progress"))
        if idleness is livelock.Idleness.IDLE:
            raise PathTerminated(PathStatus.PARTIAL, f"idle: every process and thread has been "
                                 f"blocked or waiting out a time-out for {ex.max_idle_time_outs} "
                                 "time-outs, with no input, no output and nothing else waking one "
                                 f"(waiting at {_waiting_places(ex, state, threads)})",
                                 threads=_thread_stacks(ex, state, threads))
        timed[0].timed_out = True
        candidates = timed[:1]
    elif any(t.waiting is not None for t in candidates):
        threads.idle.woke()
    if len(candidates) > 1 and threads.schedule_forks > 0 and not ex.forks_exhausted():
        threads.schedule_forks -= 1
        states = [state] + [ex.fork(state) for _ in candidates[1:]]
        for decision, forked in enumerate(states):
            forked.decide(decision)
        ex.record_fork(ForkKind.SCHEDULE, None, states)
        for forked, chosen in zip(states, candidates):
            _switch(ex, forked, forked.threads, chosen.tid)
        return
    _switch(ex, state, threads, candidates[0].tid)


def _switch(ex: Machine, state: State, threads: Threads, tid: int) -> None:
    """Make ``tid`` the running thread of ``state``."""
    old = threads.threads[threads.current]
    new = threads.threads[tid]
    errno = ex.program.globals.get(ERRNO_VARIABLE)
    if errno is not None and not old.finished and tid != old.tid:
        old.errno = _read_errno(state, errno.address)
    if tid != old.tid:
        old.frames = state.frames
        if new.pid != old.pid:
            process = threads.processes[old.pid]
            process.objects = state.objects
            process.fds = state.posix.fds if state.posix is not None else None
            target = threads.processes[new.pid]
            assert target.objects is not None
            state.objects = target.objects
            if state.posix is not None and target.fds is not None:
                state.posix = state.posix.with_fds(target.fds)
            target.objects = target.fds = None
        threads.current = tid
        state.frames = new.frames if new.frames is not None else []
        new.frames = None
        if errno is not None:
            _write_errno(state, errno.address, new.errno)
    new.waiting = None
    new.timed = False
    start = new.start
    if start is not None:
        new.start = None
        ex.push_frame(state, start[0], start[1], -1, None)
    else:
        state.frame = state.frames[-1]


def word_at(objects: immutables.Map[int, Any], address: int) -> int | None:
    """The concrete 32-bit little-endian word at ``address`` in an address space (None when
    no object holds it or a byte of it is symbolic)."""
    os_ = objects.get(address >> SEGMENT_SHIFT)
    if os_ is None:
        return None
    data = os_.read_bytes(address & OFFSET_MASK, 4)
    if any(type(b) is not int for b in data):
        return None
    return int.from_bytes(bytes(data), "little")


def _read_errno(state: State, address: int) -> int:
    return word_at(state.objects, address) or 0


def _write_errno(state: State, address: int, value: int) -> None:
    os_ = state.objects.get(address >> SEGMENT_SHIFT)
    if os_ is None:
        return
    state.writable(os_).write_bytes(address & OFFSET_MASK, value.to_bytes(4, "little"))


# -- hangs ----------------------------------------------------------------------------------

def _waiting_places(ex: Machine, state: State, threads: Threads) -> str:
    """Where each live thread waits: its innermost frame with a source line, in tid order."""
    places = []
    for thread in threads.live_threads():
        frames = threads.frames_of(state, thread)
        stack = ex.stack_of(frames, blocked=True)
        function, file, line = next((entry for entry in stack if entry[2] is not None),
                                    stack[0] if stack else ("?", None, None))
        places.append(f"{function} {file.rsplit('/', 1)[-1]}:{line}" if file and line is not None
                      else function)
    return ", ".join(places)


def _hang_error(ex: Machine, state: State, message: str) -> ProgramError:
    """A ``hang`` error at the running thread's blocked call, with every thread's stack."""
    threads = state.threads
    assert threads is not None
    error = ex.make_error(state, ErrorKind.HANG, message, blocked=True)
    return ProgramError(error.kind, error.message, error.location, error.stack,
                        error.instruction, _thread_stacks(ex, state, threads))


def _thread_stacks(ex: Machine, state: State,
                   threads: Threads) -> tuple[tuple[str, tuple[StackEntry, ...]], ...]:
    """Every live thread's stack, labelled by process and thread, where each is blocked."""
    stacks = []
    for thread in threads.live_threads():
        frames = threads.frames_of(state, thread)
        label = (f"process {thread.pid}, main thread" if thread.tid == thread.pid
                 else f"process {thread.pid}, thread {thread.tid}")
        stacks.append((label, ex.stack_of(frames, blocked=True)))
    return tuple(stacks)
