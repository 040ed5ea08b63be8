"""Lower one function's instructions into :mod:`symex.ir.program` records: each
instruction's opcode, operand slots (constants evaluated once into the function's template),
width and the details its closure needs (GEP offsets, cast layouts, call sites, phi moves on
the edges), read from the instruction's text where llvmlite does not expose them.

:class:`FunctionLowering` works for :class:`~symex.ir.lower.Lowering` (the module's), through
the :class:`ModuleLowering` protocol of what it asks of it.
"""
from __future__ import annotations

import ctypes
import re
from typing import Any, Protocol

from symex.errors import LoadError
from symex.ir import constant_evaluation as CE
from symex.ir import constants as C
from symex.ir import types as T
from symex.ir.debuginfo import DebugInfo, SourceLocation
from symex.ir.program import (
    AssemblyKind,
    Access,
    CallInfo,
    CastInfo,
    Edge,
    Instruction,
    Opcode,
    ValueKind,
)


class ModuleLowering(Protocol):
    """What an instruction's lowering asks of its module's (:class:`~symex.ir.lower.Lowering`)."""

    layout: T.DataLayout
    types: T.TypeParser
    debug: DebugInfo

    def type_of(self, typeref: Any) -> Any:
        """The parsed type of an llvmlite type reference."""
        ...

    def access(self, t: Any) -> Access:
        """Memory layout of a first-class type."""
        ...

    def width(self, t: Any) -> int:
        """Bits of a value of type ``t`` in a register."""
        ...

    def resolve(self, name: str) -> int:
        """The address of a function or global."""
        ...


_BINARY = {
    "add": Opcode.ADD, "sub": Opcode.SUB, "mul": Opcode.MUL, "udiv": Opcode.UDIV,
    "sdiv": Opcode.SDIV, "urem": Opcode.UREM, "srem": Opcode.SREM, "and": Opcode.AND,
    "or": Opcode.OR, "xor": Opcode.XOR, "shl": Opcode.SHL, "lshr": Opcode.LSHR,
    "ashr": Opcode.ASHR,
}
_FLOAT_BINARY = {
    "fadd": Opcode.FADD, "fsub": Opcode.FSUB, "fmul": Opcode.FMUL, "fdiv": Opcode.FDIV,
    "frem": Opcode.FREM,
}
_INT_CASTS = {"trunc": Opcode.TRUNC, "zext": Opcode.ZEXT, "sext": Opcode.SEXT}
_FLOAT_CASTS = {
    "fptrunc": Opcode.FPCAST, "fpext": Opcode.FPCAST, "fptoui": Opcode.FPTOUI,
    "fptosi": Opcode.FPTOSI, "uitofp": Opcode.UITOFP, "sitofp": Opcode.SITOFP,
}
_NOP_INTRINSICS = (
    "llvm.lifetime.", "llvm.dbg.", "llvm.invariant.", "llvm.sideeffect",
    "llvm.experimental.noalias.scope.decl", "llvm.donothing", "llvm.prefetch",
    "llvm.var.annotation", "llvm.ptr.annotation", "llvm.codeview.",
)
_FLOAT_MATH = (
    "fabs", "sqrt", "floor", "ceil", "trunc", "round", "roundeven", "rint", "nearbyint",
    "fmuladd", "fma", "copysign", "minnum", "maxnum", "minimum", "maximum", "pow", "exp",
    "exp2", "log", "log2", "log10", "sin", "cos", "powi", "lround", "llround", "lrint", "llrint",
    "is.fpclass",
)
_INTRINSIC_NAME = re.compile(r"^llvm\.([a-z0-9_]+(?:\.[a-z_]+)*?)(?:\.(?:[ipvfs][0-9a-z]*|p0|f32|f64|f80))*$")
_CASE = re.compile(r"(i\d+)\s+(-?\d+|true|false),\s*label\s+%")
_META = re.compile(r",\s*!(?:dbg|tbaa|range|noundef|nonnull|llvm\.[\w.]+|prof|annotation|srcloc|DIAssignID"
                   r"|noalias|alias\.scope|heapallocsite|align|nosanitize|callees|mmra|invariant\.load|\w+)"
                   r"\s+!.*$")


