"""``argv`` for ``main`` with symbolic arguments, built as KLEE's ``klee_init_env`` builds it.

Items are processed in order. A concrete string becomes an argument as is. ``SymArg(N)``
becomes an object ``argNN`` of N+1 symbolic bytes whose last byte is overwritten with NUL in
memory (so the argument is a string of at most N characters; the object's last byte stays
unconstrained, as in KLEE's tests). ``SymArgs(MIN, MAX, N)`` creates an ``n_args`` input
(4 bytes) with MIN <= n_args <= MAX and forks one state per count, each with that many
``argNN`` objects: KLEE's loop over ``n_args`` forks the same way, so every test lists only
the arguments its path used.

The strings and arrays of a process's start (``argv``, ``envp``, ``__environ``) are placed by
:func:`place_strings`, :func:`pointer_array` and :func:`place_environment`, for the first
process and for one ``execve`` starts (env.execve).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from symex import expr as E
from symex.core.forks import ForkKind
from symex.core.interpreter.machine import StateView
from symex.core.memory.objects import ObjectKind
from symex.core.state import State
from symex.symargs import ArgvSpec, SymArg, SymArgs

__all__ = ["ENVIRON_GLOBAL", "build_argv_strings", "place_environment", "place_strings",
           "pointer_array"]

#: the C library's pointer to the environment (musl's, and symex's library's)
ENVIRON_GLOBAL = "__environ"


def _symbolic_argument(view: StateView, max_len: int, number: int) -> int:
    state = view.state
    name = f"arg{number:02d}"
    os = state.allocate(max_len + 1, ObjectKind.ARGUMENT, name)
    view.make_symbolic(os.obj.address, max_len + 1, name)
    os = state.writable(state.objects[os.obj.segment])
    os.write_bytes(max_len, b"\0")
    return os.obj.address


def _concrete_argument(state: State, text: bytes | Sequence[Any], name: str = "argv") -> int:
    os = state.allocate(len(text) + 1, ObjectKind.ARGUMENT, name)
    os.write_bytes(0, text + b"\0" if isinstance(text, bytes) else [*text, 0])
    return os.obj.address


def pointer_array(state: State, pointers: Sequence[int], name: str) -> int:
    """A NULL-terminated array of ``pointers`` in a new object (``argv``, ``envp``): its address."""
    array = state.allocate(8 * (len(pointers) + 1), ObjectKind.ARGUMENT, name)
    array.write_bytes(0, b"".join(p.to_bytes(8, "little") for p in pointers) + bytes(8))
    return array.obj.address


def place_strings(state: State, strings: Sequence[bytes | Sequence[Any]], string_name: str,
                  array_name: str) -> int:
    """Each string (bytes, or bytes as ints and 8-bit expressions) NUL-terminated in an object
    of its own, and the NULL-terminated array of them: the array's address."""
    return pointer_array(state, [_concrete_argument(state, text, string_name) for text in strings],
                         array_name)


def place_environment(view: StateView, variables: Sequence[bytes | Sequence[Any]]) -> int:
    """The ``envp`` of a process's start (``NAME=VALUE`` strings): its address. A program
    defining ``__environ`` (musl, symex's library) gets it there too, so ``getenv`` finds the
    variables whatever main's parameters are."""
    ex, state = view.machine, view.state
    envp = place_strings(state, variables, "environ", "envp")
    environ = ex.program.globals.get(ENVIRON_GLOBAL)
    if environ is not None and environ.size == 8:
        view.write_bytes(environ.address, envp.to_bytes(8, "little"))
    return envp


def build_argv_strings(view: StateView, program_name: bytes,
                       spec: ArgvSpec) -> list[tuple[State, list[int]]]:
    """The argument strings of ``argv`` (program name first) in ``state`` and in the states
    forked from it (one per ``n_args`` value of each ``SymArgs``), with the address of each
    string; forks go through ``ex.fork`` (counted, announced, queued in ``ex.new_states``)."""
    ex, state = view.machine, view.state
    # each entry: a state, its argument addresses so far, symbolic arguments made so far
    paths: list[tuple[State, list[int], int]] = [
        (state, [_concrete_argument(state, program_name)], 0)]
    for item in spec.items:
        grown: list[tuple[State, list[int], int]] = []
        for current, pointers, made in paths:
            if isinstance(item, str):
                pointers.append(_concrete_argument(current, item.encode("utf-8", "surrogateescape")))
                grown.append((current, pointers, made))
            elif isinstance(item, SymArg):
                pointers.append(_symbolic_argument(StateView(ex, current), item.max_len, made))
                grown.append((current, pointers, made + 1))
            elif isinstance(item, SymArgs):
                grown += _fork_per_count(StateView(ex, current), pointers, made, item.min, item.max,
                                         item.max_len)
            else:
                grown.append((current, pointers, made))  # files and stdin: env.posix
        paths = grown
    return [(s, pointers) for s, pointers, _ in paths]


def _fork_per_count(view: StateView, pointers: list[int], made: int, low: int,
                    high: int, max_len: int) -> list[tuple[State, list[int], int]]:
    ex, state = view.machine, view.state
    count = view.fresh_value(4, "n_args")
    array = state.symbolics[-1].array
    # klee_range(MIN, MAX + 1): the signed range, as KLEE asserts it
    state.add_constraint(E.sle(E.const(low, 32), count))
    state.add_constraint(E.sle(count, E.const(high, 32)))
    forked: list[tuple[int, State]] = []
    for n in range(low, high + 1):
        current = state if n == high else ex.fork(state)
        known = current.model
        model = None
        if known is not None:
            model = dict(known)
            model[array] = n.to_bytes(4, "little")
        current.add_constraint(E.eq(count, E.const(n, 32)), model=model)
        current.decide(n - low)
        forked.append((n, current))
    if len(forked) > 1:
        ex.record_fork(ForkKind.ARGUMENTS, count,
                       [state] + [s for _, s in forked if s is not state])
    out = []
    for n, current in forked:
        mine = list(pointers)
        for k in range(n):
            mine.append(_symbolic_argument(StateView(ex, current), max_len, made + k))
        out.append((current, mine, made + n))
    return out
