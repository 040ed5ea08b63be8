"""``execve``: the running process goes on as another program, in the same path.

The programs a run may execute are named when it starts (``--program NAME=PATH``,
``compile(..., programs=...)``) and linked into its module under their own names
(:mod:`symex.ir.exec_programs`). ``execve(path, argv, envp)`` of one of them replaces the
process image as the kernel does: the address space becomes a fresh one (every global at its
initial value; the objects the environment made, argument strings and ``*-stat`` objects,
stay), the process's other threads end, its descriptors stay open (``FD_CLOEXEC`` is not
modelled: a descriptor marked so stays open too), and the one thread starts the program's
main with copies of ``argv`` and ``envp`` (symbolic bytes stay symbolic). With musl it starts
as musl starts a program (``__symex_exec_start``: environment, ``exit(main(...))``). The
pid, the parent and what the parent's ``waitpid`` sees do not change: a forked child that
executes a program is the usual way to run one and read its output through a pipe.

``path`` names a program when it equals NAME (a path: ``/usr/bin/diff``; relative ones from
the working directory) or, for a NAME without a slash (``diff``), when its last component is
NAME, so ``execvp``'s search finds it in the first directory it tries. Any other path fails
with ENOENT, as for a file that does not exist, and is counted
(``ShortfallKind.UNKNOWN_PROGRAM``: the run's warnings say which path and where).
"""

from __future__ import annotations

import posixpath
from typing import Any

from symex.core.interpreter.machine import ExternalHandler, StateView
from symex.core.memory.objects import ObjectKind
from symex.core.shortfalls import ShortfallKind
from symex.core.state import State
from symex.env.world import EACCES, ENOENT, resolve, world_of
from symex.ir.musl import EXEC_START
from symex.env.posix_args import place_environment, place_strings
from symex.ir.program import POINTER_ACCESS, Function

__all__ = ["HANDLERS", "find_program"]

E2BIG, EFAULT = 7, 14
#: the most argument and environment strings one execve passes (Linux's limit is by bytes)
MAX_STRINGS = 1 << 16


def find_program(entries: dict[str, Function], cwd: str, path: str) -> Function | None:
    """The main of the program ``path`` names (see the module's documentation), or None."""
    key = resolve(cwd, path)
    for name, entry in entries.items():
        if "/" in name:
            if resolve(cwd, name) == key:
                return entry
        elif posixpath.basename(path) == name:
            return entry
    return None


def _pointer(view: StateView, address: int) -> int:
    pointer = view.read(address, POINTER_ACCESS)
    return pointer if type(pointer) is int else view.concretize(pointer, 64, "execve argument pointer")


def _strings(view: StateView, array: Any) -> list[list[Any]] | int:
    """The strings of a NULL-terminated array of pointers, each a list of bytes (ints or
    8-bit expressions) without its NUL; -errno for a bad array."""
    ex, state = view.machine, view.state
    if type(array) is not int:
        array = view.concretize(array, 64, "execve argument array")
    if array == 0:
        return []
    strings: list[list[Any]] = []
    while True:
        if len(strings) >= MAX_STRINGS:
            return -E2BIG
        pointer = _pointer(view, array + 8 * len(strings))
        if pointer == 0:
            return strings
        os, offset = ex.resolve(state, pointer, 1, "execve argument string")
        if type(offset) is not int:
            offset = view.concretize(offset, 32, "execve argument offset")
        data = os.read_bytes(offset, os.obj.size - offset)
        # up to the first byte that is certainly NUL; a symbolic byte that may be NUL is
        # copied as it is, so the new program's strlen forks where this one's would
        end = next((i for i, b in enumerate(data) if type(b) is int and b == 0), len(data))
        strings.append(data[:end])


def _execve(view: StateView, args: list[Any]) -> int:
    """``execve(path, argv, envp)``: another program in this process (see the module)."""
    ex, state = view.machine, view.state
    if type(args[0]) is int and args[0] == 0:
        return -EFAULT
    path = view.read_c_string(args[0]).decode("utf-8", "surrogateescape")
    world = world_of(state)
    entry = find_program(ex.program.exec_entries, world.cwd, path)
    if entry is None:
        key = resolve(world.cwd, path)
        if key and key in world.names:
            return -EACCES  # a data file or a directory: not executable
        ex.shortfalls.add(ShortfallKind.UNKNOWN_PROGRAM, path, view.program_site())
        return -ENOENT
    argv = _strings(view, args[1])
    if isinstance(argv, int):
        return argv
    envp = _strings(view, args[2])
    if isinstance(envp, int):
        return envp
    _end_other_threads(state)
    objects = ex.process_image()
    for segment, os in state.objects.items():
        if os.obj.kind is ObjectKind.ARGUMENT:
            objects = objects.set(segment, os)
    state.objects = objects
    state.frames = []
    argv_address = place_strings(state, argv, "argv", "argv")
    envp_address = place_environment(view, envp)
    start = ex.program.functions.get(EXEC_START)
    if start is not None and not start.is_declaration:
        ex.push_frame(state, start, [entry.address, len(argv), argv_address, envp_address], -1, None)
    else:
        ex.push_frame(state, entry, [len(argv), argv_address, envp_address][:len(entry.params)], -1, None)
    return 0  # lands in the old image's frame, which is gone


def _end_other_threads(state: State) -> None:
    """The process's other threads end (the kernel ends them at exec)."""
    threads = state.threads
    if threads is None:
        return
    running = threads.thread
    for thread in threads.threads.values():
        if thread.pid == running.pid and thread is not running:
            thread.finished = True
            thread.waiting = None


HANDLERS: dict[str, ExternalHandler] = {"execve": _execve}
"""The handlers by system call name (their declarations: :mod:`symex.ir.system_calls`)."""
