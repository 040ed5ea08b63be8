"""LLVM constants evaluated: the value a parsed constant has (an int, a float, a tuple for an
aggregate, a symbol's address), and its bytes in memory (a global's image), with the
target's data layout. Iterative, like the parser (:mod:`symex.ir.constants`): deep constant
expressions cannot exhaust Python's recursion limit."""
from __future__ import annotations

import struct
from collections.abc import Callable

from symex.errors import LoadError
from symex.ir.constants import (
    BINARY_OPCODES,
    CAST_OPCODES,
    BlockAddress,
    ConstAggregate,
    Constant,
    ConstBytes,
    ConstExpr,
    ConstFloat,
    ConstInt,
    ConstNull,
    ConstUndef,
    ConstZero,
    EvaluatedValue,
    GlobalRef,
    float_to_fp80,
    float_to_quad,
    fp80_to_float,
    int_mask,
    quad_to_float,
)
from symex.ir.types import (
    ArrayType,
    DataLayout,
    FloatType,
    IntType,
    IRType,
    StructType,
    TypeParser,
    VectorType,
    type_children,
)

__all__ = ["encode_constant", "evaluate_constant", "to_signed"]


def to_signed(value: int, bits: int) -> int:
    """An unsigned ``bits``-bit pattern as the two's-complement number it holds."""
    return value - (1 << bits) if value >> (bits - 1) & 1 else value


def _zero_value(t: IRType) -> EvaluatedValue:
    """The evaluated value of ``zeroinitializer`` of type ``t``, built without recursion."""
    results: dict[int, EvaluatedValue] = {}
    stack: list[IRType] = [t]
    while stack:
        top = stack[-1]
        if id(top) in results:
            stack.pop()
            continue
        missing = [c for c in type_children(top) if id(c) not in results]
        if missing:
            stack.extend(missing)
            continue
        stack.pop()
        if isinstance(top, (ArrayType, VectorType)):
            results[id(top)] = (results[id(top.element)],) * top.count
        elif isinstance(top, StructType):
            results[id(top)] = tuple(results[id(f)] for f in top.fields)
        elif isinstance(top, FloatType):
            results[id(top)] = 0.0
        else:
            results[id(top)] = 0
    return results[id(t)]


def _children(c: Constant) -> tuple[Constant, ...]:
    if isinstance(c, ConstAggregate):
        return c.elements
    if isinstance(c, ConstExpr):
        return c.operands
    return ()


def _float_bits(value: float, t: FloatType) -> int:
    if t.name == "double":
        return int.from_bytes(struct.pack("<d", value), "little")
    if t.name == "float":
        return int.from_bytes(struct.pack("<f", value), "little")
    if t.name == "half":
        return int.from_bytes(struct.pack("<e", value), "little")
    if t.name == "bfloat":
        return int.from_bytes(struct.pack("<f", value), "little") >> 16
    if t.name == "x86_fp80":
        return float_to_fp80(value)
    if t.name == "fp128":
        return float_to_quad(value)
    return int.from_bytes(struct.pack("<dd", value, 0.0), "little")


def _bits_to_float(bits: int, t: FloatType) -> float:
    if t.name == "double":
        return float(struct.unpack("<d", bits.to_bytes(8, "little"))[0])
    if t.name == "float":
        return float(struct.unpack("<f", bits.to_bytes(4, "little"))[0])
    if t.name == "half":
        return float(struct.unpack("<e", bits.to_bytes(2, "little"))[0])
    if t.name == "bfloat":
        return float(struct.unpack("<f", (bits << 16).to_bytes(4, "little"))[0])
    if t.name == "x86_fp80":
        return fp80_to_float(bits)
    if t.name == "fp128":
        return quad_to_float(bits)
    return float(struct.unpack("<d", (bits & ((1 << 64) - 1)).to_bytes(8, "little"))[0])


