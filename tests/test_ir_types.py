"""Tests of symex.ir.types: type-text parsing and the data layout, checked against LLVM itself."""

from __future__ import annotations

import llvmlite.binding as llvm
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symex.errors import LoadError
from symex.ir.types import (
    ArrayType,
    DataLayout,
    FloatType,
    FunctionType,
    IntType,
    LabelType,
    PointerType,
    StructType,
    TypeParser,
    VectorType,
    VoidType,
)

X86_64 = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"

MODULE = """
%struct.S = type { i8, i32, i64, ptr, [3 x double] }
%struct.P = type <{ i8, i16 }>
%struct.node = type { i32, ptr }
%struct.outer = type { i8, %struct.S, [2 x %struct.P] }
%"class.std::pair" = type { i32, i8 }
%struct.fwd = type opaque
"""

I8, I16, I32, I64 = IntType(8), IntType(16), IntType(32), IntType(64)
PTR = PointerType()


def oracle(layout: str, type_texts: list[str], named: str = MODULE) -> list[tuple[int, int, list[int]]]:
    """(abi size, abi alignment, struct field offsets) of each type, as LLVM computes them."""
    lines = [f'target datalayout = "{layout}"', named]
    lines += [f"@g{i} = external global {t}" for i, t in enumerate(type_texts)]
    module = llvm.parse_assembly("\n".join(lines))
    target = llvm.create_target_data(module.data_layout)
    out = []
    for i, _ in enumerate(type_texts):
        ref = module.get_global_variable(f"g{i}").global_value_type
        offsets = []
        if ref.is_struct:
            offsets = [target.get_element_offset(ref, k) for k in range(len(list(ref.elements)))]
        out.append((target.get_abi_size(ref), target.get_abi_alignment(ref), offsets))
    return out


def test_parse_scalar_and_aggregate_types() -> None:
    tp = TypeParser({})
    assert tp.parse("i32") == I32
    assert tp.parse("i1") == IntType(1)
    assert tp.parse("ptr") == PTR
    assert tp.parse("ptr addrspace(270)") == PointerType(270)
    assert tp.parse("x86_fp80") == FloatType("x86_fp80")
    assert tp.parse("void") == VoidType()
    assert tp.parse("label") == LabelType()
    assert tp.parse("[4 x [2 x i16]]") == ArrayType(4, ArrayType(2, I16))
    assert tp.parse("<4 x float>") == VectorType(4, FloatType("float"))
    assert tp.parse("{ i8, ptr }") == StructType((I8, PTR))
    assert tp.parse("<{ i8, i16 }>") == StructType((I8, I16), packed=True)
    assert tp.parse("{}") == StructType(())
    assert tp.parse("  [0 x i8] ") == ArrayType(0, I8)


def test_parse_function_types() -> None:
    tp = TypeParser({})
    assert tp.parse("i32 (ptr, ...)") == FunctionType(I32, (PTR,), True)
    assert tp.parse("void ()") == FunctionType(VoidType(), (), False)
    assert tp.parse("void (...)") == FunctionType(VoidType(), (), True)
    assert tp.parse("{ i32, i1 } (i32, [2 x i8])") == FunctionType(
        StructType((I32, IntType(1))), (I32, ArrayType(2, I8)), False
    )


def test_named_structs_resolve_with_names() -> None:
    tp = TypeParser.from_module_text(MODULE)
    s = tp.parse("%struct.S")
    assert s == StructType((I8, I32, I64, PTR, ArrayType(3, FloatType("double"))), False, "struct.S")
    assert tp.parse("%struct.P") == StructType((I8, I16), True, "struct.P")
    assert tp.parse('%"class.std::pair"').name == "class.std::pair"
    outer = tp.parse("%struct.outer")
    assert isinstance(outer, StructType)
    assert outer.fields[1] == s
    assert outer.fields[2] == ArrayType(2, tp.parse("%struct.P"))
    # Self-reference through an opaque pointer is just a ptr field.
    assert tp.parse("%struct.node").fields == (I32, PTR)


def test_parse_prefix_reports_end_after_trailing_spaces() -> None:
    tp = TypeParser.from_module_text(MODULE)
    text = "store %struct.P  zeroinitializer"
    t, end = tp.parse_prefix(text, 6)
    assert t.name == "struct.P"
    assert text[end:] == "zeroinitializer"
    t, end = tp.parse_prefix("[2 x i32] [i32 1, i32 2]")
    assert t == ArrayType(2, I32) and end == 10


def test_malformed_or_unknown_types_raise_load_error() -> None:
    tp = TypeParser({})
    for bad in ["%struct.missing", "[4 x i32", "{ i32, }", "i32 garbage", "<vscale x 4 x i32>"]:
        with pytest.raises(LoadError):
            tp.parse(bad)


def test_opaque_struct_has_no_size() -> None:
    tp = TypeParser.from_module_text(MODULE)
    fwd = tp.parse("%struct.fwd")
    assert isinstance(fwd, StructType) and fwd.opaque
    with pytest.raises(ValueError):
        DataLayout(X86_64).alloc_size(fwd)
    # A pointer to it is fine.
    assert DataLayout(X86_64).alloc_size(tp.parse("ptr")) == 8


