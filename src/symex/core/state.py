"""Execution states: frames, path constraints, branch decisions, copy-on-write memory."""

from __future__ import annotations

import types
from typing import Any

import immutables

from symex import expr as E
from symex.expr.reads import Element, read_elements
from symex.core.constraints import equality_of
from symex.core.independence import ConstraintGroups
from symex.core.memory.objects import MAX_SEGMENTS, MemoryObject, ObjectKind, ObjectState
from symex.core.outcome import PathStatus, PathTerminated
from symex.ir.program import SEGMENT_SHIFT, Block, Function


#: ``Executor.split`` answers for a side that is feasible while the model of that side is not
#: known (a replayed answer): ``State.add_constraint`` then treats it as "no model given"
NO_MODEL: Any = types.MappingProxyType({})


class Frame:
    """One activation of a function.

    A frame of a state waiting in the searcher may be *parked*: ``regs`` then holds only the
    values of its live registers, ``parked`` their slots (see :meth:`park`)."""

    __slots__ = ("function", "regs", "block", "code", "pc", "ret_dest", "allocas", "varargs",
                 "parked")

    def __init__(self, function: Function, regs: list[Any], ret_dest: int) -> None:
        self.function = function
        self.regs: Any = regs
        self.block: Block = function.blocks[0]
        self.code: list[Any] = []
        self.pc = 0
        self.ret_dest = ret_dest
        #: segments of the frame's allocas, oldest first (a tuple: forks share it)
        self.allocas: tuple[int, ...] = ()
        self.varargs: int = 0  # address of the variadic-argument area, 0 if none
        self.parked: tuple[int, ...] | None = None

    def copy(self) -> Frame:
        """A copy with its own registers (for a forked state)."""
        other = Frame.__new__(Frame)
        other.function = self.function
        other.parked = self.parked
        # a parked frame's values are a tuple: shared, like the slots
        other.regs = self.regs.copy() if self.parked is None else self.regs
        other.block = self.block
        other.code = self.code
        other.pc = self.pc
        other.ret_dest = self.ret_dest
        other.allocas = self.allocas
        other.varargs = self.varargs
        return other

    def park(self, live: tuple[int, ...]) -> None:
        """Keep only the registers in ``live`` (the slots the rest of the function can still
        read from here: :class:`symex.ir.liveness.Liveness`); the frame must not run again
        before :meth:`unpark`."""
        regs = self.regs
        self.regs = tuple([regs[slot] for slot in live])
        self.parked = live

    def unpark(self) -> None:
        """A full register file again: the function's constants, then the kept values."""
        regs = self.function.template.copy()
        for slot, value in zip(self.parked, self.regs):  # type: ignore[arg-type]
            regs[slot] = value
        self.regs = regs
        self.parked = None


class Symbolic:
    """A symbolic input object of a state: its name in test cases and its array."""

    __slots__ = ("name", "array", "address")

    def __init__(self, name: str, array: E.Array, address: int) -> None:
        self.name = name
        self.array = array
        self.address = address