def _gep_offset(expr: ConstExpr, indices: list[int], layout: DataLayout) -> int:
    assert expr.source_type is not None
    index_types = [op.type for op in expr.operands[1:]]
    signed = [
        to_signed(v, t.bits) if isinstance(t, IntType) else v for v, t in zip(indices, index_types)
    ]
    if not signed:
        return 0
    offset = signed[0] * layout.alloc_size(expr.source_type)
    current = expr.source_type
    for index in signed[1:]:
        if isinstance(current, StructType):
            offset += layout.field_offsets(current)[index]
            current = current.fields[index]
        elif isinstance(current, (ArrayType, VectorType)):
            current = current.element
            offset += index * layout.alloc_size(current)
        else:
            raise LoadError(f"getelementptr indexes into non-aggregate type {current}")
    return offset


def _apply_expr(
    expr: ConstExpr, args: list[EvaluatedValue], layout: DataLayout
) -> EvaluatedValue:
    op = expr.opcode
    t = expr.type
    if op == "getelementptr":
        base = args[0]
        if not isinstance(base, int):
            raise LoadError("vector getelementptr constant expressions are not supported")
        offset = _gep_offset(expr, [a for a in args[1:] if isinstance(a, int)], layout)
        return (base + offset) & int_mask(t, layout)
    if op == "select":
        return args[1] if args[0] else args[2]
    if op in CAST_OPCODES:
        src_t = expr.operands[0].type
        v = args[0]
        if op in ("trunc", "ptrtoint", "inttoptr", "zext", "addrspacecast") and isinstance(v, int):
            return v & int_mask(t, layout)
        if op == "sext" and isinstance(v, int) and isinstance(src_t, IntType):
            return to_signed(v, src_t.bits) & int_mask(t, layout)
        if op == "bitcast":
            if isinstance(t, FloatType) and isinstance(v, int):
                return _bits_to_float(v, t)
            if isinstance(src_t, FloatType) and isinstance(v, float):
                return _float_bits(v, src_t) & int_mask(t, layout)
            return v
        if op in ("fptrunc", "fpext") and isinstance(v, float):
            return v
        if op in ("fptoui", "fptosi") and isinstance(v, float):
            return int(v) & int_mask(t, layout)
        if op == "uitofp" and isinstance(v, int):
            return float(v)
        if op == "sitofp" and isinstance(v, int) and isinstance(src_t, IntType):
            return float(to_signed(v, src_t.bits))
        raise LoadError(f"unsupported constant cast {op} from {src_t} to {t}")
    if op == "icmp":
        a, b = args
        operand_t = expr.operands[0].type
        if not isinstance(a, int) or not isinstance(b, int):
            raise LoadError("vector icmp constant expressions are not supported")
        bits = operand_t.bits if isinstance(operand_t, IntType) else layout.bit_width(operand_t)
        sa, sb = to_signed(a, bits), to_signed(b, bits)
        result = {
            "eq": a == b, "ne": a != b, "ugt": a > b, "uge": a >= b, "ult": a < b, "ule": a <= b,
            "sgt": sa > sb, "sge": sa >= sb, "slt": sa < sb, "sle": sa <= sb,
        }.get(expr.predicate or "")
        if result is None:
            raise LoadError(f"unknown icmp predicate {expr.predicate!r}")
        return int(result)
    if op in BINARY_OPCODES:
        a, b = args
        if not isinstance(a, int) or not isinstance(b, int) or not isinstance(t, IntType):
            raise LoadError(f"constant expression {op} on non-integer operands is not supported")
        mask = (1 << t.bits) - 1
        if op == "add":
            return (a + b) & mask
        if op == "sub":
            return (a - b) & mask
        if op == "mul":
            return (a * b) & mask
        if op == "xor":
            return a ^ b
        if op == "and":
            return a & b
        if op == "or":
            return a | b
        if op == "shl":
            return (a << b) & mask if b < t.bits else 0
        if op == "lshr":
            return a >> b if b < t.bits else 0
        if op == "ashr":
            return (to_signed(a, t.bits) >> min(b, t.bits - 1)) & mask
        if b == 0:
            raise LoadError(f"constant expression {op} divides by zero")
        if op == "udiv":
            return a // b
        if op == "urem":
            return a % b
        sa, sb = to_signed(a, t.bits), to_signed(b, t.bits)
        quotient = abs(sa) // abs(sb) * (1 if (sa < 0) == (sb < 0) else -1)
        if op == "sdiv":
            return quotient & mask
        return (sa - quotient * sb) & mask
    raise LoadError(f"constant expression {op} is not supported by symex")


