"""Tests of symex.ir.constants: constant syntax, globals, evaluation and memory images.

Memory images are checked against LLVM itself: the module is JIT-compiled with llvmlite and the
bytes LLVM put at each global's address must equal ``encode_constant`` given the same addresses.
"""

from __future__ import annotations

import ctypes
import re
import struct
import subprocess
import sys
from collections.abc import Callable

import llvmlite.binding as llvm
import pytest

from symex.errors import LoadError
from symex.ir.constant_evaluation import encode_constant, evaluate_constant
from symex.ir.constants import (
    BlockAddress,
    ConstAggregate,
    ConstBytes,
    ConstExpr,
    ConstFloat,
    ConstInt,
    ConstNull,
    ConstUndef,
    ConstZero,
    GlobalRef,
    parse_constant,
    parse_typed_constant,
)
from symex.ir.global_definitions import AliasDef, parse_aliases, parse_globals
from symex.ir.types import ArrayType, DataLayout, FloatType, IntType, PointerType, StructType, TypeParser

X86_64 = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
I8, I32, I64, PTR = IntType(8), IntType(32), IntType(64), PointerType()
DL = DataLayout(X86_64)
NAMED = TypeParser.from_module_text(
    "%struct.S = type { i8, i32, i64, ptr, [3 x double] }\n%struct.P = type <{ i8, i16 }>\n"
)


def typed(text: str) -> object:
    value, end = parse_typed_constant(text, NAMED)
    assert end == len(text)
    return value


def float32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def test_integers_are_masked_unsigned() -> None:
    assert typed("i32 -2") == ConstInt(I32, 0xFFFF_FFFE)
    assert typed("i1 true") == ConstInt(IntType(1), 1)
    assert typed("i1 false") == ConstInt(IntType(1), 0)
    assert typed("i8 -128") == ConstInt(I8, 0x80)
    assert typed("i128 -1") == ConstInt(IntType(128), (1 << 128) - 1)
    assert typed("i64 9223372036854775807") == ConstInt(I64, 2**63 - 1)


def test_float_forms() -> None:
    assert typed("double 1.500000e+00") == ConstFloat(FloatType("double"), 1.5)
    assert typed("double -0.000000e+00").value == 0.0
    # float constants are printed as the hex pattern of the equal double
    c = typed("float 0x3FB99999A0000000")
    assert isinstance(c, ConstFloat) and c.value == float32(0.1)
    assert typed("double 0x7FF0000000000000").value == float("inf")
    fp80 = typed("x86_fp80 0xK3FFFC000000000000000")
    assert isinstance(fp80, ConstFloat) and fp80.value == 1.5
    assert typed("x86_fp80 0xKC0008000000000000000").value == -2.0
    assert typed("fp128 0xL00000000000000003FFF800000000000").value == 1.5
    assert typed("half 0xH3E00").value == 1.5
    assert typed("bfloat 0xR3FC0").value == 1.5
    # beyond the double's range (LDBL_MAX, numfmt compares with it): infinite, as C's
    # conversion to double makes it
    assert typed("x86_fp80 0xK7FFEFFFFFFFFFFFFFFFF").value == float("inf")
    assert typed("x86_fp80 0xKFFFEFFFFFFFFFFFFFFFF").value == float("-inf")
    assert typed("fp128 0xLFFFFFFFFFFFFFFFF7FFEFFFFFFFFFFFF").value == float("inf")


def test_pointers_and_special_values() -> None:
    assert typed("ptr null") == ConstNull(PTR)
    assert typed("ptr @g") == GlobalRef(PTR, "g")
    assert typed('ptr @"a b"') == GlobalRef(PTR, "a b")
    assert typed("ptr @.str.2") == GlobalRef(PTR, ".str.2")
    assert typed("i32 undef") == ConstUndef(I32, poison=False)
    assert typed("i32 poison") == ConstUndef(I32, poison=True)
    assert typed("[4 x i8] zeroinitializer") == ConstZero(ArrayType(4, I8))
    assert typed("ptr dso_local_equivalent @f") == GlobalRef(PTR, "f")
    assert typed("ptr blockaddress(@lbl, %3)") == BlockAddress(PTR, "lbl", "3")


