"""Straight-line runs of a basic block compiled to Python source: the concrete fast path of
several instructions in one function call.

The interpreter (``Executor.run``) calls one closure per instruction. Most instructions of a
block at -O0 are loads, stores, arithmetic, comparisons and casts on concrete values, and for
those the closure call, the register-list traffic and the per-instruction type checks cost
more than the operation itself. So each maximal run of such instructions in a block (two or
more) becomes one generated function, registered in place of the run's first closure:

- Registers read by the run are Python locals (checked to be ints once, where first used);
  constants are literals; every result is also stored in the register list, so a run can
  stop anywhere and leave the state exactly as the per-instruction closures would.
- Anything off the concrete fast path (a symbolic operand, a pointer outside its object, an
  object with symbolic bytes or not yet copied by this state, a division by zero, an
  oversized shift) stops the run *before* that instruction: the generated function returns
  how many instructions it completed and points ``frame.pc`` at the next one, whose ordinary
  closure then does the symbolic work, reports the error or forks. A run never forks,
  never asks the solver and never reports an error, so the seams other layers depend on (fork
  points, decisions, exact instruction counts for the memo's replay) are untouched.
- The interpreter counts the instructions a run returns. Near the end of a time slice
  (``Executor.run``'s exact phase, so a slice still ends at an exact instruction count) a
  run longer than what is left executes only its first instruction.
- Chains (``make_chain``, one per function): the blocks made only of such instructions and
  a br/condbr go from one to the next inside one generated loop, without returning to the
  interpreter, up to ``CHAIN_LIMIT`` instructions a call (in the exact phase: what is left);
  pointers that no chained instruction writes are looked up and checked once per call.

Debugging: ``SYMEX_DUMP_RUNS=DIR`` writes each function's generated source to
``DIR/FUNCTION.py``; tracebacks show the generated lines (the source is registered with
``linecache`` under ``<symex runs of FUNCTION>``); ``SYMEX_COMPILED_RUNS=0`` turns runs off
(every instruction through its closure, as before), for comparison.
"""

from __future__ import annotations

import linecache
import os
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any
from collections.abc import Callable, Iterable

from symex import expr as E
from symex.core.memory.objects import OFFSET_MASK, PACK, POINTER_MASK, UNPACK
from symex.ir.liveness import Liveness, slots_written_in, written_slots
from symex.ir.program import SEGMENT_SHIFT, Edge, Function, Instruction, Opcode, ValueKind

if TYPE_CHECKING:
    from symex.core.interpreter.machine import Machine

__all__ = ["MIN_RUN", "compile_runs", "runs_enabled"]

#: the shortest run worth a generated function
MIN_RUN = 2
#: environment variables: turn runs off ("0"), and where to dump the generated source
ENABLE_VARIABLE = "SYMEX_COMPILED_RUNS"
DUMP_VARIABLE = "SYMEX_DUMP_RUNS"
CHAIN_VARIABLE = "SYMEX_CHAINS"
#: a chain call goes on to a next block while the instructions done stay within this (or,
#: in a time slice's exact phase, within what is left of the slice)
CHAIN_LIMIT = 200


_SIMPLE_BINARY = {Opcode.ADD: "({a} + {b}) & {m}", Opcode.SUB: "({a} - {b}) & {m}",
                  Opcode.MUL: "({a} * {b}) & {m}", Opcode.AND: "{a} & {b}",
                  Opcode.OR: "{a} | {b}", Opcode.XOR: "{a} ^ {b}"}
_DIVISIONS = {Opcode.UDIV: "{a} // {b}", Opcode.UREM: "{a} % {b}",
              Opcode.SDIV: "sdiv({a}, {b}, {w})", Opcode.SREM: "srem({a}, {b}, {w})"}
_SHIFTS = {Opcode.SHL: "({a} << {b}) & {m}", Opcode.LSHR: "{a} >> {b}",
           Opcode.ASHR: "ashr({a}, {b}, {w})"}