def value_address(value: Any) -> int:
    """Identity of an llvmlite value: its underlying LLVM pointer."""
    return ctypes.cast(value._ptr, ctypes.c_void_p).value or 0


def _clean_text(printed: str) -> str:
    """An instruction's first printed line without its metadata attachments."""
    first = printed.strip().split("\n", 1)[0]
    return _META.sub("", first) if "!" in first else first




def intrinsic_base(name: str) -> str:
    """``llvm.memcpy.p0.p0.i64`` -> ``llvm.memcpy``; ``llvm.sadd.with.overflow.i32`` ->
    ``llvm.sadd.with.overflow``: drop the type-mangling suffixes."""
    parts = name.split(".")
    keep = [parts[0], parts[1]] if len(parts) > 1 else parts
    for part in parts[2:]:
        if re.fullmatch(r"(i\d+|p\d+|f\d+|v\d+\w*|nxv\w+|s_\w+|sl_\w+|a\d+\w*|isVoid|bf16|ppcf128)", part):
            break
        keep.append(part)
    return ".".join(keep)


#: an inline assembly callee as llvmlite prints it: its template and constraint string
_INLINE_ASM = re.compile(r'^\S+ asm (?:sideeffect )?(?:alignstack )?(?:inteldialect )?(?:unwind )?"(.*)", "(.*)"$')
#: the assembly statements symex executes, by template and output/input constraints (as
#: :func:`_assembly_key` writes them: no spaces, tabs or newlines, ``${N:q}`` as ``$N``, no
#: clobbers, ``%`` or ``&``)
_KNOWN_ASSEMBLY = {
    ("mulq$3", "={ax},={dx},0,rm"): AssemblyKind.MULQ,
    ("addq$5,$1adcq$3,$0", "=r,=r,0,rme,1,rme"): AssemblyKind.ADD_PAIR,
    ("subq$5,$1sbbq$3,$0", "=r,=r,0,rme,1,rme"): AssemblyKind.SUB_PAIR,
    ("bsf$1,$0", "=r,rm"): AssemblyKind.BSF,
    ("bsr$1,$0", "=r,rm"): AssemblyKind.BSR,
}


def _assembly_key(template: str, constraints: list[str]) -> tuple[str, str]:
    text = re.sub(r"\\0[9A]|\s", "", template)
    text = re.sub(r"\$\{(\d+):q\}", r"$\1", text)
    return text, ",".join(c.replace("%", "").replace("&", "") for c in constraints)


#: ``cpuid`` alone, or between the two exchanges that save %rbx (cpuid.h's, for PIC code)
_CPUID = re.compile(r"\s*(?:xchg\S*\s+\S+\s*(?:\\0A)?\s*)?cpuid\s*(?:\\0A\s*xchg\S*\s+\S+\s*)?(?:\\0A)?\s*")



