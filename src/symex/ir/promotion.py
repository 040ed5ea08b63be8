"""Local variables whose address never escapes live in registers, not in memory.

At ``-O0`` clang gives every local variable and parameter a stack slot (``alloca``), stores
into it and loads from it again, so most instructions of a path are loads and stores of
locals. When an alloca's address is used only as the pointer of loads and stores of one
scalar layout (the same integer or pointer :class:`~symex.ir.program.Access` as the
variable), no other code can see its bytes, and the variable behaves exactly like a
register: the alloca becomes a copy of zero into its own slot (symex's stack objects start
zeroed), each store a copy of the stored value into that slot, and each load a copy out of
it. Each instruction still executes and counts as one (instruction counts, coverage and
recorded trees see the same program), but no object is made, looked up, copied on write or
freed, and a symbolic value stored in it stays the expression it was instead of being cut
into bytes and concatenated again on every load.

What is left in memory: arrays and structures, variables whose address is taken (passed to
a call, stored, offset, compared, cast), variables read or written with another layout (a
union, a byte-wise copy), volatile accesses, and every local of a function that calls
``setjmp`` (a ``longjmp`` back into it must find what the variables held at that moment,
and its registers are not restored from memory). ``$SYMEX_PROMOTE_ALLOCAS=0`` turns the
rewrite off, for an A/B comparison.
"""

from __future__ import annotations

import os

import attrs

from symex.ir.liveness import RETURNS_TWICE, edges_of, reads_of
from symex.ir.program import Access, Block, Instruction, Opcode, ValueKind

__all__ = ["ENABLE_VARIABLE", "promote_allocas", "promotion_enabled"]

ENABLE_VARIABLE = "SYMEX_PROMOTE_ALLOCAS"


def promotion_enabled() -> bool:
    """Whether loading a program promotes allocas (default: yes)."""
    return os.environ.get(ENABLE_VARIABLE, "1") != "0"


def _scalar(access: Access) -> bool:
    return access.kind is ValueKind.INT or access.kind is ValueKind.PTR


def promotable(blocks: tuple[Block, ...], template: list[object]) -> dict[int, Access]:
    """The allocas of a function that can live in their own slot: result slot -> the one
    layout every access uses."""
    candidates: dict[int, int] = {}  # alloca's result slot -> its size in bytes
    for block in blocks:
        for ins in block.instructions:
            if ins.opcode is Opcode.CALL and ins.aux.callee in RETURNS_TWICE:
                return {}
            if ins.opcode is Opcode.ALLOCA and template[ins.operands[0]] == 1 and ins.dest >= 0:
                candidates[ins.dest] = ins.aux[0]
    if not candidates:
        return {}
    layouts: dict[int, Access] = {}
    escaped: set[int] = set()

    def accessed(slot: int, ins: Instruction) -> None:
        access: Access = ins.aux
        if (not _scalar(access) or access.size != candidates[slot] or " volatile " in ins.text
                or layouts.setdefault(slot, access) != access):
            escaped.add(slot)

    for block in blocks:
        for ins in block.instructions:
            op = ins.opcode
            if op is Opcode.LOAD and ins.operands[0] in candidates:
                accessed(ins.operands[0], ins)
                continue
            if op is Opcode.STORE:
                value, pointer = ins.operands
                if value in candidates:
                    escaped.add(value)  # the address itself is stored somewhere
                if pointer in candidates:
                    accessed(pointer, ins)
                continue
            if op is Opcode.ALLOCA:
                continue  # its count operand is a constant, never a candidate
            escaped.update(slot for slot in reads_of(ins) if slot in candidates)
            for edge in edges_of(ins.aux):
                escaped.update(source for _, source in edge.moves if source in candidates)
    return {slot: layouts.get(slot, Access(ValueKind.INT, size, size * 8))
            for slot, size in candidates.items()
            if slot not in escaped and (slot in layouts or size in (1, 2, 4, 8))}


def promote_allocas(blocks: tuple[Block, ...], template: list[object]) -> tuple[Block, ...]:
    """``blocks`` with every :func:`promotable` alloca in its own slot (see the module
    docstring); ``template`` gains the zero constant the allocas copy."""
    chosen = promotable(blocks, template)
    if not chosen:
        return blocks
    zero = len(template)
    template.append(0)
    rewritten: list[Block] = []
    for block in blocks:
        instructions: list[Instruction] = []
        for ins in block.instructions:
            op = ins.opcode
            if op is Opcode.ALLOCA and ins.dest in chosen:
                ins = attrs.evolve(ins, opcode=Opcode.COPY, operands=(zero,),
                                   width=chosen[ins.dest].bits, aux=None)
            elif op is Opcode.LOAD and ins.operands[0] in chosen:
                ins = attrs.evolve(ins, opcode=Opcode.COPY, aux=None)
            elif op is Opcode.STORE and ins.operands[1] in chosen:
                ins = attrs.evolve(ins, opcode=Opcode.COPY, dest=ins.operands[1],
                                   operands=(ins.operands[0],), aux=None)
            instructions.append(ins)
        rewritten.append(attrs.evolve(block, instructions=tuple(instructions)))
    return tuple(rewritten)