_UNSIGNED_COMPARE = {"eq": "==", "ne": "!=", "ugt": ">", "uge": ">=", "ult": "<", "ule": "<="}
_SIGNED_COMPARE = {"sgt": ">", "sge": ">=", "slt": "<", "sle": "<="}


def chains_enabled() -> bool:
    """Whether blocks are chained (``SYMEX_CHAINS`` is not "0"; runs must be on)."""
    return os.environ.get(CHAIN_VARIABLE, "1") != "0"


#: the generated code's in-place readers and writers of 2-, 4- and 8-byte integers
_PACKING = {f"{verb}{size}": table[size] for verb, table in (("unpack", UNPACK), ("pack", PACK))
            for size in (2, 4, 8)}


def runs_enabled() -> bool:
    """Whether compiled runs are on (``SYMEX_COMPILED_RUNS`` is not "0")."""
    return os.environ.get(ENABLE_VARIABLE, "1") != "0"


def _compilable(ins: Instruction) -> bool:
    op = ins.opcode
    if op in _SIMPLE_BINARY or op in _DIVISIONS or op in _SHIFTS:
        return not ins.aux  # vectors (an element count) stay with their closures
    if op is Opcode.ICMP:
        return not ins.aux[1]
    if op in (Opcode.TRUNC, Opcode.ZEXT, Opcode.SEXT):
        return not ins.aux.count
    if op is Opcode.LOAD or op is Opcode.STORE:
        access = ins.aux
        return (access.kind is ValueKind.INT or access.kind is ValueKind.PTR) and \
            access.size in (1, 2, 4, 8)
    return op is Opcode.GEP or op is Opcode.NOP or op is Opcode.COPY


