"""The interpreter: instruction semantics, forking, memory access and error checks.

Every lowered instruction is compiled once (per exploration) into a small closure
``step(state, frame, regs)``; the engine calls them in a flat loop. Concrete values are plain
Python ints and take the fast path in each closure; symbolic values are expressions and go
through :mod:`symex.core.interpreter.values` and the solver.

Paths end by raising :class:`PathTerminated`; a fork raises :class:`Forked` after queuing the
new state, so the engine can consult its searcher. Both are caught by the engine only.
"""
from __future__ import annotations

import os
import sys
from typing import Any, NoReturn
from types import FrameType
from collections.abc import Callable, Iterable, Mapping

import immutables

from symex import expr as E
from symex.core.threads.livelock import MAX_IDLE_TIME_OUTS
from symex.core.memory.objects import (
    ObjectKind,
    ObjectState,
    MemoryObject,
)
from symex.core.coverage import CoverageMap
from symex.core.forks import (
    DecisionMemo,
    ForkKind,
    Site,
)
from symex.core.interpreter.compiled_runs import compile_runs, runs_enabled
from symex.core.independence import splits_enabled
from symex.core.outcome import (
    ErrorKind,
    PathStatus,
    PathTerminated,
    ProgramError,
    StackEntry,
)
from symex.core.shortfalls import ShortfallTally
from symex.core.site_budgets import SiteBudgets
from symex.core.state import Frame, State
from symex.ir.liveness import Liveness
from symex.ir.program import (
    SEGMENT_SHIFT,
    Edge,
    Function,
    Instruction,
    Program,
)
from symex.solvers.base import Solver
from symex.core.memory.access import MemoryAccess
from symex.core.memory.model import MemoryModel
from symex.core.memory.models import DEFAULT_MEMORY_MODEL, make_memory_model
from symex.core.interpreter.builders import build_step
from symex.core.interpreter.calls import Calls
from symex.core.interpreter.decisions import Decisions
from symex.core.interpreter.machine import EntryHook, ExternalHandler

#: KLEE's default --max-stack-frames
DEFAULT_MAX_STACK_FRAMES = 8192
#: "0" turns off the memos of Executor.simplify and of the instructions (for an A/B)
MEMOS_VARIABLE = "SYMEX_MEMOS"


