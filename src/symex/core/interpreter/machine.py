"""What the rest of the interpreter may use of the machine that runs it.

:class:`Machine` is the executor seen from outside: the instruction builders
(:mod:`symex.core.interpreter.builders`), the environment's handlers (:mod:`symex.env`), thread
scheduling, compiled runs and allocation sizes are written against it, not against
:class:`~symex.core.interpreter.executor.Executor`, so none of them imports the executor (and the
executor, which imports them, closes no loop). Its parts, by what they do:

- decisions (:class:`~symex.core.interpreter.decisions.Decisions`): the solver's answers about a path's
  conditions and values, and the forks that follow;
- memory (:class:`~symex.core.memory.access.MemoryAccess`): pointers resolved, values and bytes read
  and written, objects allocated and freed;
- control flow (:class:`~symex.core.interpreter.calls.Calls` and the executor): calls, returns, jumps,
  setjmp/longjmp;
- errors and coverage (the executor): a path's errors with their stacks, the blocks and
  branch outcomes reached.

The three mixins implement it together with :class:`~symex.core.interpreter.executor.Executor`, each
declaring itself a ``Machine`` so that what it calls of the others is typed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

from symex import expr as E
from symex.core.memory.objects import ObjectKind
from symex.core.search.seeding import refresh as refresh_seeds
from symex.core.state import Symbolic

if TYPE_CHECKING:
    import immutables

    from symex.core.coverage import CoverageMap
    from symex.core.forks import DecisionMemo, ForkKind
    from symex.core.memory.model import MemoryModel
    from symex.core.memory.objects import ObjectState
    from symex.core.outcome import ErrorKind, PathTerminated, ProgramError, StackEntry
    from symex.core.shortfalls import ShortfallTally
    from symex.core.site_budgets import SiteBudgets
    from symex.core.state import Frame, State
    from symex.ir.liveness import Liveness
    from symex.ir.program import Access, Edge, Function, Instruction, Program
    from symex.solvers.base import Solver, Validity

__all__ = ["EntryHook", "ExternalHandler", "Machine", "StateView"]

ExternalHandler = Callable[["StateView", list[Any]], Any]
"""An external function's handler: (the calling state's view, the arguments) -> the return
value (an int, an expression, or None for void)."""

EntryHook = Callable[["StateView", list[Any]], None]
"""A hook on a defined function's entry: (the calling state's view, the arguments; it may
change them in place)."""


class Machine(Protocol):
    """The executor's members other parts of the interpreter use (see the module docstring)."""

    program: Program
    """The program being run."""
    solver: Solver
    """The solver (chain) every question goes to."""
    externals: dict[str, ExternalHandler]
    """Handlers of external functions, by name (each called with a :class:`StateView`)."""
    unplugged: set[str]
    """External functions no installed plug-in models either (read once per name)."""
    memory_model: MemoryModel
    """What a pointer means: every memory operation goes through it (core.memory.model)."""
    memo: DecisionMemo | None
    """The execution tree's recorder or a job's replay, None without either."""
    coverage: dict[str, bytearray]
    """Per function, one byte per block, set once some path entered the block."""
    coverage_map: CoverageMap
    """Lines, branches and instructions of the program, and what is covered."""
    shortfalls: ShortfallTally
    """Concretizations and unmodelled calls, by program line."""
    messages: list[str]
    """What the run says besides its tests (messages.txt)."""
    new_states: list[State]
    """States forked during the current step, for the searcher."""
    ended: list[tuple[State, PathTerminated]]
    """States that ended while another was running (error siblings of a fork)."""
    forks: int
    """Forks so far."""
    max_forks: int | None
    """After this many forks no state splits (KLEE's --max-forks)."""
    memory_inhibited: bool
    """Near the run's memory cap no state splits either."""
    max_stack_frames: int
    """Nested calls a path may make."""
    max_sym_array_size: int
    """Symbolic offsets into bigger objects are fixed (KLEE's --max-sym-array-size; 0: never)."""
    max_input: int
    """The longest input of a fuzz target (``--max-input``; env/fuzz_input.py)."""
    max_idle_time_outs: int
    """Time-outs in a row with nothing else happening that end a path as idle (0: never)."""
    schedule_forks: int
    """Scheduling choices a path may fork on (core.scheduling)."""
    fixed_sizes: set[tuple[str, str]]
    """(what, program line) of the symbolic allocation sizes fixed so far."""
    track_path_blocks: bool
    """Every state keeps the set of blocks it entered (State.blocks)."""
    defer_seeded_forks: bool
    """A branch off a seed's path leaves the other side unchecked until it is picked."""
    independent_splits: bool
    """A branch's question takes only the constraint groups its condition reads."""
    site_budgets: SiteBudgets | None
    """The query time of branch sites that timed out (None: every query gets the run's limit)."""
    entry_hooks: dict[str, EntryHook]
    """Defined functions of the C library that the environment looks at before they run
    (by name: env.printed_values), each called with the function's arguments."""
    memos: bool
    """Rewrites and instructions' symbolic results are remembered."""
    group_model: Callable[[tuple[E.Expr, ...], dict[E.Array, bytes]], dict[E.Array, bytes] | None] | None
    """The solver chain's question for one independent group, where it has one."""
    longest_run: int
    """The most instructions one compiled run or chain does."""
    exact_slice: list[int]
    """In a time slice's exact phase, the instructions left to it (0 otherwise)."""

    def allocate(self, state: State, size: int, kind: ObjectKind, name: str, site: str = "") -> int:
        """A fresh zero-filled object; its address (``site``: where the program made it)
        (:meth:`MemoryAccess.allocate`)."""
        ...

    def branch(self, state: State, frame: Frame, condition: E.Expr, true_edge: Edge,
               false_edge: Edge, fcode: list[list[Any]], outcomes: bytearray | None = None,
               slot: int = 0) -> None:
        """A conditional branch on a symbolic condition: follow it, or fork
        (:meth:`Decisions.branch`)."""
        ...

    def call(self, state: State, frame: Frame, ins: Instruction, fn: Function, args: list[Any]) -> None:
        """Call a function: defined ones get a frame, declared ones go to the environment
        (:meth:`Calls.call`)."""
        ...

    def call_exit_handler(self, state: State) -> bool:
        """Call the most recently registered atexit handler not yet called, if any, so that
        the instruction ending the process (``exit(...)`` or main's ``ret``) runs again when
        it returns: that instruction must be the one just executed
        (:meth:`Calls.call_exit_handler`)."""
        ...

    def call_pointer(self, state: State, frame: Frame, ins: Instruction, target: Any,
                     args: list[Any]) -> None:
        """Call through a function pointer (a symbolic one is resolved value by value)
        (:meth:`Calls.call_pointer`)."""
        ...

    def check_fault(self, state: State, bad: Any, kind: ErrorKind, message: str) -> None:
        """If ``bad`` (width-1 value) can hold, report ``kind``: on this state when it must
        hold, else on a forked sibling, while this state continues under ``not bad``
        (:meth:`Decisions.check_fault`)."""
        ...

    def choose_option(self, state: State, options: list[E.Expr]) -> int:
        """The index of the first of ``options`` (width-1 conditions, one of which the
        inputs satisfy) that the state's inputs satisfy; it is assumed
        (:meth:`Decisions.choose_option`)."""
        ...

    def code_of(self, fn: Function) -> list[list[Any]]:
        """Compiled closures for every block of ``fn`` (built on first use)
        (:meth:`Executor.code_of`)."""
        ...

    def concretize(self, state: State, value: Any, width: int, why: str) -> int:
        """Fix a symbolic value to one possible value, recording the choice as a constraint
        (:meth:`Decisions.concretize`)."""
        ...

    def evaluate(self, state: State, condition: E.Expr) -> Validity:
        """Validity of a width-1 condition on the state's path (:meth:`Decisions.evaluate`)."""
        ...

    def inputs_for(self, state: State, condition: E.Expr) -> Any:
        """Inputs under which ``condition`` holds on the state's path: a model, NO_MODEL or
        None when it cannot hold (:meth:`Decisions.inputs_for`)."""
        ...

    def fail(self, state: State, kind: ErrorKind, message: str) -> NoReturn:
        """End the state with a program error (:meth:`Executor.fail`)."""
        ...

    def follow_model(self, state: State, condition: E.Expr) -> bool:
        """Decide a symbolic condition without forking: take the side the state's model
        satisfies (feasible by construction, and no solver query) and assume it
        (:meth:`Decisions.follow_model`)."""
        ...

    def fork(self, state: State) -> State:
        """A new state sharing ``state``'s memory; queued for the searcher
        (:meth:`Executor.fork`)."""
        ...

    def fork_on_values(self, state: State, value: E.Expr, width: int,
                       choose: Callable[[State, E.Expr], list[int]]) -> int:
        """Fix a symbolic value to each of the values ``choose(state, value)`` picks
        (feasible ones, the first first; an unknown answer of the solver while it picks ends
        the path as :meth:`unanswered` says): this state takes the first and the others get
        a state each, which runs the instruction again with its value (``ForkKind.VALUES``)
        (:meth:`Decisions.fork_on_values`)."""
        ...

    def fork_to_retry(self, state: State, condition: E.Expr, kind: ForkKind,
                      if_true: Any = None, if_false: Any = None) -> State:
        """Split ``state`` on ``condition``, both sides feasible: it goes on with the
        condition true (decision 1); a child takes it false (decision 0) and runs the
        current instruction again, now knowing that (the child is returned)
        (:meth:`Decisions.fork_to_retry`)."""
        ...

    def forks_exhausted(self) -> bool:
        """Whether no state splits any more: ``max_forks`` forks happened, or the run is near
        its memory cap (:meth:`Decisions.forks_exhausted`)."""
        ...

    def free(self, state: State, address: Any) -> None:
        """free(): release a heap object, or report an invalid/double free
        (:meth:`MemoryAccess.free`)."""
        ...

    def get_value(self, state: State, value: E.Expr) -> int:
        """Some value of ``value`` on the state's path (from the state's model: no query)
        (:meth:`Decisions.get_value`)."""
        ...

    def holds_or_retry(self, state: State, condition: E.Expr, kind: ForkKind) -> bool:
        """Whether ``condition`` holds on ``state`` (assumed when it does)
        (:meth:`Decisions.holds_or_retry`)."""
        ...

    def input_array(self, name: str, size: int) -> E.Array:
        """The symbolic array of the input called ``name`` (unique on its path)
        (:meth:`Executor.input_array`)."""
        ...

    def jump(self, state: State, frame: Frame, edge: Edge, fcode: list[list[Any]]) -> None:
        """Go to the edge's target block, performing its phi moves (:meth:`Executor.jump`)."""
        ...

    def liveness_of(self, fn: Function) -> Liveness:
        """The live-register analysis of ``fn`` (made on first use)
        (:meth:`Executor.liveness_of`)."""
        ...

    def long_jump(self, state: State, env: Any, value: Any) -> None:
        """Resume at the setjmp that filled ``env``, which then returns ``value`` (1 if 0)
        (:meth:`Calls.long_jump`)."""
        ...

    def make_error(self, state: State, kind: ErrorKind, message: str, *,
                   blocked: bool = False) -> ProgramError:
        """An error at the state's current instruction, with its call stack (``blocked``:
        the state's thread is blocked in a call it will run again, see core.scheduling)
        (:meth:`Executor.make_error`)."""
        ...

    def process_image(self) -> immutables.Map[int, ObjectState]:
        """A new process's memory: the globals with their initial values
        (:meth:`Executor.process_image`)."""
        ...

    def program_site(self, state: State) -> str:
        """``file:line`` (the file's base name) of the program line running now, for naming
        where an object was made: the current instruction's, or inside symex's C library (no
        debug info) that of the nearest caller that has one; "" without debug info
        (:meth:`Executor.program_site`)."""
        ...

    def push_frame(self, state: State, fn: Function, args: list[Any], ret_dest: int,
                   call: Instruction | None) -> None:
        """Enter a defined function (:meth:`Calls.push_frame`)."""
        ...

    def reach_new_block(self, state: State, fn: Function, block: int) -> None:
        """``state`` is the first to enter ``block`` of ``fn``: count it, give the state
        credit for it (a new claim, see State.claims), tell the hook
        (:meth:`Executor.reach_new_block`)."""
        ...

    def read(self, state: State, address: Any, access: Access) -> Any:
        """Load a value (:meth:`MemoryAccess.read`)."""
        ...

    def read_bytes(self, state: State, address: Any, size: int) -> list[Any]:
        """``size`` raw bytes (ints or 8-bit expressions) (:meth:`MemoryAccess.read_bytes`)."""
        ...

    def read_c_string(self, state: State, address: Any, limit: int = 1 << 16) -> bytes:
        """A NUL-terminated string with concrete bytes (symbolic bytes are concretized)
        (:meth:`MemoryAccess.read_c_string`)."""
        ...

    def record_fork(self, kind: ForkKind, condition: E.Expr | None, states: list[State]) -> None:
        """Tell the tree recorder about a fork: ``states[0]`` forked the others at its
        current instruction; each took its decision already (:meth:`Executor.record_fork`)."""
        ...

    def resolve(self, state: State, address: Any, size: int, what: str) -> tuple[ObjectState, Any]:
        """The object a pointer points into, and the offset (int, or 32-bit expression)
        (:meth:`MemoryAccess.resolve`)."""
        ...

    def ret(self, state: State, value: Any) -> None:
        """Return from the current frame (main's return runs the atexit handlers first; a
        thread's first frame returning ends the thread, see core.scheduling)
        (:meth:`Calls.ret`)."""
        ...

    def seeded_sides(self, state: State, condition: E.Expr) -> tuple[Any, Any] | None:
        """For a state following a seed: the sides of ``condition`` as :meth:`split` gives
        them, without the solver: the seed's side with the seed's inputs, the other
        ``NO_MODEL``, to be left unchecked until the searcher picks it (Kuchta and Cadar's
        pending states), so a seed's path never waits on the solver (memcached's keys
        through murmur3 took seconds a query) (:meth:`Decisions.seeded_sides`)."""
        ...

    def set_jump(self, state: State, env: Any, ins: Instruction) -> None:
        """Record in the jmp_buf at ``env`` where the current external call (setjmp) returns
        (:meth:`Calls.set_jump`)."""
        ...

    def settled(self, state: State, value: Any) -> Any:
        """``value`` as a number where the path's equalities settle it (then it is not a
        choice, and not a shortfall), else simplified on the path
        (:meth:`Decisions.settled`)."""
        ...

    def simplify(self, state: State, condition: E.Expr) -> E.Expr:
        """``condition`` rewritten with the equalities the path already implies
        (:meth:`Decisions.simplify`)."""
        ...

    def split(self, state: State, condition: E.Expr) -> tuple[Any, Any]:
        """Inputs taking the path with ``condition`` true, and with it false (None where
        that is impossible; ``NO_MODEL`` where it is possible, as a replayed path knows, but
        the inputs are not known) (:meth:`Decisions.split`)."""
        ...

    def stack_of(self, frames: list[Frame], *, blocked: bool = False) -> tuple[StackEntry, ...]:
        """The call stack of ``frames``, innermost first, as (function, file, line) entries
        (``blocked``: the innermost frame is about to run its blocked call again)
        (:meth:`Executor.stack_of`)."""
        ...

    def take_outcome(self, fn: Function, outcomes: bytearray | None, slot: int) -> None:
        """Record a branch outcome (``outcomes`` None: the branch does not count)
        (:meth:`Executor.take_outcome`)."""
        ...

    def value_range(self, state: State, value: E.Expr, cap: int) -> tuple[int, int]:
        """The least value ``value`` can take on the state's path, and the greatest one not
        above ``cap`` (the least again when every value is above it)
        (:meth:`Decisions.value_range`)."""
        ...

    def values_of(self, state: State, value: E.Expr, most: int) -> list[int]:
        """Distinct values ``value`` can take on the path, at most ``most``, the state's
        inputs' first; recorded for replays, nothing assumed (:meth:`Decisions.values_of`)."""
        ...

    def unique_value(self, state: State, value: E.Expr) -> tuple[int, bool]:
        """The state's inputs' value of ``value`` and whether the path allows no other, asked
        briefly: a question cut short answers no (:meth:`Decisions.unique_value`)."""
        ...

    def write(self, state: State, address: Any, access: Access, value: Any) -> None:
        """Store a value (:meth:`MemoryAccess.write`)."""
        ...

    def write_bytes(self, state: State, address: Any, data: list[Any] | bytes) -> None:
        """Raw bytes (:meth:`MemoryAccess.write_bytes`)."""
        ...