def test_strings_decode_escapes() -> None:
    assert typed(r'[8 x i8] c"wo\22rld\\\00"') == ConstBytes(ArrayType(8, I8), b'wo"rld\\\x00')
    assert typed(r'[7 x i8] c"hello\0A\00"').data == b"hello\n\x00"
    assert typed(r'[3 x i8] c"\FF\00a"').data == b"\xff\x00a"


def test_aggregates() -> None:
    c = typed("%struct.P <{ i8 1, i16 -2 }>")
    assert isinstance(c, ConstAggregate) and isinstance(c.type, StructType) and c.type.packed
    assert [e.value for e in c.elements] == [1, 0xFFFE]
    arr = typed("[2 x { i32, ptr }] [{ i32, ptr } { i32 7, ptr @x }, { i32, ptr } zeroinitializer]")
    assert isinstance(arr, ConstAggregate)
    assert arr.elements[0].elements == (ConstInt(I32, 7), GlobalRef(PTR, "x"))
    assert arr.elements[1] == ConstZero(StructType((I32, PTR)))
    vec = typed("<4 x i32> splat (i32 7)")
    assert isinstance(vec, ConstAggregate) and vec.elements == (ConstInt(I32, 7),) * 4
    assert typed("{} {}") == ConstAggregate(StructType(()), ())


def test_constant_expressions() -> None:
    gep = typed("ptr getelementptr inbounds nuw (%struct.S, ptr @g, i32 0, i32 1)")
    assert isinstance(gep, ConstExpr)
    assert gep.opcode == "getelementptr" and gep.flags == ("inbounds", "nuw")
    assert gep.source_type == NAMED.parse("%struct.S")
    assert gep.operands == (GlobalRef(PTR, "g"), ConstInt(I32, 0), ConstInt(I32, 1))
    cast = typed("i64 ptrtoint (ptr getelementptr (i8, ptr @arr, i64 4) to i64)")
    assert isinstance(cast, ConstExpr) and cast.opcode == "ptrtoint" and cast.type == I64
    assert cast.operands[0].opcode == "getelementptr"
    cmp = typed("i1 icmp eq (ptr @a, ptr null)")
    assert isinstance(cmp, ConstExpr) and cmp.predicate == "eq"
    sub = typed("i64 sub nsw (i64 ptrtoint (ptr @b to i64), i64 ptrtoint (ptr @a to i64))")
    assert isinstance(sub, ConstExpr) and sub.flags == ("nsw",)
    inr = typed("ptr getelementptr inbounds inrange(-16, 8) ({ [4 x ptr] }, ptr @vt, i32 0, i32 0, i32 2)")
    assert isinstance(inr, ConstExpr) and inr.flags == ("inbounds", "inrange(-16, 8)")


def test_parse_constant_value_only_and_typed_prefix_positions() -> None:
    assert parse_constant("-5", I32, NAMED) == ConstInt(I32, 2**32 - 5)
    text = "store i32 noundef 42, ptr %p"
    value, end = parse_typed_constant(text, NAMED, 6)
    assert value == ConstInt(I32, 42) and text[end:] == ", ptr %p"
    with pytest.raises(LoadError):
        parse_constant("5 extra", I32, NAMED)
    with pytest.raises(LoadError):
        parse_typed_constant("i32 %x", NAMED)


def resolver(addresses: dict[str, int]) -> Callable[[str], int]:
    return addresses.__getitem__


