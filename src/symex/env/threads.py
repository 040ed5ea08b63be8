"""Processes and threads for the program: ``fork``, ``wait``/``waitpid``, ``getpid``,
``pthread_create``/``join``/``exit``, thread-specific data (``pthread_key_*``,
``pthread_getspecific``/``setspecific``), and the blocking primitive the C library's mutexes,
condition variables and semaphores are built on (``runtime/libc/pthread.c``).

The processes and threads themselves, and the scheduler, are ``core.scheduling``'s; these are
the calls a C program makes. Every blocking call here blocks through
``scheduling.block``, so it runs again when its thread is scheduled: a handler either
finishes the call or blocks, never both.
"""

from __future__ import annotations

from typing import Any

from symex.core.threads import scheduling
from symex.core.interpreter.machine import ExternalHandler, StateView
from symex.core.outcome import ErrorKind
from symex.core.threads.scheduling import FIRST_PID, threads_of
from symex.core.state import State
from symex.env.posix import concrete_int
from symex.env.world import world_of
from symex.ir.program import POINTER_ACCESS, Access, ValueKind

__all__ = ["handlers"]

ECHILD, ESRCH, EINVAL, EDEADLK, ETIMEDOUT = 10, 3, 22, 35, 110
WNOHANG = 1
_INT = Access(ValueKind.INT, 4, 32)


def _fork(view: StateView, args: list[Any]) -> int:
    # the world must exist before the processes' descriptor tables part ways
    ins = view.instruction
    ex, state = view.machine, view.state
    world_of(state)
    return scheduling.fork_process(ex, state, ins.dest)


def _getpid(view: StateView, args: list[Any]) -> int:
    state = view.state
    threads = state.threads
    return FIRST_PID if threads is None else threads.thread.pid


def _getppid(view: StateView, args: list[Any]) -> int:
    state = view.state
    threads = state.threads
    return 1 if threads is None else threads.process.ppid


def _waitable(state: State, parent: int, pid: int) -> list[scheduling.ProcessContext]:
    threads = state.threads
    if threads is None:
        return []
    return [p for _, p in sorted(threads.processes.items())
            if p.ppid == parent and not p.reaped and (pid <= 0 or p.pid == pid)]


def _waitpid(view: StateView, args: list[Any]) -> int:
    ex, state = view.machine, view.state
    pid = concrete_int(view, args[0], 32, "waitpid pid")
    options = concrete_int(view, args[2], 32, "waitpid options", signed=False)
    me = _getpid(view, args)
    children = _waitable(state, me, pid)
    if not children:
        return -ECHILD
    for child in children:
        if child.exit_status is not None:
            child.reaped = True
            status = args[1]
            if not (type(status) is int and status == 0):
                view.write(status, _INT, (child.exit_status & 0xFF) << 8)
            return child.pid
    if options & WNOHANG:
        return 0

    def exited(s: State) -> bool:
        return any(p.exit_status is not None for p in _waitable(s, me, pid))
    scheduling.block(ex, state, exited)
    return 0


def _function_at(view: StateView, pointer: Any, what: str) -> Any:
    address = concrete_int(view, pointer, 64, what, signed=False)
    fn = view.program.functions_by_address.get(address)
    if fn is None or fn.is_declaration:
        view.fail(ErrorKind.PTR, f"{what} is not a function of the program (0x{address:x})")
    return fn


def _pthread_create(view: StateView, args: list[Any]) -> int:
    ex, state = view.machine, view.state
    fn = _function_at(view, args[2], "pthread_create start routine")
    tid = scheduling.spawn_thread(ex, state, fn, [args[3]])
    view.write(args[0], POINTER_ACCESS, tid)
    return 0


def _thread(state: State, tid: int) -> scheduling.ThreadContext | None:
    threads = state.threads
    if threads is None:
        return None
    thread = threads.threads.get(tid)
    if thread is None or thread.pid != threads.thread.pid:
        return None
    return thread


def _pthread_join(view: StateView, args: list[Any]) -> int:
    ex, state = view.machine, view.state
    tid = concrete_int(view, args[0], 64, "pthread_join thread", signed=False)
    if tid == _pthread_self(view, args):
        return EDEADLK
    thread = _thread(state, tid)
    if thread is None or thread.tid == thread.pid:
        return ESRCH
    if thread.detached:
        return EINVAL
    if thread.finished:
        out = args[1]
        if not (type(out) is int and out == 0):
            view.write(out, POINTER_ACCESS, thread.result)
        thread.detached = True  # joined: a second join is an error
        return 0

    def finished(s: State) -> bool:
        other = s.threads.threads[tid] if s.threads is not None else None
        return other is None or other.finished
    scheduling.block(ex, state, finished)
    return 0


