"""Which registers of a function still matter at a given instruction (live-variable analysis).

A state waiting in the searcher keeps only its frames' live registers (see
:meth:`symex.core.state.Frame.park`): at ``-O0`` almost every value dies within its block, so
a queued state's register file shrinks from the whole function's slots to the few values
crossing the point where it stopped. The analysis is the textbook backward data flow over
the lowered blocks: a register is live at an instruction when some path from there reads it
before writing it. Phi nodes are the moves on control-flow edges, so an edge reads its
sources and writes its destinations before the target block starts.

Constant slots (literals, addresses of globals: the function's template) are never live:
unparking starts from the template, which holds them.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Iterable

from symex.ir.program import Block, Edge, Function, Instruction, Opcode

#: calls that return twice: a frame calling one can resume (through longjmp) at a point the
#: control-flow graph does not lead to, so such frames keep every register
RETURNS_TWICE = frozenset({"setjmp", "_setjmp", "sigsetjmp", "__sigsetjmp"})


def edges_of(aux: Any) -> list[Edge]:
    """The control-flow edges in a terminator's aux (nested tuples of them)."""
    found: list[Edge] = []
    stack = [aux]
    while stack:
        item = stack.pop()
        if isinstance(item, Edge):
            found.append(item)
        elif isinstance(item, tuple):
            stack.extend(item)
    return found


def slots_written_in(blocks: Iterable[Block]) -> set[int]:
    """The slots ``blocks`` write: instruction results and the phi destinations of the
    edges leaving them."""
    written: set[int] = set()
    for block in blocks:
        for ins in block.instructions:
            if ins.dest >= 0:
                written.add(ins.dest)
            for edge in edges_of(ins.aux):
                written.update(dest for dest, _ in edge.moves)
    return written


def written_slots(fn: Function) -> set[int]:
    """The slots ``fn`` writes: parameters, instruction results, phi destinations (every
    other slot of its template is a constant)."""
    return set(fn.params) | slots_written_in(fn.blocks)


def reads_of(ins: Instruction) -> list[int]:
    """The register slots ``ins`` reads (a GEP's index slots live in its aux)."""
    if ins.opcode is Opcode.GEP:
        return [ins.operands[0]] + [slot for slot, _, _ in ins.aux[1]]
    return list(ins.operands)


class Liveness:
    """Live registers of one function, per (block, instruction index); computed once per
    function, answers cached (a state stops at few distinct points)."""

    __slots__ = ("keeps_all", "_live_out", "_value_slots", "_cache", "_blocks")

    def __init__(self, fn: Function) -> None:
        self._blocks = fn.blocks
        self._cache: dict[tuple[int, int], tuple[int, ...]] = {}
        #: True when the function calls setjmp: no register can be dropped safely
        self.keeps_all = any(
            ins.opcode is Opcode.CALL and ins.aux.callee in RETURNS_TWICE
            for block in fn.blocks for ins in block.instructions)
        self._value_slots = frozenset(written_slots(fn))
        self._live_out = self._solve() if not self.keeps_all else []

    def _solve(self) -> list[frozenset[int]]:
        """Live-out set of every block, iterated to the fixed point (worklist, no recursion)."""
        blocks = self._blocks
        count = len(blocks)
        uses: list[set[int]] = []
        defs: list[set[int]] = []
        successors: list[list[Edge]] = []
        predecessors: list[list[int]] = [[] for _ in range(count)]
        for block in blocks:
            used: set[int] = set()
            defined: set[int] = set()
            for ins in block.instructions:
                for slot in reads_of(ins):
                    if slot not in defined:
                        used.add(slot)
                if ins.dest >= 0:
                    defined.add(ins.dest)
            uses.append(used)
            defs.append(defined)
            edges = edges_of(block.instructions[-1].aux) if block.instructions else []
            successors.append(edges)
            for edge in edges:
                predecessors[edge.target].append(block.index)
        live_in: list[set[int]] = [set() for _ in range(count)]
        live_out: list[set[int]] = [set() for _ in range(count)]
        work = list(range(count))
        queued = [True] * count
        while work:
            b = work.pop()
            queued[b] = False
            out: set[int] = set()
            for edge in successors[b]:
                moved = {dest for dest, _ in edge.moves}
                out |= live_in[edge.target] - moved
                out.update(source for _, source in edge.moves)
            live_out[b] = out
            new_in = uses[b] | (out - defs[b])
            if new_in != live_in[b]:
                live_in[b] = new_in
                for p in predecessors[b]:
                    if not queued[p]:
                        queued[p] = True
                        work.append(p)
        return [frozenset(s) for s in live_out]

    def live_at(self, block: int, pc: int) -> tuple[int, ...]:
        """The value slots (sorted) read on some path from instruction ``pc`` of ``block``
        before being written; meaningless when :attr:`keeps_all`."""
        key = (block, pc)
        found = self._cache.get(key)
        if found is not None:
            return found
        live = set(self._live_out[block])
        for ins in reversed(self._blocks[block].instructions[pc:]):
            if ins.dest >= 0:
                live.discard(ins.dest)
            live.update(reads_of(ins))
        found = tuple(sorted(live & self._value_slots))
        self._cache[key] = found
        return found
