"""The memory-model interface: what a pointer means, and how memory is read and written
through it.

Every memory operation of the executor goes through the run's :class:`MemoryModel`
(:class:`~symex.core.memory.access.MemoryAccess` delegates to it): allocation and release,
resolving a pointer to the object it points into, loads and stores of any width, and the
errors they report (null, freed, out of bounds, read-only, invalid free), each naming the
object and offset. The models share the store beneath them (:mod:`symex.core.memory.objects`:
one segment per object, copy-on-write at forks through the state's ownership token), so a
concrete pointer means the same in every model, and the interpreter's fast paths for
concrete pointers into flat objects (builders, compiled runs) are the store's, not a
model's. What differs is a *symbolic* pointer:

- ``forking`` (:class:`~symex.core.memory.forking.ForkingModel`, the default, KLEE's): a
  pointer that may point into several objects forks one state per object; each path reads
  one object at an offset.
- ``merged`` (:class:`~symex.core.memory.merged.MergedModel`): a pointer that may point
  into a few objects (at most ``MERGE_LIMIT``) reads the if-then-else of the reads in each
  and writes each conditionally, on one path; the solver decides which object later
  conditions hold for. Fewer paths, larger queries.

:mod:`symex.core.memory.models` names them (and reads plug-ins': :mod:`symex.plugins`,
``memory-model.NAME``, a callable with no arguments returning an object with this
protocol's methods).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn, Protocol

if TYPE_CHECKING:
    from symex import expr as E
    from symex.core.forks import ForkKind
    from symex.core.memory.objects import ObjectKind, ObjectState
    from symex.core.outcome import ErrorKind
    from symex.core.shortfalls import ShortfallTally
    from symex.core.state import State
    from symex.ir.program import Program

__all__ = ["MemoryModel", "PathDecisions"]


class PathDecisions(Protocol):
    """What a memory model may ask of the machine that runs a state: the solver's answers
    about the path, forks, errors (the executor is one: these are members of
    :class:`~symex.core.interpreter.machine.Machine`, which say more)."""

    program: Program
    """The program being run (its functions' addresses, for error reports)."""
    shortfalls: ShortfallTally
    """What the run could not follow, by program line (a model's concretizations)."""
    max_sym_array_size: int
    """Symbolic offsets into bigger objects are fixed (0: never)."""

    def simplify(self, state: State, condition: E.Expr) -> E.Expr:
        """``condition`` rewritten under the path's equalities."""
        ...

    def settled(self, state: State, value: Any) -> Any:
        """``value`` as a number where the path settles it, else simplified."""
        ...

    def get_value(self, state: State, value: E.Expr) -> int:
        """Some value of ``value`` on the path (the state's inputs': no query)."""
        ...

    def values_of(self, state: State, value: E.Expr, most: int) -> list[int]:
        """Distinct values of ``value`` on the path, at most ``most``, the inputs' first."""
        ...

    def unique_value(self, state: State, value: E.Expr) -> tuple[int, bool]:
        """The inputs' value of ``value``, and whether the path allows no other (a question
        cut short answers no)."""
        ...

    def concretize(self, state: State, value: Any, width: int, why: str) -> int:
        """Fix ``value`` to one possible value (a constraint, and a shortfall)."""
        ...

    def split(self, state: State, condition: E.Expr) -> tuple[Any, Any]:
        """Inputs taking ``condition`` true, and false (None: impossible)."""
        ...

    def seeded_sides(self, state: State, condition: E.Expr) -> tuple[Any, Any] | None:
        """For a state following a seed, the sides of ``condition`` (None otherwise)."""
        ...

    def forks_exhausted(self) -> bool:
        """Whether no state splits any more (then choices follow the inputs)."""
        ...

    def follow_model(self, state: State, condition: E.Expr) -> bool:
        """Decide ``condition`` by the state's inputs, without a fork, and assume it."""
        ...

    def holds_or_retry(self, state: State, condition: E.Expr, kind: ForkKind) -> bool:
        """Whether ``condition`` holds (assumed); where both sides may, a child takes the
        other and runs the instruction again."""
        ...

    def fork_to_retry(self, state: State, condition: E.Expr, kind: ForkKind,
                      if_true: Any = None, if_false: Any = None) -> State:
        """Split on ``condition``: this state takes it, a child its negation, and runs the
        instruction again."""
        ...

    def check_fault(self, state: State, bad: Any, kind: ErrorKind, message: str) -> None:
        """Where ``bad`` may hold, report ``kind`` there (a sibling, or this path)."""
        ...

    def fail(self, state: State, kind: ErrorKind, message: str) -> NoReturn:
        """End the path with an error of ``kind``."""
        ...

    def program_site(self, state: State) -> str:
        """The program line the state is at (for shortfalls and allocation sites)."""
        ...


class MemoryModel(Protocol):
    """How the executor reads, writes, allocates and frees (module docstring). Each method
    takes the machine that runs the state (:class:`PathDecisions`: the solver's answers,
    forks, errors) and the state whose memory it is. A method that finds an error ends the path
    through ``machine.fail`` or forks an error sibling (``machine.check_fault``); a method
    that forks leaves the child to run the current instruction again
    (``machine.fork_to_retry``)."""

    name: str
    """The model's name, as ``--memory-model`` takes it."""

    def resolve(self, machine: PathDecisions, state: State, address: Any, size: int,
                what: str) -> tuple[ObjectState, Any]:
        """The one object ``size`` bytes at ``address`` lie in, and the offset there (an int,
        or a 32-bit expression), forking where the pointer may point into others; errors for
        null, freed and out-of-bounds pointers (``what``: "read", "write", ... for them).
        Handlers that need a single object (``klee_make_symbolic``) call this."""
        ...

    def read_bytes(self, machine: PathDecisions, state: State, address: Any, size: int) -> list[Any]:
        """``size`` raw bytes at ``address`` (ints, or 8-bit expressions)."""
        ...

    def write_bytes(self, machine: PathDecisions, state: State, address: Any,
                    data: list[Any] | bytes) -> None:
        """Store raw bytes at ``address``; a read-only object is an error."""
        ...

    def allocate(self, machine: PathDecisions, state: State, size: int, kind: ObjectKind, name: str,
                 site: str = "") -> int:
        """A fresh zero-filled object of ``size`` bytes; its address (``name`` and ``site``:
        what error reports call it, and where the program made it)."""
        ...

    def free(self, machine: PathDecisions, state: State, address: Any) -> None:
        """Release the heap object ``address`` points to the start of; an invalid or double
        free is an error."""
        ...