class FunctionLowering:
    """Per-function lowering state: slot maps, constant pool, phi moves."""

    def __init__(self, lowering: ModuleLowering, fn: Any, slots: dict[int, int], template: list[Any],
                 const_slots: dict[Any, int], block_ids: dict[int, int]) -> None:
        self.L = lowering
        self.fn = fn
        self.slots = slots
        self.template = template
        self.const_slots = const_slots
        self.block_ids = block_ids
        self.moves: dict[tuple[int, int], list[tuple[int, int]]] = {}
        self.block = 0

    # -- operands ------------------------------------------------------------------------

    def constant_slot(self, key: Any, value: Any) -> int:
        slot = self.const_slots.get(key)
        if slot is None:
            slot = len(self.template)
            self.template.append(value)
            self.const_slots[key] = slot
        return slot

    def operand(self, op: Any) -> int:
        """Slot of an operand; constants are evaluated once into the template."""
        addr = value_address(op)
        slot = self.slots.get(addr)
        if slot is not None:
            return slot
        kind = op.value_kind.name
        if kind == "constant_int":
            bits = self.L.type_of(op.type).bits
            value = constant_int(op, bits)
            return self.constant_slot(("int", bits, value), value)
        if kind in ("function", "global_variable", "global_alias"):
            return self.constant_slot(("sym", op.name), self.L.resolve(op.name))
        if kind == "metadata_as_value":
            return self.constant_slot(("meta",), None)
        if kind == "inline_asm":
            raise UnsupportedInstruction("inline assembly is not supported")
        if kind == "basic_block":
            raise UnsupportedInstruction("basic block used as a value")
        text = str(op).strip()
        try:
            const, _ = C.parse_typed_constant(text, self.L.types)
            evaluated = CE.evaluate_constant(const, self.L.layout, self.L.resolve)
        except LoadError:
            raise
        except Exception as exc:  # a constant form the parser does not know
            raise UnsupportedInstruction(f"unsupported constant '{text[:120]}': {exc}") from None
        if isinstance(evaluated, float):
            key: Any = ("float", text)
        else:
            key = ("const", text)
        return self.constant_slot(key, evaluated)

    def edge(self, target_block: Any) -> Edge:
        target = self.block_ids[value_address(target_block)]
        return Edge(target, tuple(self.moves.get((self.block, target), ())))

    # -- instructions --------------------------------------------------------------------

    def lower(self, ins: Any, location: SourceLocation | None, printed: str) -> Instruction:
        """The record of one instruction (``printed``: its text as LLVM prints it)."""
        text = _clean_text(printed)
        dest = self.slots.get(value_address(ins), -1)
        try:
            opcode, operands, width, aux = self._lower(ins, text, printed)
        except UnsupportedInstruction as exc:
            opcode, operands, width, aux = Opcode.UNSUPPORTED, [], 0, str(exc)
        except LoadError as exc:
            opcode, operands, width, aux = Opcode.UNSUPPORTED, [], 0, str(exc)
        except (ValueError, KeyError, IndexError, AttributeError, TypeError, NameError) as exc:
            # a form of IR this lowering does not know: the path that reaches it ends as
            # unsupported (with this instruction's text), the rest of the program still runs
            opcode, operands, width, aux = (Opcode.UNSUPPORTED, [], 0,
                                            f"cannot lower this instruction ({type(exc).__name__}: {exc})")
        return Instruction(opcode, dest, tuple(operands), width, aux, location, text)

    def _lower(self, ins: Any, text: str, printed: str) -> tuple[Opcode, list[int], int, Any]:
        name = ins.opcode
        L = self.L
        ops = list(ins.operands)
        if name in _BINARY:
            t = L.type_of(ins.type)
            count = t.count if isinstance(t, T.VectorType) else 0
            return _BINARY[name], [self.operand(o) for o in ops], L.width(t), count
        if name == "icmp":
            t = L.type_of(ops[0].type)
            count = t.count if isinstance(t, T.VectorType) else 0
            pred = _predicate(text, "icmp")
            return Opcode.ICMP, [self.operand(o) for o in ops], L.width(t), (pred, count)
        if name == "select":
            t = L.type_of(ins.type)
            ct = L.type_of(ops[0].type)
            count = ct.count if isinstance(ct, T.VectorType) else 0
            return Opcode.SELECT, [self.operand(o) for o in ops], L.width(t), count
        if name in _FLOAT_BINARY or name == "fneg":
            t = L.type_of(ins.type)
            if isinstance(t, T.VectorType):
                raise UnsupportedInstruction("vector floating-point arithmetic")
            op = Opcode.FNEG if name == "fneg" else _FLOAT_BINARY[name]
            return op, [self.operand(o) for o in ops], L.width(t), t.name
        if name == "fcmp":
            t = L.type_of(ops[0].type)
            if isinstance(t, T.VectorType):
                raise UnsupportedInstruction("vector floating-point comparison")
            return Opcode.FCMP, [self.operand(o) for o in ops], 1, (_predicate(text, "fcmp"), t.name)
        if name in _INT_CASTS or name in ("ptrtoint", "inttoptr", "bitcast", "addrspacecast") \
                or name in _FLOAT_CASTS:
            src = L.type_of(ops[0].type)
            dst = L.type_of(ins.type)
            count = dst.count if isinstance(dst, T.VectorType) else 0
            info = CastInfo(L.width(src), L.width(dst), count, _access_or_none(L, src),
                            _access_or_none(L, dst))
            if name in _INT_CASTS:
                op = _INT_CASTS[name]
            elif name == "ptrtoint":
                op = Opcode.PTRTOINT
            elif name == "inttoptr":
                op = Opcode.INTTOPTR
            elif name == "addrspacecast":
                op = Opcode.COPY
            elif name == "bitcast":
                op = Opcode.COPY if info.from_access == info.to_access else Opcode.BITCAST
            else:
                op = _FLOAT_CASTS[name]
                if count:
                    raise UnsupportedInstruction("vector floating-point cast")
            return op, [self.operand(ops[0])], L.width(dst), info
        if name == "freeze":
            return Opcode.COPY, [self.operand(ops[0])], 0, None
        if name == "alloca":
            t = _alloca_type(text, L.types)
            # the C variable it holds names the object in error messages
            declared = L.debug.local_declarations(self.fn.name).get(text.split("=", 1)[0].strip())
            variable = (declared.name, declared.site) if declared is not None else ("", "")
            return (Opcode.ALLOCA, [self.operand(ops[0])], 64,
                    (L.layout.alloc_size(t), _alloca_align(text), *variable))
        if name == "load":
            t = L.type_of(ins.type)
            return Opcode.LOAD, [self.operand(ops[0])], L.width(t), L.access(t)
        if name == "store":
            t = L.type_of(ops[0].type)
            return Opcode.STORE, [self.operand(ops[0]), self.operand(ops[1])], L.width(t), L.access(t)
        if name == "getelementptr":
            return self._gep(ins, text, ops)
        if name == "extractvalue":
            return Opcode.EXTRACTVALUE, [self.operand(o) for o in ops], 0, _trailing_indices(text)
        if name == "insertvalue":
            # the aggregate's layout lets the interpreter build a zero value for `undef`
            aggregate = L.access(L.type_of(ins.type))
            return (Opcode.INSERTVALUE, [self.operand(o) for o in ops], 0,
                    (_trailing_indices(text), aggregate))
        if name == "extractelement":
            return Opcode.EXTRACTELEMENT, [self.operand(o) for o in ops], 0, None
        if name == "insertelement":
            return Opcode.INSERTELEMENT, [self.operand(o) for o in ops], 0, None
        if name == "shufflevector":
            return Opcode.SHUFFLEVECTOR, [self.operand(o) for o in ops[:2]], 0, _shuffle_mask(text, L)
        if name == "br":
            if len(ops) == 1:
                return Opcode.BR, [], 0, self.edge(ops[0])
            # operands of a conditional br are (cond, false dest, true dest)
            return Opcode.CONDBR, [self.operand(ops[0])], 1, (self.edge(ops[2]), self.edge(ops[1]))
        if name == "switch":
            cond = ops[0]
            width = L.width(L.type_of(cond.type))
            blocks = [o for o in ops[1:] if o.value_kind.name == "basic_block"]
            values = [_case_value(m.group(2), width) for m in _CASE.finditer(printed)]
            if len(values) != len(blocks) - 1:
                raise UnsupportedInstruction("could not read the switch cases")
            cases = tuple((v, self.edge(b)) for v, b in zip(values, blocks[1:]))
            return Opcode.SWITCH, [self.operand(cond)], width, (self.edge(blocks[0]), cases)
        if name == "indirectbr":
            edges = tuple(self.edge(b) for b in ops[1:])
            return Opcode.INDIRECTBR, [self.operand(ops[0])], 64, edges
        if name == "ret":
            return Opcode.RET, [self.operand(o) for o in ops], 0, None
        if name == "unreachable":
            return Opcode.UNREACHABLE, [], 0, None
        if name == "call":
            return self._call(ins, text, ops)
        if name == "va_arg":
            t = L.type_of(ins.type)
            return Opcode.VAARG, [self.operand(ops[0])], L.width(t), L.access(t)
        if name == "atomicrmw" or name == "cmpxchg" or name == "fence":
            raise UnsupportedInstruction(f"'{name}' (atomics) is not supported")
        raise UnsupportedInstruction(f"instruction '{name}' is not supported")

    def _gep(self, ins: Any, text: str, ops: list[Any]) -> tuple[Opcode, list[int], int, Any]:
        L = self.L
        if isinstance(L.type_of(ins.type), T.VectorType):
            raise UnsupportedInstruction("vector getelementptr")
        body = text.split("getelementptr", 1)[1].strip()
        while True:
            m = re.match(r"(inbounds|nuw|nusw|inrange\([^)]*\))\s+", body)
            if not m:
                break
            body = body[m.end():]
        source, _ = L.types.parse_prefix(body)
        const_offset = 0
        dynamic: list[tuple[int, int, int]] = []
        current = source
        for position, index in enumerate(ops[1:]):
            bits = L.width(L.type_of(index.type))
            if position == 0:
                stride = L.layout.alloc_size(current)
            elif isinstance(current, T.StructType):
                field = constant_int(index, bits)
                const_offset += L.layout.field_offsets(current)[field]
                current = current.fields[field]
                continue
            elif isinstance(current, (T.ArrayType, T.VectorType)):
                current = current.element
                stride = L.layout.alloc_size(current)
            else:
                raise UnsupportedInstruction(f"cannot index into {current}")
            if index.value_kind.name == "constant_int":
                # GEP indices are signed whatever their width: `p--` at -O0 is `i32 -1`
                const_offset += constant_int(index, bits, signed=True) * stride
            else:
                dynamic.append((self.operand(index), stride, bits))
        return Opcode.GEP, [self.operand(ops[0])], 64, (const_offset, tuple(dynamic))

    def _call(self, ins: Any, text: str, ops: list[Any]) -> tuple[Opcode, list[int], int, Any]:
        L = self.L
        callee = ops[-1]
        args = ops[:-1]
        kind = callee.value_kind.name
        ret_t = L.type_of(ins.type)
        ret = None if isinstance(ret_t, T.VoidType) else L.access(ret_t)
        width = L.width(ret_t)
        if kind == "inline_asm":
            return self._inline_asm(str(callee), args, ret_t, width, ret is None)
        if kind == "function" and callee.name.startswith("llvm."):
            return self._intrinsic(callee.name, args, ret_t, width)
        arg_access = tuple(_access_or_int(L, L.type_of(a.type)) for a in args)
        slots = [self.operand(a) for a in args]
        if kind == "function" or kind == "global_alias":
            info = CallInfo(callee.name, -1, arg_access, ret)
        else:
            info = CallInfo(None, -1, arg_access, ret)
            slots.append(self.operand(callee))
        return Opcode.CALL, slots, width, info

    def _inline_asm(self, text: str, args: list[Any], ret_t: Any, width: int,
                    void: bool) -> tuple[Opcode, list[int], int, Any]:
        """An inline assembly statement. With an empty template, a compiler barrier
        (``asm volatile("" ::: "memory")``, musl's explicit_bzero) does nothing, and one whose
        single output is tied to an input (``asm("" : "+r"(x))``, a value hidden from the
        optimizer) is a copy. ``cpuid`` answers zeros, and ``longlong.h``'s arithmetic
        (``_KNOWN_ASSEMBLY``) is executed. Any other instruction stays unsupported."""
        match = _INLINE_ASM.match(text)
        if match is None:
            raise UnsupportedInstruction("inline assembly is not supported")
        constraints = [c for c in match.group(2).split(",") if not c.startswith("~")]
        outputs = [c for c in constraints if c.startswith("=")]
        if _CPUID.fullmatch(match.group(1)) and outputs:
            # a processor answering leaf 0 with 0 has no feature leaves: callers (gcc's
            # __get_cpuid, gnulib's cksum, ...) take their portable code
            value: Any = 0 if len(outputs) == 1 else (0,) * len(outputs)
            return Opcode.COPY, [self.constant_slot(("cpuid", len(outputs)), value)], width, None
        kind = _KNOWN_ASSEMBLY.get(_assembly_key(match.group(1), constraints))
        # 64-bit operands; one output of any width (an int count), or two 64-bit ones
        pair = isinstance(ret_t, T.StructType) and [self.L.width(f) for f in ret_t.fields] == [64, 64]
        if kind is not None and all(self.L.width(self.L.type_of(a.type)) == 64 for a in args) \
                and (0 < width <= 64 if len(outputs) == 1 else pair):
            return Opcode.ASSEMBLY, [self.operand(a) for a in args], width, kind
        if match.group(1).strip():
            raise UnsupportedInstruction("inline assembly is not supported")
        if void and not outputs:
            return Opcode.NOP, [], 0, None
        inputs = constraints[len(outputs):]
        if len(outputs) == 1 and "0" in inputs:
            return Opcode.COPY, [self.operand(args[inputs.index("0")])], width, None
        raise UnsupportedInstruction("inline assembly is not supported (an empty template with outputs "
                           "not tied to inputs)")

    def _intrinsic(self, name: str, args: list[Any], ret_t: Any, width: int) -> tuple[Opcode, list[int], int, Any]:
        L = self.L
        base = intrinsic_base(name)
        slots = [self.operand(a) for a in args]
        short = base[len("llvm."):]
        vector = ret_t.count if isinstance(ret_t, T.VectorType) else 0
        if any(base.startswith(p) or name.startswith(p) for p in _NOP_INTRINSICS):
            return Opcode.NOP, [], 0, None
        if short in ("memcpy", "memcpy.inline"):
            return Opcode.MEMCPY, slots[:3], 0, None
        if short == "memmove":
            return Opcode.MEMMOVE, slots[:3], 0, None
        if short in ("memset", "memset.inline"):
            return Opcode.MEMSET, slots[:3], 0, None
        m = re.fullmatch(r"([su](?:add|sub|mul))\.with\.overflow", short)
        if m:
            return Opcode.OVERFLOW, slots, L.width(L.type_of(args[0].type)), m.group(1)
        m = re.fullmatch(r"([su](?:add|sub))\.sat", short)
        if m:
            return Opcode.SATURATE, slots, width, (m.group(1), vector)
        if short in ("smax", "smin", "umax", "umin"):
            return Opcode.MINMAX, slots, width, (short, vector)
        if short == "abs":
            return Opcode.ABS, slots[:1], width, vector
        if short in ("scmp", "ucmp"):
            return Opcode.THREEWAY, slots, width, (short == "scmp", L.width(L.type_of(args[0].type)))
        if short == "ptrmask" and not vector:
            # align a pointer down (clang 22's va_arg of a 16-byte value): an object's
            # address has its low SEGMENT_SHIFT bits clear, so the mask keeps it in its object
            return Opcode.AND, slots[:2], 64, None
        if short in ("fshl", "fshr"):
            return (Opcode.FSHL if short == "fshl" else Opcode.FSHR), slots, width, vector
        simple = {"bswap": Opcode.BSWAP, "bitreverse": Opcode.BITREVERSE, "ctpop": Opcode.CTPOP,
                  "ctlz": Opcode.CTLZ, "cttz": Opcode.CTTZ}
        if short in simple:
            return simple[short], slots[:1], width, vector
        if short == "stacksave":
            return Opcode.STACKSAVE, [], 64, None
        if short == "stackrestore":
            return Opcode.STACKRESTORE, slots, 0, None
        if short == "assume":
            return Opcode.ASSUME, slots[:1], 0, None
        if short in ("trap", "debugtrap", "ubsantrap"):
            return Opcode.TRAP, [], 0, None
        if short in ("expect", "expect.with.probability", "ssa.copy", "launder.invariant.group",
                     "strip.invariant.group"):
            return Opcode.COPY, slots[:1], width, None
        if short == "is.constant":
            return Opcode.COPY, [self.constant_slot(("int", 1, 0), 0)], 1, None
        if short == "objectsize":
            # objectsize(ptr, min, ...): "don't know" is -1 when asked for the maximum, 0 for the minimum
            minimum = len(args) > 1 and bool(constant_int(args[1], 1))
            value = 0 if minimum else (1 << width) - 1
            return Opcode.COPY, [self.constant_slot(("int", width, value), value)], width, None
        if short in ("va_start", "va_end", "va_copy"):
            op = {"va_start": Opcode.VASTART, "va_end": Opcode.VAEND, "va_copy": Opcode.VACOPY}[short]
            return op, slots, 0, None
        if short.startswith("vector.reduce."):
            kind = short[len("vector.reduce."):]
            if kind in ("add", "mul", "and", "or", "xor", "smax", "smin", "umax", "umin"):
                return Opcode.MINMAX, slots[:1], width, ("reduce." + kind, 0)
            raise UnsupportedInstruction(f"intrinsic {name}")
        if short in _FLOAT_MATH:
            operand_t = L.type_of(args[0].type) if args else ret_t
            if vector or isinstance(operand_t, T.VectorType):
                raise UnsupportedInstruction(f"vector intrinsic {name}")
            # the operand's type: lround's result is an integer, is.fpclass's a boolean
            return Opcode.FLOATMATH, slots, width, (short, getattr(operand_t, "name", "double"))
        raise UnsupportedInstruction(f"intrinsic {name} is not supported")