class Executor(Decisions, MemoryAccess, Calls):
    """Executes states of one program with one solver. See the module docstring."""

    def __init__(self, program: Program, solver: Solver, externals: Mapping[str, ExternalHandler],
                 *, first_segment: int, max_stack_frames: int = DEFAULT_MAX_STACK_FRAMES,
                 max_forks: int | None = None, track_path_blocks: bool = False,
                 memory_model: MemoryModel | None = None) -> None:
        self.program = program
        #: what a pointer means (core.memory.model; None: the default, KLEE's forking model)
        self.memory_model = memory_model if memory_model is not None else \
            make_memory_model(DEFAULT_MEMORY_MODEL)
        self.solver = solver
        self.externals = dict(externals)
        #: external functions no installed plug-in models either (symex.plugins)
        self.unplugged: set[str] = set()
        self.first_segment = first_segment
        self.max_stack_frames = max_stack_frames
        self.code: dict[str, list[list[Any]]] = {}
        #: per function, one byte per block, set once some path entered the block
        self.coverage: dict[str, bytearray] = {}
        self.coverage_map = CoverageMap(program)
        #: after this many forks, symbolic choices follow the state's model instead of forking
        self.max_forks = max_forks
        #: near the run's memory cap, they do too (set by the exploration's MemoryCap)
        self.memory_inhibited = False
        #: give every state the set of (function, block) it entered (State.blocks)
        self.track_path_blocks = track_path_blocks
        #: scheduling choices a path may fork on (see core.scheduling)
        self.schedule_forks = 0
        #: time-outs in a row with nothing else happening that end a path as idle (0: never;
        #: see core.livelock)
        self.max_idle_time_outs = MAX_IDLE_TIME_OUTS
        #: symbolic offsets into objects of more bytes than this are fixed to one value
        #: (KLEE's --max-sym-array-size; 0: never)
        self.max_sym_array_size = 0
        #: the longest input of a fuzz target (--max-input; set by the run)
        self.max_input = 0
        #: a branch of a state following a seed leaves the other side unchecked until it is
        #: picked (see branch; off: both sides are checked at the fork, for an A/B)
        self.defer_seeded_forks = True
        #: a branch's question takes only the constraints its condition shares bytes with
        #: (core.independence; off: every constraint, for an A/B)
        self.independent_splits = splits_enabled()
        #: the query time of branch sites that timed out (set by a run with a query limit)
        self.site_budgets: SiteBudgets | None = None
        #: library functions the environment looks at before they run (env.printed_values)
        self.entry_hooks: dict[str, EntryHook] = {}
        #: rewrites and instructions' symbolic results remembered (simplify, casts,
        #: comparisons with a literal; off: made again each time, for an A/B)
        self.memos = os.environ.get(MEMOS_VARIABLE, "1") != "0"
        #: the chain's question for one independent group, where the solver has one
        self.group_model: Callable[[tuple[E.Expr, ...], dict[E.Array, bytes]], dict[E.Array, bytes] | None] | None = \
            getattr(solver, "group_model", None)
        #: straight-line runs and chains of blocks compiled to Python (core.compiled_runs),
        #: the most instructions one call of them does, and, in the exact phase at the end of
        #: a time slice, the instructions left to the slice (0 otherwise)
        self.compiled_runs = runs_enabled()
        self.longest_run = 0
        self.exact_slice = [0]
        if track_path_blocks:
            # an instance attribute, so the closures that bind ex.jump pick this variant and
            # untracked runs pay nothing
            self.jump = self._jump_tracking  # type: ignore[method-assign]
        #: states created by forks during the current step, handed to the searcher by the engine
        self.new_states: list[State] = []
        #: states that ended while another state was running (error siblings of a fork)
        self.ended: list[tuple[State, PathTerminated]] = []
        self.next_state_id = 0
        self.instructions = 0
        self.forks = 0
        self.on_fork: Callable[[State, State], None] | None = None
        self.on_new_coverage: Callable[[State, Function, int], None] | None = None
        self.messages: list[str] = []
        #: concretizations and unmodelled calls, by program line (messages.txt lists them)
        self.shortfalls = ShortfallTally()
        #: (what, program line) of the symbolic allocation sizes fixed so far (said once each)
        self.fixed_sizes: set[tuple[str, str]] = set()
        #: the recorder of the execution tree (memo.TreeRecorder), None when not recording
        self.memo: DecisionMemo | None = None
        #: the state run() is executing, whose count of instructions lags (see live_instructions)
        self._running: State | None = None
        #: symbolic input arrays by (name, size), one object per name for every path
        self._input_arrays: dict[tuple[str, int], E.Array] = {}
        #: live-register analyses by function name, for parking waiting states (see park)
        self._liveness: dict[str, Liveness] = {}

    # -- running ------------------------------------------------------------------------

    def run(self, state: State, budget: int) -> None:
        """Execute up to ``budget`` instructions of ``state``; raises PathTerminated/Forked.

        A compiled run or chain (core.compiled_runs) executes several instructions in one
        call and returns how many; the other closures return None, one instruction. In the
        last ``longest_run`` instructions of the slice (the exact phase) ``exact_slice[0]``
        holds what is left of the budget and a run or chain does only as much as fits (at
        least its first instruction), so a slice ends at exactly ``budget``."""
        frame = state.frame
        if frame is not None and frame.parked is not None:
            frame.unpark()  # a state back from the searcher (its callers: on return, see ret)
        n = 0
        self._running = state
        exact = self.exact_slice
        try:
            fast_until = budget - self.longest_run
            while n < fast_until:
                frame = state.frame
                pc = frame.pc
                frame.pc = pc + 1
                done = frame.code[pc](state, frame, frame.regs)
                n += 1 if done is None else done
            while n < budget:
                exact[0] = budget - n
                frame = state.frame
                pc = frame.pc
                frame.pc = pc + 1
                done = frame.code[pc](state, frame, frame.regs)
                n += 1 if done is None else done
        finally:
            exact[0] = 0
            self._running = None
            state.instructions += n
            state.since_new_coverage += n
            self.instructions += n

    def live_instructions(self, state: State) -> int:
        """Instructions ``state`` has executed, counting the time slice it is running in.

        run() keeps the slice's count in a local variable and adds it to the state only when
        the slice ends (a per-instruction attribute write would slow every instruction down);
        a fork or a recorded decision in the middle of a slice reads that local from run()'s
        frame instead. Rare (forks and decision points only), so the frame walk is cheap."""
        if state is not self._running:
            return state.instructions
        frame: FrameType | None = sys._getframe(1)
        while frame is not None and frame.f_code is not _RUN_CODE:
            frame = frame.f_back
        if frame is None:
            return state.instructions
        # the instructions before the one being executed: a fork raises Forked out of that
        # step, so run() never counts it for the state that forked
        return state.instructions + frame.f_locals["n"]

    def current_instruction(self, state: State) -> Instruction | None:
        """The instruction the state is executing (or just executed)."""
        frame = state.frame
        if frame is None:
            return None
        block = frame.block
        index = max(frame.pc - 1, 0)
        if index < len(block.instructions):
            return block.instructions[index]
        return None

    def liveness_of(self, fn: Function) -> Liveness:
        """The live-register analysis of ``fn`` (made on first use)."""
        liveness = self._liveness.get(fn.name)
        if liveness is None:
            liveness = self._liveness[fn.name] = Liveness(fn)
        return liveness

    def park(self, state: State) -> None:
        """Shrink a state that goes to wait in the searcher: each frame keeps only the
        registers live where it stopped (a queued state's register files would otherwise be
        most of its memory). :meth:`run` restores them first."""
        for frame in state.frames:
            if frame.parked is not None:
                continue
            liveness = self.liveness_of(frame.function)
            if not liveness.keeps_all:
                frame.park(liveness.live_at(frame.block.index, frame.pc))

    # -- compilation --------------------------------------------------------------------

    def code_of(self, fn: Function) -> list[list[Any]]:
        """Compiled closures for every block of ``fn`` (built on first use)."""
        code = self.code.get(fn.name)
        if code is None:
            code = [[] for _ in fn.blocks]  # a pending library function lowers here
            self.code[fn.name] = code
            # marks made before the first compile (mark_covered_elsewhere) are kept
            self.coverage.setdefault(fn.name, bytearray(len(fn.blocks)))
            for block, block_code in zip(fn.blocks, code):
                for ins in block.instructions:
                    block_code.append(self.compile(fn, code, ins))
            if self.compiled_runs:
                compile_runs(self, fn, code)
        return code

    def compile(self, fn: Function, fcode: list[list[Any]], ins: Instruction) -> Any:
        """One closure for one instruction."""
        return build_step(self, fn, fcode, ins)

    # -- states -------------------------------------------------------------------------

    def new_state_id(self) -> int:
        self.next_state_id += 1
        return self.next_state_id - 1

    def initial_state(self, entry: Function, args: list[Any]) -> State:
        """A state about to execute ``entry`` with ``args``; globals are mapped. It takes the
        next state id like a fork (a parallel worker starts one initial state per job)."""
        state = State(self.new_state_id(), self.first_segment)
        state.objects = self.process_image()
        if self.track_path_blocks:
            state.blocks = set()
        self.push_frame(state, entry, args, -1, None)
        return state

    def process_image(self) -> immutables.Map[int, ObjectState]:
        """A new process's memory: every global with its initial value, nothing else (a
        path's first process, and the image ``execve`` starts another program in)."""
        objects = {}
        for g in self.program.globals.values():
            segment = g.address >> SEGMENT_SHIFT
            obj = MemoryObject(segment, g.size, ObjectKind.GLOBAL, g.source_name, g.read_only,
                               g.site)
            objects[segment] = ObjectState(obj, bytearray(g.image), None)
        return immutables.Map(objects)

    def fork(self, state: State) -> State:
        """A new state sharing ``state``'s memory; queued for the searcher. The caller makes
        every state of the fork take its decision, then calls :meth:`record_fork`."""
        child = state.fork(self.new_state_id())
        child.instructions = self.live_instructions(state)
        self.forks += 1
        self.new_states.append(child)
        if self.on_fork is not None:
            self.on_fork(state, child)
        return child

    def record_fork(self, kind: ForkKind, condition: E.Expr | None, states: list[State]) -> None:
        """Tell the tree recorder about a fork: ``states[0]`` forked the others at its current
        instruction; each took its decision already."""
        if self.memo is not None:
            self.memo.forked(kind, condition, states, self.site_of(states[0]))

    def site_of(self, state: State) -> Site | None:
        """Where ``state`` is: the instruction it is executing (None once main returned)."""
        frame = state.frame
        if frame is None:
            return None
        index = max(frame.pc - 1, 0)
        block = frame.block
        ins = block.instructions[index] if index < len(block.instructions) else None
        loc = ins.location if ins is not None else None
        return Site(frame.function.name, block.index, index,
                    loc.file if loc is not None else None, loc.line if loc is not None else None)


    def take_outcome(self, fn: Function, outcomes: bytearray | None, slot: int) -> None:
        """Record a branch outcome (``outcomes`` None: the branch does not count)."""
        if outcomes is not None and not outcomes[slot]:
            self.coverage_map.take_outcome(fn, slot)


    def jump(self, state: State, frame: Frame, edge: Edge, fcode: list[list[Any]]) -> None:
        """Go to the edge's target block, performing its phi moves."""
        regs = frame.regs
        moves = edge.moves
        if moves:
            if len(moves) == 1:
                d, s = moves[0]
                regs[d] = regs[s]
            else:
                values = [regs[s] for _, s in moves]
                for (d, _), v in zip(moves, values):
                    regs[d] = v
        target = edge.target
        frame.block = frame.function.blocks[target]
        frame.code = fcode[target]
        frame.pc = 0
        covered = self.coverage[frame.function.name]
        if not covered[target]:
            self.reach_new_block(state, frame.function, target)

    def _jump_tracking(self, state: State, frame: Frame, edge: Edge, fcode: list[list[Any]]) -> None:
        """``jump`` that also records the block in the state's own set (track_path_blocks)."""
        Executor.jump(self, state, frame, edge, fcode)
        state.blocks.add((frame.function.name, edge.target))  # type: ignore[union-attr]  # tracked

    def reach_new_block(self, state: State, fn: Function, block: int) -> None:
        """``state`` is the first to enter ``block`` of ``fn``: count it, give the state credit
        for it (a new claim, see State.claims), tell the hook."""
        self.coverage[fn.name][block] = 1
        state.since_new_coverage = 0
        state.claims = [False, state.claims]
        self.coverage_map.reach_block(fn, block)
        if self.on_new_coverage is not None:
            self.on_new_coverage(state, fn, block)

    def input_array(self, name: str, size: int) -> E.Array:
        """The symbolic array of the input called ``name`` (unique on its path). Every path
        that makes an input of that name and size gets the same object: paths that start
        again from the entry (a parallel worker's jobs, a replayed tree) then build the same
        expressions as each other, so the solver chain's caches, keyed by expression
        identity, answer across them. Paths never share inputs they could disagree on: a
        name is unique within a path, and different paths' constraints never meet."""
        key = (name, size)
        array = self._input_arrays.get(key)
        if array is None:
            array = self._input_arrays[key] = E.Array(name, size)
        return array

    def mark_covered_elsewhere(self, blocks: Iterable[tuple[str, int]]) -> None:
        """Blocks (function name, index) that other parallel workers reached: no longer new
        here, so coverage-guided search and ``only_output_states_covering_new`` judge by the
        whole run's coverage. This executor's own coverage map does not count them."""
        coverage = self.coverage
        functions = self.program.functions
        for name, block in blocks:
            covered = coverage.get(name)
            if covered is None:
                fn = functions.get(name)
                if fn is None:
                    continue
                covered = coverage[name] = bytearray(len(fn.blocks))
            if block < len(covered):
                covered[block] = 1


    # -- errors -------------------------------------------------------------------------

    def make_error(self, state: State, kind: ErrorKind, message: str, *,
                   blocked: bool = False) -> ProgramError:
        """An error at the state's current instruction, with its call stack (``blocked``:
        the state's thread is blocked in a call it will run again, see core.scheduling)."""
        stack = self.stack_of(state.frames, blocked=blocked)
        instruction = self.current_instruction(state) if not blocked else _blocked_call(state.frame)
        return ProgramError(kind, message, _program_location(instruction, stack), tuple(stack),
                            instruction.text if instruction is not None else "")

    def program_site(self, state: State) -> str:
        """``file:line`` (the file's base name) of the program line running now, for naming
        where an object was made: the current instruction's, or inside symex's C library
        (no debug info) that of the nearest caller that has one; "" without debug info."""
        for frame in reversed(state.frames):
            index = max(frame.pc - 1, 0)
            instructions = frame.block.instructions
            location = instructions[index].location if index < len(instructions) else None
            if location is not None:
                return location.site
        return ""

    def stack_of(self, frames: list[Frame], *, blocked: bool = False) -> tuple[StackEntry, ...]:
        """The call stack of ``frames``, innermost first, as (function, file, line) entries
        (``blocked``: the innermost frame is about to run its blocked call again)."""
        stack: list[StackEntry] = []
        for depth, frame in enumerate(reversed(frames)):
            index = frame.pc if depth == 0 and blocked else max(frame.pc - 1, 0)
            ins = frame.block.instructions[index] if index < len(frame.block.instructions) else None
            loc = ins.location if ins is not None else None
            # inlined frames (at -O2) appear as their own entries, innermost first
            while loc is not None and loc.inlined_at is not None:
                stack.append((loc.function or frame.function.name, loc.file, loc.line))
                loc = loc.inlined_at
            if loc is not None:
                stack.append((frame.function.name, loc.file, loc.line))
            else:
                stack.append((frame.function.name, frame.function.file, None))
        return tuple(stack)

    def fail(self, state: State, kind: ErrorKind, message: str) -> NoReturn:
        """End the state with a program error."""
        raise PathTerminated(PathStatus.ERROR, message, self.make_error(state, kind, message))



def _blocked_call(frame: Frame | None) -> Instruction | None:
    """The call a blocked thread will run again (its frame's pc points at it)."""
    if frame is None or frame.pc >= len(frame.block.instructions):
        return None
    return frame.block.instructions[frame.pc]


def _program_location(instruction: Instruction | None,
                      stack: tuple[StackEntry, ...]) -> tuple[str, int] | None:
    """Where the program is: the instruction's own line, or, since symex's C library has no
    debug locations, the program line that called into it."""
    if instruction is not None and instruction.location is not None:
        return (instruction.location.file, instruction.location.line)
    return next(((file, line) for _, file, line in stack if file is not None and line is not None),
                None)





#: the code of the interpreter loop, whose slice counter live_instructions reads
_RUN_CODE = Executor.run.__code__

