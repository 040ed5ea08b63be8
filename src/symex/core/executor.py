"""The interpreter: instruction semantics, forking, memory access and error checks.

Every lowered instruction is compiled once (per exploration) into a small closure
``step(state, frame, regs)``; the engine calls them in a flat loop. Concrete values are plain
Python ints and take the fast path in each closure; symbolic values are expressions and go
through :mod:`symex.core.values` and the solver.

Paths end by raising :class:`PathTerminated`; a fork raises :class:`Forked` after queuing the
new state, so the engine can consult its searcher. Both are caught by the engine only.
"""

from __future__ import annotations

import math
import os
import struct
import sys
import time
from typing import Any, NoReturn
from types import FrameType
from collections.abc import Callable, Iterable, Mapping, Sequence

import immutables

from symex import expr as E
from symex.core.livelock import MAX_IDLE_TIME_OUTS
from symex.core import values as V
from symex.core.memory import (
    OFFSET_MASK,
    POINTER_MASK,
    SEGMENT_HALF,
    ObjectKind,
    ObjectState,
    MemoryObject,
    SymbolicFloat,
    decode,
    encode,
    int_reader,
    int_writer,
    locate,
)
from symex.core.coverage import CoverageMap, successor_targets
from symex.core.forks import (
    SPLIT_BOTH,
    SPLIT_FALSE_ONLY,
    SPLIT_TRUE_ONLY,
    DecisionMemo,
    DecisionTag,
    ForkKind,
    Site,
)
from symex.core import scheduling
from symex.core.allocation_sizes import fix_allocation_size
from symex.core.compiled_runs import compile_runs, runs_enabled
from symex.core.independence import splits_enabled
from symex.core.outcome import (
    TIME_LIMIT_REASON,
    ErrorKind,
    Forked,
    PathStatus,
    PathTerminated,
    ProgramError,
    StackEntry,
)
from symex.core.shortfalls import ShortfallKind, ShortfallTally
from symex.core.state import NO_MODEL, Frame, State
from symex.core.constraints import substitute
from symex.errors import SolverError, SolverUnknown
from symex.expr.reads import read_elements
from symex.ir.liveness import Liveness
from symex.ir.program import (
    SEGMENT_SHIFT,
    Access,
    Edge,
    Function,
    Instruction,
    Opcode,
    Program,
    ValueKind,
)
from symex.solvers.base import Query, Solver, Validity

#: KLEE's default --max-stack-frames
DEFAULT_MAX_STACK_FRAMES = 8192
#: Size of the x86-64 va_list structure (gp_offset, fp_offset, overflow_arg_area, reg_save_area)
VA_LIST_SIZE = 24
#: gp/fp offsets that tell clang's inline va_arg code "registers exhausted, use the overflow area"
VA_GP_EXHAUSTED = 48
VA_FP_EXHAUSTED = 304

#: The C library's atexit table (runtime/libc/stdlib.c): handler pointers and their count
ATEXIT_HANDLERS = "__symex_atexit_handlers"
ATEXIT_COUNT = "__symex_atexit_count"

#: External function handler: (executor, state, arguments, call instruction) -> return value
ExternalHandler = Callable[["Executor", State, list[Any], Instruction], Any]

#: Functions intercepted even when the program defines them (SV-COMP programs define these)
ALWAYS_INTERCEPTED = frozenset({"reach_error", "__VERIFIER_error"})
#: values concretize() fixes without counting a shortfall: the path ends with them
_NOT_SHORTFALLS = frozenset({"exit code", "exit status"})

_ONE = E.const(1, 1)
_ATEXIT_COUNT_ACCESS = Access(ValueKind.INT, 4, 32)
#: first word of a jmp_buf that setjmp filled (ASCII "symexjmp"), then 5 words: see set_jump
JMP_BUF_MAGIC = 0x706D6A78656D7973
_WORD = Access(ValueKind.INT, 8, 64)
#: "0" turns off the memos of Executor.simplify and of the instructions (for an A/B)
MEMOS_VARIABLE = "SYMEX_MEMOS"
#: rewrites a state remembers under one set of equalities (Executor.simplify)
SIMPLIFIED_LIMIT = 4096
#: symbolic operands an instruction remembers its result for (casts, comparisons with a
#: literal: pure functions of interned expressions)
SITE_MEMO_LIMIT = 256
_POINTER_ACCESS = Access(ValueKind.PTR, 8, 64)
#: Executor.split's answer for each replayed SPLIT answer (0 false only, 1 true only, 2 both)
_REPLAYED_SPLITS = ((None, NO_MODEL), (NO_MODEL, None), (NO_MODEL, NO_MODEL))


