"""Coverage of the program under test: blocks, branch outcomes, source lines and instructions
that some path reached, with running counts so progress reports cost no recomputation.

Only instructions with a debug location that was not inlined from elsewhere count (the code
the user wrote, not code pulled in by inlining at -O2). A *branch outcome* is one successor of
a conditional branch or of a switch with at least two distinct successors, keyed
``(file, line of the branch, index)`` with the index in LLVM's successor order (``br``: true
then false; ``switch``: default, then the case targets in case order, each target once). The
index runs on across the branches of one line in program order, so the four outcomes of
``if (a && b)`` on one line are indices 0-3 and never share a key.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from symex.errors import ConfigError
from symex.ir.program import Function, Instruction, Opcode, Program

#: a source line of the program under test
Line = tuple[str, int]
#: one outcome of a conditional branch: (file, line of the branch, index of the outcome among
#: all branch outcomes of that line)
BranchOutcome = tuple[str, int, int]


def counted_location(ins: Instruction) -> Line | None:
    """The (file, line) an instruction counts for in coverage, or None if it does not count."""
    loc = ins.location
    if loc is None or loc.inlined_at is not None:
        return None
    return (loc.file, loc.line)


def successor_targets(ins: Instruction) -> list[int]:
    """The distinct successor blocks of a CONDBR or SWITCH, in LLVM's successor order."""
    if ins.opcode is Opcode.CONDBR:
        edges = list(ins.aux)
    else:
        default, cases = ins.aux
        edges = [default] + [edge for _, edge in cases]
    targets: list[int] = []
    for edge in edges:
        if edge.target not in targets:
            targets.append(edge.target)
    return targets


class FunctionCoverage:
    """What coverage means in one function: lines and instruction counts per block, and the
    outcome slots of its conditional branches."""

    __slots__ = ("block_lines", "block_instructions", "outcome_base", "outcome_block", "outcome_keys",
                 "outcomes")

    def __init__(self, fn: Function) -> None:
        self.block_lines: list[tuple[Line, ...]] = []
        self.block_instructions: list[int] = []
        #: first outcome slot of each counted branch instruction, keyed by id() of the record
        #: (the program outlives the exploration, so ids stay valid; lookups only, no iteration)
        self.outcome_base: dict[int, int] = {}
        #: the block index of each counted branch instruction (its terminator), same keys
        self.outcome_block: dict[int, int] = {}
        self.outcome_keys: list[BranchOutcome] = []
        next_index: dict[Line, int] = {}
        for block in fn.blocks:
            lines: dict[Line, None] = {}
            count = 0
            for ins in block.instructions:
                where = counted_location(ins)
                if where is None:
                    continue
                lines[where] = None
                count += 1
                if ins.opcode is Opcode.CONDBR or ins.opcode is Opcode.SWITCH:
                    targets = successor_targets(ins)
                    if len(targets) >= 2:
                        self.outcome_base[id(ins)] = len(self.outcome_keys)
                        self.outcome_block[id(ins)] = block.index
                        first = next_index.get(where, 0)
                        next_index[where] = first + len(targets)
                        self.outcome_keys.extend(
                            (where[0], where[1], first + k) for k in range(len(targets)))
            self.block_lines.append(tuple(lines))
            self.block_instructions.append(count)
        #: one byte per outcome slot, set when a path takes that outcome
        self.outcomes = bytearray(len(self.outcome_keys))


class _FunctionsCovered(dict[str, "FunctionCoverage"]):
    """FunctionCoverage by function name; a function lowered on its first call gets its
    entry when first asked for (it counts no lines: it has no debug info)."""

    __slots__ = ("program",)

    def __init__(self, program: Program) -> None:
        super().__init__()
        self.program = program

    def __missing__(self, name: str) -> FunctionCoverage:
        info = self[name] = FunctionCoverage(self.program.functions[name])
        return info


