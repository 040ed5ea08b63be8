"""Builders of control flow: br, condbr (forking on a symbolic condition), switch,
indirectbr, ret, call, unreachable and trap, assume, and the instructions that end a path as
unsupported."""

from __future__ import annotations

from typing import Any

from symex.core.interpreter.machine import Machine

from symex import expr as E
from symex.core.interpreter.builders.registry import builds, unsupported_step, where
from symex.core.coverage import successor_targets
from symex.core.forks import (
    ForkKind,
)
from symex.core.memory.objects import (
    OFFSET_MASK,
)
from symex.core.outcome import (
    ErrorKind,
    Forked,
    PathStatus,
    PathTerminated,
)
from symex.core.state import Frame, State
from symex.ir.program import (
    SEGMENT_SHIFT,
    Edge,
    Function,
    Instruction,
    Opcode,
)

# -- control flow -------------------------------------------------------------------------------

@builds(Opcode.BR)
def _build_br(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
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


@builds(Opcode.CONDBR)
def _build_condbr(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
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


@builds(Opcode.SWITCH)
def _build_switch(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
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
        # each feasible option with inputs that take it: they become its state's model, so
        # a path that ends after the switch needs no solving for its test
        feasible = []
        for index, (edge, hit) in enumerate(options):
            inputs = ex.inputs_for(state, hit)
            if inputs is not None:
                feasible.append((index, edge, hit, inputs))
        if len(feasible) == 1:
            _, edge, hit, _ = feasible[0]
            take(fn, outcomes, slot_of[edge.target])
            ex.jump(state, frame, edge, fcode)
            return
        # fork every sibling before any of them takes its constraint; each state's decision
        # is the index of its option (case targets in order, then the default)
        states = [state] + [ex.fork(state) for _ in feasible[1:]]
        for (index, _, hit, inputs), target_state in zip(feasible, states):
            target_state.add_constraint(hit, model=inputs)
            target_state.decide(index)
            target_state.depth += 1
        ex.record_fork(ForkKind.SWITCH, cond, states)
        for (_, edge, _, _), target_state in zip(feasible, states):
            take(fn, outcomes, slot_of[edge.target])
            ex.jump(target_state, target_state.frame, edge, fcode)
        raise Forked()
    return step


@builds(Opcode.INDIRECTBR)
def _build_indirectbr(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
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


@builds(Opcode.RET)
def _build_ret(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    operands = ins.operands
    if operands:
        (a,) = operands

        def step(state: State, frame: Frame, regs: list) -> None:
            ex.ret(state, regs[a])
        return step

    def void_step(state: State, frame: Frame, regs: list) -> None:
        ex.ret(state, None)
    return void_step


@builds(Opcode.UNREACHABLE)
def _build_unreachable(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    def step(state: State, frame: Frame, regs: list) -> None:
        ex.fail(state, ErrorKind.EXEC, "reached an 'unreachable' instruction")
    return step


@builds(Opcode.TRAP)
def _build_trap(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    def step(state: State, frame: Frame, regs: list) -> None:
        ex.fail(state, ErrorKind.EXEC, "llvm.trap called (e.g. __builtin_trap)")
    return step


@builds(Opcode.UNSUPPORTED)
def _build_unsupported(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    reason = f"{ins.aux}: '{ins.text}' at {where(ins)}"

    def step(state: State, frame: Frame, regs: list) -> None:
        raise PathTerminated(PathStatus.PARTIAL, f"unsupported: {reason}")
    return step


@builds(Opcode.NOP, Opcode.VAEND)
def _build_nop(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    def step(state: State, frame: Frame, regs: list) -> None:
        return None
    return step


@builds(Opcode.CALL)
def _build_call(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    info = ins.aux
    operands = ins.operands
    if info.callee is not None:
        callee = ex.program.callee(info.callee)
        if callee is None:
            return unsupported_step(f"call to unknown function '{info.callee}'")
        call = ex.call

        def step(state: State, frame: Frame, regs: list) -> None:
            call(state, frame, ins, callee, [regs[s] for s in operands])
        return step
    arg_slots = operands[:-1]
    target_slot = operands[-1]

    def indirect_step(state: State, frame: Frame, regs: list) -> None:
        ex.call_pointer(state, frame, ins, regs[target_slot], [regs[s] for s in arg_slots])
    return indirect_step




@builds(Opcode.ASSUME)
def _build_assume(ex: Machine, fn: Function, fcode: list, ins: Instruction) -> Any:
    (a,) = ins.operands

    def step(state: State, frame: Frame, regs: list) -> None:
        cond = regs[a]
        if type(cond) is not int:
            state.add_constraint(cond)
    return step


