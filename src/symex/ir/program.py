"""The lowered program: compact records the interpreter executes.

llvmlite parses a module once; :mod:`symex.ir.lower` turns every function into these records
(opcode, operand slots, widths, precomputed GEP offsets, debug locations) so that nothing is
parsed or looked up by name while a path runs.

Registers: every SSA value of a function gets a *slot* in its frame's register list. Constants
get slots too, pre-filled in :attr:`Function.template`, so an operand is always just an index.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

import attrs

from symex.ir.debuginfo import SourceLocation

#: Pointers are 64-bit; an object's base address is ``segment << SEGMENT_SHIFT`` and it owns
#: the 2^SEGMENT_SHIFT addresses around it, half below and half above (see core.memory): a
#: pointer moved 128 GB either way still names the object it came from. 38 bits leave room for
#: ``table[i]`` with any 32-bit ``i`` and elements of up to 32 bytes, and for 2^26 objects a path.
POINTER_BITS = 64
SEGMENT_SHIFT = 38

#: the prefix of every external name of a program ``execve`` can run (``--program NAME=PATH``,
#: :mod:`symex.ir.exec_programs`), linked into the main module: ``__symex_program.NAME.main``
#: is NAME's main, so the mapping travels with the IR (assembly.ll, a worker's copy)
EXEC_PREFIX = "__symex_program."


class Opcode(enum.IntEnum):
    """What a lowered instruction does. One member per semantic operation."""

    # integer binary ops (aux: vector element count or 0)
    ADD = enum.auto()
    SUB = enum.auto()
    MUL = enum.auto()
    UDIV = enum.auto()
    SDIV = enum.auto()
    UREM = enum.auto()
    SREM = enum.auto()
    AND = enum.auto()
    OR = enum.auto()
    XOR = enum.auto()
    SHL = enum.auto()
    LSHR = enum.auto()
    ASHR = enum.auto()
    ICMP = enum.auto()  # aux: (predicate, vector count)
    SELECT = enum.auto()  # aux: vector count
    # float (concrete only); aux: float kind name
    FADD = enum.auto()
    FSUB = enum.auto()
    FMUL = enum.auto()
    FDIV = enum.auto()
    FREM = enum.auto()
    FNEG = enum.auto()
    FCMP = enum.auto()  # aux: (predicate, kind)
    # casts; aux: CastInfo
    TRUNC = enum.auto()
    ZEXT = enum.auto()
    SEXT = enum.auto()
    PTRTOINT = enum.auto()
    INTTOPTR = enum.auto()
    BITCAST = enum.auto()
    FPCAST = enum.auto()  # fptrunc/fpext
    FPTOUI = enum.auto()
    FPTOSI = enum.auto()
    UITOFP = enum.auto()
    SITOFP = enum.auto()
    COPY = enum.auto()  # freeze, addrspacecast, llvm.expect, ...
    # memory
    ALLOCA = enum.auto()  # aux: (element alloc size, align, variable name, its site); operands: (count,)
    LOAD = enum.auto()  # aux: Access
    STORE = enum.auto()  # aux: Access; operands: (value, pointer)
    GEP = enum.auto()  # aux: (constant offset, ((slot, stride, index bits), ...))
    # aggregates and vectors
    EXTRACTVALUE = enum.auto()  # aux: indices
    INSERTVALUE = enum.auto()  # aux: indices
    EXTRACTELEMENT = enum.auto()
    INSERTELEMENT = enum.auto()
    SHUFFLEVECTOR = enum.auto()  # aux: mask (tuple, -1 = poison)
    # control flow
    BR = enum.auto()  # aux: Edge
    CONDBR = enum.auto()  # aux: (Edge true, Edge false)
    SWITCH = enum.auto()  # aux: (Edge default, ((value, Edge), ...))
    INDIRECTBR = enum.auto()  # aux: tuple of Edge, by block index
    RET = enum.auto()
    UNREACHABLE = enum.auto()
    CALL = enum.auto()  # aux: CallInfo
    VAARG = enum.auto()  # aux: Access
    # intrinsics
    MEMCPY = enum.auto()
    MEMMOVE = enum.auto()
    MEMSET = enum.auto()
    OVERFLOW = enum.auto()  # aux: "sadd" | "uadd" | "ssub" | "usub" | "smul" | "umul"
    SATURATE = enum.auto()  # aux: "sadd" | "uadd" | "ssub" | "usub"
    MINMAX = enum.auto()  # aux: "smax" | "smin" | "umax" | "umin"
    ABS = enum.auto()
    THREEWAY = enum.auto()  # llvm.scmp / llvm.ucmp; aux: (signed, operand width)
    FSHL = enum.auto()
    FSHR = enum.auto()
    BSWAP = enum.auto()
    BITREVERSE = enum.auto()
    CTPOP = enum.auto()
    CTLZ = enum.auto()
    CTTZ = enum.auto()
    STACKSAVE = enum.auto()
    STACKRESTORE = enum.auto()
    ASSUME = enum.auto()
    TRAP = enum.auto()
    VASTART = enum.auto()
    VAEND = enum.auto()
    VACOPY = enum.auto()
    FLOATMATH = enum.auto()  # concrete float intrinsic; aux: (name, kind)
    ASSEMBLY = enum.auto()  # a known x86-64 inline assembly statement; aux: its AssemblyKind
    NOP = enum.auto()  # lifetime markers, debug intrinsics, ...
    UNSUPPORTED = enum.auto()  # aux: reason; executing it ends the path as unsupported


class AssemblyKind(enum.Enum):
    """The inline assembly statements symex executes (GMP's and gnulib's ``longlong.h``:
    128-bit arithmetic on two 64-bit halves, bit scans), by what they compute."""

    MULQ = "mulq"
    """``mulq``: (low, high) halves of the 128-bit product of two 64-bit values."""
    ADD_PAIR = "addq/adcq"
    """``addq``/``adcq``: (high, low) of the sum of two (high, low) pairs."""
    SUB_PAIR = "subq/sbbq"
    """``subq``/``sbbq``: (high, low) of the difference of two (high, low) pairs."""
    BSF = "bsf"
    """``bsf``: the index of the lowest set bit."""
    BSR = "bsr"
    """``bsr``: the index of the highest set bit."""


class ValueKind(enum.IntEnum):
    """How a first-class value is laid out in memory."""

    INT = 1
    PTR = 2
    FLOAT = 3  # float, double, x86_fp80 (concrete Python floats)
    VECTOR = 4
    AGGREGATE = 5  # struct or array held in a register


@attrs.frozen(slots=True)
class Access:
    """Memory layout of a loaded/stored value.

    ``size`` is the store size in bytes; ``bits`` the integer width (INT/PTR) or the float
    width (32, 64, 80); ``parts`` lists ``(byte offset, Access)`` for vectors and aggregates.
    """

    kind: ValueKind
    size: int
    bits: int = 0
    parts: tuple[tuple[int, Access], ...] = ()


#: a pointer in memory (8 bytes): the one layout every model reads and writes pointers with
POINTER_ACCESS = Access(ValueKind.PTR, 8, 64)
#: a 64-bit integer in memory (a size_t, a long): the layout the models read and write them with
WORD_ACCESS = Access(ValueKind.INT, 8, 64)


@attrs.frozen(slots=True)
class CastInfo:
    """Widths of a cast; ``from_kind``/``to_kind`` name float kinds where floats are involved."""

    from_bits: int
    to_bits: int
    count: int = 0  # vector element count, 0 for scalars
    from_access: Access | None = None  # for bitcasts between vectors/floats/ints
    to_access: Access | None = None


@attrs.frozen(slots=True)
class Edge:
    """A control-flow edge: target block index and the phi moves ``(dest, src)`` it performs."""

    target: int
    moves: tuple[tuple[int, int], ...]


@attrs.frozen(slots=True)
class CallInfo:
    """A call site. ``callee`` is the function name for direct calls, else None (then the last
    operand is the callee pointer). ``arg_access`` describes every argument's layout (used for
    variadic arguments, which are passed through memory); ``ret`` the result's layout or None."""

    callee: str | None
    fixed_args: int
    arg_access: tuple[Access, ...]
    ret: Access | None