def test_evaluate_gep_and_arithmetic_by_hand() -> None:
    where = resolver({"g": 0x1000, "a": 0x2000, "b": 0x2010})
    # %struct.S = { i8 @0, i32 @4, i64 @8, ptr @16, [3 x double] @24 }, 48 bytes
    gep = typed("ptr getelementptr (%struct.S, ptr @g, i64 1, i32 4, i64 2)")
    assert evaluate_constant(gep, DL, where) == 0x1000 + 48 + 24 + 2 * 8
    back = typed("ptr getelementptr (i8, ptr @g, i64 -3)")
    assert evaluate_constant(back, DL, where) == 0x1000 - 3
    neg32 = typed("ptr getelementptr ([4 x i32], ptr @g, i32 0, i32 -1)")
    assert evaluate_constant(neg32, DL, where) == 0x1000 - 4
    diff = typed("i64 sub (i64 ptrtoint (ptr @a to i64), i64 ptrtoint (ptr @b to i64))")
    assert evaluate_constant(diff, DL, where) == 2**64 - 16
    assert evaluate_constant(typed("i32 trunc (i64 ptrtoint (ptr @b to i64) to i32)"), DL, where) == 0x2010
    assert evaluate_constant(typed("i64 sext (i8 -1 to i64)"), DL, where) == 2**64 - 1
    assert evaluate_constant(typed("i64 zext (i8 -1 to i64)"), DL, where) == 255
    assert evaluate_constant(typed("i1 icmp ult (ptr @a, ptr @b)"), DL, where) == 1
    assert evaluate_constant(typed("i1 icmp slt (i8 -1, i8 1)"), DL, where) == 1
    assert evaluate_constant(typed("i1 icmp ult (i8 -1, i8 1)"), DL, where) == 0
    assert evaluate_constant(typed("i32 select (i1 false, i32 1, i32 2)"), DL, where) == 2
    assert evaluate_constant(typed("i8 shl (i8 3, i8 7)"), DL, where) == 0x80
    assert evaluate_constant(typed("{ i32, [2 x i8] } { i32 1, [2 x i8] c\"ab\" }"), DL, where) == (1, (97, 98))
    assert evaluate_constant(typed("{ i32, [2 x float] } zeroinitializer"), DL, where) == (0, (0.0, 0.0))
    assert evaluate_constant(typed("<2 x i8> <i8 undef, i8 -1>"), DL, where) == (0, 255)


def test_encode_by_hand() -> None:
    where = resolver({"g": 0x1122334455667788})
    s = typed("{ i8, i32, ptr } { i8 1, i32 poison, ptr @g }")
    # i8 at 0, i32 (poison -> zero) at 4, ptr at 8; padding bytes 1..3 are zero
    assert encode_constant(s, DL, NAMED, where) == b"\x01" + bytes(7) + (0x1122334455667788).to_bytes(8, "little")
    fp80 = typed("x86_fp80 0xK3FFBCCCCCCCCCCCCCCCD")  # 0.1L: mantissa survives exactly
    assert encode_constant(fp80, DL, NAMED, where) == bytes.fromhex("cdcccccccccccccc" "fb3f") + bytes(6)
    assert encode_constant(typed("i1 true"), DL, NAMED, where) == b"\x01"
    bits = typed("<8 x i1> <i1 1, i1 0, i1 1, i1 0, i1 0, i1 0, i1 0, i1 1>")
    assert encode_constant(bits, DL, NAMED, where) == b"\x85"


def test_deep_constant_expression_does_not_recurse() -> None:
    depth = 3000
    text = "i64 " + "add (i64 " * depth + "1" + ", i64 1)" * depth
    c, end = parse_typed_constant(text, NAMED)
    assert end == len(text)
    assert evaluate_constant(c, DL, resolver({})) == depth + 1
    assert encode_constant(c, DL, NAMED, resolver({})) == (depth + 1).to_bytes(8, "little")


ORACLE_C = r"""
#include <stddef.h>
struct In { short s; char c; };
struct Out { int a; struct In in[2]; const char *name; void (*fn)(void); long double ld; };
void handler(void) {}
__float128 q = 1.5Q;
long double lds[2] = {0.1L, -2.0L};
_Float16 h = 1.5f16;
double dd = 0.1;
float ff = -0.0f;
struct Out outs[2] = {{1, {{2, 'a'}, {-3, 'b'}}, "nm", handler, 3.25L}, {0}};
long off = offsetof(struct Out, name);
char *mid = (char *)&outs[1].in[1].c;
char *neg = ((char *)&outs[1]) - 3;
static char buf[100];
char big[10] = "ab\n\"\\";
int vec __attribute__((vector_size(16))) = {1, 2, 3, 4};
int splatv __attribute__((vector_size(16))) = {7, 7, 7, 7};
struct __attribute__((packed)) Pk { char a; long long b; short c; } pk = {1, -1, 3};
struct Bits { unsigned a : 3; unsigned b : 7; int c : 5; } bits = {5, 100, -3};
const char *strs[] = {"x", "yy", 0, "zzz" + 1};
_Bool flags[3] = {1, 0, 1};
unsigned __int128 wide = ((unsigned __int128)1 << 100) + 7;
int arr2[2][3] = {{1, 2, 3}, {4, 5, 6}};
int *p_arr2 = &arr2[1][2];
int weakv __attribute__((weak)) = 9;
int common_v;
int aliased = 3;
extern int alias_of __attribute__((alias("aliased")));
const int konst = 12;
int main(void) { return buf[0] + big[1] + (int)q + weakv + common_v; }
"""


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    out: dict[str, str] = {}
    directory = tmp_path_factory.mktemp("constants")
    source = directory / "c.c"
    source.write_text(ORACLE_C)
    for level in ("-O0", "-O2"):
        ll = directory / f"c{level}.ll"
        subprocess.run(
            [sys.executable, "-m", "ziglang", "cc", "-S", "-emit-llvm", "-g", level, "-fcommon",
             "-fno-sanitize=all", "-target", "x86_64-linux-gnu", str(source), "-o", str(ll)],
            check=True, capture_output=True,
        )
        out[level] = ll.read_text()
    return out