class StateView:
    """One state as an external function's handler or an entry hook sees it: its memory
    (through the run's memory model), its inputs, constraints and call stack, and the
    decisions it may take (a value fixed, a fork over values, an error). Handlers get one per
    call (``handler(view, args)``); it is valid during that call only.

    ``machine`` and ``state`` are the executor and the path themselves, for symex's own
    handlers that schedule threads, jump (setjmp) or start programs (env/); a handler that
    needs no more than this class's methods stays correct whatever the executor becomes.
    """

    __slots__ = ("machine", "state", "call")

    def __init__(self, machine: Machine, state: State, call: Instruction | None = None) -> None:
        self.machine = machine
        self.state = state
        #: the call instruction being handled (None for an entry hook)
        self.call = call

    @property
    def instruction(self) -> Instruction:
        """The call instruction being handled (a handler's view always has one): its result
        width, its destination, its source line."""
        assert self.call is not None, "an entry hook's view has no call instruction"
        return self.call

    @property
    def program(self) -> Program:
        """The program being run: its functions and globals by name."""
        return self.machine.program

    def warn(self, message: str) -> None:
        """Say ``message`` with the run's other messages (``messages.txt``), as
        ``klee_warning`` does."""
        self.machine.messages.append(message)

    # -- memory, through the run's memory model ----------------------------------------------

    def read(self, address: Any, access: Access) -> Any:
        """The value of ``access``'s kind and size at ``address``."""
        return self.machine.read(self.state, address, access)

    def write(self, address: Any, access: Access, value: Any) -> None:
        """Store ``value`` of ``access``'s kind and size at ``address``."""
        self.machine.write(self.state, address, access, value)

    def read_bytes(self, address: Any, size: int) -> list[Any]:
        """``size`` raw bytes at ``address``: ints, or 8-bit expressions."""
        return self.machine.read_bytes(self.state, address, size)

    def write_bytes(self, address: Any, data: list[Any] | bytes) -> None:
        """Store raw bytes (ints or 8-bit expressions) at ``address``."""
        self.machine.write_bytes(self.state, address, data)

    def read_c_string(self, address: Any, limit: int = 1 << 16) -> bytes:
        """The NUL-terminated string at ``address`` (symbolic bytes fixed, each counted)."""
        return self.machine.read_c_string(self.state, address, limit)

    def allocate(self, size: int, kind: ObjectKind, name: str, site: str = "") -> int:
        """A fresh zero-filled object of ``size`` bytes; its address (``name`` and ``site``
        are what error reports call it and where it was made)."""
        return self.machine.allocate(self.state, size, kind, name, site)

    def free(self, address: Any) -> None:
        """Release the heap object ``address`` points to (an invalid free is an error)."""
        self.machine.free(self.state, address)

    def variable(self, name: str) -> int | None:
        """The address of the C variable ``name`` as the running function sees it: a local
        it keeps in memory (its name from the debug information; a local whose address is
        never taken lives in a register and has none), else a global; None when neither."""
        state = self.state
        for segment in reversed(state.frame.allocas):
            held = state.objects.get(segment)
            if held is not None and held.obj.name == name:
                return held.obj.address
        found = self.machine.program.globals.get(name)
        return None if found is None else found.address

    # -- inputs --------------------------------------------------------------------------------

    def make_symbolic(self, address: int, size: int, name: str) -> E.Array:
        """Make ``size`` bytes at ``address`` a fresh input object called ``name`` (made unique
        on the path: ``x``, ``x_1``, ...), as ``klee_make_symbolic`` does; its array."""
        state, machine = self.state, self.machine
        unique = state.unique_name(name or "unnamed")
        held, offset = machine.resolve(state, address, size, "klee_make_symbolic on")
        if type(offset) is not int:
            offset = machine.concretize(state, offset, 32, "klee_make_symbolic address")
        array = machine.input_array(unique, size)
        updates = E.UpdateList(array)
        held = state.writable(held)
        held.write_bytes(offset, [E.read(updates, E.const(i, 32)) for i in range(size)])
        state.symbolics += (Symbolic(unique, array, address),)
        if state.seeds is not None:
            refresh_seeds(state)  # the inputs take the seed's bytes for the new object
        return array

    def fresh_value(self, size: int, name: str) -> E.Expr:
        """A fresh symbolic value of ``size`` bytes, backed by an input object of its own
        called ``name`` (so a test lists it)."""
        address = self.allocate(size, ObjectKind.ARGUMENT, name)
        self.make_symbolic(address, size, name)
        data = self.read_bytes(address, size)  # the input's bytes, each an expression
        value = data[0]
        for b in data[1:]:
            value = E.concat(b, value)
        return value

    # -- the path --------------------------------------------------------------------------------

    @property
    def constraints(self) -> tuple[E.Expr, ...]:
        """The path's constraints (width-1 expressions over the inputs)."""
        return self.state.constraints

    def assume(self, condition: E.Expr) -> None:
        """Constrain the path by ``condition`` (width 1) from now on."""
        self.state.add_constraint(condition)

    def evaluate(self, condition: E.Expr) -> Validity:
        """Whether ``condition`` must, may or cannot hold on the path (a solver question at
        most)."""
        return self.machine.evaluate(self.state, condition)

    def get_value(self, value: E.Expr) -> int:
        """A value ``value`` takes on the path (the path's own inputs': no question)."""
        return self.machine.get_value(self.state, value)

    def concretize(self, value: Any, width: int, why: str) -> int:
        """Fix ``value`` to one value the path allows (a constraint from now on; ``why``
        names it in the run's shortfalls)."""
        return self.machine.concretize(self.state, value, width, why)

    def fork_on_values(self, value: E.Expr, width: int,
                       choose: Callable[[State, E.Expr], list[int]]) -> int:
        """Fix ``value`` to each value ``choose`` picks, a path each; this path takes the
        first and the others run the call again with theirs, so ``value`` must come from the
        call's arguments or the state (a value the handler makes afresh would fork again)."""
        return self.machine.fork_on_values(self.state, value, width, choose)

    @property
    def call_stack(self) -> tuple[StackEntry, ...]:
        """The path's calls, innermost first, as (function, file, line) entries."""
        return self.machine.stack_of(self.state.frames)

    def program_site(self) -> str:
        """``file:line`` of the program line running now ("" without debug information)."""
        return self.machine.program_site(self.state)

    def fail(self, kind: ErrorKind, message: str) -> NoReturn:
        """End the path with an error of ``kind`` (a test and an ``.err`` file)."""
        self.machine.fail(self.state, kind, message)