def constant_int(op: Any, bits: int, signed: bool = False) -> int:
    """The value of an integer constant operand of ``bits`` bits, as an unsigned bit pattern
    or (``signed``) as a two's-complement number.

    llvmlite's ``get_constant_value(signed_int=True)`` sign-extends only 64-bit and wider
    constants (``i32 -1`` comes back as 4294967295), so every constant is read unsigned here
    and its sign taken from its own width."""
    value = int(op.get_constant_value(signed_int=False)) & ((1 << bits) - 1)
    return CE.to_signed(value, bits) if signed else value


class UnsupportedInstruction(Exception):
    """An instruction symex cannot execute; it is lowered to Opcode.UNSUPPORTED."""


def _access_or_none(L: ModuleLowering, t: Any) -> Access | None:
    try:
        return L.access(t)
    except LoadError:
        return None


def _access_or_int(L: ModuleLowering, t: Any) -> Access:
    try:
        return L.access(t)
    except LoadError:
        return Access(ValueKind.INT, 0, 0)


_FLAG_WORDS = {"nuw", "nsw", "exact", "disjoint", "samesign", "fast", "nnan", "ninf", "nsz",
               "arcp", "contract", "afn", "reassoc"}


def _predicate(text: str, word: str) -> str:
    rest = text.split(word, 1)[1].split()
    for token in rest:
        if token not in _FLAG_WORDS:
            return token
    raise UnsupportedInstruction(f"no predicate in '{text}'")


