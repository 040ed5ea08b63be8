"""The executor's calls and returns: frames, variadic arguments, the environment's handlers,
function pointers, atexit handlers, setjmp/longjmp.

A mixin of :class:`~symex.core.interpreter.executor.Executor`, written against the
:class:`~symex.core.interpreter.machine.Machine` it is part of."""

from __future__ import annotations

from typing import Any


from symex import expr as E
from symex.core.interpreter import values as V
from symex.core.memory.objects import (
    ObjectKind,
    encode,
)
from symex.core.forks import (
    ForkKind,
)
from symex.core.threads import scheduling
from symex.core.outcome import (
    ErrorKind,
    PathStatus,
    PathTerminated,
)
from symex.core.shortfalls import ShortfallKind
from symex.core.state import Frame, State
from symex.plugins import PluginKind, load_plugin
from symex.ir.program import (
    POINTER_ACCESS,
    WORD_ACCESS,
    Access,
    Function,
    Instruction,
    ValueKind,
)
from symex.solvers.base import Validity
from symex.core.interpreter.builders.registry import where
from symex.core.interpreter.float_math import C_MATH_FUNCTIONS
from symex.core.interpreter.machine import Machine, StateView

#: The C library's atexit table (runtime/libc/stdlib.c): handler pointers and their count
ATEXIT_HANDLERS = "__symex_atexit_handlers"
ATEXIT_COUNT = "__symex_atexit_count"
#: Functions intercepted even when the program defines them (SV-COMP programs define these)
ALWAYS_INTERCEPTED = frozenset({"reach_error", "__VERIFIER_error"})
#: functions handled by the environment even where a library without debug information (musl)
#: defines them: the math functions, computed with the floating-point theory (a program's
#: own function of the same name, compiled with debug information, is called as written)
LIBRARY_INTERCEPTED = frozenset(C_MATH_FUNCTIONS)
_INTERCEPTED = ALWAYS_INTERCEPTED | LIBRARY_INTERCEPTED  # one lookup per call of a definition
_ATEXIT_COUNT_ACCESS = Access(ValueKind.INT, 4, 32)
#: first word of a jmp_buf that setjmp filled (ASCII "symexjmp"), then 5 words: see set_jump
JMP_BUF_MAGIC = 0x706D6A78656D7973


class Calls(Machine):
    """Entering and leaving functions."""

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
        if fn.is_declaration or (fn.name in _INTERCEPTED and (
                fn.name in ALWAYS_INTERCEPTED or fn.file is None)):
            handler = self.externals.get(fn.name)
            if handler is None and fn.is_declaration and fn.name not in self.unplugged:
                handler = load_plugin(PluginKind.EXTERNAL, fn.name)  # read once per name
                if handler is None:
                    self.unplugged.add(fn.name)
                else:
                    self.externals[fn.name] = handler
            if handler is None:
                if not fn.is_declaration:
                    self.push_frame(state, fn, args, ins.dest, ins)
                    return
                self.shortfalls.add(ShortfallKind.UNMODELLED, fn.name, self.program_site(state))
                raise PathTerminated(
                    PathStatus.PARTIAL,
                    f"unsupported: call to external function '{fn.name}' ({where(ins)})")
            result = handler(StateView(self, state, ins), args)
            if ins.dest >= 0:
                frame.regs[ins.dest] = result if result is not None else 0
            return
        if self.entry_hooks:
            hook = self.entry_hooks.get(fn.name)
            if hook is not None:
                hook(StateView(self, state), args)  # it may fix arguments (env.printed_values)
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
        target = self.read(state, table.address + 8 * count, POINTER_ACCESS)
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
            word = self.read(state, env + 8 * i if type(env) is int else E.add(env, E.const(8 * i, 64)), WORD_ACCESS)
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