class _RunWriter:
    """The source of one run's function."""

    def __init__(self, fn: Function, constants: dict[int, int], name: str, start: int,
                 liveness: Liveness | None, block: int) -> None:
        self.fn = fn
        #: the function's live registers (None: store every result, as for a function
        #: calling setjmp), and the block written
        self.liveness = liveness
        self.block = block
        #: results held in locals only, stored at an exit where they are live
        self.pending: list[int] = []
        self.constants = constants
        self.name = name
        self.start = start
        self.lines: list[str] = ["get = state.objects.get"]
        self.known: set[int] = set()
        #: pointer registers whose object is looked up and checked: slot -> what was
        #: checked ("read": concrete bytes; "write": also this state's own and writable) and
        #: the largest access size whose bounds were checked
        self.objects: dict[int, tuple[str, int]] = {}
        #: what the run knows a pointer register's memory holds: slot -> (access size, bits,
        #: the value's expression); a store forgets every other pointer's (they may alias)
        self.memory: dict[int, tuple[int, int, str]] = {}

    def emit(self, line: str) -> None:
        self.lines.append(line)

    def stop(self, index: int) -> str:
        """What the function does when instruction ``index`` cannot take the fast path."""
        if index == self.start:
            return "plain(state, frame, regs); return 1"
        return f"frame.pc = {index}; {self.flush(index)}return {index - self.start}"

    def flush(self, index: int) -> str:
        """Statements storing the pending results live at instruction ``index`` (each
        followed by "; "): what the closures taking over from there can read."""
        if not self.pending:
            return ""
        return self._stores(self.liveness.live_at(self.block, index))  # type: ignore[union-attr]

    def _stores(self, live: Iterable[int]) -> str:
        live = set(live)
        return "".join(f"regs[{slot}] = r{slot}; " for slot in self.pending if slot in live)

    def operand(self, slot: int, index: int) -> str:
        """An int operand: a literal, a known local, or a register checked here."""
        constant = self.constants.get(slot)
        if constant is not None:
            return str(constant)
        name = f"r{slot}"
        if slot not in self.known:
            self.emit(f"{name} = regs[{slot}]")
            self.emit(f"if type({name}) is not int: {self.stop(index)}")
            self.known.add(slot)
        return name

    def pointee(self, slot: int, size: int, use: str, index: int) -> tuple[str, str]:
        """The local names of the object a pointer register points into and of the offset,
        with the checks ``use`` needs for ``size`` bytes emitted the first time only (a run
        neither frees, nor copies, nor makes symbolic any object: its checks hold to its end)."""
        pointer = self.operand(slot, index)
        o, at = f"o{slot}", f"at{slot}"
        checked = self.objects.get(slot)
        if checked is None:
            self.emit(f"{o} = get({pointer} >> {SEGMENT_SHIFT})")
            self.emit(f"if {o} is None or not {o}.flat: "
                      f"{self.stop(index)}")
            self.emit(f"{at} = {pointer} & {OFFSET_MASK}")
            checked = ("read", 0)
        kind, largest = checked
        if use == "write" and kind == "read":
            self.emit(f"if {o}.owner is not state.cow or {o}.obj.read_only: {self.stop(index)}")
            kind = "write"
        if size > largest:
            self.emit(f"if {at} + {size} > {o}.obj.size: {self.stop(index)}")
            largest = size
        self.objects[slot] = (kind, largest)
        return o, at

    def branch(self, ins: Instruction, index: int, slots: tuple[Any, int, int] | None,
               inline: bool) -> None:
        """End the run by the block's branch. ``inline``: where the target block is covered
        (and, for a counted conditional branch, the outcome too) the run performs the edge
        itself (phi moves, then the frame at the target's start), which is all the branch's
        closure would do; otherwise, or when the condition is symbolic (the run stops before
        it: the closure forks), the closure is called. ``slots``: the branch's coverage
        outcomes (bitmap, first slot, block) or None when it does not count."""
        text = " ".join(ins.text.split())[:100]
        self.emit(f"# {index}: {text}")
        done = index + 1 - self.start
        if ins.opcode is Opcode.CONDBR:
            cond = self.operand(ins.operands[0], index)  # stops the run if symbolic
            if inline:
                true_edge, false_edge = ins.aux
                on_true = slots[1] if slots is not None else None
                self.emit(f"if {cond}:")
                self._inline_edge(true_edge, on_true, done, "  ")
                self.emit("else:")
                self._inline_edge(false_edge, None if on_true is None else on_true + 1, done,
                                  "  ")
        elif inline:
            self._inline_edge(ins.aux, None, done, "")
        # the branch's closure reads the condition and the edges' sources, and the blocks
        # after it what is live there
        self.emit(f"{self.here()}frame.pc = {index + 1}; {self.flush(index)}"
                  f"{self.closure(index)}(state, frame, regs)")
        self.emit(f"return {self.counted(done)}")

    def counted(self, done: int) -> str:
        """The expression a return gives for ``done`` instructions of this block."""
        return str(done)

    def closure(self, index: int) -> str:
        """The expression naming instruction ``index``'s closure."""
        return f"code[{index}]"

    def _inline_edge(self, edge: Edge, outcome: int | None, done: int, indent: str) -> None:
        """Take ``edge`` here when its target and ``outcome`` (if any) are covered."""
        target = edge.target
        check = f"covered[{target}]" + (f" and outcomes[{outcome}]" if outcome is not None else "")
        self.emit(f"{indent}if {check}:")
        inner = indent + "  "
        values = []
        for n, (_, source) in enumerate(edge.moves):
            constant = self.constants.get(source)
            value = str(constant) if constant is not None else \
                f"r{source}" if source in self.known else f"regs[{source}]"
            self.emit(f"{inner}m{n} = {value}")  # every source is read before any is written
            values.append(f"m{n}")
        if self.pending:
            moved = {dest for dest, _ in edge.moves}
            live = [slot for slot in self.liveness.live_at(target, 0)  # type: ignore[union-attr]
                    if slot not in moved]
            stores = self._stores(live)
            if stores:
                self.emit(inner + stores.rstrip("; "))
        for (dest, _), value in zip(edge.moves, values):
            self.emit(f"{inner}regs[{dest}] = {value}")
        self.taken(target, done, inner)

    def here(self) -> str:
        """Statements (each followed by "; ") putting the frame in this block, before an
        exit (nothing for a run: the frame is there)."""
        return ""

    def taken(self, target: int, done: int, indent: str) -> None:
        """What follows the moves of an edge to ``target`` taken inline: the frame at the
        target's start, and the return."""
        self.emit(f"{indent}frame.block = blocks[{target}]; frame.code = fcode[{target}]; "
                  f"frame.pc = 0")
        self.emit(f"{indent}return {done}")

    def define(self, slot: int, expression: str) -> None:
        if self.liveness is None:
            self.emit(f"r{slot} = regs[{slot}] = {expression}")
        else:
            self.emit(f"r{slot} = {expression}")
            self.pending.append(slot)
        self.known.add(slot)

    def instruction(self, ins: Instruction, index: int) -> None:
        op = ins.opcode
        text = " ".join(ins.text.split())[:100]
        self.emit(f"# {index}: {text}")
        if op is Opcode.NOP:
            return
        w = ins.width
        m = (1 << w) - 1 if w else 0
        if op in _SIMPLE_BINARY:
            a, b = (self.operand(s, index) for s in ins.operands)
            self.define(ins.dest, _SIMPLE_BINARY[op].format(a=a, b=b, m=m))
        elif op in _DIVISIONS:
            a, b = (self.operand(s, index) for s in ins.operands)
            self.emit(f"if {b} == 0: {self.stop(index)}")
            self.define(ins.dest, _DIVISIONS[op].format(a=a, b=b, w=w))
        elif op in _SHIFTS:
            a, b = (self.operand(s, index) for s in ins.operands)
            self.emit(f"if {b} >= {w}: {self.stop(index)}")
            self.define(ins.dest, _SHIFTS[op].format(a=a, b=b, m=m, w=w))
        elif op is Opcode.ICMP:
            predicate = ins.aux[0]
            a, b = (self.operand(s, index) for s in ins.operands)
            if predicate in _UNSIGNED_COMPARE:
                test = f"{a} {_UNSIGNED_COMPARE[predicate]} {b}"
            else:
                # signed order is the unsigned order with the sign bit flipped
                sign = 1 << (w - 1)
                left = str(int(a) ^ sign) if a.isdigit() else f"({a} ^ {sign})"
                right = str(int(b) ^ sign) if b.isdigit() else f"({b} ^ {sign})"
                test = f"{left} {_SIGNED_COMPARE[predicate]} {right}"
            self.define(ins.dest, f"1 if {test} else 0")
        elif op is Opcode.TRUNC:
            a = self.operand(ins.operands[0], index)
            self.define(ins.dest, f"{a} & {(1 << ins.aux.to_bits) - 1}")
        elif op is Opcode.ZEXT or op is Opcode.COPY:
            # a copy of an int (a promoted local's load or store: ir.promotion); any other
            # value stops the run for the copy's closure
            self.define(ins.dest, self.operand(ins.operands[0], index))
        elif op is Opcode.SEXT:
            a = self.operand(ins.operands[0], index)
            sign = 1 << (ins.aux.from_bits - 1)
            self.define(ins.dest, f"(({a} ^ {sign}) - {sign}) & {(1 << ins.aux.to_bits) - 1}")
        elif op is Opcode.GEP:
            base = self.operand(ins.operands[0], index)
            const_offset, dynamic = ins.aux
            terms = [base, str(const_offset)]
            for slot, stride, bits in dynamic:
                i = self.operand(slot, index)
                sign = 1 << (bits - 1)
                terms.append(f"(({i} ^ {sign}) - {sign}) * {stride}")
            self.define(ins.dest, f"({' + '.join(terms)}) & {POINTER_MASK}")
        elif op is Opcode.LOAD:
            access = ins.aux
            p = ins.operands[0]
            known = self.memory.get(p)
            if known is not None and known[:2] == (access.size, access.bits):
                # read or written through this very pointer since the run's last store
                self.define(ins.dest, known[2])
                return
            o, at = self.pointee(p, access.size, "read", index)
            value = f"{o}.data[{at}]" if access.size == 1 else \
                f"unpack{access.size}({o}.data, {at})[0]"
            if access.bits != access.size * 8:
                value = f"{value} & {(1 << access.bits) - 1}"
            self.define(ins.dest, value)
            self.memory[p] = (access.size, access.bits, f"r{ins.dest}")
        elif op is Opcode.STORE:
            access = ins.aux
            v, p = ins.operands
            value = self.operand(v, index)
            o, at = self.pointee(p, access.size, "write", index)
            if access.size == 1:
                self.emit(f"{o}.data[{at}] = {value}")
            else:
                self.emit(f"pack{access.size}({o}.data, {at}, {value})")
            self.memory = {p: (access.size, access.bits, value)}
        else:  # pragma: no cover - _compilable lets nothing else in
            raise AssertionError(op)