def source_name(ir_name: str) -> str:
    """A global's name as the C source would say it, when no debug info does: ``counter``,
    ``local`` for ``main.local``; nothing for compiler-made ones (``.str``, ``__const.main.buf``,
    ``0``)."""
    if ir_name.startswith((".", "__const.")) or ir_name.isdigit():
        return ""
    return ir_name.rsplit(".", 1)[-1]


def _case_value(text: str, width: int) -> int:
    if text == "true":
        return 1
    if text == "false":
        return 0
    return int(text) & ((1 << width) - 1)


def _alloca_type(text: str, types: Any) -> Any:
    body = text.split("alloca", 1)[1].strip()
    for flag in ("inalloca ", "swifterror "):
        if body.startswith(flag):
            body = body[len(flag):]
    t, _ = types.parse_prefix(body)
    return t


def _alloca_align(text: str) -> int:
    m = re.search(r"align (\d+)", text)
    return int(m.group(1)) if m else 1


def _trailing_indices(text: str) -> tuple[int, ...]:
    parts = [p.strip() for p in text.split(",")]
    indices: list[int] = []
    for part in reversed(parts):
        if re.fullmatch(r"\d+", part):
            indices.append(int(part))
        else:
            break
    return tuple(reversed(indices))


def _shuffle_mask(text: str, L: ModuleLowering) -> tuple[int, ...]:
    body = text.split("shufflevector", 1)[1]
    pieces = _split_top(body)
    if len(pieces) < 3:
        raise UnsupportedInstruction("cannot read shufflevector mask")
    const, _ = C.parse_typed_constant(pieces[2].strip(), L.types)
    count = const.type.count if isinstance(const.type, T.VectorType) else 0
    if isinstance(const, C.ConstUndef):
        return tuple(-1 for _ in range(count))
    if isinstance(const, C.ConstZero):
        return tuple(0 for _ in range(count))
    mask = []
    for element in getattr(const, "elements", ()):
        mask.append(-1 if isinstance(element, C.ConstUndef) else int(element.value))
    return tuple(mask)


def _split_top(text: str) -> list[str]:
    """Split at commas that are not inside brackets."""
    depth = 0
    pieces, start = [], 0
    for i, ch in enumerate(text):
        if ch in "<[({":
            depth += 1
        elif ch in ">])}":
            depth -= 1
        elif ch == "," and depth == 0:
            pieces.append(text[start:i])
            start = i + 1
    pieces.append(text[start:])
    return pieces