@attrs.frozen(slots=True)
class Instruction:
    """One lowered instruction. ``dest`` is its result slot or -1; ``operands`` are slots."""

    opcode: Opcode
    dest: int
    operands: tuple[int, ...]
    width: int
    aux: Any
    location: SourceLocation | None
    text: str


@attrs.define(slots=True, eq=False)
class Block:
    """A basic block: its instructions, phi nodes already turned into edge moves."""

    index: int
    label: str
    instructions: tuple[Instruction, ...]


@attrs.define(slots=True, eq=False)
class Function:
    """A lowered function (or a declaration, which has no blocks)."""

    name: str
    address: int
    params: tuple[int, ...]
    param_access: tuple[Access, ...]
    ret: Access | None
    vararg: bool
    num_slots: int
    template: list[Any]
    blocks: tuple[Block, ...]
    is_declaration: bool
    file: str | None = None
    line: int | None = None
    #: not lowered yet: a library function (no debug info) is lowered when first used; until
    #: then its LAZY_FIELDS are unset and the first read of one lowers it (__getattr__)
    pending: bool = False
    lowerer: Callable[[Function], None] | None = None

    def __getattr__(self, name: str) -> Any:
        # only reached for an unset slot: a pending function's lowered fields
        if name in LAZY_FIELDS and self.pending and self.lowerer is not None:
            self.lowerer(self)
            return getattr(self, name)
        raise AttributeError(f"'Function' object has no attribute {name!r}")

    @property
    def instruction_count(self) -> int:
        """Number of lowered instructions in the function."""
        return sum(len(b.instructions) for b in self.blocks)