def _constant_slots(fn: Function) -> dict[int, int]:
    """Slots holding an int constant that nothing writes (literals in generated code)."""
    written = written_slots(fn)
    return {slot: value for slot, value in enumerate(fn.template)
            if slot not in written and type(value) is int}


class _ChainBlockWriter(_RunWriter):
    """One block's body inside a function's chain (see :func:`_chain_source`): stops return
    the instructions done in the chain so far plus this block's, a branch taken here goes on
    to the next chained block, and pointers no chained instruction writes are looked up and
    checked once per call of the chain, not once per block."""

    def __init__(self, fn: Function, constants: dict[int, int], block: int,
                 liveness: Liveness | None, lengths: dict[int, int],
                 invariant: dict[int, int]) -> None:
        super().__init__(fn, constants, f"block_{block}", 0, liveness, block)
        self.lines = []
        #: the chained blocks and their lengths
        self.lengths = lengths
        #: pointer slots constant during a chain call -> the largest access through them
        self.invariant = invariant

    def closure(self, index: int) -> str:
        # fcode[block][0] is this chain itself: the instruction's own closure is in plains
        return f"plains[{self.block}]" if index == 0 else f"fcode[{self.block}][{index}]"

    def stop(self, index: int) -> str:
        if index == 0:
            # at the chain's entry the frame is past this instruction: its closure runs it;
            # later, the frame is put before it and the interpreter loop takes over
            return (f"return leave(count, frame, {self.block}) if count else "
                    f"(plains[{self.block}](state, frame, regs) or 1)")
        return f"{self.here()}frame.pc = {index}; {self.flush(index)}return count + {index}"

    def here(self) -> str:
        # within a call the frame's block is not updated from block to block: exits set it
        return f"frame.block = blocks[{self.block}]; frame.code = fcode[{self.block}]; "

    def counted(self, done: int) -> str:
        return f"count + {done}"

    def taken(self, target: int, done: int, indent: str) -> None:
        self.emit(f"{indent}count += {done}")
        if target in self.lengths:
            self.emit(f"{indent}if count + {self.lengths[target]} <= limit: "
                      f"blk = {target}; continue")
        self.emit(f"{indent}frame.block = blocks[{target}]; frame.code = fcode[{target}]; "
                  f"frame.pc = 0")
        self.emit(f"{indent}return count")

    def pointee(self, slot: int, size: int, use: str, index: int) -> tuple[str, str]:
        largest = self.invariant.get(slot)
        if largest is None:
            return super().pointee(slot, size, use, index)
        o, at = f"o{slot}", f"at{slot}"
        kind = self.objects.get(slot, ("", 0))[0]
        if not kind:
            self.emit(f"if {o} is None:")
            self.emit(f"  p{slot} = regs[{slot}]")
            self.emit(f"  if type(p{slot}) is not int: {self.stop(index)}")
            self.emit(f"  {o} = get(p{slot} >> {SEGMENT_SHIFT})")
            self.emit(f"  if {o} is None or not {o}.flat: {self.stop(index)}")
            self.emit(f"  {at} = p{slot} & {OFFSET_MASK}")
            self.emit(f"  if {at} + {largest} > {o}.obj.size: {self.stop(index)}")
            kind = "read"
        if use == "write" and kind == "read":
            self.emit(f"if not w{slot}:")
            self.emit(f"  if {o}.owner is not state.cow or {o}.obj.read_only: {self.stop(index)}")
            self.emit(f"  w{slot} = True")
            kind = "write"
        self.objects[slot] = (kind, largest)
        return o, at