def evaluate_constant(
    c: Constant, layout: DataLayout, resolve: Callable[[str], int]
) -> EvaluatedValue:
    """Value of a constant: integers and pointers as unsigned ints masked to their width,
    floats as Python floats, aggregates as tuples of element values; ``undef``/``poison``
    evaluate as zero. ``resolve(name)`` gives the address of global ``@name``; for a
    ``blockaddress`` it is called with the text ``blockaddress(@f, %bb)``."""
    results: dict[int, EvaluatedValue] = {}
    stack: list[Constant] = [c]
    while stack:
        top = stack[-1]
        key = id(top)
        if key in results:
            stack.pop()
            continue
        kids = _children(top)
        missing = [k for k in kids if id(k) not in results]
        if missing:
            stack.extend(missing)
            continue
        stack.pop()
        if isinstance(top, (ConstInt, ConstFloat)):
            results[key] = top.value
        elif isinstance(top, ConstNull):
            results[key] = 0
        elif isinstance(top, (ConstZero, ConstUndef)):
            results[key] = _zero_value(top.type)
        elif isinstance(top, ConstBytes):
            results[key] = tuple(top.data)
        elif isinstance(top, GlobalRef):
            results[key] = resolve(top.name) & int_mask(top.type, layout)
        elif isinstance(top, BlockAddress):
            results[key] = resolve(f"blockaddress(@{top.function}, %{top.block})")
        elif isinstance(top, ConstAggregate):
            results[key] = tuple(results[id(e)] for e in top.elements)
        else:
            results[key] = _apply_expr(top, [results[id(o)] for o in top.operands], layout)
    return results[id(c)]


def encode_constant(
    c: Constant, layout: DataLayout, types: TypeParser, resolve: Callable[[str], int]
) -> bytes:
    """Little-endian memory image of ``c``: ``alloc_size(c.type)`` bytes, with struct padding,
    ``undef`` and ``poison`` as zero bytes and global addresses from ``resolve(name)``."""
    del types  # every constant already carries its resolved type
    image = bytearray(layout.alloc_size(c.type))
    stack: list[tuple[Constant, int]] = [(c, 0)]
    while stack:
        item, offset = stack.pop()
        t = item.type
        if isinstance(item, (ConstZero, ConstUndef)):
            continue
        if isinstance(item, ConstBytes):
            image[offset : offset + len(item.data)] = item.data
            continue
        if isinstance(item, ConstAggregate):
            if isinstance(t, StructType):
                offsets = layout.field_offsets(t)
                stack.extend((e, offset + o) for e, o in zip(item.elements, offsets))
            elif isinstance(t, ArrayType):
                stride = layout.alloc_size(t.element)
                stack.extend((e, offset + i * stride) for i, e in enumerate(item.elements))
            elif isinstance(t, VectorType):
                bits = layout.bit_width(t.element)
                if bits % 8 == 0:
                    stack.extend((e, offset + i * bits // 8) for i, e in enumerate(item.elements))
                else:
                    # Sub-byte vector elements (<8 x i1>) are bit-packed, element 0 lowest.
                    packed = 0
                    for i, e in enumerate(item.elements):
                        v = evaluate_constant(e, layout, resolve)
                        assert isinstance(v, int)
                        packed |= (v & ((1 << bits) - 1)) << (i * bits)
                    size = layout.store_size(t)
                    image[offset : offset + size] = packed.to_bytes(size, "little")
            else:
                raise LoadError(f"aggregate constant of non-aggregate type {t}")
            continue
        size = layout.store_size(t)
        if isinstance(item, ConstFloat) and isinstance(t, FloatType):
            bits = item.raw if item.raw is not None else _float_bits(item.value, t)
        else:
            value = evaluate_constant(item, layout, resolve)
            if isinstance(value, float) and isinstance(t, FloatType):
                bits = _float_bits(value, t)
            elif isinstance(value, int):
                bits = value
            else:
                raise LoadError(f"cannot store constant expression of type {t} in memory")
        image[offset : offset + size] = (bits & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
    return bytes(image)


# ---------------------------------------------------------------------------------------------
# Module-level definitions


