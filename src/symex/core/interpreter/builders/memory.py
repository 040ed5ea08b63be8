"""Builders of memory instructions: alloca, load, store, getelementptr, memcpy/memmove,
memset, stacksave/stackrestore and the variadic-argument ones (va_start, va_copy, va_arg)."""

from __future__ import annotations

from typing import Any

from symex.core.interpreter.machine import Machine

from symex import expr as E
from symex.core.interpreter import values as V
from symex.core.memory.allocation_sizes import fix_allocation_size
from symex.core.interpreter.builders.registry import builds
from symex.core.memory.objects import (
    OFFSET_MASK,
    POINTER_MASK,
    ObjectKind,
    int_reader,
    int_writer,
)
from symex.core.state import Frame, State
from symex.ir.program import (
    POINTER_ACCESS,
    SEGMENT_SHIFT,
    Access,
    Function,
    Instruction,
    Opcode,
    ValueKind,
)

#: Size of the x86-64 va_list structure (gp_offset, fp_offset, overflow_arg_area, reg_save_area)
VA_LIST_SIZE = 24
#: gp/fp offsets that tell clang's inline va_arg code "registers exhausted, use the overflow area"
VA_GP_EXHAUSTED = 48
VA_FP_EXHAUSTED = 304


# -- memory -------------------------------------------------------------------------------------

@builds(Opcode.ALLOCA)
def _build_alloca(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    (c,) = ins.operands
    element_size, _align, variable, site = ins.aux

    def step(state: State, frame: Frame, regs: list) -> None:
        count = regs[c]
        if type(count) is not int:
            # a variable-length array of symbolic length: a few lengths, a path each
            count = fix_allocation_size(ex, state, count, "variable-length array size")
        address = ex.allocate(state, count * element_size, ObjectKind.STACK, variable, site)
        frame.allocas += (address >> SEGMENT_SHIFT,)
        regs[d] = address
    return step


@builds(Opcode.LOAD)
def _build_load(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
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
                    if os is not None and offset < os.obj.size and os.obj.limit is None:
                        regs[d] = os.read_byte(offset)
                        return
                regs[d] = ex.read(state, pointer, access)
            return byte_step
        return int_step

    def step(state: State, frame: Frame, regs: list) -> None:
        regs[d] = ex.read(state, regs[p], access)
    return step


@builds(Opcode.STORE)
def _build_store(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
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


@builds(Opcode.GEP)
def _build_gep(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
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


@builds(Opcode.MEMCPY, Opcode.MEMMOVE)
def _build_memcpy(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    dst, src, n = ins.operands

    def step(state: State, frame: Frame, regs: list) -> None:
        count = regs[n]
        if type(count) is not int:
            count = ex.concretize(state, count, count.width, "memcpy length")
        if count:
            ex.write_bytes(state, regs[dst], ex.read_bytes(state, regs[src], count))
    return step


@builds(Opcode.MEMSET)
def _build_memset(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
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




@builds(Opcode.STACKSAVE)
def _build_stacksave(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest

    def step(state: State, frame: Frame, regs: list) -> None:
        regs[d] = len(frame.allocas)
    return step


@builds(Opcode.STACKRESTORE)
def _build_stackrestore(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
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




@builds(Opcode.VASTART)
def _build_vastart(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    (a,) = ins.operands

    def step(state: State, frame: Frame, regs: list) -> None:
        area = frame.varargs
        data = (VA_GP_EXHAUSTED.to_bytes(4, "little") + VA_FP_EXHAUSTED.to_bytes(4, "little")
                + area.to_bytes(8, "little") + bytes(8))
        ex.write_bytes(state, regs[a], data)
    return step


@builds(Opcode.VACOPY)
def _build_vacopy(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    dst, src = ins.operands[:2]

    def step(state: State, frame: Frame, regs: list) -> None:
        ex.write_bytes(state, regs[dst], ex.read_bytes(state, regs[src], VA_LIST_SIZE))
    return step


@builds(Opcode.VAARG)
def _build_vaarg(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    d = ins.dest
    (a,) = ins.operands
    access = ins.aux

    def step(state: State, frame: Frame, regs: list) -> None:
        va_list = regs[a]
        area_field = va_list + 8 if type(va_list) is int else E.add(E.const(8, 64), va_list)
        area = ex.read(state, area_field, POINTER_ACCESS)
        if access.size > 8:
            area = (area + 15) // 16 * 16 if type(area) is int else area
        regs[d] = ex.read(state, area, access)
        step_size = (access.size + 7) // 8 * 8
        ex.write(state, area_field, POINTER_ACCESS, V.binary("add", area, step_size, 64))
    return step