def _chainable(block: Any) -> bool:
    """A block made only of compilable instructions and a br or condbr at its end."""
    instructions = block.instructions
    return bool(instructions) and instructions[-1].opcode in (Opcode.BR, Opcode.CONDBR) and \
        all(_compilable(ins) for ins in instructions[:-1])


def _chain_source(ex: Machine, fn: Function, constants: dict[int, int],
                  chained: list[int], liveness: Any) -> str:
    """The source of ``make_chain``: one function running the chained blocks of ``fn`` one
    after the other while each ends by a branch it can take itself, up to CHAIN_LIMIT
    instructions a call. Its first argument says which block it enters at."""
    lengths = {b: len(fn.blocks[b].instructions) for b in chained}
    largest: dict[int, int] = {}
    for b in chained:
        for ins in fn.blocks[b].instructions:
            if ins.opcode is Opcode.LOAD or ins.opcode is Opcode.STORE:
                pointer = ins.operands[-1]
                largest[pointer] = max(largest.get(pointer, 0), ins.aux.size)
    written = slots_written_in(fn.blocks[b] for b in chained)
    invariant = {slot: size for slot, size in largest.items() if slot not in written}
    bodies: dict[int, list[str]] = {}
    for b in chained:
        instructions = fn.blocks[b].instructions
        writer = _ChainBlockWriter(fn, constants, b, None if liveness.keeps_all else liveness,
                                   lengths, invariant)
        for k, ins in enumerate(instructions[:-1]):
            writer.instruction(ins, k)
        writer.branch(instructions[-1], len(instructions) - 1,
                      ex.coverage_map.outcome_slots(fn, instructions[-1]), True)
        bodies[b] = writer.lines
    lines = ["def make_chain(plains, exact, sdiv, srem, ashr, fcode, blocks, covered, outcomes):",
             f"  lengths = {lengths!r}",
             "  def leave(count, frame, blk):",
             "    # a later block stops at its first instruction: the interpreter runs it",
             "    frame.block = blocks[blk]; frame.code = fcode[blk]; frame.pc = 0",
             "    return count",
             "  def chain(blk, state, frame, regs):",
             "    limit = exact[0]",
             "    if not limit:",
             f"      limit = {CHAIN_LIMIT}",
             "    elif limit < lengths[blk]:",
             "      plains[blk](state, frame, regs); return 1",
             "    get = state.objects.get",
             "    count = 0"]
    if invariant:
        lines.append("    " + " = ".join(f"o{slot}" for slot in invariant) + " = None")
        lines.append("    " + " = ".join(f"w{slot}" for slot in invariant) + " = False")
    lines.append("    while True:")
    _dispatch(chained, bodies, "      ", lines)
    lines += ["  return chain", ""]
    return "\n".join(lines)