def test_parse_globals_of_compiled_c(compiled: dict[str, str]) -> None:
    text = compiled["-O0"]
    types = TypeParser.from_module_text(text)
    by_name = {g.name: g for g in parse_globals(text, types)}
    assert {"q", "lds", "outs", "buf", "big", "konst", "common_v", "weakv", "pk", "bits"} <= set(by_name)
    assert by_name["buf"].linkage == "internal" and by_name["buf"].align == 16
    assert by_name["buf"].initializer == ConstZero(ArrayType(100, I8))
    assert by_name["weakv"].linkage == "weak"
    assert by_name["common_v"].linkage == "common"
    assert by_name["konst"].is_constant and by_name["konst"].initializer == ConstInt(I32, 12)
    assert not by_name["outs"].is_constant and not by_name["outs"].external
    strings = [g for g in by_name.values() if g.name.startswith(".str")]
    assert strings and all(g.is_constant and g.linkage == "private" for g in strings)
    assert {s.initializer.data for s in strings} == {b"nm\x00", b"x\x00", b"yy\x00", b"zzz\x00"}
    assert parse_aliases(text, types) == [AliasDef("alias_of", GlobalRef(PTR, "aliased"))]


def test_declarations_and_attributes() -> None:
    text = "\n".join([
        "@ext = external global i32, align 4",
        "@tl = internal thread_local(initialexec) global i64 7, section \"mysec\", align 8, !dbg !3",
        '@"quoted name" = dso_local local_unnamed_addr addrspace(1) constant [2 x i8] c"a\\00"',
        "@hid = hidden unnamed_addr global ptr @ext",
        "@f.alias = alias void (), ptr @f",
        "define void @f() {\n  ret void\n}",
    ])
    types = TypeParser.from_module_text(text)
    gs = {g.name: g for g in parse_globals(text, types)}
    assert list(gs) == ["ext", "tl", "quoted name", "hid"]
    assert gs["ext"].external and gs["ext"].initializer is None and gs["ext"].align == 4
    assert gs["tl"].thread_local and gs["tl"].linkage == "internal" and gs["tl"].section == "mysec"
    assert gs["tl"].initializer == ConstInt(I64, 7) and gs["tl"].align == 8
    assert gs["quoted name"].is_constant and gs["quoted name"].align is None
    assert gs["hid"].initializer == GlobalRef(PTR, "ext") and gs["hid"].linkage == "external"
    assert [a.name for a in parse_aliases(text, types)] == ["f.alias"]


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_memory_images_match_llvm_jit(compiled: dict[str, str], level: str) -> None:
    # Private/internal globals have no JIT symbol; making them external changes no initializer.
    text = re.sub(r"^(@\S+ = )(?:private|internal) ", r"\1", compiled[level], flags=re.MULTILINE)
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    module = llvm.parse_assembly(text)
    machine = llvm.Target.from_default_triple().create_target_machine()
    engine = llvm.create_mcjit_compiler(module, machine)
    engine.finalize_object()

    def address(name: str) -> int:
        found = engine.get_global_value_address(name) or engine.get_function_address(name)
        assert found, name
        return found

    types = TypeParser.from_module_text(text)
    layout = DataLayout(module.data_layout)
    globals_ = [g for g in parse_globals(text, types) if g.initializer is not None]
    assert len(globals_) >= 20
    for g in globals_:
        size = layout.store_size(g.type)
        expected = ctypes.string_at(address(g.name), size)
        got = encode_constant(g.initializer, layout, types, address)
        assert len(got) == layout.alloc_size(g.type)
        assert got[:size] == expected, g.name
    engine = None  # the JIT goes before the module it compiled