class Executor:
    """Executes states of one program with one solver. See the module docstring."""

    def __init__(self, program: Program, solver: Solver, externals: Mapping[str, ExternalHandler],
                 *, first_segment: int, max_stack_frames: int = DEFAULT_MAX_STACK_FRAMES,
                 max_forks: int | None = None, track_path_blocks: bool = False) -> None:
        self.program = program
        self.solver = solver
        self.externals = dict(externals)
        self.first_segment = first_segment
        self.max_stack_frames = max_stack_frames
        self.code: dict[str, list[list[Any]]] = {}
        #: per function, one byte per block, set once some path entered the block
        self.coverage: dict[str, bytearray] = {}
        self.coverage_map = CoverageMap(program)
        #: after this many forks, symbolic choices follow the state's model instead of forking
        self.max_forks = max_forks
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
        #: a branch of a state following a seed leaves the other side unchecked until it is
        #: picked (see branch; off: both sides are checked at the fork, for an A/B)
        self.defer_seeded_forks = True
        #: a branch's question takes only the constraints its condition shares bytes with
        #: (core.independence; off: every constraint, for an A/B)
        self.independent_splits = splits_enabled()
        #: rewrites and instructions' symbolic results remembered (simplify, casts,
        #: comparisons with a literal; off: made again each time, for an A/B)
        self.memos = os.environ.get(MEMOS_VARIABLE, "1") != "0"
        #: the chain's question for one independent group, where the solver has one
        self._group_model: Callable[[tuple[E.Expr, ...]], dict[E.Array, bytes] | None] | None = \
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
        builder = _BUILDERS.get(ins.opcode)
        if builder is None:
            return _unsupported_step(f"no semantics for {ins.opcode.name}")
        return builder(self, fn, fcode, ins)

    # -- states -------------------------------------------------------------------------

    def new_state_id(self) -> int:
        self.next_state_id += 1
        return self.next_state_id - 1

    def initial_state(self, entry: Function, args: list[Any]) -> State:
        """A state about to execute ``entry`` with ``args``; globals are mapped. It takes the
        next state id like a fork (a parallel worker starts one initial state per job)."""
        state = State(self.new_state_id(), self.first_segment)
        objects = {}
        for g in self.program.globals.values():
            segment = g.address >> SEGMENT_SHIFT
            obj = MemoryObject(segment, g.size, ObjectKind.GLOBAL, g.source_name, g.read_only,
                               g.site)
            objects[segment] = ObjectState(obj, bytearray(g.image), None)
        state.objects = immutables.Map(objects)
        if self.track_path_blocks:
            state.blocks = set()
        self.push_frame(state, entry, args, -1, None)
        return state

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

    # -- solver -------------------------------------------------------------------------

    def simplify(self, state: State, condition: E.Expr) -> E.Expr:
        """``condition`` rewritten with the equalities the path already implies. A loop
        compares the same symbolic bytes again on every iteration, so the rewrites made
        under the path's current equalities are remembered (``State.simplified``) until it
        learns another one."""
        equalities = state.equalities
        if not equalities or condition.op is E.Op.CONST:
            return condition
        if not self.memos:
            return substitute(condition, equalities)
        memo = state.simplified
        if memo is None or memo[0] is not equalities:
            memo = state.simplified = (equalities, {})
        done = memo[1]
        found = done.get(condition)
        if found is None:
            if len(done) >= SIMPLIFIED_LIMIT:
                done.clear()  # a long loop over ever new conditions: keep memory bounded
            if state.groups.independent_of(read_elements(condition)):
                found = condition  # every equality's left side reads bytes a constraint reads
            else:
                found = substitute(condition, equalities)
            done[condition] = found
        return found

    def solve(self, state: State, extra: tuple[E.Expr, ...]) -> dict[E.Array, bytes] | None:
        """Inputs satisfying the state's constraints plus ``extra``, or None if there are none."""
        arrays = [s.array for s in state.symbolics]
        values = self._initial_values(state, state.constraints + extra, arrays)
        return None if values is None else dict(zip(arrays, values))

    def _initial_values(self, state: State, constraints: tuple[E.Expr, ...],
                        arrays: Sequence[E.Array]) -> list[bytes] | None:
        """The solver's contents of ``arrays`` under ``constraints`` (None: unsatisfiable)."""
        started = time.perf_counter() if self.memo is not None else 0.0
        try:
            return self.solver.get_initial_values(constraints, arrays)
        except SolverUnknown as exc:
            raise self.unanswered(exc) from None
        except SolverError:
            return None  # get_initial_values raises exactly when the constraints are unsatisfiable
        finally:
            if self.memo is not None:
                self.memo.solver_used(state, time.perf_counter() - started)

    def solve_beside(self, state: State, model: dict[E.Array, bytes],
                     condition: E.Expr) -> dict[E.Array, bytes] | None:
        """Inputs satisfying the state's constraints and ``condition``, or None, where
        ``model`` satisfies the constraints: only the constraints sharing bytes with the
        condition (transitively: core.independence) go to the solver, and its answer for
        their bytes replaces those of ``model``; every other constraint reads other bytes,
        which keep satisfying it. Without a partition (symbolic indices), :meth:`solve`."""
        elements = read_elements(condition)
        needed = state.groups.slice(elements) if self.independent_splits else None
        if needed is None:
            return self.solve(state, (condition,))
        constraints = needed.constraints + (condition,)
        group_model = self._group_model
        if group_model is not None:
            # the slice and the condition share bytes, transitively: one group, which the
            # chain need not partition again
            started = time.perf_counter() if self.memo is not None else 0.0
            try:
                answer = group_model(constraints)
            except SolverUnknown as exc:
                raise self.unanswered(exc) from None
            finally:
                if self.memo is not None:
                    self.memo.solver_used(state, time.perf_counter() - started)
            if answer is None:
                return None
        else:
            arrays = needed.arrays(elements)
            values = self._initial_values(state, constraints, arrays)
            if values is None:
                return None
            answer = dict(zip(arrays, values))
        touched: dict[E.Array, list[int]] = {}
        for array, index in needed.elements.union(elements):
            touched.setdefault(array, []).append(index)  # type: ignore[arg-type]  # exact
        merged = dict(model)
        for array, indices in touched.items():
            before = merged.get(array)
            mixed = bytearray(before if before is not None else bytes(array.size))
            data = answer.get(array, b"")
            for index in indices:
                if index < array.size:
                    mixed[index] = data[index] if index < len(data) else 0
            merged[array] = bytes(mixed)
        return merged

    def unanswered(self, exc: SolverUnknown) -> PathTerminated:
        """How a path ends when the solver could not answer for it: at the run's time limit
        (the deadline cut the query; resumable later), else as partial, saying why."""
        past_deadline = getattr(self.solver, "past_deadline", None)
        if past_deadline is not None and past_deadline():
            return PathTerminated(PathStatus.PARTIAL, TIME_LIMIT_REASON, limit=True)
        return PathTerminated(PathStatus.PARTIAL, f"solver: {exc.reason}")

    def model_of(self, state: State) -> dict[E.Array, bytes]:
        """The state's satisfying inputs, computed if unknown."""
        if state.model is None:
            model = self.solve(state, ())
            if model is None:
                raise PathTerminated(PathStatus.PARTIAL, "the path condition became unsatisfiable")
            state.model = model
        return state.model

    def split(self, state: State, condition: E.Expr) -> tuple[Any, Any]:
        """Inputs taking the path with ``condition`` true, and with it false (None where that
        is impossible; ``NO_MODEL`` where it is possible, as a replayed path knows, but the
        inputs are not known). The state's model decides one side; at most one solver query."""
        if condition.op is E.Op.CONST:
            # no question to ask: the state's inputs (known or not) stay as they are
            known = state.model if state.model is not None else NO_MODEL
            return (known, None) if condition.value else (None, known)
        memo = self.memo
        if memo is not None:
            replayed = memo.replayed_answer(state, DecisionTag.SPLIT, condition)
            if replayed is not None:
                return _REPLAYED_SPLITS[replayed]
        model = self.model_of(state)
        sides: tuple[Any, Any]
        holds = bool(E.Assignment(model).evaluate(condition))
        try:
            if holds:
                sides = model, self.solve_beside(state, model, E.bool_not(condition))
            else:
                sides = self.solve_beside(state, model, condition), model
        except PathTerminated as ended:
            if ended.limit:
                raise  # the run's own deadline: the path is cut, to be resumed
            # the query's own limit (--max-solver-time): the side the inputs take is feasible,
            # so the path goes on there, assuming it (callers treat a one-sided answer as
            # implied); KLEE ends the whole path instead
            state.add_constraint(condition if holds else E.bool_not(condition), model=model)
            self.shortfalls.add(ShortfallKind.UNDECIDED, "branch", self.program_site(state))
            # the chain's cex cache learns the inputs, or every later question of this path
            # would ask the solver about the same undecidable constraint again
            assume_model = getattr(self.solver, "assume_model", None)
            if assume_model is not None:
                assume_model(state.constraints, model)
            sides = (model, None) if holds else (None, model)
        if memo is not None:
            memo.note_answer(state, DecisionTag.SPLIT, condition,
                             SPLIT_BOTH if sides[0] is not None and sides[1] is not None
                             else SPLIT_TRUE_ONLY if sides[0] is not None else SPLIT_FALSE_ONLY)
        return sides

    def evaluate(self, state: State, condition: E.Expr) -> Validity:
        """Validity of a width-1 condition on the state's path."""
        condition = self.simplify(state, condition)
        if condition.op is E.Op.CONST:
            return Validity.TRUE if condition.value else Validity.FALSE
        if_true, if_false = self.split(state, condition)
        if if_false is None:
            return Validity.TRUE
        if if_true is None:
            return Validity.FALSE
        return Validity.UNKNOWN

    def get_value(self, state: State, value: E.Expr) -> int:
        """Some value of ``value`` on the state's path (from the state's model: no query)."""
        value = self.simplify(state, value)
        if value.op is E.Op.CONST:
            return value.value
        memo = self.memo
        if memo is not None:
            replayed = memo.replayed_answer(state, DecisionTag.VALUE, value)
            if replayed is not None:
                return replayed
        result = E.Assignment(self.model_of(state)).evaluate(value)
        if memo is not None:
            memo.note_answer(state, DecisionTag.VALUE, value, result)
        return result

    def concretize(self, state: State, value: Any, width: int, why: str) -> int:
        """Fix a symbolic value to one possible value, recording the choice as a constraint.
        ``why`` names the value in the run's shortfalls (except an exit status: the path
        ends there, so no code goes unexplored)."""
        value = self._settled(state, value)
        if type(value) is int:
            return value
        v = self.get_value(state, value)
        state.add_constraint(E.eq(E.const(v, width), value), model=state.model)
        if why not in _NOT_SHORTFALLS:
            self.shortfalls.add(ShortfallKind.CONCRETIZED, why, self.program_site(state))
        return v

    def _settled(self, state: State, value: Any) -> Any:
        """``value`` as a number where the path's equalities settle it (then it is not a
        choice, and not a shortfall), else simplified on the path."""
        if type(value) is int:
            return value
        value = self.simplify(state, value)
        return value.value if value.op is E.Op.CONST else value

    def holds_or_retry(self, state: State, condition: E.Expr, kind: ForkKind) -> bool:
        """Whether ``condition`` holds on ``state`` (assumed when it does). Where both sides
        are feasible it holds here, and a child takes the negation and runs the current
        instruction again (:meth:`fork_to_retry`); past ``max_forks`` the state's inputs
        decide, without a fork."""
        condition = self.simplify(state, condition)
        if condition.op is E.Op.CONST:
            return bool(condition.value)
        if self.forks_exhausted():
            return self.follow_model(state, condition)
        if_true, if_false = self.split(state, condition)
        if if_true is None:
            return False  # the path already implies the negation
        if if_false is not None:
            self.fork_to_retry(state, condition, kind, if_true, if_false)
        else:
            state.add_constraint(condition, model=if_true)
        return True

    def fork_to_retry(self, state: State, condition: E.Expr, kind: ForkKind,
                      if_true: Any = None, if_false: Any = None) -> State:
        """Split ``state`` on ``condition``, both sides feasible: it goes on with the condition
        true (decision 1); a child takes it false (decision 0) and runs the current
        instruction again, now knowing that (the child is returned). ``if_true``/``if_false``:
        inputs of each side, where known (see :meth:`split`)."""
        child = self.fork(state)
        child.add_constraint(E.bool_not(condition), model=if_false)
        child.decide(0)
        state.decide(1)
        state.add_constraint(condition, model=if_true)
        self.record_fork(kind, condition, [state, child])
        child.frame.pc -= 1
        return child

    def fork_on_values(self, state: State, value: E.Expr, width: int,
                       choose: Callable[[State, E.Expr], list[int]]) -> int:
        """Fix a symbolic value to each of the values ``choose(state, value)`` picks (feasible
        ones, the first first; an unknown answer of the solver while it picks ends the path
        as :meth:`unanswered` says): this state takes the first and the others get a state
        each, which runs the instruction again with its value (``ForkKind.VALUES``). The
        values are recorded as answers, so a replay forks the same way without the solver.
        With no forks left, only the first value is kept."""
        value = self.simplify(state, value)
        if value.op is E.Op.CONST:
            return value.value
        memo = self.memo
        values: list[int] | None = None
        count = None if memo is None else memo.replayed_answer(state, DecisionTag.VALUE, value)
        if count is not None:
            values = []
            for _ in range(count):
                recorded = memo.replayed_answer(state, DecisionTag.VALUE, value)  # type: ignore[union-attr]
                if recorded is None:  # the recording diverged: choose afresh
                    values = None
                    break
                values.append(recorded)
        if values is None:
            try:
                values = choose(state, value)
            except SolverUnknown as exc:
                raise self.unanswered(exc) from None
            if memo is not None:
                memo.note_answer(state, DecisionTag.VALUE, value, len(values))
                for v in values:
                    memo.note_answer(state, DecisionTag.VALUE, value, v)
        if len(values) == 1 or self.forks_exhausted():
            state.add_constraint(E.eq(E.const(values[0], width), value))
            return values[0]
        states = [state] + [self.fork(state) for _ in values[1:]]
        for index, (v, each) in enumerate(zip(values, states)):
            each.add_constraint(E.eq(E.const(v, width), value))
            each.decide(index)
        self.record_fork(ForkKind.VALUES, value, states)
        for child in states[1:]:
            child.frame.pc -= 1  # runs the instruction again, with its value
        return values[0]

    def value_range(self, state: State, value: E.Expr, cap: int) -> tuple[int, int]:
        """The least value ``value`` can take on the state's path, and the greatest one not
        above ``cap`` (the least again when every value is above it). For a ``choose`` of
        :meth:`fork_on_values`, which turns SolverUnknown into the path's end."""
        capped = E.ule(value, E.const(cap, value.width))
        if self.solver.may_be_true(Query(state.constraints, capped)):
            return self.solver.get_range(Query(state.constraints + (capped,), value))
        low = self.solver.get_range(Query(state.constraints, value))[0]
        return low, low

    def forks_exhausted(self) -> bool:
        """Whether ``max_forks`` forks happened (then no state splits any more)."""
        return self.max_forks is not None and self.forks >= self.max_forks

    def follow_model(self, state: State, condition: E.Expr) -> bool:
        """Decide a symbolic condition without forking: take the side the state's model
        satisfies (feasible by construction, and no solver query) and assume it."""
        memo = self.memo
        replayed = None if memo is None else memo.replayed_answer(state, DecisionTag.SPLIT,
                                                                  condition)
        if replayed is not None:
            holds = replayed == SPLIT_TRUE_ONLY
        else:
            holds = bool(E.Assignment(self.model_of(state)).evaluate(condition))
            if memo is not None:
                memo.note_answer(state, DecisionTag.SPLIT, condition,
                                 SPLIT_TRUE_ONLY if holds else SPLIT_FALSE_ONLY)
        state.add_constraint(condition if holds else E.bool_not(condition), model=state.model)
        return holds

    def choose_option(self, state: State, options: list[E.Expr]) -> int:
        """The index of the first of ``options`` (width-1 conditions, one of which the inputs
        satisfy) that the state's inputs satisfy; it is assumed. No fork, no query."""
        memo = self.memo
        key = options[0]
        replayed = None if memo is None else memo.replayed_answer(state, DecisionTag.OPTION, key)
        if replayed is not None:
            chosen = replayed
        else:
            assignment = E.Assignment(self.model_of(state))
            chosen = next(i for i, hit in enumerate(options) if assignment.evaluate(hit))
            if memo is not None:
                memo.note_answer(state, DecisionTag.OPTION, key, chosen)
        state.add_constraint(options[chosen], model=state.model)
        return chosen

    def take_outcome(self, fn: Function, outcomes: bytearray | None, slot: int) -> None:
        """Record a branch outcome (``outcomes`` None: the branch does not count)."""
        if outcomes is not None and not outcomes[slot]:
            self.coverage_map.take_outcome(fn, slot)

    def branch(self, state: State, frame: Frame, condition: E.Expr, true_edge: Edge,
               false_edge: Edge, fcode: list[list[Any]], outcomes: bytearray | None = None,
               slot: int = 0) -> None:
        """A conditional branch on a symbolic condition: follow it, or fork. ``outcomes`` and
        ``slot`` say where the branch records its outcomes (true at ``slot``, false after)."""
        condition = self.simplify(state, condition)
        fn = frame.function
        # one side only: a constant condition, no forks left (follow the inputs), or a side
        # the solver found infeasible
        follow: bool | None = None
        if_true = if_false = None
        unchecked = False
        if condition.op is E.Op.CONST:
            follow = bool(condition.value)
        elif self.forks_exhausted():
            follow = self.follow_model(state, condition)
        elif (seeded_sides := self.seeded_sides(state, condition)) is not None:
            unchecked = True
            if_true, if_false = seeded_sides
        else:
            if_true, if_false = self.split(state, condition)
            if if_false is None:
                follow = True
            elif if_true is None:
                follow = False
        if follow is not None:
            self.take_outcome(fn, outcomes, slot if follow else slot + 1)
            self.jump(state, frame, true_edge if follow else false_edge, fcode)
            return
        child = self.fork(state)
        state.add_constraint(condition, model=if_true)
        child.add_constraint(E.bool_not(condition), model=if_false,
                             elements=read_elements(condition))
        state.decide(1)
        child.decide(0)
        state.depth += 1
        child.depth += 1
        self.record_fork(ForkKind.BRANCH, condition, [state, child])
        if unchecked:
            # the seed's side goes on; the other waits, its outcome counted once checked
            if if_true is not NO_MODEL:
                self.take_outcome(fn, outcomes, slot)
                self.jump(state, frame, true_edge, fcode)
                self._jump_unchecked(child, false_edge, fcode, outcomes, slot + 1)
            else:
                self.take_outcome(fn, outcomes, slot + 1)
                self.jump(child, child.frame, false_edge, fcode)
                self._jump_unchecked(state, true_edge, fcode, outcomes, slot)
            raise Forked()
        self.take_outcome(fn, outcomes, slot)
        self.take_outcome(fn, outcomes, slot + 1)
        self.jump(state, frame, true_edge, fcode)
        self.jump(child, child.frame, false_edge, fcode)
        raise Forked()

    def seeded_sides(self, state: State, condition: E.Expr) -> tuple[Any, Any] | None:
        """For a state following a seed: the sides of ``condition`` as :meth:`split` gives
        them, without the solver: the seed's side with the seed's inputs, the other
        ``NO_MODEL``, to be left unchecked until the searcher picks it (Kuchta and Cadar's
        pending states), so a seed's path never waits on the solver (memcached's keys
        through murmur3 took seconds a query). None for other states, with a recorded tree
        (it wants every answer at the fork) or with ``defer_seeded_forks`` off."""
        if (state.seeds is None or condition.op is E.Op.CONST or self.memo is not None
                or not self.defer_seeded_forks):
            return None
        model = self.model_of(state)
        if E.Assignment(model).evaluate(condition):
            return model, NO_MODEL
        return NO_MODEL, model

    def _jump_unchecked(self, state: State, edge: Edge, fcode: list[list[Any]],
                        outcomes: bytearray | None, slot: int) -> None:
        """``jump`` for the side of a fork nobody checked (see ``branch``): the registers
        move now, the coverage waits until :meth:`checked` finds the side feasible (an
        infeasible side must not count as covered)."""
        frame = state.frame
        covered = self.coverage[frame.function.name]
        target = edge.target
        new = not covered[target]
        if new:
            covered[target] = 1  # so that jump does not count the block
        self.jump(state, frame, edge, fcode)
        if new:
            covered[target] = 0
        state.unchecked = (frame.function, outcomes, slot)

    def checked(self, state: State) -> bool:
        """Check an unchecked state (``State.unchecked``) before it runs: whether its path is
        feasible (then it counts its branch outcome and block, and has inputs); False: it is
        no path (the caller drops it)."""
        assert state.unchecked is not None, "only an unchecked state is checked"
        if state.model is None:
            model = self.solve(state, ())
            if model is None:
                return False
            state.model = model
        pending = state.unchecked
        state.unchecked = None
        if pending:  # a branch side: its outcome and block count now
            fn, outcomes, slot = pending
            self.take_outcome(fn, outcomes, slot)
            block = state.frame.block.index
            if not self.coverage[fn.name][block]:
                self.reach_new_block(state, fn, block)
        return True

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

    def check_fault(self, state: State, bad: Any, kind: ErrorKind, message: str) -> None:
        """If ``bad`` (width-1 value) can hold, report ``kind``: on this state when it must hold,
        else on a forked sibling, while this state continues under ``not bad``."""
        if type(bad) is int:
            if bad:
                self.fail(state, kind, message)
            return
        bad = self.simplify(state, bad)
        if bad.op is not E.Op.CONST and self.forks_exhausted():
            if self.follow_model(state, bad):
                self.fail(state, kind, message)
            return
        if_bad, if_ok = self.split(state, bad)
        if if_bad is None:
            return
        if if_ok is None:
            self.fail(state, kind, message)
        error = self.make_error(state, kind, message)
        child = self.fork(state)
        self.new_states.remove(child)
        child.add_constraint(bad, model=if_bad)
        state.add_constraint(E.bool_not(bad), model=if_ok)
        child.decide(1)
        state.decide(0)
        self.record_fork(ForkKind.ERROR_CHECK, bad, [state, child])
        self.ended.append((child, PathTerminated(PathStatus.ERROR, message, error)))

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

    # -- calls --------------------------------------------------------------------------

    def push_frame(self, state: State, fn: Function, args: list[Any], ret_dest: int,
                   call: Instruction | None) -> None:
        """Enter a defined function."""
        if len(state.frames) >= self.max_stack_frames:
            self.fail(state, ErrorKind.EXEC,
                      f"stack overflow: more than {self.max_stack_frames} nested calls")
        fcode = self.code_of(fn)
        regs = fn.template.copy()
        params = fn.params
        for i, slot in enumerate(params):
            regs[slot] = args[i] if i < len(args) else 0
        frame = Frame(fn, regs, ret_dest)
        frame.code = fcode[0]
        if len(args) > len(params) and call is not None:
            frame.varargs = self.store_varargs(state, args[len(params):],
                                               call.aux.arg_access[len(params):])
        state.frames.append(frame)
        state.frame = frame
        if not self.coverage[fn.name][0]:
            self.reach_new_block(state, fn, 0)
        if state.blocks is not None:
            state.blocks.add((fn.name, 0))

    def store_varargs(self, state: State, args: list[Any], accesses: tuple[Access, ...]) -> int:
        """Lay variadic arguments out as the x86-64 overflow area: 8-byte slots (16-aligned for
        16-byte values), which is where clang's va_arg code reads them once we mark the register
        save areas as exhausted in va_start."""
        offsets = []
        offset = 0
        for access in accesses:
            align = 16 if access.size > 8 else 8
            offset = (offset + align - 1) // align * align
            offsets.append(offset)
            offset += (access.size + 7) // 8 * 8
        os = state.allocate(max(offset, 8), ObjectKind.VARARGS, "varargs")
        for value, access, off in zip(args, accesses, offsets):
            if access.size:
                os.write_bytes(off, encode(value, access))
        return os.obj.address

    def call(self, state: State, frame: Frame, ins: Instruction, fn: Function, args: list[Any]) -> None:
        """Call a function: defined ones get a frame, declared ones go to the environment."""
        if fn.is_declaration or fn.name in ALWAYS_INTERCEPTED:
            handler = self.externals.get(fn.name)
            if handler is None:
                if not fn.is_declaration:
                    self.push_frame(state, fn, args, ins.dest, ins)
                    return
                self.shortfalls.add(ShortfallKind.UNMODELLED, fn.name, self.program_site(state))
                raise PathTerminated(
                    PathStatus.PARTIAL,
                    f"unsupported: call to external function '{fn.name}' ({_where(ins)})")
            result = handler(self, state, args, ins)
            if ins.dest >= 0:
                frame.regs[ins.dest] = result if result is not None else 0
            return
        self.push_frame(state, fn, args, ins.dest, ins)

    def call_pointer(self, state: State, frame: Frame, ins: Instruction, target: Any,
                     args: list[Any]) -> None:
        """Call through a function pointer (a symbolic one is resolved value by value)."""
        if type(target) is not int:
            value = self.get_value(state, target)
            same = E.eq(E.const(value, 64), target)
            if self.forks_exhausted():
                state.add_constraint(same, model=state.model)  # the model gave `value`
            elif self.evaluate(state, same) is not Validity.TRUE:
                # the child resolves the pointer again
                self.fork_to_retry(state, same, ForkKind.FUNCTION_POINTER)
            target = value
        fn = self.program.functions_by_address.get(target)
        if fn is None:
            self.fail(state, ErrorKind.PTR, f"call through an invalid function pointer 0x{target:x}")
        self.call(state, frame, ins, fn, args)

    def call_exit_handler(self, state: State) -> bool:
        """Call the most recently registered atexit handler not yet called, if any, so that
        the instruction ending the process (``exit(...)`` or main's ``ret``) runs again when
        it returns: that instruction must be the one just executed. The handler is taken off
        the table first, so each runs once, last registered first, as C's exit does."""
        count_object = self.program.globals.get(ATEXIT_COUNT)
        table = self.program.globals.get(ATEXIT_HANDLERS)
        if count_object is None or table is None:
            return False
        count = self.read(state, count_object.address, _ATEXIT_COUNT_ACCESS)
        if type(count) is not int or not 0 < count <= table.size // 8:
            return False
        count -= 1
        self.write(state, count_object.address, _ATEXIT_COUNT_ACCESS, count)
        target = self.read(state, table.address + 8 * count, _POINTER_ACCESS)
        if type(target) is not int:
            target = self.concretize(state, target, 64, "atexit handler")
        fn = self.program.functions_by_address.get(target)
        if fn is None:
            self.fail(state, ErrorKind.PTR, f"atexit handler is an invalid function pointer 0x{target:x}")
        if fn.is_declaration:
            raise PathTerminated(PathStatus.PARTIAL,
                                 f"unsupported: external function '{fn.name}' as an atexit handler")
        state.frame.pc -= 1
        self.push_frame(state, fn, [], -1, None)
        return True

    # -- setjmp/longjmp -------------------------------------------------------------------
    #
    # setjmp is an external call: when it returns, the frame that called it resumes at the
    # instruction after the call with the result in the call's slot. So the continuation is
    # (frame depth, block, index of the next instruction, result slot); setjmp writes it into
    # the jmp_buf (glibc's is 200 bytes; this uses the first 48 of its 64-byte register area),
    # and longjmp pops the frames above that depth and resumes there with the result slot set.
    # A second activation of the same function at the same depth is told apart by the segment
    # of the frame's first alloca (segments are never reused within a path).

    def set_jump(self, state: State, env: Any, ins: Instruction) -> None:
        """Record in the jmp_buf at ``env`` where the current external call (setjmp) returns."""
        frame = state.frame
        token = frame.allocas[0] if frame.allocas else 0
        words = (JMP_BUF_MAGIC, len(state.frames), frame.function.address, frame.block.index,
                 frame.pc, ins.dest + 1, token)
        self.write_bytes(state, env, b"".join(w.to_bytes(8, "little") for w in words))

    def long_jump(self, state: State, env: Any, value: Any) -> None:
        """Resume at the setjmp that filled ``env``, which then returns ``value`` (1 if 0)."""
        words = []
        for i in range(7):
            word = self.read(state, env + 8 * i if type(env) is int else E.add(env, E.const(8 * i, 64)), _WORD)
            words.append(word if type(word) is int else self.concretize(state, word, 64, "jmp_buf"))
        magic, depth, function, block, pc, dest, token = words
        if magic != JMP_BUF_MAGIC:
            self.fail(state, ErrorKind.EXEC, "longjmp with a jmp_buf that setjmp did not fill")
        target = state.frames[depth - 1] if 0 < depth <= len(state.frames) else None
        if (target is None or target.function.address != function
                or (target.allocas[0] if target.allocas else 0) != token):
            self.fail(state, ErrorKind.EXEC,
                      "longjmp to a setjmp whose function has returned (undefined behaviour)")
        while len(state.frames) > depth:
            state.release_frame(state.frames.pop())
        state.frame = target
        if target.parked is not None:  # not expected: a frame calling setjmp is never parked
            target.unpark()
        target.block = target.function.blocks[block]
        target.code = self.code_of(target.function)[block]
        target.pc = pc
        if dest > 0:
            if type(value) is int:
                result: Any = (value & 0xFFFFFFFF) or 1
            else:
                value = V.trunc(value, 32)
                result = E.ite(E.eq(value, E.const(0, 32)), E.const(1, 32), value)
            target.regs[dest - 1] = result

    def ret(self, state: State, value: Any) -> None:
        """Return from the current frame (main's return runs the atexit handlers first; a
        thread's first frame returning ends the thread, see core.scheduling)."""
        if (len(state.frames) == 1 and (state.threads is None or state.threads.current
                                        == state.threads.thread.pid)
                and self.call_exit_handler(state)):
            return
        frame = state.frames.pop()
        state.release_frame(frame)
        if not state.frames:
            if state.threads is not None:
                scheduling.thread_returned(self, state, value)
                return
            state.frame = None  # type: ignore[assignment]  # the path has ended
            code = 0
            if value is not None:
                code = self.concretize(state, value, value.width if type(value) is not int else 32,
                                       "exit code") if type(value) is not int else value
                code &= 0xFF
            raise PathTerminated(PathStatus.COMPLETED, "exit", exit_code=code)
        caller = state.frames[-1]
        state.frame = caller
        if caller.parked is not None:
            caller.unpark()
        if frame.ret_dest >= 0:
            caller.regs[frame.ret_dest] = value

    # -- memory -------------------------------------------------------------------------

    def resolve(self, state: State, address: Any, size: int, what: str) -> tuple[ObjectState, Any]:
        """The object a pointer points into, and the offset (int, or 32-bit expression).
        Errors for null, freed and out-of-bounds pointers; a symbolic pointer that may point
        into several objects forks one state per object (the others re-execute the access).
        An address below or above an object but within its region (:func:`locate`) is
        reported against that object, at a signed offset."""
        if type(address) is int:
            segment, offset = locate(address)
            os = state.objects.get(segment)
            if os is None:
                self.bad_pointer(state, address, size, what)
            if offset < 0 or offset + size > os.obj.size:
                self.fail(state, ErrorKind.PTR, _out_of_bounds(what, size, offset, os.obj))
            return os, offset
        value = self.get_value(state, address)
        segment, value_offset = locate(value)
        os = state.objects.get(segment)
        in_segment = E.eq(E.extract(E.add(address, E.const(SEGMENT_HALF, 64)), SEGMENT_SHIFT,
                                    64 - SEGMENT_SHIFT),
                          E.const(segment, 64 - SEGMENT_SHIFT))
        if os is None:
            state.add_constraint(in_segment)
            self.bad_pointer(state, value, size, what)
        base = os.obj.address
        offset64 = E.sub(address, E.const(base, 64))
        if os.obj.size >= size:
            in_bounds = E.ule(offset64, E.const(os.obj.size - size, 64))
        else:
            in_bounds = E.FALSE
        in_bounds = self.simplify(state, in_bounds)
        if in_bounds.op is not E.Op.CONST and self.forks_exhausted():
            if not self.follow_model(state, in_bounds):
                state.add_constraint(in_segment)
                self.fail(state, ErrorKind.PTR, _out_of_bounds(what, size, value_offset, os.obj))
            return os, V.simplify(E.extract(offset64, 0, 32))
        seeded_sides = self.seeded_sides(state, in_bounds)
        if seeded_sides is not None and seeded_sides[0] is not NO_MODEL:
            if_in, if_out = seeded_sides  # the seed points here; elsewhere waits unchecked
        else:
            seeded_sides = None
            if_in, if_out = self.split(state, in_bounds)
        if if_in is None:
            state.add_constraint(in_segment)
            self.fail(state, ErrorKind.PTR, _out_of_bounds(what, size, value_offset, os.obj))
        if if_out is not None:
            # the child tries the access again, under "not in this object"
            child = self.fork_to_retry(state, in_bounds, ForkKind.POINTER, if_in, if_out)
            if seeded_sides is not None:
                child.unchecked = ()
        offset = V.simplify(E.extract(offset64, 0, 32))
        if self.max_sym_array_size and os.obj.size > self.max_sym_array_size:
            # KLEE's --max-sym-array-size: a symbolic offset into a big object (a hash table
            # at hash(key)) makes every later query reason about the whole object
            offset = self.concretize_inputs(
                state, offset, 32,
                f"offset into a {os.obj.size:,}-byte object (with the inputs it is computed from)")
        return os, offset

    def concretize_inputs(self, state: State, value: Any, width: int, why: str) -> int:
        """Fix a symbolic value by fixing the input bytes it is computed from to their values
        in the state's inputs (recorded as constraints, one value asked per byte, so a
        recorded tree replays them), then :meth:`concretize` whatever is left symbolic.

        Fixing ``hash(key) & mask`` itself, as KLEE does, leaves a hash preimage problem in
        every later query about the key's bytes (memcached's keys after murmur3: each such
        query took seconds, and a run's tests could not be solved); fixing the key's bytes
        leaves equalities the path's simplification substitutes. Both keep only one of the
        value's possibilities; this one also keeps only one key giving it."""
        value = self._settled(state, value)
        if type(value) is int:
            return value
        read = E.Op.READ
        for node in E.postorder([value]):
            if (node.op is read and node.updates.head is None  # type: ignore[union-attr]
                    and node.args[0].op is E.Op.CONST):
                byte = self.get_value(state, node)
                state.add_constraint(E.eq(E.const(byte, 8), node), model=state.model)
        fixed = self.simplify(state, value)
        if fixed.op is not E.Op.CONST:
            return self.concretize(state, fixed, width, why)
        self.shortfalls.add(ShortfallKind.CONCRETIZED, why, self.program_site(state))
        return fixed.value

    def bad_pointer(self, state: State, address: int, size: int, what: str) -> NoReturn:
        """Report an access through a pointer that points into no live object."""
        segment, offset = locate(address)
        freed = state.freed.get(segment)
        noun = f"{size} byte{'s' if size != 1 else ''}"
        if freed is not None:
            gone = "out of scope" if freed.kind is ObjectKind.STACK else "freed"
            self.fail(state, ErrorKind.PTR,
                      f"use after free: {what} of {noun} at offset {offset} of a "
                      f"{gone} {freed.describe()}")
        if segment == 0:
            self.fail(state, ErrorKind.PTR, f"null pointer {what} of {noun}"
                      + (f" at address 0x{address:x}" if address else ""))
        if address in self.program.functions_by_address:
            self.fail(state, ErrorKind.PTR, f"{what} of {noun} at the address of a function")
        self.fail(state, ErrorKind.PTR, f"{what} of {noun} at invalid address 0x{address:x}")

    def read(self, state: State, address: Any, access: Access) -> Any:
        """Load a value. A naturally aligned 2- to 16-byte load that starts inside an object
        and runs past its end reads the bytes past the end as 0 (:meth:`partial_load`)."""
        size = access.size
        if type(address) is int and size in _PARTIAL_LOAD_SIZES and not address % size:
            os = state.objects.get(address >> SEGMENT_SHIFT)
            if os is not None and os.obj.address <= address < os.obj.address + os.obj.size < address + size:
                data = self.partial_load(state, os, address - os.obj.address, size)
            else:
                data = self.read_bytes(state, address, size)
        else:
            data = self.read_bytes(state, address, size)
        try:
            return decode(data, access)
        except SymbolicFloat as exc:
            raise PathTerminated(PathStatus.PARTIAL, f"unsupported: {exc}") from None

    def partial_load(self, state: State, os: ObjectState, offset: int, size: int) -> list[Any]:
        """The in-bounds bytes of an aligned load that crosses an object's end, then zeros.

        Word-at-a-time searches (gnulib's ``rawmemchr``, ``memchr2``, ``strchrnul``) read
        whole aligned words and stop at the first matching byte, which lies inside the
        object: natively the word never crosses a page, so the read cannot fault and the
        result does not depend on the bytes past the end. Reporting it would be a false
        alarm (valgrind accepts such loads by default, ``--partial-loads-ok``); the bytes
        past the end read as 0, one of the values they can have natively, and the run's
        shortfalls count it. AddressSanitizer does report these loads."""
        self.shortfalls.add(ShortfallKind.PARTIAL_LOAD, f"{size}-byte read", self.program_site(state))
        inside = os.obj.size - offset
        return self.read_bytes(state, os.obj.address + offset, inside) + [0] * (size - inside)

    def write(self, state: State, address: Any, access: Access, value: Any) -> None:
        """Store a value."""
        try:
            data = encode(value, access)
        except SymbolicFloat as exc:
            raise PathTerminated(PathStatus.PARTIAL, f"unsupported: {exc}") from None
        self.write_bytes(state, address, data)

    def read_bytes(self, state: State, address: Any, size: int) -> list[Any]:
        """``size`` raw bytes (ints or 8-bit expressions)."""
        if size == 0:
            return []
        os, offset = self.resolve(state, address, size, "read")
        if type(offset) is int:
            return os.read_bytes(offset, size)
        os = state.writable(os)
        os.to_array_mode(state.next_array_name(f"mem{os.obj.segment}"))
        return [V.simplify(b) for b in os.read_symbolic(offset, size)]

    def write_bytes(self, state: State, address: Any, data: list[Any] | bytes) -> None:
        """Raw bytes."""
        if not data:
            return
        os, offset = self.resolve(state, address, len(data), "write")
        if os.obj.read_only:
            self.fail(state, ErrorKind.READONLY, f"write to read-only {os.obj.describe()}")
        os = state.writable(os)
        if type(offset) is int:
            os.write_bytes(offset, data)
        else:
            os.to_array_mode(state.next_array_name(f"mem{os.obj.segment}"))
            os.write_symbolic(offset, list(data))

    def read_c_string(self, state: State, address: Any, limit: int = 1 << 16) -> bytes:
        """A NUL-terminated string with concrete bytes (symbolic bytes are concretized)."""
        out = bytearray()
        if type(address) is not int:
            address = self.concretize(state, address, 64, "string address")
        while len(out) < limit:
            b = self.read_bytes(state, address + len(out), 1)[0]
            if type(b) is not int:
                b = self.concretize(state, b, 8, "string byte")
            if b == 0:
                break
            out.append(b)
        return bytes(out)

    def allocate(self, state: State, size: int, kind: ObjectKind, name: str, site: str = "") -> int:
        """A fresh zero-filled object; its address (``site``: where the program made it)."""
        return state.allocate(size, kind, name, site=site).obj.address

    def free(self, state: State, address: Any) -> None:
        """free(): release a heap object, or report an invalid/double free."""
        if type(address) is not int:
            address = self.concretize(state, address, 64, "pointer passed to free")
        if address == 0:
            return
        segment, offset = locate(address)
        os = state.objects.get(segment)
        if os is None:
            freed = state.freed.get(segment)
            if freed is not None and freed.kind is ObjectKind.HEAP and offset == 0:
                self.fail(state, ErrorKind.FREE, f"double free of a {freed.describe()}")
            self.fail(state, ErrorKind.FREE, f"free of invalid pointer 0x{address:x}")
        if os.obj.kind is not ObjectKind.HEAP:
            self.fail(state, ErrorKind.FREE, f"free of a {os.obj.describe()} (not allocated by malloc)")
        if offset:
            self.fail(state, ErrorKind.FREE,
                      f"free of a pointer to offset {offset} of a {os.obj.describe()}")
        state.release(segment)