class State:
    """One path being explored.

    ``objects`` maps segment -> :class:`ObjectState` in a persistent map, so a fork shares all
    memory; a state copies an object the first time it writes to one it does not own (``cow``
    is the ownership token, renewed for both sides at every fork).
    """

    __slots__ = (
        "id", "frames", "frame", "objects", "freed", "constraints", "path", "next_segment", "symbolics",
        "cow", "instructions", "depth", "node", "since_new_coverage", "stdout", "stderr",
        "names", "array_counter", "model", "equalities", "simplified", "groups", "blocks", "claims",
        "posix", "memo", "threads", "seeds", "unchecked",
    )

    def __init__(self, state_id: int, first_segment: int) -> None:
        self.id = state_id
        self.frames: list[Frame] = []
        #: the running frame (``frames[-1]``). Typed as always there, as it is whenever the
        #: state runs: it is None only before the entry is called and once the path ended
        self.frame: Frame = None  # type: ignore[assignment]
        self.objects: immutables.Map[int, ObjectState] = immutables.Map()
        #: objects that were freed (heap) or went out of scope (stack), for precise messages
        self.freed: immutables.Map[int, MemoryObject] = immutables.Map()
        self.constraints: tuple[E.Expr, ...] = ()
        #: branch decisions as a persistent chain (decision, earlier chain): forks share it
        self.path: tuple[int, Any] | None = None
        self.next_segment = first_segment
        #: a tuple, shared by forks (a new symbolic object makes a new one)
        self.symbolics: tuple[Symbolic, ...] = ()
        self.cow = object()
        self.instructions = 0
        self.depth = 0
        self.node: Any = None
        self.since_new_coverage = 0
        self.stdout = b""  # immutable, so forks share it until one of them prints
        self.stderr = b""
        #: names given to symbolic objects so far (persistent: forks share it)
        self.names: immutables.Map[str, int] = immutables.Map()
        self.array_counter = 0
        #: inputs satisfying the constraints (None: unknown); see core.constraints
        self.model: dict[E.Array, bytes] | None = {}
        #: substitutions implied by the constraints (persistent: forks share it)
        self.equalities: immutables.Map[E.Expr, E.Expr] = immutables.Map()
        #: conditions already rewritten with ``equalities``: (the map they were rewritten
        #: with, condition -> result), shared with forks until either side learns an equality
        self.simplified: tuple[immutables.Map[E.Expr, E.Expr], dict[E.Expr, E.Expr]] | None = None
        #: the constraints in independent groups (persistent: forks share it); see
        #: core.independence
        self.groups = ConstraintGroups.EMPTY
        #: the (function, block) pairs this path entered; None unless the executor tracks them
        self.blocks: set[tuple[str, int]] | None = None
        #: credit for new coverage, as a chain of cells ``[claimed, older cells]`` shared with
        #: forks: the state that first entered a block pushes a cell; the first path to end
        #: with an unclaimed cell on its chain "covered new code" and claims the whole chain
        #: (claims close under ancestors, so claiming stops at the first claimed cell)
        self.claims: list[Any] | None = None
        #: files and descriptors (env.world.PosixWorld, immutable: forks share it)
        self.posix: Any = None
        #: where the path is in a recorded execution tree (memo.PathCursor), None without one;
        #: a fork hands each new state its own (DecisionMemo.forked)
        self.memo: Any = None
        #: processes and threads besides the running one (core.scheduling.Threads); None
        #: until the program forks, starts a thread or blocks
        self.threads: Any = None
        #: the seeds the path still follows (core.seeding.SeedFollowing), None without any
        self.seeds: Any = None
        #: None, or this is a side of a fork off a seed's path that nobody asked about (a
        #: branch, a symbolic pointer's "elsewhere"): its constraints may be unsatisfiable,
        #: so the engine checks it before it runs (``Executor.checked``); for a branch, the
        #: outcome it counts once found feasible (function, outcomes, slot), else ``()``
        self.unchecked: tuple[Function, bytearray | None, int] | tuple[()] | None = None

    def fork(self, state_id: int) -> State:
        """A child state sharing everything; both sides get fresh copy-on-write tokens."""
        child = State.__new__(State)
        child.id = state_id
        frames = child.frames = self.frames.copy()  # sized exactly, unlike a comprehension
        for i, frame in enumerate(frames):
            frames[i] = frame.copy()
        child.frame = child.frames[-1] if child.frames else None  # type: ignore[assignment]
        child.objects = self.objects
        child.freed = self.freed
        child.constraints = self.constraints
        child.path = self.path
        child.next_segment = self.next_segment
        child.symbolics = self.symbolics
        child.cow = object()
        self.cow = object()
        child.instructions = self.instructions
        child.depth = self.depth
        child.node = None
        child.since_new_coverage = self.since_new_coverage
        child.stdout = self.stdout
        child.stderr = self.stderr
        child.names = self.names
        child.array_counter = self.array_counter
        child.model = self.model
        child.equalities = self.equalities
        child.simplified = self.simplified
        child.groups = self.groups
        child.blocks = None if self.blocks is None else set(self.blocks)
        child.claims = self.claims
        child.posix = self.posix
        child.memo = self.memo
        child.threads = None if self.threads is None else self.threads.copy()
        child.seeds = self.seeds
        child.unchecked = self.unchecked
        return child

    def claim_new_coverage(self) -> bool:
        """Whether this path reached a block first that no path ended before it had claimed;
        claims all of this path's credit (call once, when the path ends)."""
        cell = self.claims
        if cell is None or cell[0]:
            return False
        while cell is not None and not cell[0]:
            cell[0] = True
            cell = cell[1]
        return True

    # -- branch decisions ---------------------------------------------------------------

    def decide(self, choice: int) -> None:
        """Record the outcome of a fork (1/0 for a branch, the case index for a switch)."""
        self.path = (choice, self.path)

    def last_decision(self) -> int:
        """The decision this state took at the fork it just went through."""
        path = self.path
        assert path is not None, "a forked state has decided"
        return int(path[0])

    def decisions(self) -> tuple[int, ...]:
        """The path as the sequence of its branch decisions, oldest first."""
        out = []
        node = self.path
        while node is not None:
            out.append(node[0])
            node = node[1]
        return tuple(reversed(out))

    # -- constraints --------------------------------------------------------------------

    def add_constraint(self, condition: E.Expr, *, model: dict[E.Array, bytes] | None = None,
                       elements: tuple[Element, ...] | None = None) -> None:
        """Assume ``condition`` (width 1) from now on. ``model``, when given, is an input
        assignment known to satisfy all constraints including this one (``NO_MODEL``: the
        condition is feasible, but no such assignment is known). ``elements``: what the
        condition reads, where the caller knows it (a branch's negated condition reads what
        the condition does)."""
        if condition.op is E.Op.CONST:
            return
        self.constraints = self.constraints + (condition,)
        self.groups = self.groups.add(
            condition, read_elements(condition) if elements is None else elements)
        equality = equality_of(condition)
        if equality is not None:
            self.equalities = self.equalities.set(equality[0], equality[1])
        if model is NO_MODEL:
            self.model = None
        elif model is not None:
            self.model = model
        elif self.model is not None and E.Assignment(self.model).evaluate(condition) != 1:
            self.model = None

    # -- memory -------------------------------------------------------------------------

    def writable(self, os: ObjectState) -> ObjectState:
        """The state's own copy of an object, made on first write after a fork."""
        if os.owner is self.cow:
            return os
        mine = os.copy(self.cow)
        self.objects = self.objects.set(os.obj.segment, mine)
        return mine

    def allocate(self, size: int, kind: ObjectKind, name: str, *, zero: bool = True,
                 read_only: bool = False, site: str = "") -> ObjectState:
        """A fresh object in the next segment (``site``: where the program made it)."""
        segment = self.next_segment
        if segment >= MAX_SEGMENTS:
            raise PathTerminated(PathStatus.PARTIAL, f"unsupported: more than {MAX_SEGMENTS:,} "
                                 "objects allocated on one path (symex never reuses an address)")
        self.next_segment = segment + 1
        obj = MemoryObject(segment, size, kind, name, read_only, site)
        os = ObjectState(obj, bytearray(size), self.cow)
        self.objects = self.objects.set(segment, os)
        return os

    def release(self, segment: int) -> MemoryObject | None:
        """Remove an object from the address space, remembering it as freed."""
        os = self.objects.get(segment)
        if os is None:
            return None
        self.objects = self.objects.delete(segment)
        self.freed = self.freed.set(segment, os.obj)
        return os.obj

    def release_frame(self, frame: Frame) -> None:
        """Release what a frame that is left allocated (its allocas, its variadic area)."""
        for segment in frame.allocas:
            self.release(segment)
        if frame.varargs:
            self.release(frame.varargs >> SEGMENT_SHIFT)

    def unique_name(self, name: str) -> str:
        """``name``, or ``name_1``, ``name_2``... if this state already has it."""
        names = self.names
        count = names.get(name)
        if count is None:
            self.names = names.set(name, 0)
            return name
        while True:
            count += 1
            candidate = f"{name}_{count}"
            if candidate not in names:
                self.names = names.set(name, count).set(candidate, 0)
                return candidate

    def next_array_name(self, base: str) -> str:
        """A name for an internal array (memory in array mode), unique within the state."""
        self.array_counter += 1
        return f"{base}#{self.array_counter}"