def test_x86_64_sizes_by_hand() -> None:
    tp = TypeParser.from_module_text(MODULE)
    dl = DataLayout(X86_64)
    assert dl.pointer_size == 8
    # i8 c @0, i32 x @4, i64 y @8, ptr next @16, [3 x double] @24 -> 48 bytes
    s = tp.parse("%struct.S")
    assert dl.field_offsets(s) == (0, 4, 8, 16, 24)
    assert dl.alloc_size(s) == 48 and dl.abi_align(s) == 8
    packed = tp.parse("%struct.P")
    assert dl.field_offsets(packed) == (0, 1) and dl.alloc_size(packed) == 3
    fp80 = FloatType("x86_fp80")
    assert (dl.store_size(fp80), dl.alloc_size(fp80), dl.bit_width(fp80)) == (10, 16, 80)
    assert (dl.store_size(IntType(1)), dl.alloc_size(IntType(1)), dl.bit_width(IntType(1))) == (1, 1, 1)
    assert dl.alloc_size(IntType(24)) == 4  # next larger integer spec (i32) sets the alignment
    assert dl.bit_width(PTR) == 64 and dl.bit_width(FloatType("float")) == 32
    v3 = VectorType(3, I32)
    assert (dl.bit_width(v3), dl.store_size(v3), dl.alloc_size(v3)) == (96, 12, 16)
    assert dl.alloc_size(PointerType(270)) == 4


SAMPLE_TYPES = [
    "i1", "i8", "i16", "i24", "i32", "i48", "i64", "i96", "i128", "i256",
    "half", "bfloat", "float", "double", "x86_fp80", "fp128",
    "ptr", "ptr addrspace(270)", "[3 x i8]", "[5 x x86_fp80]", "<2 x i64>", "<3 x float>",
    "<8 x i1>", "<4 x ptr>", "{ i8, i64, i8 }", "{ i1, i128 }", "<{ i8, i64, x86_fp80 }>",
    "%struct.S", "%struct.P", "%struct.outer", "[2 x %struct.outer]", "{ i8, %struct.P, i32 }",
    "{ x86_fp80, i8 }", "{}", "{ i8, {} }",
]


@pytest.mark.parametrize(
    "layout",
    [X86_64, "", "E-p:32:32-i64:32:64-a:64", "e-i64:64-i128:64-f80:32-v96:32-S64", "e-p:16:16-i32:16"],
)
def test_sizes_match_llvm(layout: str) -> None:
    tp = TypeParser.from_module_text(MODULE)
    dl = DataLayout(layout)
    expected = oracle(layout, SAMPLE_TYPES)
    for text, (size, align, offsets) in zip(SAMPLE_TYPES, expected):
        t = tp.parse(text)
        got_offsets = list(dl.field_offsets(t)) if isinstance(t, StructType) else []
        assert (dl.alloc_size(t), dl.abi_align(t), got_offsets) == (size, align, offsets), text


LEAVES = st.sampled_from(
    ["i1", "i8", "i16", "i32", "i64", "i128", "i7", "float", "double", "x86_fp80", "ptr", "half"]
)


def _compose(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.builds(lambda n, t: f"[{n} x {t}]", st.integers(0, 4), children),
        st.builds(lambda ts: "{ " + ", ".join(ts) + " }", st.lists(children, min_size=1, max_size=4)),
        st.builds(lambda ts: "<{ " + ", ".join(ts) + " }>", st.lists(children, min_size=1, max_size=4)),
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(st.recursive(LEAVES, _compose, max_leaves=10), min_size=1, max_size=5))
def test_random_aggregates_match_llvm(type_texts: list[str]) -> None:
    tp = TypeParser({})
    dl = DataLayout(X86_64)
    for text, (size, align, offsets) in zip(type_texts, oracle(X86_64, type_texts, named="")):
        t = tp.parse(text)
        assert str(t) == text  # printing round-trips LLVM's own spelling
        got_offsets = list(dl.field_offsets(t)) if isinstance(t, StructType) else []
        assert (dl.alloc_size(t), dl.abi_align(t), got_offsets) == (size, align, offsets), text


def test_deeply_nested_type_does_not_recurse() -> None:
    depth = 5000
    text = "[1 x " * depth + "i32" + "]" * depth
    tp = TypeParser({})
    t = tp.parse(text)
    assert DataLayout(X86_64).alloc_size(t) == 4
    assert str(t) == text
    assert tp.parse(text + " ") == t


def test_llvmlite_type_strings_parse() -> None:
    # Unique struct names: llvmlite's shared LLVM context renames a struct defined twice
    # (%struct.S -> %struct.S.0), which str(module) reflects consistently.
    module = llvm.parse_assembly(
        "%struct.lt_S = type { i8, i32 }\n%struct.lt_P = type <{ i8, i16 }>\n"
        "@a = external global [2 x %struct.lt_S]\n@b = external global %struct.lt_P\n"
    )
    tp = TypeParser.from_module_text(str(module))
    a = module.get_global_variable("a").global_value_type
    b = module.get_global_variable("b").global_value_type
    assert tp.parse(str(a)) == ArrayType(2, StructType((I8, I32), False, "struct.lt_S"))
    # llvmlite prints a named struct type as its definition line
    assert str(b).startswith("%struct.lt_P = type")
    assert tp.parse(str(b)) == StructType((I8, I16), True, "struct.lt_P")