def _dispatch(blocks: list[int], bodies: dict[int, list[str]], indent: str,
              out: list[str]) -> None:
    """A binary tree of comparisons on ``blk`` with each block's body at its leaf."""
    if len(blocks) == 1:
        out.append(f"{indent}# block {blocks[0]}")
        out.extend(indent + line for line in bodies[blocks[0]])
        return
    middle = len(blocks) // 2
    out.append(f"{indent}if blk < {blocks[middle]}:")
    _dispatch(blocks[:middle], bodies, indent + "  ", out)
    out.append(f"{indent}else:")
    _dispatch(blocks[middle:], bodies, indent + "  ", out)


def compile_runs(ex: Machine, fn: Function, fcode: list[list[Any]]) -> int:
    """Put a generated function in place of the first closure of every run of ``MIN_RUN``
    or more compilable instructions in ``fn``'s blocks (``fcode``: its closures by block and
    index). Returns how many runs were compiled."""
    constants = _constant_slots(fn)
    sources: list[str] = []
    places: list[tuple[int, int, str, Callable[..., Any]]] = []
    liveness = ex.liveness_of(fn)
    chained = [] if ex.track_path_blocks or not chains_enabled() else \
        [b for b, block in enumerate(fn.blocks) if _chainable(block)]
    chained_set = set(chained)
    if chained:
        sources.append(_chain_source(ex, fn, constants, chained, liveness))
    for b, block in enumerate(fn.blocks):
        if b in chained_set:
            continue
        instructions = block.instructions
        i = 0
        while i < len(instructions):
            if not _compilable(instructions[i]):
                i += 1
                continue
            j = i
            while j < len(instructions) and _compilable(instructions[j]):
                j += 1
            # a run that reaches its block's end takes the branch too, when it is plain (br)
            # or conditional on a concrete value (its closure is called: it counts coverage)
            tail = j == len(instructions) - 1 and instructions[j].opcode in (Opcode.BR,
                                                                             Opcode.CONDBR)
            if j - i + tail >= MIN_RUN:
                name = f"run_{b}_{i}"
                writer = _RunWriter(fn, constants, name, i,
                                    None if liveness.keeps_all else liveness, b)
                for k in range(i, j):
                    writer.instruction(instructions[k], k)
                if tail:
                    writer.branch(instructions[j], j,
                                  ex.coverage_map.outcome_slots(fn, instructions[j]),
                                  not ex.track_path_blocks)
                else:
                    writer.emit(f"frame.pc = {j}; {writer.flush(j)}return {j - i}")
                head = [f"def make_{name}(plain, exact, sdiv, srem, ashr, code, fcode, blocks, "
                        "covered, outcomes):",
                        f"  def {name}(state, frame, regs):",
                        f"    if 0 < exact[0] < {j - i + tail}: plain(state, frame, regs); "
                        "return 1"]
                body = ["    " + line for line in writer.lines]
                sources.append("\n".join(head + body + [f"  return {name}", ""]))
                places.append((b, i, name, fcode[b][i]))
            i = j
    if not places and not chained:
        return 0
    text = "\n".join(sources)
    filename = f"<symex runs of {fn.name}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    dump = os.environ.get(DUMP_VARIABLE)
    if dump:
        Path(dump).mkdir(parents=True, exist_ok=True)
        (Path(dump) / f"{fn.name}.py").write_text(text)
    namespace: dict[str, Any] = dict(_PACKING)
    exec(compile(text, filename, "exec"), namespace)
    semantics = E.BINARY_SEMANTICS
    covered = ex.coverage[fn.name]
    outcomes = ex.coverage_map.functions[fn.name].outcomes
    for b, i, name, plain in places:
        fcode[b][i] = namespace[f"make_{name}"](plain, ex.exact_slice, semantics[E.Op.SDIV],
                                               semantics[E.Op.SREM], semantics[E.Op.ASHR],
                                               fcode[b], fcode, fn.blocks, covered, outcomes)
    if places:
        ex.longest_run = max(ex.longest_run,
                             max(len(fn.blocks[b].instructions) for b, *_ in places))
    if chained:
        plains = {b: fcode[b][0] for b in chained}
        chain = namespace["make_chain"](plains, ex.exact_slice, semantics[E.Op.SDIV],
                                        semantics[E.Op.SREM], semantics[E.Op.ASHR], fcode,
                                        fn.blocks, covered, outcomes)
        for b in chained:
            fcode[b][0] = partial(chain, b)
        # a call does its entry block, then more while within CHAIN_LIMIT
        ex.longest_run = max(ex.longest_run, CHAIN_LIMIT,
                             max(len(fn.blocks[b].instructions) for b in chained))
    return len(places) + len(chained)