# ---------------------------------------------------------------------------------------------
# Closure builders. Each returns step(state, frame, regs).

Builder = Callable[[Executor, Function, list, Instruction], Any]
_BUILDERS: dict[Opcode, Builder] = {}


def _builds(*opcodes: Opcode) -> Callable[[Builder], Builder]:
    def register(fn: Builder) -> Builder:
        for op in opcodes:
            _BUILDERS[op] = fn
        return fn
    return register


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


def _where(ins: Instruction) -> str:
    if ins.location is not None:
        return f"{ins.location.file}:{ins.location.line}"
    return "no source location"


def _unsupported_step(reason: str) -> Any:
    def step(state: State, frame: Frame, regs: list) -> None:
        raise PathTerminated(PathStatus.PARTIAL, f"unsupported: {reason}")
    return step


#: load sizes :meth:`Executor.partial_load` accepts past an object's end when aligned
#: (the word sizes of word-at-a-time string code, vector registers included)
_PARTIAL_LOAD_SIZES = frozenset({2, 4, 8, 16})


def _out_of_bounds(what: str, size: int, offset: int, obj: MemoryObject) -> str:
    noun = f"{size} byte{'s' if size != 1 else ''}"
    return f"out-of-bounds {what} of {noun} at offset {offset} of a {obj.describe()}"