class CoverageMap:
    """Coverage of one exploration. The executor reports first visits (``reach_block``,
    ``take_outcome``); the counts are kept as they grow."""

    __slots__ = ("functions", "lines", "branches", "blocks", "instructions", "total_lines",
                 "total_branches", "total_instructions")

    def __init__(self, program: Program) -> None:
        self.functions: dict[str, FunctionCoverage] = _FunctionsCovered(program)
        total_lines: set[Line] = set()
        total_branches: set[BranchOutcome] = set()
        total_instructions = 0
        for fn in program.functions.values():
            if fn.pending:
                continue  # no debug info, so nothing counted: made when first reached
            info = FunctionCoverage(fn)
            self.functions[fn.name] = info
            for lines in info.block_lines:
                total_lines.update(lines)
            total_branches.update(info.outcome_keys)
            total_instructions += sum(info.block_instructions)
        #: covered lines and branch outcomes (sets, since several blocks or branches may share
        #: a line) and the covered instruction count
        self.lines: set[Line] = set()
        self.branches: set[BranchOutcome] = set()
        self.instructions = 0
        #: the (function name, block index) pairs reached (parallel workers merge these)
        self.blocks: set[tuple[str, int]] = set()
        self.total_lines = frozenset(total_lines)
        self.total_branches = frozenset(total_branches)
        self.total_instructions = total_instructions

    def outcome_slots(self, fn: Function, ins: Instruction) -> tuple[bytearray, int, int] | None:
        """The outcome bitmap of ``fn``, the first slot of branch ``ins`` and the index of its
        block, or None if the branch does not count."""
        info = self.functions[fn.name]
        base = info.outcome_base.get(id(ins))
        return None if base is None else (info.outcomes, base, info.outcome_block[id(ins)])

    def reach_block(self, fn: Function, block: int) -> None:
        """A path entered ``block`` of ``fn`` for the first time."""
        info = self.functions[fn.name]
        self.blocks.add((fn.name, block))
        self.lines.update(info.block_lines[block])
        self.instructions += info.block_instructions[block]

    def instructions_in(self, blocks: Iterable[tuple[str, int]]) -> int:
        """The counted instructions of the given (function name, block index) pairs."""
        functions = self.functions
        return sum(functions[name].block_instructions[block] for name, block in blocks)

    def take_outcome(self, fn: Function, slot: int) -> None:
        """A path took branch outcome ``slot`` of ``fn`` for the first time."""
        info = self.functions[fn.name]
        info.outcomes[slot] = 1
        self.branches.add(info.outcome_keys[slot])

    def lines_of(self, blocks: Iterable[tuple[str, int]]) -> frozenset[Line]:
        """The counted source lines of the given (function name, block index) pairs."""
        out: set[Line] = set()
        functions = self.functions
        for name, block in blocks:
            out.update(functions[name].block_lines[block])
        return frozenset(out)


def reach_targets(coverage: CoverageMap, locations: Sequence[str]) -> dict[tuple[str, int], str]:
    """The blocks whose first visit means one of ``locations`` was reached, each with its
    location: ``FUNCTION`` is its entry block, ``FILE:LINE`` every block holding that line
    (``FILE`` as written, or any path ending in ``/FILE``). ConfigError names a location
    that is no function and no line of code."""
    targets: dict[tuple[str, int], str] = {}
    for location in locations:
        if location in coverage.functions:
            targets[(location, 0)] = location
            continue
        file, colon, line = location.rpartition(":")
        found = False
        if colon and line.isdigit():
            for name, info in coverage.functions.items():
                for block, lines in enumerate(info.block_lines):
                    if any(at == int(line) and (f == file or f.endswith("/" + file))
                           for f, at in lines):
                        targets[(name, block)] = location
                        found = True
        if not found:
            raise ConfigError(f"stop-at location {location!r} is no function of the program "
                              f"and no line with code; give FUNCTION or FILE:LINE")
    return targets


def reached_location(targets: dict[tuple[str, int], str],
                     blocks: set[tuple[str, int]]) -> str | None:
    """The location of a target among the reached ``blocks`` (the first in ``targets``'
    order), or None."""
    for block, location in targets.items():
        if block in blocks:
            return location
    return None
