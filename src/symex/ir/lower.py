"""Lower an llvmlite module into :mod:`symex.ir.program` records.

llvmlite gives the structure (functions, blocks, instructions, operands and their types);
what it does not expose (GEP source types, case values, global initializers, constant
expressions, debug locations) is read from the instruction and module text through
:mod:`symex.ir.types`, :mod:`symex.ir.constants` and :mod:`symex.ir.debuginfo`. All string
work happens here, once per program; the interpreter only sees records.
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Callable
from typing import Any

import llvmlite.binding as llvm

from symex.errors import LoadError
from symex.ir import constant_evaluation as CE
from symex.ir import constants as C
from symex.ir import global_definitions as G
from symex.ir import types as T
from symex.ir.debuginfo import DebugInfo, SourceLocation
from symex.ir.program import (
    LAZY_FIELDS,
    SEGMENT_SHIFT,
    Access,
    Block,
    CallInfo,
    CastInfo,
    Edge,
    Function,
    GlobalObject,
    Instruction,
    Opcode,
    Program,
    ValueKind,
)
from symex.ir.promotion import promote_allocas, promotion_enabled

#: First segment handed out to functions and globals; states allocate above the last one.
FIRST_STATIC_SEGMENT = 1

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
)
_INTRINSIC_NAME = re.compile(r"^llvm\.([a-z0-9_]+(?:\.[a-z_]+)*?)(?:\.(?:[ipvfs][0-9a-z]*|p0|f32|f64|f80))*$")
_CASE = re.compile(r"(i\d+)\s+(-?\d+|true|false),\s*label\s+%")
_META = re.compile(r",\s*!(?:dbg|tbaa|range|noundef|nonnull|llvm\.[\w.]+|prof|annotation|srcloc|DIAssignID"
                   r"|noalias|alias\.scope|heapallocsite|align|nosanitize|callees|mmra|invariant\.load|\w+)"
                   r"\s+!.*$")


def _address(value: Any) -> int:
    """Identity of an llvmlite value: its underlying LLVM pointer."""
    return ctypes.cast(value._ptr, ctypes.c_void_p).value or 0


def _clean_text(printed: str) -> str:
    """An instruction's first printed line without its metadata attachments."""
    first = printed.strip().split("\n", 1)[0]
    return _META.sub("", first) if "!" in first else first


_DEFINE_LINE = re.compile(r'define\b[^@\n]*@("[^"]+"|[-\w.$]+)\(')


def _function_bodies(text: str) -> dict[str, list[str]]:
    """The lines of each function definition's body in a module's printout, by name."""
    bodies: dict[str, list[str]] = {}
    body: list[str] | None = None
    for line in text.split("\n"):
        if body is not None:
            if line == "}":
                body = None
            else:
                body.append(line)
        elif line.startswith("define "):
            match = _DEFINE_LINE.match(line)
            if match is not None:
                body = bodies[match.group(1).strip('"')] = []
    return bodies


def _instruction_texts(body: list[str]) -> list[str]:
    """Every instruction of a function body as LLVM printed it, in block order. (Printing an
    instruction alone makes LLVM number every global value and metadata node of the module
    first: loading toybox linked with musl took minutes that way.) A switch's case lines and
    a landing pad's clauses stay with their instruction; debug records (``#dbg_value``) are
    left out."""
    texts: list[str] = []
    for line in body:
        if len(line) > 2 and line[0] == " " and line[1] == " ":
            third = line[2]
            if third != " " and third != "]":
                texts.append(line[2:])
            elif texts and not line.lstrip().startswith("#dbg_"):
                texts[-1] += "\n" + line
    return texts


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