def _elementwise(count: int, fn: Callable[..., Any], *vectors: Any) -> tuple:
    return tuple(fn(*[v[i] for v in vectors]) for i in range(count))


_BINARY_NAMES = {
    Opcode.ADD: "add", Opcode.SUB: "sub", Opcode.MUL: "mul", Opcode.UDIV: "udiv",
    Opcode.SDIV: "sdiv", Opcode.UREM: "urem", Opcode.SREM: "srem", Opcode.AND: "and",
    Opcode.OR: "or", Opcode.XOR: "xor", Opcode.SHL: "shl", Opcode.LSHR: "lshr",
    Opcode.ASHR: "ashr",
}
_DIVISIONS = {Opcode.UDIV, Opcode.SDIV, Opcode.UREM, Opcode.SREM}
_SHIFTS = {Opcode.SHL, Opcode.LSHR, Opcode.ASHR}


@_builds(*_BINARY_NAMES)
def _build_binary(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    name = _BINARY_NAMES[ins.opcode]
    d = ins.dest
    a, b = ins.operands
    w = ins.width
    mask = (1 << w) - 1
    concrete = V.CONCRETE_BINARY[name]
    symbolic = V.SYMBOLIC_BINARY[name]
    count = ins.aux
    is_div = ins.opcode in _DIVISIONS
    is_shift = ins.opcode in _SHIFTS
    what = "remainder" if ins.opcode in (Opcode.UREM, Opcode.SREM) else "division"

    def scalar(state: State, x: Any, y: Any) -> Any:
        if is_div:
            if type(y) is int:
                if y == 0:
                    ex.fail(state, ErrorKind.DIV, f"{what} by zero")
            else:
                ex.check_fault(state, E.eq(E.const(0, w), y), ErrorKind.DIV, f"{what} by zero")
        elif is_shift:
            if type(y) is int:
                if y >= w:
                    ex.fail(state, ErrorKind.OVERSHIFT,
                            f"shift by {y}, which is not less than the width {w}")
            else:
                ex.check_fault(state, E.uge(y, E.const(w, w)), ErrorKind.OVERSHIFT,
                               f"shift by an amount that can be {w} or more (the width)")
        if type(x) is int and type(y) is int:
            return concrete(x, y, w)
        return V.simplify(symbolic(V.as_expr(x, w), V.as_expr(y, w)))

    if count:
        def vector_step(state: State, frame: Frame, regs: list) -> None:
            x, y = regs[a], regs[b]
            regs[d] = tuple(scalar(state, x[i], y[i]) for i in range(count))
        return vector_step

    if ins.opcode is Opcode.ADD:
        def add_step(state: State, frame: Frame, regs: list) -> None:
            x = regs[a]
            y = regs[b]
            if type(x) is int and type(y) is int:
                regs[d] = (x + y) & mask
            else:
                regs[d] = V.simplify(E.add(V.as_expr(x, w), V.as_expr(y, w)))
        return add_step
    if ins.opcode is Opcode.SUB:
        def sub_step(state: State, frame: Frame, regs: list) -> None:
            x = regs[a]
            y = regs[b]
            if type(x) is int and type(y) is int:
                regs[d] = (x - y) & mask
            else:
                regs[d] = V.simplify(E.sub(V.as_expr(x, w), V.as_expr(y, w)))
        return sub_step
    if is_div or is_shift:
        def checked_step(state: State, frame: Frame, regs: list) -> None:
            regs[d] = scalar(state, regs[a], regs[b])
        return checked_step

    def step(state: State, frame: Frame, regs: list) -> None:
        x = regs[a]
        y = regs[b]
        if type(x) is int and type(y) is int:
            regs[d] = concrete(x, y, w)
        else:
            regs[d] = V.simplify(symbolic(V.as_expr(x, w), V.as_expr(y, w)))
    return step


@_builds(Opcode.ICMP)
def _build_icmp(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    a, b = ins.operands
    w = ins.width
    predicate, count = ins.aux
    concrete = V.CONCRETE_COMPARE[predicate]
    symbolic = V.SYMBOLIC_COMPARE[predicate]
    if count:
        def vector_step(state: State, frame: Frame, regs: list) -> None:
            regs[d] = _elementwise(count, lambda x, y: V.compare(predicate, x, y, w), regs[a], regs[b])
        return vector_step

    def step(state: State, frame: Frame, regs: list) -> None:
        x = regs[a]
        y = regs[b]
        if type(x) is int and type(y) is int:
            regs[d] = 1 if concrete(x, y, w) else 0
        else:
            regs[d] = V.simplify(symbolic(V.as_expr(x, w), V.as_expr(y, w)))

    literal = fn.template[b]
    if type(literal) is int and ex.memos:
        # a comparison with a literal (the template holds constants only: nothing writes
        # them): its expression is made once, not on every symbolic comparison
        literal_expr = E.const(literal, w)

        done: dict[E.Expr, Any] = {}  # symbolic operands and results (see _build_int_cast)

        def literal_step(state: State, frame: Frame, regs: list) -> None:
            x = regs[a]
            if type(x) is int:
                regs[d] = 1 if concrete(x, literal, w) else 0
                return
            found = done.get(x)
            if found is None:
                if len(done) >= SITE_MEMO_LIMIT:
                    done.clear()
                found = done[x] = V.simplify(symbolic(x, literal_expr))
            regs[d] = found
        return literal_step
    return step


@_builds(Opcode.SELECT)
def _build_select(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    c, t, f = ins.operands
    w = ins.width
    count = ins.aux

    def step(state: State, frame: Frame, regs: list) -> None:
        cond = regs[c]
        if count:
            regs[d] = _elementwise(count, lambda k, x, y: _select_value(k, x, y, w), cond, regs[t], regs[f])
        else:
            regs[d] = _select_value(cond, regs[t], regs[f], w)
    return step


def _select_value(cond: Any, then: Any, else_: Any, width: int) -> Any:
    if type(cond) is int:
        return then if cond else else_
    if type(then) is float or type(else_) is float or type(then) is tuple:
        raise PathTerminated(PathStatus.PARTIAL,
                             "unsupported: select between non-integer values on a symbolic condition")
    return V.select(cond, then, else_, width)


# -- floats -------------------------------------------------------------------------------------

def _float_value(value: Any) -> float:
    if type(value) is float:
        return value
    if type(value) is int:
        return float(value)
    raise PathTerminated(PathStatus.PARTIAL,
                         "unsupported: floating-point operation on a symbolic value")


def _round_float(value: float, kind: str) -> float:
    if kind == "float":
        try:
            return struct.unpack("<f", struct.pack("<f", value))[0]
        except OverflowError:
            return math.copysign(math.inf, value)
    return value


def _fdiv(x: float, y: float) -> float:
    try:
        return x / y
    except ZeroDivisionError:
        if x == 0 or math.isnan(x):
            return math.nan
        return math.copysign(math.inf, x) * math.copysign(1.0, y)


_FLOAT_OPS: dict[Opcode, Callable[[float, float], float]] = {
    Opcode.FADD: lambda x, y: x + y,
    Opcode.FSUB: lambda x, y: x - y,
    Opcode.FMUL: lambda x, y: x * y,
    Opcode.FDIV: _fdiv,
    Opcode.FREM: lambda x, y: math.fmod(x, y) if y != 0 and not math.isinf(x) else math.nan,
}


@_builds(*_FLOAT_OPS, Opcode.FNEG)
def _build_float(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    kind = ins.aux
    if ins.opcode is Opcode.FNEG:
        (a,) = ins.operands

        def neg_step(state: State, frame: Frame, regs: list) -> None:
            regs[d] = -_float_value(regs[a])
        return neg_step
    a, b = ins.operands
    op = _FLOAT_OPS[ins.opcode]

    def step(state: State, frame: Frame, regs: list) -> None:
        try:
            result = op(_float_value(regs[a]), _float_value(regs[b]))
        except OverflowError:
            result = math.inf
        regs[d] = _round_float(result, kind)
    return step


_FCMP: dict[str, Callable[[float, float], bool]] = {
    "false": lambda x, y: False, "true": lambda x, y: True,
    "oeq": lambda x, y: x == y, "ogt": lambda x, y: x > y, "oge": lambda x, y: x >= y,
    "olt": lambda x, y: x < y, "ole": lambda x, y: x <= y,
    "one": lambda x, y: x != y and not (math.isnan(x) or math.isnan(y)),
    "ord": lambda x, y: not (math.isnan(x) or math.isnan(y)),
    "uno": lambda x, y: math.isnan(x) or math.isnan(y),
    "ueq": lambda x, y: x == y or math.isnan(x) or math.isnan(y),
    "ugt": lambda x, y: not (x <= y), "uge": lambda x, y: not (x < y),
    "ult": lambda x, y: not (x >= y), "ule": lambda x, y: not (x > y),
    "une": lambda x, y: x != y,
}


@_builds(Opcode.FCMP)
def _build_fcmp(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    a, b = ins.operands
    predicate = _FCMP[ins.aux[0]]

    def step(state: State, frame: Frame, regs: list) -> None:
        regs[d] = 1 if predicate(_float_value(regs[a]), _float_value(regs[b])) else 0
    return step


_FLOAT_MATH: dict[str, Callable[..., float]] = {
    "fabs": abs, "sqrt": lambda x: math.sqrt(x) if x >= 0 else math.nan, "floor": math.floor,
    "ceil": math.ceil, "trunc": math.trunc, "round": lambda x: float(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1),
    "roundeven": round, "rint": round, "nearbyint": round, "fmuladd": lambda a, b, c: a * b + c,
    "fma": lambda a, b, c: a * b + c, "copysign": math.copysign, "minnum": min, "maxnum": max,
    "minimum": min, "maximum": max, "pow": math.pow, "exp": math.exp, "exp2": lambda x: 2.0 ** x,
    "log": math.log, "log2": math.log2, "log10": math.log10, "sin": math.sin, "cos": math.cos,
    "powi": lambda x, n: x ** V.signed(n, 32) if isinstance(n, int) else x ** n,
}


@_builds(Opcode.FLOATMATH)
def _build_float_math(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    name, kind = ins.aux
    operands = ins.operands
    if name in ("lround", "llround", "lrint", "llrint"):
        w = ins.width

        def to_int_step(state: State, frame: Frame, regs: list) -> None:
            x = _float_value(regs[operands[0]])
            regs[d] = int(math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)) & ((1 << w) - 1)
        return to_int_step
    op = _FLOAT_MATH[name]

    def step(state: State, frame: Frame, regs: list) -> None:
        args = [regs[s] if name == "powi" and i == 1 else _float_value(regs[s])
                for i, s in enumerate(operands)]
        try:
            result = float(op(*args))
        except (ValueError, OverflowError):
            result = math.nan
        regs[d] = _round_float(result, kind)
    return step


# -- casts --------------------------------------------------------------------------------------

@_builds(Opcode.TRUNC, Opcode.ZEXT, Opcode.SEXT, Opcode.PTRTOINT, Opcode.INTTOPTR)
def _build_int_cast(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    (a,) = ins.operands
    info = ins.aux
    fw, tw = info.from_bits, info.to_bits
    op = ins.opcode
    if op is Opcode.TRUNC:
        mask = (1 << tw) - 1

        def cast(v: Any) -> Any:
            return v & mask if type(v) is int else V.trunc(v, tw)
    elif op is Opcode.ZEXT:
        def cast(v: Any) -> Any:
            return v if type(v) is int else V.zext(v, tw)
    elif op is Opcode.SEXT:
        def cast(v: Any) -> Any:
            return V.sext(v, fw, tw)
    else:
        def cast(v: Any) -> Any:
            return V.resize(v, fw, tw)
    count = info.count
    if count:
        def vector_step(state: State, frame: Frame, regs: list) -> None:
            regs[d] = tuple(cast(v) for v in regs[a])
        return vector_step

    # symbolic operands and their results: a loop casts the same symbolic bytes on every
    # iteration (expressions are interned and casts pure: the same input, the same result)
    done: dict[E.Expr, Any] = {}
    if not ex.memos:
        def plain_step(state: State, frame: Frame, regs: list) -> None:
            regs[d] = cast(regs[a])
        return plain_step

    def step(state: State, frame: Frame, regs: list) -> None:
        v = regs[a]
        if type(v) is int:
            regs[d] = cast(v)
            return
        found = done.get(v)
        if found is None:
            if len(done) >= SITE_MEMO_LIMIT:
                done.clear()
            found = done[v] = cast(v)
        regs[d] = found
    return step


@_builds(Opcode.BITCAST)
def _build_bitcast(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    (a,) = ins.operands
    info = ins.aux
    source, target = info.from_access, info.to_access
    if source is None or target is None:
        return _unsupported_step(f"bitcast in '{ins.text}'")

    def step(state: State, frame: Frame, regs: list) -> None:
        try:
            regs[d] = decode(encode(regs[a], source), target)
        except SymbolicFloat as exc:
            raise PathTerminated(PathStatus.PARTIAL, f"unsupported: {exc}") from None
    return step


@_builds(Opcode.FPCAST, Opcode.FPTOUI, Opcode.FPTOSI, Opcode.UITOFP, Opcode.SITOFP)
def _build_float_cast(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    (a,) = ins.operands
    info = ins.aux
    fw, tw = info.from_bits, info.to_bits
    op = ins.opcode
    kind = "float" if tw == 32 else "double"

    def step(state: State, frame: Frame, regs: list) -> None:
        v = regs[a]
        if op is Opcode.FPCAST:
            regs[d] = _round_float(_float_value(v), kind)
        elif op is Opcode.FPTOUI or op is Opcode.FPTOSI:
            x = _float_value(v)
            regs[d] = (int(x) if math.isfinite(x) else 0) & ((1 << tw) - 1)
        else:
            if type(v) is not int:
                # no floating-point theory yet (issue 29): the path goes on with the integer
                # fixed to one of its values, a shortfall messages.txt counts, rather than ending
                v = ex.concretize(state, v, fw, "integer converted to floating point")
            regs[d] = _round_float(float(V.signed(v, fw) if op is Opcode.SITOFP else v), kind)
    return step


@_builds(Opcode.COPY)
def _build_copy(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    (a,) = ins.operands[:1]

    def step(state: State, frame: Frame, regs: list) -> None:
        regs[d] = regs[a]
    return step


# -- memory -------------------------------------------------------------------------------------

@_builds(Opcode.ALLOCA)
def _build_alloca(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    (c,) = ins.operands
    element_size, _align, variable, site = ins.aux

    def step(state: State, frame: Frame, regs: list) -> None:
        count = regs[c]
        if type(count) is not int:
            # a variable-length array of symbolic length: a few lengths, a path each
            count = fix_allocation_size(ex, state, count, "variable-length array size")
        os = state.allocate(count * element_size, ObjectKind.STACK, variable, site=site)
        frame.allocas += (os.obj.segment,)
        regs[d] = os.obj.address
    return step


@_builds(Opcode.LOAD)
def _build_load(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    (p,) = ins.operands
    access: Access = ins.aux
    size = access.size
    if access.kind is ValueKind.INT or access.kind is ValueKind.PTR:
        full = access.bits == size * 8
        mask = (1 << access.bits) - 1
        unpack = int_reader(size)

        def int_step(state: State, frame: Frame, regs: list) -> None:
            pointer = regs[p]
            if type(pointer) is int:
                os = state.objects.get(pointer >> SEGMENT_SHIFT)
                offset = pointer & OFFSET_MASK
                if os is not None and offset + size <= os.obj.size:
                    if os.flat:
                        value = unpack(os.data, offset)[0]  # type: ignore[arg-type]  # flat: data
                        regs[d] = value if full else value & mask
                        return
                    sym = os.sym
                    if sym is not None and os.data is not None and os.updates is None:
                        # concrete bytes of an object holding symbolic ones elsewhere (a
                        # stream's counters beside its buffer of input)
                        for at in range(offset, offset + size):
                            if at in sym:
                                break
                        else:
                            value = unpack(os.data, offset)[0]
                            regs[d] = value if full else value & mask
                            return
            regs[d] = ex.read(state, pointer, access)

        if size == 1 and full:
            def byte_step(state: State, frame: Frame, regs: list) -> None:
                # one byte, concrete or symbolic (a symbolic string's characters): the
                # byte's own value, with no decoding
                pointer = regs[p]
                if type(pointer) is int:
                    os = state.objects.get(pointer >> SEGMENT_SHIFT)
                    offset = pointer & OFFSET_MASK
                    if os is not None and offset < os.obj.size:
                        regs[d] = os.read_byte(offset)
                        return
                regs[d] = ex.read(state, pointer, access)
            return byte_step
        return int_step

    def step(state: State, frame: Frame, regs: list) -> None:
        regs[d] = ex.read(state, regs[p], access)
    return step


@_builds(Opcode.STORE)
def _build_store(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    v, p = ins.operands
    access: Access = ins.aux
    size = access.size
    if access.kind is ValueKind.INT or access.kind is ValueKind.PTR:
        pack = int_writer(size)

        def int_step(state: State, frame: Frame, regs: list) -> None:
            pointer = regs[p]
            value = regs[v]
            if type(pointer) is int and type(value) is int:
                os = state.objects.get(pointer >> SEGMENT_SHIFT)
                offset = pointer & OFFSET_MASK
                if (os is not None and os.owner is state.cow and os.flat
                        and offset + size <= os.obj.size and not os.obj.read_only):
                    pack(os.data, offset, value)  # type: ignore[arg-type]  # flat: data
                    return
            ex.write(state, pointer, access, value)
        return int_step

    def step(state: State, frame: Frame, regs: list) -> None:
        ex.write(state, regs[p], access, regs[v])
    return step


@_builds(Opcode.GEP)
def _build_gep(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    (b,) = ins.operands
    const_offset, dynamic = ins.aux
    if not dynamic:
        def const_step(state: State, frame: Frame, regs: list) -> None:
            base = regs[b]
            if type(base) is int:
                regs[d] = (base + const_offset) & POINTER_MASK
            else:
                regs[d] = V.simplify(E.add(E.const(const_offset & POINTER_MASK, 64), base))
        return const_step

    def step(state: State, frame: Frame, regs: list) -> None:
        base = regs[b]
        offset: Any = const_offset
        for slot, stride, bits in dynamic:
            index = regs[slot]
            if type(index) is int and type(offset) is int:
                offset += V.signed(index, bits) * stride
            else:
                term = E.mul(E.const(stride & POINTER_MASK, 64),
                             V.as_expr(V.sext(index, bits, 64) if bits < 64 else index, 64))
                offset = E.add(V.as_expr(offset & POINTER_MASK if type(offset) is int else offset, 64), term)
        if type(base) is int and type(offset) is int:
            regs[d] = (base + offset) & POINTER_MASK
        else:
            regs[d] = V.simplify(E.add(V.as_expr(offset & POINTER_MASK if type(offset) is int else offset, 64),
                                       V.as_expr(base, 64)))
    return step


@_builds(Opcode.MEMCPY, Opcode.MEMMOVE)
def _build_memcpy(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    dst, src, n = ins.operands

    def step(state: State, frame: Frame, regs: list) -> None:
        count = regs[n]
        if type(count) is not int:
            count = ex.concretize(state, count, count.width, "memcpy length")
        if count:
            ex.write_bytes(state, regs[dst], ex.read_bytes(state, regs[src], count))
    return step


@_builds(Opcode.MEMSET)
def _build_memset(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    dst, val, n = ins.operands

    def step(state: State, frame: Frame, regs: list) -> None:
        count = regs[n]
        if type(count) is not int:
            count = ex.concretize(state, count, count.width, "memset length")
        if count:
            value = regs[val]
            data: Any = bytes([value]) * count if type(value) is int else [value] * count
            ex.write_bytes(state, regs[dst], data)
    return step


# -- aggregates and vectors --------------------------------------------------------------------

def _zero_value(access: Access) -> Any:
    if access.kind is ValueKind.VECTOR or access.kind is ValueKind.AGGREGATE:
        return tuple(_zero_value(part) for _, part in access.parts)
    if access.kind is ValueKind.FLOAT:
        return 0.0
    return 0


@_builds(Opcode.EXTRACTVALUE)
def _build_extractvalue(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    a = ins.operands[0]
    indices = ins.aux

    def step(state: State, frame: Frame, regs: list) -> None:
        value = regs[a]
        for i in indices:
            value = value[i] if type(value) is tuple else 0
        regs[d] = value
    return step


@_builds(Opcode.INSERTVALUE)
def _build_insertvalue(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    a, v = ins.operands[:2]
    indices, access = ins.aux

    def insert(aggregate: Any, part: Access, path: tuple[int, ...], value: Any) -> Any:
        if type(aggregate) is not tuple:
            aggregate = _zero_value(part)
        items = list(aggregate)
        i = path[0]
        if len(path) == 1:
            items[i] = value
        else:
            items[i] = insert(items[i], part.parts[i][1], path[1:], value)
        return tuple(items)

    def step(state: State, frame: Frame, regs: list) -> None:
        regs[d] = insert(regs[a], access, indices, regs[v])
    return step


def _vector_index(ex: Executor, state: State, index: Any, count: int) -> int:
    if type(index) is not int:
        index = ex.concretize(state, index, index.width, "vector index")
    if index >= count:
        raise PathTerminated(PathStatus.PARTIAL, "unsupported: vector index out of range (poison)")
    return index


@_builds(Opcode.EXTRACTELEMENT)
def _build_extractelement(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    a, i = ins.operands

    def step(state: State, frame: Frame, regs: list) -> None:
        vector = regs[a]
        regs[d] = vector[_vector_index(ex, state, regs[i], len(vector))]
    return step


@_builds(Opcode.INSERTELEMENT)
def _build_insertelement(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    a, v, i = ins.operands

    def step(state: State, frame: Frame, regs: list) -> None:
        vector = regs[a]
        if type(vector) is not tuple:
            raise PathTerminated(PathStatus.PARTIAL, "unsupported: insertelement into a non-vector value")
        items = list(vector)
        items[_vector_index(ex, state, regs[i], len(items))] = regs[v]
        regs[d] = tuple(items)
    return step


@_builds(Opcode.SHUFFLEVECTOR)
def _build_shuffle(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    a, b = ins.operands
    mask = ins.aux

    def step(state: State, frame: Frame, regs: list) -> None:
        x, y = regs[a], regs[b]
        if type(x) is not tuple:
            x = (0,) * len(y) if type(y) is tuple else (0,)
        if type(y) is not tuple:
            y = (0,) * len(x)
        both = x + y
        regs[d] = tuple(both[m] if m >= 0 else 0 for m in mask)
    return step


# -- control flow -------------------------------------------------------------------------------

@_builds(Opcode.BR)
def _build_br(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    edge = ins.aux
    target = edge.target
    moves = edge.moves
    block = fn.blocks[target]
    covered = None

    def step(state: State, frame: Frame, regs: list) -> None:
        nonlocal covered
        if moves:
            if len(moves) == 1:
                dd, s = moves[0]
                regs[dd] = regs[s]
            else:
                values = [regs[s] for _, s in moves]
                for (dd, _), value in zip(moves, values):
                    regs[dd] = value
        frame.block = block
        frame.code = fcode[target]
        frame.pc = 0
        if covered is None:
            covered = ex.coverage[fn.name]
        if not covered[target]:
            ex.reach_new_block(state, fn, target)

    if ex.track_path_blocks:
        key = (fn.name, target)

        def tracking_step(state: State, frame: Frame, regs: list) -> None:
            step(state, frame, regs)
            state.blocks.add(key)  # type: ignore[union-attr]  # tracked: a set
        return tracking_step
    return step


@_builds(Opcode.CONDBR)
def _build_condbr(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    (c,) = ins.operands
    true_edge, false_edge = ins.aux
    jump = ex.jump
    slots = ex.coverage_map.outcome_slots(fn, ins)

    def uncounted_step(state: State, frame: Frame, regs: list) -> None:
        cond = regs[c]
        if type(cond) is int:
            jump(state, frame, true_edge if cond else false_edge, fcode)
        else:
            ex.branch(state, frame, cond, true_edge, false_edge, fcode)
    if slots is None:
        return uncounted_step
    outcomes, on_true, block = slots
    on_false = on_true + 1
    # the branch is its block's terminator: once both outcomes are covered, this closure puts
    # the uncounted one in its place, so hot covered branches pay nothing for coverage (unless
    # something else took its place: a chain entering at a block made of the branch alone)
    position = len(fn.blocks[block].instructions) - 1
    take = ex.coverage_map.take_outcome

    def retire() -> None:
        if outcomes[on_true] and outcomes[on_false] and fcode[block][position] is step:
            fcode[block][position] = uncounted_step

    def step(state: State, frame: Frame, regs: list) -> None:
        cond = regs[c]
        if type(cond) is int:
            if cond:
                if not outcomes[on_true]:
                    take(fn, on_true)
                    retire()
                jump(state, frame, true_edge, fcode)
            else:
                if not outcomes[on_false]:
                    take(fn, on_false)
                    retire()
                jump(state, frame, false_edge, fcode)
        else:
            try:
                ex.branch(state, frame, cond, true_edge, false_edge, fcode, outcomes, on_true)
            finally:
                retire()
    return step


@_builds(Opcode.SWITCH)
def _build_switch(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    (c,) = ins.operands
    w = ins.width
    default, cases = ins.aux
    slots = ex.coverage_map.outcome_slots(fn, ins)
    outcomes, base, _ = slots if slots is not None else (None, 0, 0)
    # the outcome slot of every target block (successor order: default, then case targets)
    slot_of = {target: base + k for k, target in enumerate(successor_targets(ins))}
    take = ex.take_outcome
    take_first = ex.coverage_map.take_outcome
    table: dict[int, tuple[Edge, int]] = {}
    for value, edge in cases:
        table.setdefault(value, (edge, slot_of[edge.target]))
    to_default = (default, slot_of[default.target])
    # distinct targets in case order, each with the values that lead there (for symbolic forks)
    targets: dict[int, tuple[Edge, list[int]]] = {}
    for value, edge in cases:
        targets.setdefault(edge.target, (edge, []))[1].append(value)

    def step(state: State, frame: Frame, regs: list) -> None:
        cond = regs[c]
        if type(cond) is int:
            edge, slot = table.get(cond, to_default)
            if outcomes is not None and not outcomes[slot]:
                take_first(fn, slot)
            ex.jump(state, frame, edge, fcode)
            return
        options: list[tuple[Edge, E.Expr]] = []
        not_any: E.Expr = E.TRUE
        for edge, values in targets.values():
            if edge.target == default.target:
                continue
            hit: E.Expr = E.FALSE
            for value in values:
                is_value = E.eq(E.const(value, w), cond)
                hit = E.bool_or(hit, is_value)
                not_any = E.bool_and(not_any, E.bool_not(is_value))
            options.append((edge, hit))
        options.append((default, not_any))
        if ex.forks_exhausted():
            # no forking: the one option the state's model satisfies
            chosen = ex.choose_option(state, [ex.simplify(state, hit) for _, hit in options])
            edge = options[chosen][0]
            take(fn, outcomes, slot_of[edge.target])
            ex.jump(state, frame, edge, fcode)
            return
        feasible = [(index, edge, hit) for index, (edge, hit) in enumerate(options)
                    if ex.evaluate(state, hit) is not Validity.FALSE]
        if len(feasible) == 1:
            _, edge, hit = feasible[0]
            take(fn, outcomes, slot_of[edge.target])
            ex.jump(state, frame, edge, fcode)
            return
        # fork every sibling before any of them takes its constraint; each state's decision
        # is the index of its option (case targets in order, then the default)
        states = [state] + [ex.fork(state) for _ in feasible[1:]]
        for (index, _, hit), target_state in zip(feasible, states):
            target_state.add_constraint(hit)
            target_state.decide(index)
            target_state.depth += 1
        ex.record_fork(ForkKind.SWITCH, cond, states)
        for (_, edge, _), target_state in zip(feasible, states):
            take(fn, outcomes, slot_of[edge.target])
            ex.jump(target_state, target_state.frame, edge, fcode)
        raise Forked()
    return step


@_builds(Opcode.INDIRECTBR)
def _build_indirectbr(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    (a,) = ins.operands
    edges = ins.aux
    by_block = {edge.target: edge for edge in edges}

    def step(state: State, frame: Frame, regs: list) -> None:
        address = regs[a]
        if type(address) is not int:
            address = ex.concretize(state, address, 64, "indirectbr address")
        target = (address & OFFSET_MASK) - 1
        edge = by_block.get(target)
        if edge is None or (address >> SEGMENT_SHIFT) != (fn.address >> SEGMENT_SHIFT):
            ex.fail(state, ErrorKind.PTR, f"indirectbr to an invalid block address 0x{address:x}")
        ex.jump(state, frame, edge, fcode)
    return step


@_builds(Opcode.RET)
def _build_ret(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    operands = ins.operands
    if operands:
        (a,) = operands

        def step(state: State, frame: Frame, regs: list) -> None:
            ex.ret(state, regs[a])
        return step

    def void_step(state: State, frame: Frame, regs: list) -> None:
        ex.ret(state, None)
    return void_step


@_builds(Opcode.UNREACHABLE)
def _build_unreachable(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    def step(state: State, frame: Frame, regs: list) -> None:
        ex.fail(state, ErrorKind.EXEC, "reached an 'unreachable' instruction")
    return step


@_builds(Opcode.TRAP)
def _build_trap(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    def step(state: State, frame: Frame, regs: list) -> None:
        ex.fail(state, ErrorKind.EXEC, "llvm.trap called (e.g. __builtin_trap)")
    return step


@_builds(Opcode.UNSUPPORTED)
def _build_unsupported(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    reason = f"{ins.aux}: '{ins.text}' at {_where(ins)}"

    def step(state: State, frame: Frame, regs: list) -> None:
        raise PathTerminated(PathStatus.PARTIAL, f"unsupported: {reason}")
    return step


@_builds(Opcode.NOP, Opcode.VAEND)
def _build_nop(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    def step(state: State, frame: Frame, regs: list) -> None:
        return None
    return step


@_builds(Opcode.CALL)
def _build_call(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    info = ins.aux
    operands = ins.operands
    if info.callee is not None:
        callee = ex.program.callee(info.callee)
        if callee is None:
            return _unsupported_step(f"call to unknown function '{info.callee}'")
        call = ex.call

        def step(state: State, frame: Frame, regs: list) -> None:
            call(state, frame, ins, callee, [regs[s] for s in operands])
        return step
    arg_slots = operands[:-1]
    target_slot = operands[-1]

    def indirect_step(state: State, frame: Frame, regs: list) -> None:
        ex.call_pointer(state, frame, ins, regs[target_slot], [regs[s] for s in arg_slots])
    return indirect_step


# -- intrinsics ---------------------------------------------------------------------------------

@_builds(Opcode.OVERFLOW)
def _build_overflow(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    a, b = ins.operands
    kind = ins.aux
    w = ins.width

    def step(state: State, frame: Frame, regs: list) -> None:
        regs[d] = V.overflow(kind, regs[a], regs[b], w)
    return step


def _unary_or_vector(d: int, a: int, count: int, fn: Callable[[Any], Any]) -> Any:
    if count:
        def vector_step(state: State, frame: Frame, regs: list) -> None:
            regs[d] = tuple(fn(v) for v in regs[a])
        return vector_step

    def step(state: State, frame: Frame, regs: list) -> None:
        regs[d] = fn(regs[a])
    return step


@_builds(Opcode.SATURATE, Opcode.MINMAX)
def _build_minmax(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    kind, count = ins.aux
    w = ins.width
    if kind.startswith("reduce."):
        op = kind[len("reduce."):]
        (a,) = ins.operands

        def reduce_step(state: State, frame: Frame, regs: list) -> None:
            items = regs[a]
            acc = items[0]
            for item in items[1:]:
                acc = V.minmax(op, acc, item, w) if op in ("smax", "smin", "umax", "umin") \
                    else V.binary(op, acc, item, w)
            regs[d] = acc
        return reduce_step
    a, b = ins.operands[:2]
    combine = V.saturate if ins.opcode is Opcode.SATURATE else V.minmax

    def step(state: State, frame: Frame, regs: list) -> None:
        x, y = regs[a], regs[b]
        if count:
            regs[d] = tuple(combine(kind, x[i], y[i], w) for i in range(count))
        else:
            regs[d] = combine(kind, x, y, w)
    return step


@_builds(Opcode.ABS, Opcode.BSWAP, Opcode.BITREVERSE, Opcode.CTPOP, Opcode.CTLZ, Opcode.CTTZ)
def _build_bits(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    w = ins.width
    op = {Opcode.ABS: V.absolute, Opcode.BSWAP: V.bswap, Opcode.BITREVERSE: V.bitreverse,
          Opcode.CTPOP: V.ctpop, Opcode.CTLZ: V.ctlz, Opcode.CTTZ: V.cttz}[ins.opcode]
    return _unary_or_vector(ins.dest, ins.operands[0], ins.aux or 0, lambda v: op(v, w))


@_builds(Opcode.FSHL, Opcode.FSHR)
def _build_funnel(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    a, b, s = ins.operands
    w = ins.width
    left = ins.opcode is Opcode.FSHL
    count = ins.aux

    def step(state: State, frame: Frame, regs: list) -> None:
        x, y, z = regs[a], regs[b], regs[s]
        if count:
            regs[d] = tuple(V.funnel(left, x[i], y[i], z[i], w) for i in range(count))
        else:
            regs[d] = V.funnel(left, x, y, z, w)
    return step


@_builds(Opcode.THREEWAY)
def _build_threeway(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    a, b = ins.operands
    is_signed, operand_width = ins.aux
    w = ins.width

    def step(state: State, frame: Frame, regs: list) -> None:
        regs[d] = V.threeway(is_signed, regs[a], regs[b], operand_width, w)
    return step


@_builds(Opcode.STACKSAVE)
def _build_stacksave(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest

    def step(state: State, frame: Frame, regs: list) -> None:
        regs[d] = len(frame.allocas)
    return step


@_builds(Opcode.STACKRESTORE)
def _build_stackrestore(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    (a,) = ins.operands

    def step(state: State, frame: Frame, regs: list) -> None:
        mark = regs[a]
        if type(mark) is not int:
            mark = ex.concretize(state, mark, 64, "stackrestore")
        allocas = frame.allocas
        if len(allocas) > mark:
            for segment in reversed(allocas[mark:]):
                state.release(segment)
            frame.allocas = allocas[:mark]
    return step


@_builds(Opcode.ASSUME)
def _build_assume(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    (a,) = ins.operands

    def step(state: State, frame: Frame, regs: list) -> None:
        cond = regs[a]
        if type(cond) is not int:
            state.add_constraint(cond)
    return step


@_builds(Opcode.VASTART)
def _build_vastart(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    (a,) = ins.operands

    def step(state: State, frame: Frame, regs: list) -> None:
        area = frame.varargs
        data = (VA_GP_EXHAUSTED.to_bytes(4, "little") + VA_FP_EXHAUSTED.to_bytes(4, "little")
                + area.to_bytes(8, "little") + bytes(8))
        ex.write_bytes(state, regs[a], data)
    return step


@_builds(Opcode.VACOPY)
def _build_vacopy(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    dst, src = ins.operands[:2]

    def step(state: State, frame: Frame, regs: list) -> None:
        ex.write_bytes(state, regs[dst], ex.read_bytes(state, regs[src], VA_LIST_SIZE))
    return step


@_builds(Opcode.VAARG)
def _build_vaarg(ex: Executor, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    (a,) = ins.operands
    access = ins.aux
    pointer_access = Access(ValueKind.PTR, 8, 64)

    def step(state: State, frame: Frame, regs: list) -> None:
        va_list = regs[a]
        area_field = va_list + 8 if type(va_list) is int else E.add(E.const(8, 64), va_list)
        area = ex.read(state, area_field, pointer_access)
        if access.size > 8:
            area = (area + 15) // 16 * 16 if type(area) is int else area
        regs[d] = ex.read(state, area, access)
        step_size = (access.size + 7) // 8 * 8
        ex.write(state, area_field, pointer_access, V.binary("add", area, step_size, 64))
    return step



#: the code of the interpreter loop, whose slice counter live_instructions reads
_RUN_CODE = Executor.run.__code__