def _pthread_exit(view: StateView, args: list[Any]) -> None:
    # also from the main thread: the process then ends with its last thread (status 0)
    ex, state = view.machine, view.state
    scheduling.exit_thread(ex, state, args[0])


def _pthread_self(view: StateView, args: list[Any]) -> int:
    state = view.state
    threads = state.threads
    return FIRST_PID if threads is None else threads.current


def _pthread_detach(view: StateView, args: list[Any]) -> int:
    state = view.state
    tid = concrete_int(view, args[0], 64, "pthread_detach thread", signed=False)
    thread = _thread(state, tid)
    if thread is None and tid != _pthread_self(view, args):
        return ESRCH
    if thread is not None:
        thread.detached = True
    return 0


def _key_create(view: StateView, args: list[Any]) -> int:
    # destructors are not called when a thread exits (documented)
    ex, state = view.machine, view.state
    threads = threads_of(ex, state)
    key = threads.next_key
    threads.next_key += 1
    view.write(args[0], _INT, key)
    return 0


def _getspecific(view: StateView, args: list[Any]) -> Any:
    state = view.state
    threads = state.threads
    if threads is None:
        return 0
    key = concrete_int(view, args[0], 32, "pthread key", signed=False)
    return threads.thread.specific.get(key, 0)


def _setspecific(view: StateView, args: list[Any]) -> int:
    ex, state = view.machine, view.state
    threads = threads_of(ex, state)
    key = concrete_int(view, args[0], 32, "pthread key", signed=False)
    if key >= threads.next_key:
        return EINVAL
    threads.thread.specific[key] = args[1]
    return 0


def _key_delete(view: StateView, args: list[Any]) -> int:
    return 0


def _wait_while(timed: bool) -> ExternalHandler:
    """``__symex_wait_while(int *word, int value)``: block while ``*word == value`` (a
    futex wait). Returns 0, or ETIMEDOUT when ``timed`` and nothing else could run."""
    def handler(view: StateView, args: list[Any]) -> int:
        ex, state = view.machine, view.state
        thread = scheduling.current_thread(state)
        if thread is not None and thread.timed_out:
            thread.timed_out = False
            return ETIMEDOUT
        address = concrete_int(view, args[0], 64, "wait address", signed=False)
        value = concrete_int(view, args[1], 32, "wait value", signed=False)
        if view.read(address, _INT) != value:
            return 0
        pid = threads_of(ex, state).thread.pid

        def changed(s: State) -> bool:
            threads = s.threads
            assert threads is not None
            return scheduling.word_at(threads.objects_of(s, pid), address) != value
        scheduling.block(ex, state, changed, timed=timed)
        return 0
    return handler


def _yield(view: StateView, args: list[Any]) -> int:
    ex, state = view.machine, view.state
    scheduling.yield_thread(ex, state)
    return 0


def _sleep(view: StateView, args: list[Any]) -> int:
    # no clock runs in the model: a sleeping thread wakes when nothing else can run
    ex, state = view.machine, view.state
    thread = scheduling.current_thread(state)
    if state.threads is None or len(state.threads.threads) == 1:
        return 0
    if thread is not None and thread.timed_out:
        thread.timed_out = False
        return 0
    scheduling.block(ex, state, lambda s: False, timed=True)
    return 0


def handlers() -> dict[str, ExternalHandler]:
    """fork, wait, getpid, pthread_create and friends, and the blocking primitive of
    ``runtime/libc/pthread.c``, by name."""
    return {
        "fork": _fork,
        "vfork": _fork,
        "getpid": _getpid,
        "getppid": _getppid,
        "__symex_waitpid": _waitpid,
        "pthread_create": _pthread_create,
        "pthread_join": _pthread_join,
        "pthread_exit": _pthread_exit,
        "pthread_self": _pthread_self,
        "pthread_detach": _pthread_detach,
        "pthread_key_create": _key_create,
        "pthread_key_delete": _key_delete,
        "pthread_getspecific": _getspecific,
        "pthread_setspecific": _setspecific,
        "sched_yield": _yield,
        "__symex_wait_while": _wait_while(False),
        "__symex_wait_while_timed": _wait_while(True),
        "sleep": _sleep,
        "usleep": _sleep,
        "nanosleep": _sleep,
    }
