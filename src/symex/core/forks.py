"""Where a path depends on the solver, and the interface a recorder of those points plugs into.

A path's course is decided at a few kinds of points: a symbolic condition whose sides are
checked for feasibility (``Executor.split``), a value chosen from the state's inputs
(``Executor.get_value``: concretization, a symbolic pointer's target), an option chosen from
the inputs when no forks are left, and forks (one state per feasible outcome). A
:class:`DecisionMemo` (the memo layer's tree recorder) is told every answer and every fork,
and while a state replays a recorded path it supplies the recorded answers instead of the
solver. The executor calls it only at those points, never per instruction.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, NamedTuple, Protocol
from collections.abc import Sequence

if TYPE_CHECKING:
    from symex import expr as E
    from symex.core.state import State


class ForkKind(enum.IntEnum):
    """Why a state split into several (the decisions each child took are in brackets)."""

    BRANCH = 1
    """A conditional branch on a symbolic condition (1: true, 0: false)."""
    SWITCH = 2
    """A switch on a symbolic value (the index of the option: each case target, then the
    default)."""
    POINTER = 3
    """A symbolic pointer that may point into the object its inputs point into, or elsewhere
    (1: into that object, 0: elsewhere; that state resolves the pointer again)."""
    ERROR_CHECK = 4
    """An error condition that may hold (1: it holds, the path ends in the error; 0: it does
    not)."""
    FUNCTION_POINTER = 5
    """A call through a symbolic function pointer (1: the function the inputs give, 0: any
    other; that state resolves it again)."""
    ARGUMENTS = 6
    """``--sym-args MIN MAX N``: one state per argument count (decision: count - MIN)."""
    SCHEDULE = 7
    """Which thread runs after a blocking call (decision: its position among the runnable
    threads, in scheduling order)."""
    FRAGMENT = 8
    """How much of a sent segment one ``recv`` returns (decision: 0 for what it would return
    anyway, else the shorter length)."""
    VALUES = 9
    """A symbolic value fixed to each of a few values, one state each (a symbolic allocation
    size: decision: the position of the state's value among them)."""
    SYSCALL_FAILURE = 10
    """A system call that may fail (``--max-fail``; 1: it fails with EIO, 0: it does not;
    that state makes the call again)."""
    FILE_NAME = 11
    """A symbolic path that may name an existing file, as KLEE's POSIX runtime forks on
    "is this the symbolic file A" (1: it names that file, 0: it does not; that state makes
    the call again)."""


class Site(NamedTuple):
    """An instruction of the program: where a fork happened or a path ended."""

    function: str
    block: int
    """Index of the basic block in its function."""
    instruction: int
    """Index of the instruction in its block."""
    file: str | None
    line: int | None


class DecisionTag(enum.IntEnum):
    """What a recorded answer answers (kept with each answer, so a replay that asks for
    another kind of answer than was recorded is caught at once)."""

    SPLIT = 0
    """Which sides of a symbolic condition are feasible: 0 false only, 1 true only, 2 both."""
    VALUE = 1
    """A value of a symbolic expression under the state's inputs."""
    OPTION = 2
    """The index of the option the state's inputs satisfy (a switch with no forks left)."""


#: split answers: the sides feasible (0 false only, 1 true only, 2 both) as (if true, if false)
SPLIT_FALSE_ONLY = 0
SPLIT_TRUE_ONLY = 1
SPLIT_BOTH = 2


class DecisionMemo(Protocol):
    """A recorder of the execution tree, as the executor sees it (see the module docstring).

    ``replayed_answer`` returns the recorded answer while ``state`` replays, None otherwise
    (also when the state has just reached the end of what was recorded: it then explores,
    and the executor asks the solver). ``note_answer`` is told each answer the solver or the
    state's inputs gave. ``forked`` is told every fork, after each state in ``states`` took
    its decision (``State.decide``) and before any of them moved on; ``condition`` is what
    the fork decided on. ``solver_used`` is told the time of each solver call made for a
    state."""

    def replayed_answer(self, state: State, tag: DecisionTag, expr: E.Expr) -> int | None:
        """The recorded answer for this point, or None when ``state`` is not replaying."""
        ...

    def note_answer(self, state: State, tag: DecisionTag, expr: E.Expr, answer: int) -> None:
        """Record an answer given to ``state`` by the solver or its inputs."""
        ...

    def forked(self, kind: ForkKind, condition: E.Expr | None, states: Sequence[State],
               site: Site | None) -> None:
        """Record a fork (``states[0]`` is the state that forked, at ``location``)."""
        ...

    def solver_used(self, state: State, seconds: float) -> None:
        """Count one solver call made for ``state``."""
        ...
