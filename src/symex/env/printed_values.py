"""Symbolic numbers that musl only prints (or turns into dates) are fixed to one value, not
forked on.

musl's ``printf_core`` turns an integer into digits in ``fmt_x``, ``fmt_o`` and ``fmt_u``:
a loop that asks, digit by digit, whether the rest of the number is zero. For a value the
inputs decide, every such question is a query, and for a digest or a checksum it is a
preimage problem: md5sum's ``printf ("%02x", bin_buffer[i])`` asks whether a byte of an MD5
digest can be 0 (a query z3 does not answer in 30 s), 16 times a path; cksum's ``%u`` of a
CRC asks ten. Those forks only choose how many digits the output has.

So where a number computed from the inputs (more than :data:`COMPUTED_NODES` operations: a
digest, a checksum) reaches one of those functions on its way to a stream (``printf``,
``fprintf``, ``dprintf``, ``err``, ...), it is fixed to the value the path's inputs give it,
the choice is added to the path condition (the test reproduces exactly the output the path
printed, as symex's own C library's printf does, env/printf.py), and it is counted in
messages.txt as a concretization. Numbers formatted into memory (``snprintf``, ``sprintf``,
``asprintf``: every one goes through ``vsnprintf``) are left symbolic: the program may read
the digits back and branch on them. So are numbers read from the inputs almost as they are
(stat's uid, a file's times): a program goes on using those (``stat`` looks the uid up,
formats the times), and with ``--sym-stdout`` the bytes it writes stay symbolic, so fixing
them would fix the rest of the path too (stat covered 29 % of its lines instead of 42 %
when they were fixed).

Times turned into dates are fixed the same way, computed or not: musl's ``__secs_to_tm``
(under ``localtime``, ``gmtime``, ``mktime`` and ``strftime``'s callers) divides a time by
86,400, 7 and 146,097 and asks the signs of the remainders, 64-bit divisions z3 takes from
seconds to past any limit on (``ls -l``'s and ``stat``'s times of a symbolic file: 30 s,
unanswered). The calendar fields of one time only choose what the date printed says.

``concretize_printed=False`` (``--no-concretize-printed``) keeps every fork, as KLEE does.
"""

from __future__ import annotations

from typing import Any

from symex.core.interpreter.machine import StateView
from symex.core.state import State
from symex.expr.walk import node_count
from symex.ir.program import Program

__all__ = ["CALENDAR_FUNCTIONS", "COMPUTED_NODES", "DIGIT_FUNCTIONS", "STRING_FORMATTERS", "concretize_printed",
           "concretize_time", "printed_value_hooks"]

#: musl's vfprintf.c (and vfwprintf.c): the functions that turn an integer into digits;
#: their first argument is the number
DIGIT_FUNCTIONS = frozenset({"fmt_x", "fmt_o", "fmt_u"})
#: musl's functions through which every printf into memory passes (the digits stay symbolic)
STRING_FORMATTERS = frozenset({"vsnprintf", "vswprintf"})
#: a number of more operation and read nodes than this is computed (a digest byte of md5sum:
#: about 550; cksum's CRC of 8 bytes: 184); one of fewer is read almost as it is (stat's
#: fields: 8 to 47)
COMPUTED_NODES = 128
#: musl's function that breaks a time (its first argument, seconds since the epoch) into
#: calendar fields
CALENDAR_FUNCTIONS = frozenset({"__secs_to_tm"})
#: how concretizations are named in messages.txt
WHY = "printed number"
#: ... and those of times
WHY_TIME = "time turned into a date"


def _into_memory(state: State) -> bool:
    """Whether the state is formatting into memory (a ``vsnprintf`` is on its stack)."""
    return any(frame.function.name in STRING_FORMATTERS for frame in state.frames)


def concretize_printed(view: StateView, args: list[Any]) -> None:
    """Before a digit function of musl runs: fix its number (``args[0]``) to the value the
    path's inputs give it, unless it is formatted into memory or barely computed."""
    state = view.state
    value = args[0]
    if type(value) is int or _into_memory(state):
        return
    if node_count(value, COMPUTED_NODES) <= COMPUTED_NODES:
        return  # read from the inputs almost as it is: the program may go on using it
    args[0] = view.concretize(value, value.width, WHY)


def concretize_time(view: StateView, args: list[Any]) -> None:
    """Before musl breaks a time into calendar fields: fix the time (``args[0]``) to the
    value the path's inputs give it."""
    value = args[0]
    if type(value) is not int:
        args[0] = view.concretize(value, value.width, WHY_TIME)


def printed_value_hooks(program: Program) -> dict[str, Any]:
    """The entry hooks (``Executor.entry_hooks``) for ``program``'s C library: musl's digit
    functions and its ``__secs_to_tm``, by their linked names (a second copy of a static
    function is linked as ``fmt_u.1``); none where the library is not musl (symex's own
    printf concretizes anyway). A program's own function of such a name, compiled with
    debug information, is not touched."""
    hooks: dict[str, Any] = {}
    for name, fn in program.functions.items():
        if fn.file is not None or fn.is_declaration:
            continue
        if name.partition(".")[0] in DIGIT_FUNCTIONS:
            hooks[name] = concretize_printed
        elif name in CALENDAR_FUNCTIONS:
            hooks[name] = concretize_time
    return hooks
