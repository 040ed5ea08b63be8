"""Lower an llvmlite module into :mod:`symex.ir.program` records.

llvmlite gives the structure (functions, blocks, instructions, operands and their types);
what it does not expose (GEP source types, case values, global initializers, constant
expressions, debug locations) is read from the instruction and module text through
:mod:`symex.ir.types`, :mod:`symex.ir.constants` and :mod:`symex.ir.debuginfo`. All string
work happens here, once per program; the interpreter only sees records.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any


from symex.errors import LoadError
from symex.ir import constant_evaluation as CE
from symex.ir import global_definitions as G
from symex.ir import types as T
from symex.ir.debuginfo import DebugInfo
from symex.ir.lower_instructions import (
    FunctionLowering,
    source_name,
    value_address,
)
from symex.ir.program import (
    LAZY_FIELDS,
    SEGMENT_SHIFT,
    Access,
    Block,
    Function,
    GlobalObject,
    Program,
    ValueKind,
)
from symex.ir.promotion import promote_allocas, promotion_enabled

#: First segment handed out to functions and globals; states allocate above the last one.
FIRST_STATIC_SEGMENT = 1

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
            if f.is_declaration and f.linkage.name == "external_weak":
                # a weak function nothing defines is null, as a static link makes it (a
                # fuzz target's optional LLVMFuzzerInitialize, tested before it is called)
                self.addresses[f.name] = 0
        global_defs = G.parse_globals(self.text, self.types)
        for g in global_defs:
            self.addresses[g.name] = segment << SEGMENT_SHIFT
            segment += 1
        function_names = {self.addresses[f.name]: f.name for f in fn_refs}
        aliases: dict[str, str] = {}
        for alias in G.parse_aliases(self.text, self.types):
            target = CE.evaluate_constant(alias.target, self.layout, self.resolve)
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
                image = CE.encode_constant(g.initializer, self.layout, self.types, self.resolve)
            declared = declarations.get(g.name)
            self.globals[g.name] = GlobalObject(
                g.name, self.addresses[g.name], size, image, g.is_constant,
                declared.name if declared is not None else source_name(g.name),
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
            functions_by_address={fn.address: fn for fn in self.functions.values() if fn.address},
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
        tables hold). One that cannot be lowered stays pending: its next use raises again."""
        lowered = self.lower_function(self._pending[fn.name])
        del self._pending[fn.name]
        for field in LAZY_FIELDS:
            setattr(fn, field, getattr(lowered, field))
        fn.pending = False
        fn.lowerer = None

    def resolve(self, name: str) -> int:
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
            slots[value_address(arg)] = len(template)
            params.append(len(template))
            template.append(None)
        blocks = list(f.blocks)
        block_ids = {value_address(b): i for i, b in enumerate(blocks)}
        for b in blocks:
            for ins in b.instructions:
                if str(ins.type) != "void":
                    slots[value_address(ins)] = len(template)
                    template.append(None)
        const_slots: dict[Any, int] = {}
        ctx = FunctionLowering(self, f, slots, template, const_slots, block_ids)
        # phi moves per edge (pred index, succ index)
        for bi, b in enumerate(blocks):
            for ins in b.instructions:
                if ins.opcode != "phi":
                    break
                dest = slots[value_address(ins)]
                values = list(ins.operands)
                for value, pred in zip(values, ins.incoming_blocks):
                    ctx.moves.setdefault((block_ids[value_address(pred)], bi), []).append(
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




def lower_module(text: str, path: str = "<memory>") -> Program:
    """Parse LLVM assembly text and lower it; raises LoadError with llvmlite's message."""
    import llvmlite.binding as llvm  # noqa: PLC0415 (LLVM only where a module is parsed: ir/program_cache.py)

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
    import llvmlite.binding as llvm  # noqa: PLC0415 (LLVM only where a module is parsed: ir/program_cache.py)

    try:
        module = llvm.parse_bitcode(data)
        module.verify()
    except RuntimeError as exc:
        raise LoadError(f"{path}: not valid LLVM bitcode: {str(exc).strip()}") from None
    return Lowering(module, str(module), path).run()


ResolveSymbol = Callable[[str], int]