class Lowering:
    """Lowers one parsed module. Use :func:`lower_module`."""

    def __init__(self, module: Any, text: str, path: str) -> None:
        self.module = module
        self.text = text
        self.path = path
        self.types = T.TypeParser.from_module_text(text)
        self.layout = T.DataLayout(module.data_layout or "")
        self.debug = DebugInfo.parse(text)
        self.addresses: dict[str, int] = {}
        self.functions: dict[str, Function] = {}
        #: functions left for their first call (see _finish_lowering), by name
        self._pending: dict[str, Any] = {}
        self.globals: dict[str, GlobalObject] = {}
        self.block_index: dict[int, tuple[str, int]] = {}
        self._type_cache: dict[str, Any] = {}
        self._access_cache: dict[Any, Access] = {}
        self._block_labels: dict[str, dict[str, int]] = {}
        #: each definition's body lines in ``text``, read on the first lowering
        self._bodies: dict[str, list[str]] | None = None
        #: locals whose address never escapes go to registers (ir.promotion)
        self.promote_allocas = promotion_enabled()

    # -- types --------------------------------------------------------------------------

    def type_of(self, typeref: Any) -> Any:
        text = str(typeref)
        t = self._type_cache.get(text)
        if t is None:
            t = self.types.parse(text)
            self._type_cache[text] = t
        return t

    def access(self, t: Any) -> Access:
        """Memory layout of a first-class type."""
        cached = self._access_cache.get(t)
        if cached is not None:
            return cached
        if isinstance(t, T.IntType):
            a = Access(ValueKind.INT, (t.bits + 7) // 8, t.bits)
        elif isinstance(t, T.PointerType):
            a = Access(ValueKind.PTR, 8, 64)
        elif isinstance(t, T.FloatType):
            bits = {"half": 16, "bfloat": 16, "float": 32, "double": 64, "x86_fp80": 80}.get(t.name, 128)
            a = Access(ValueKind.FLOAT, self.layout.store_size(t), bits)
        elif isinstance(t, T.VectorType):
            elem = self.access(t.element)
            stride = elem.size
            a = Access(ValueKind.VECTOR, stride * t.count, elem.bits,
                       tuple((i * stride, elem) for i in range(t.count)))
        elif isinstance(t, T.StructType):
            offsets = self.layout.field_offsets(t)
            a = Access(ValueKind.AGGREGATE, self.layout.store_size(t), 0,
                       tuple((o, self.access(f)) for o, f in zip(offsets, t.fields)))
        elif isinstance(t, T.ArrayType):
            stride = self.layout.alloc_size(t.element)
            elem = self.access(t.element)
            a = Access(ValueKind.AGGREGATE, self.layout.store_size(t), 0,
                       tuple((i * stride, elem) for i in range(t.count)))
        else:
            raise LoadError(f"cannot lay out values of type {t}")
        self._access_cache[t] = a
        return a

    def width(self, t: Any) -> int:
        if isinstance(t, T.IntType):
            return t.bits
        if isinstance(t, T.PointerType):
            return 64
        if isinstance(t, T.VectorType):
            return self.width(t.element)
        if isinstance(t, T.FloatType):
            return self.access(t).bits
        return 0

    # -- module -------------------------------------------------------------------------

    def run(self) -> Program:
        segment = FIRST_STATIC_SEGMENT
        fn_refs = list(self.module.functions)
        for f in fn_refs:
            self.addresses[f.name] = segment << SEGMENT_SHIFT
            segment += 1
        global_defs = G.parse_globals(self.text, self.types)
        for g in global_defs:
            self.addresses[g.name] = segment << SEGMENT_SHIFT
            segment += 1
        function_names = {self.addresses[f.name]: f.name for f in fn_refs}
        aliases: dict[str, str] = {}
        for alias in G.parse_aliases(self.text, self.types):
            target = CE.evaluate_constant(alias.target, self.layout, self._resolve)
            if not isinstance(target, int):
                raise LoadError(f"alias @{alias.name} does not name an address")
            self.addresses[alias.name] = target
            if target in function_names:
                aliases[alias.name] = function_names[target]
        self.next_segment = segment
        declarations = self.debug.global_declarations()
        for g in global_defs:
            size = self.layout.alloc_size(g.type) if not isinstance(g.type, T.FunctionType) else 0
            if g.initializer is None:
                image = bytes(size)
            else:
                image = CE.encode_constant(g.initializer, self.layout, self.types, self._resolve)
            declared = declarations.get(g.name)
            self.globals[g.name] = GlobalObject(
                g.name, self.addresses[g.name], size, image, g.is_constant,
                declared.name if declared is not None else _source_name(g.name),
                declared.site if declared is not None else "")
        for f in fn_refs:
            if f.is_declaration or self.debug.subprogram_file(f.name) is not None:
                self.functions[f.name] = self.lower_function(f)
            else:
                # a library function (no debug info: no coverage to count) is lowered on its
                # first call: a program linked with musl names hundreds it never calls
                self.functions[f.name] = self._pending_function(f)
                self._pending[f.name] = f
        files = []
        for f in self.functions.values():
            if f.file and f.file not in files:
                files.append(f.file)
        return Program(
            path=self.path,
            functions=self.functions,
            globals=self.globals,
            functions_by_address={fn.address: fn for fn in self.functions.values()},
            data_layout=self.module.data_layout,
            source_files=tuple(files),
            ir_text=self.text,
            function_aliases=aliases,
        )

    def _pending_function(self, f: Any) -> Function:
        ftype = self.type_of(f.global_value_type)
        fn = Function(
            name=f.name, address=self.addresses[f.name], params=(), param_access=(),
            ret=None if isinstance(ftype.ret, T.VoidType) else self._maybe_access(ftype.ret),
            vararg=ftype.vararg, num_slots=0, template=[], blocks=(), is_declaration=False,
            pending=True, lowerer=self._finish_lowering,
        )
        for field in LAZY_FIELDS:
            delattr(fn, field)  # the first read lowers the function (Function.__getattr__)
        return fn

    def _finish_lowering(self, fn: Function) -> None:
        """Lower a pending function into its placeholder (the same object the program's
        tables hold)."""
        lowered = self.lower_function(self._pending.pop(fn.name))
        for field in LAZY_FIELDS:
            setattr(fn, field, getattr(lowered, field))
        fn.pending = False
        fn.lowerer = None

    def _resolve(self, name: str) -> int:
        try:
            return self.addresses[name]
        except KeyError:
            pass
        m = re.fullmatch(r"blockaddress\(@\"?([^\",]+)\"?,\s*%\"?([^\")]+)\"?\)", name)
        if m:
            return self._block_address(m.group(1), m.group(2))
        raise LoadError(f"reference to unknown symbol @{name}")

    def _block_address(self, function: str, label: str) -> int:
        """``blockaddress(@f, %bb)``: the function's address plus 1 + the block's index (the
        interpreter's indirectbr decodes it the same way)."""
        labels = self._block_labels.get(function)
        if labels is None:
            labels = {}
            index = 0
            first = True
            for line in self._body(function):
                m = re.match(r'^("[^"]+"|[-\w.$]+):', line)
                if m:
                    if not first:
                        index += 1
                    labels[m.group(1).strip('"')] = index
                    first = False
                elif line.strip() and not line.startswith(";") and first:
                    # an unlabelled entry block is %0 / the first argument count
                    first = False
            self._block_labels[function] = labels
        if label not in labels:
            raise LoadError(f"blockaddress of unknown block %{label} in @{function}")
        return self.addresses[function] + 1 + labels[label]

    def _body(self, function: str) -> list[str]:
        """The lines of a function's body in the module's printout (read once for all)."""
        if self._bodies is None:
            self._bodies = _function_bodies(self.text)
        body = self._bodies.get(function)
        if body is None:  # a name the printout spells otherwise: print the function alone
            text = str(self.module.get_function(function))
            body = self._bodies[function] = text[text.index("{") + 1:].split("\n")
        return body

    # -- functions ----------------------------------------------------------------------

    def lower_function(self, f: Any) -> Function:
        ftype = self.type_of(f.global_value_type)
        address = self.addresses[f.name]
        if f.is_declaration:
            return Function(
                name=f.name, address=address, params=(), param_access=(),
                ret=None if isinstance(ftype.ret, T.VoidType) else self._maybe_access(ftype.ret),
                vararg=ftype.vararg, num_slots=0, template=[], blocks=(), is_declaration=True,
            )
        slots: dict[int, int] = {}
        template: list[Any] = []
        params = []
        for arg in f.arguments:
            slots[_address(arg)] = len(template)
            params.append(len(template))
            template.append(None)
        blocks = list(f.blocks)
        block_ids = {_address(b): i for i, b in enumerate(blocks)}
        for b in blocks:
            for ins in b.instructions:
                if str(ins.type) != "void":
                    slots[_address(ins)] = len(template)
                    template.append(None)
        const_slots: dict[Any, int] = {}
        ctx = _FunctionContext(self, f, slots, template, const_slots, block_ids)
        # phi moves per edge (pred index, succ index)
        for bi, b in enumerate(blocks):
            for ins in b.instructions:
                if ins.opcode != "phi":
                    break
                dest = slots[_address(ins)]
                values = list(ins.operands)
                for value, pred in zip(values, ins.incoming_blocks):
                    ctx.moves.setdefault((block_ids[_address(pred)], bi), []).append(
                        (dest, ctx.operand(value)))
        lowered_blocks = []
        locations = self.debug.instruction_locations(f.name)
        texts = _instruction_texts(self._body(f.name))
        if len(texts) != sum(1 for b in blocks for _ in b.instructions):
            texts = [str(ins) for b in blocks for ins in b.instructions]  # an unexpected print
        position = 0
        for bi, b in enumerate(blocks):
            ctx.block = bi
            records = []
            for ins in b.instructions:
                location = locations[position] if position < len(locations) else None
                printed = texts[position]
                position += 1
                if ins.opcode == "phi":
                    continue
                records.append(ctx.lower(ins, location, printed))
            lowered_blocks.append(Block(bi, str(bi), tuple(records)))
        file = self.debug.subprogram_file(f.name)
        line = self.debug.subprogram_line(f.name)
        lowered = tuple(lowered_blocks)
        if self.promote_allocas:
            lowered = promote_allocas(lowered, template)
        return Function(
            name=f.name, address=address, params=tuple(params),
            param_access=tuple(self._maybe_access(p) for p in ftype.params),
            ret=None if isinstance(ftype.ret, T.VoidType) else self._maybe_access(ftype.ret),
            vararg=ftype.vararg, num_slots=len(template), template=template,
            blocks=lowered, is_declaration=False, file=file, line=line,
        )

    def _maybe_access(self, t: Any) -> Access:
        try:
            return self.access(t)
        except LoadError:
            return Access(ValueKind.INT, 0, 0)


class _FunctionContext:
    """Per-function lowering state: slot maps, constant pool, phi moves."""

    def __init__(self, lowering: Lowering, fn: Any, slots: dict[int, int], template: list[Any],
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
        addr = _address(op)
        slot = self.slots.get(addr)
        if slot is not None:
            return slot
        kind = op.value_kind.name
        if kind == "constant_int":
            bits = self.L.type_of(op.type).bits
            value = constant_int(op, bits)
            return self.constant_slot(("int", bits, value), value)
        if kind in ("function", "global_variable", "global_alias"):
            return self.constant_slot(("sym", op.name), self.L._resolve(op.name))
        if kind == "metadata_as_value":
            return self.constant_slot(("meta",), None)
        if kind == "inline_asm":
            raise _Unsupported("inline assembly is not supported")
        if kind == "basic_block":
            raise _Unsupported("basic block used as a value")
        text = str(op).strip()
        try:
            const, _ = C.parse_typed_constant(text, self.L.types)
            evaluated = CE.evaluate_constant(const, self.L.layout, self.L._resolve)
        except LoadError:
            raise
        except Exception as exc:  # a constant form the parser does not know
            raise _Unsupported(f"unsupported constant '{text[:120]}': {exc}") from None
        if isinstance(evaluated, float):
            key: Any = ("float", text)
        else:
            key = ("const", text)
        return self.constant_slot(key, evaluated)

    def edge(self, target_block: Any) -> Edge:
        target = self.block_ids[_address(target_block)]
        return Edge(target, tuple(self.moves.get((self.block, target), ())))

    # -- instructions --------------------------------------------------------------------

    def lower(self, ins: Any, location: SourceLocation | None, printed: str) -> Instruction:
        """The record of one instruction (``printed``: its text as LLVM prints it)."""
        text = _clean_text(printed)
        dest = self.slots.get(_address(ins), -1)
        try:
            opcode, operands, width, aux = self._lower(ins, text, printed)
        except _Unsupported as exc:
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
                raise _Unsupported("vector floating-point arithmetic")
            op = Opcode.FNEG if name == "fneg" else _FLOAT_BINARY[name]
            return op, [self.operand(o) for o in ops], L.width(t), t.name
        if name == "fcmp":
            t = L.type_of(ops[0].type)
            if isinstance(t, T.VectorType):
                raise _Unsupported("vector floating-point comparison")
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
                    raise _Unsupported("vector floating-point cast")
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
                raise _Unsupported("could not read the switch cases")
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
            raise _Unsupported(f"'{name}' (atomics) is not supported")
        raise _Unsupported(f"instruction '{name}' is not supported")

    def _gep(self, ins: Any, text: str, ops: list[Any]) -> tuple[Opcode, list[int], int, Any]:
        L = self.L
        if isinstance(L.type_of(ins.type), T.VectorType):
            raise _Unsupported("vector getelementptr")
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
                raise _Unsupported(f"cannot index into {current}")
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
            return self._empty_asm(str(callee), args, width, ret is None)
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

    def _empty_asm(self, text: str, args: list[Any], width: int,
                   void: bool) -> tuple[Opcode, list[int], int, Any]:
        """An inline assembly statement with an empty template: a compiler barrier
        (``asm volatile("" ::: "memory")``, musl's explicit_bzero) does nothing, and one whose
        single output is tied to an input (``asm("" : "+r"(x))``, a value hidden from the
        optimizer) is a copy. Any real instruction stays unsupported."""
        match = _INLINE_ASM.match(text)
        if match is None or match.group(1).strip():
            raise _Unsupported("inline assembly is not supported")
        constraints = [c for c in match.group(2).split(",") if not c.startswith("~")]
        outputs = [c for c in constraints if c.startswith("=")]
        if void and not outputs:
            return Opcode.NOP, [], 0, None
        inputs = constraints[len(outputs):]
        if len(outputs) == 1 and "0" in inputs:
            return Opcode.COPY, [self.operand(args[inputs.index("0")])], width, None
        raise _Unsupported("inline assembly is not supported (an empty template with outputs "
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
            raise _Unsupported(f"intrinsic {name}")
        if short in _FLOAT_MATH:
            if vector:
                raise _Unsupported(f"vector intrinsic {name}")
            return Opcode.FLOATMATH, slots, width, (short, getattr(ret_t, "name", "double"))
        raise _Unsupported(f"intrinsic {name} is not supported")


def constant_int(op: Any, bits: int, signed: bool = False) -> int:
    """The value of an integer constant operand of ``bits`` bits, as an unsigned bit pattern
    or (``signed``) as a two's-complement number.

    llvmlite's ``get_constant_value(signed_int=True)`` sign-extends only 64-bit and wider
    constants (``i32 -1`` comes back as 4294967295), so every constant is read unsigned here
    and its sign taken from its own width."""
    value = int(op.get_constant_value(signed_int=False)) & ((1 << bits) - 1)
    return CE.to_signed(value, bits) if signed else value


class _Unsupported(Exception):
    """An instruction symex cannot execute; it is lowered to Opcode.UNSUPPORTED."""


def _access_or_none(L: Lowering, t: Any) -> Access | None:
    try:
        return L.access(t)
    except LoadError:
        return None


def _access_or_int(L: Lowering, t: Any) -> Access:
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
    raise _Unsupported(f"no predicate in '{text}'")


def _source_name(ir_name: str) -> str:
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


def _shuffle_mask(text: str, L: Lowering) -> tuple[int, ...]:
    body = text.split("shufflevector", 1)[1]
    pieces = _split_top(body)
    if len(pieces) < 3:
        raise _Unsupported("cannot read shufflevector mask")
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


def lower_module(text: str, path: str = "<memory>") -> Program:
    """Parse LLVM assembly text and lower it; raises LoadError with llvmlite's message."""
    try:
        module = llvm.parse_assembly(text)
        module.verify()
    except RuntimeError as exc:
        raise LoadError(f"{path}: not valid LLVM IR: {str(exc).strip()}") from None
    # llvmlite renames named structs that clash with earlier modules in the process
    # (%struct.S -> %struct.S.0) and renumbers metadata: read everything from its own printout
    return Lowering(module, str(module), path).run()


def lower_bitcode(data: bytes, path: str) -> Program:
    """Parse LLVM bitcode and lower it."""
    try:
        module = llvm.parse_bitcode(data)
        module.verify()
    except RuntimeError as exc:
        raise LoadError(f"{path}: not valid LLVM bitcode: {str(exc).strip()}") from None
    return Lowering(module, str(module), path).run()


ResolveSymbol = Callable[[str], int]