#: the fields a pending Function gets when it is lowered
LAZY_FIELDS = frozenset({"params", "param_access", "num_slots", "template", "blocks"})


@attrs.define(slots=True, eq=False)
class GlobalObject:
    """A global variable: its fixed address, size and initial memory image."""

    name: str
    address: int
    size: int
    image: bytes
    read_only: bool
    #: its name in the C source (``local`` for ``main.local``; "" for a string literal)
    source_name: str = ""
    #: where it is declared, ``file:line``, from debug info ("" without)
    site: str = ""


@attrs.define(eq=False)
class Program:
    """A whole lowered module, ready to execute."""

    path: str
    functions: dict[str, Function]
    globals: dict[str, GlobalObject]
    functions_by_address: dict[int, Function]
    data_layout: str
    source_files: tuple[str, ...]
    #: the `.ll` text the program was lowered from (for assembly.ll and error reports)
    ir_text: str = ""
    #: names that are aliases of functions (musl's weak_alias), by the function's name
    function_aliases: dict[str, str] = attrs.field(factory=dict)
    #: the C library linked in ("symex", "musl" or "none") and why (``libc="auto"``'s choice)
    library: str = "symex"
    library_reason: str = ""

    def ensure_lowered(self, fn: Function) -> None:
        """Lower ``fn`` now if it was left for its first use."""
        if fn.pending and fn.lowerer is not None:
            fn.lowerer(fn)

    def lower_all(self) -> None:
        """Lower every pending function (before the program is pickled for a worker)."""
        for fn in self.functions.values():
            self.ensure_lowered(fn)

    def __getstate__(self) -> dict[str, Any]:
        # a pending function's lowerer holds the parsed module, which does not pickle
        self.lower_all()
        return {field.name: getattr(self, field.name) for field in attrs.fields(type(self))}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)

    def function(self, name: str) -> Function:
        """The function called ``name`` (KeyError when absent)."""
        return self.functions[name]

    def callee(self, name: str) -> Function | None:
        """The function a direct call to ``name`` reaches (through an alias too), or None."""
        found = self.functions.get(name)
        if found is None and name in self.function_aliases:
            found = self.functions.get(self.function_aliases[name])
        return found

    @property
    def exec_entries(self) -> dict[str, Function]:
        """The programs ``execve`` can run, by the name ``--program`` gave each: its main."""
        return {name[len(EXEC_PREFIX):-len(".main")]: fn for name, fn in self.functions.items()
                if name.startswith(EXEC_PREFIX) and name.endswith(".main") and not fn.is_declaration}

    @property
    def instruction_count(self) -> int:
        """Number of lowered instructions over all defined functions."""
        return sum(f.instruction_count for f in self.functions.values())
