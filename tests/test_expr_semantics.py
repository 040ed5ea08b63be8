"""Soundness of the smart constructors against a naive SMT-LIB reference interpreter.

Each random tree is built twice: as a nested tuple evaluated by ``ref_eval`` below (written
straight from the SMT-LIB QF_BV definitions, no simplification) and through the constructors
of ``symex.expr``. For random array contents both must give the same value.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symex.expr as E
from symex.expr.bounds import at_most, known_truth, unsigned_max, value_range
from symex.expr.value_sets import few_values
from symex.expr.walk import postorder

A = E.Array("a", 8)
C = E.Array("c", 4, bytes([0x81, 0x02, 0xFF, 0x40]))
WIDTHS = (1, 8, 16, 32)
BIN_OPS = ("add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "and", "or", "xor", "shl", "lshr", "ashr")
CMP_OPS = ("eq", "ne", "ult", "ule", "ugt", "uge", "slt", "sle", "sgt", "sge")

Tree = Any


def signed(v: int, w: int) -> int:
    return v - (1 << w) if v >= (1 << (w - 1)) else v


def ref_binary(op: str, a: int, b: int, w: int) -> int:
    m = (1 << w) - 1
    sa, sb = signed(a, w), signed(b, w)
    if op == "add":
        return (a + b) & m
    if op == "sub":
        return (a - b) & m
    if op == "mul":
        return (a * b) & m
    if op == "udiv":
        return m if b == 0 else a // b
    if op == "urem":
        return a if b == 0 else a % b
    if op == "sdiv":
        if sb == 0:
            r = -1 if sa >= 0 else 1
        else:
            q = abs(sa) // abs(sb)
            r = q if (sa < 0) == (sb < 0) else -q
        return r & m
    if op == "srem":
        if sb == 0:
            r = sa
        else:
            r = abs(sa) % abs(sb)
            if sa < 0:
                r = -r
        return r & m
    if op == "and":
        return a & b
    if op == "or":
        return a | b
    if op == "xor":
        return a ^ b
    if op == "shl":
        return 0 if b >= w else (a << b) & m
    if op == "lshr":
        return 0 if b >= w else a >> b
    if op == "ashr":
        if b >= w:
            return m if sa < 0 else 0
        return (sa >> b) & m
    raise AssertionError(op)


def ref_compare(op: str, a: int, b: int, w: int) -> int:
    sa, sb = signed(a, w), signed(b, w)
    table = {
        "eq": a == b,
        "ne": a != b,
        "ult": a < b,
        "ule": a <= b,
        "ugt": a > b,
        "uge": a >= b,
        "slt": sa < sb,
        "sle": sa <= sb,
        "sgt": sa > sb,
        "sge": sa >= sb,
    }
    return int(table[op])


def width_of(t: Tree) -> int:
    return t[-1]


def ref_eval(t: Tree, mem: bytes, default: int) -> int:
    """Straightforward recursive reference (test trees are shallow)."""
    kind = t[0]
    w = t[-1]
    m = (1 << w) - 1
    if kind == "const":
        return t[1] & m
    if kind == "byte":
        k = t[1]
        return mem[k] if k < len(mem) else default
    if kind == "read":
        _, arr, idx, writes, _w = t
        i = ref_eval(idx, mem, default)
        for widx, wval in reversed(writes):  # newest write is last in the list
            if ref_eval(widx, mem, default) == i:
                return ref_eval(wval, mem, default)
        if arr == "c":
            return C.initial[i] if i < C.size else 0  # type: ignore[index]
        return mem[i] if i < len(mem) else default
    if kind == "not":
        return ~ref_eval(t[1], mem, default) & m
    if kind == "neg":
        return -ref_eval(t[1], mem, default) & m
    if kind == "bin":
        return ref_binary(t[1], ref_eval(t[2], mem, default), ref_eval(t[3], mem, default), w)
    if kind == "self":
        v = ref_eval(t[2], mem, default)
        return ref_binary(t[1], v, v, w)
    if kind == "cmp":
        a = t[2]
        return ref_compare(t[1], ref_eval(a, mem, default), ref_eval(t[3], mem, default), width_of(a))
    if kind == "concat":
        return (ref_eval(t[1], mem, default) << width_of(t[2])) | ref_eval(t[2], mem, default)
    if kind == "extract":
        return (ref_eval(t[1], mem, default) >> t[2]) & m
    if kind == "zext":
        return ref_eval(t[1], mem, default)
    if kind == "sext":
        return signed(ref_eval(t[1], mem, default), width_of(t[1])) & m
    if kind == "bytes_of":
        return ref_eval(t[1], mem, default)
    if kind == "pieces":
        x = ref_eval(t[1], mem, default)
        out = 0
        for off, pw in t[2]:  # most significant piece first
            out = (out << pw) | ((x >> off) & ((1 << pw) - 1))
        return out
    if kind == "ite":
        c = ref_eval(t[1], mem, default)
        return ref_eval(t[2] if c else t[3], mem, default)
    raise AssertionError(kind)


def build(t: Tree) -> E.Expr:
    kind = t[0]
    w = t[-1]
    if kind == "const":
        return E.const(t[1], w)
    if kind == "byte":
        return E.read(E.UpdateList(A), E.const(t[1], 32))
    if kind == "read":
        _, arr, idx, writes, _w = t
        ul = E.UpdateList(C if arr == "c" else A)
        for widx, wval in writes:
            ul = ul.write(build(widx), build(wval))
        return E.read(ul, build(idx))
    if kind == "not":
        return E.not_(build(t[1]))
    if kind == "neg":
        return E.neg(build(t[1]))
    if kind in ("bin", "self"):
        fn = getattr(E, t[1] + "_" if t[1] in ("and", "or") else t[1])
        a = build(t[2])
        return fn(a, a) if kind == "self" else fn(a, build(t[3]))
    if kind == "cmp":
        return getattr(E, t[1])(build(t[2]), build(t[3]))
    if kind == "concat":
        return E.concat(build(t[1]), build(t[2]))
    if kind == "extract":
        return E.extract(build(t[1]), t[2], w)
    if kind == "zext":
        return E.zext(build(t[1]), w)
    if kind == "sext":
        return E.sext(build(t[1]), w)
    if kind == "bytes_of":
        x = build(t[1])
        n = w // 8
        out = E.extract(x, 0, 8)
        for k in range(1, n):
            out = E.concat(E.extract(x, 8 * k, 8), out)
        return out
    if kind == "pieces":
        x = build(t[1])
        parts = [E.extract(x, off, pw) for off, pw in t[2]]
        if t[3] == "right":
            out = parts[-1]
            for p in reversed(parts[:-1]):
                out = E.concat(p, out)
        else:
            out = parts[0]
            for p in parts[1:]:
                out = E.concat(out, p)
        return out
    if kind == "ite":
        return E.ite(build(t[1]), build(t[2]), build(t[3]))
    raise AssertionError(kind)


@st.composite
def consts(draw: st.DrawFn, w: int) -> Tree:
    m = (1 << w) - 1
    v = draw(st.one_of(st.sampled_from([0, 1, m, 1 << (w - 1), w, w + 1]), st.integers(0, m)))
    return ("const", v, w)


@st.composite
def trees(draw: st.DrawFn, w: int, depth: int) -> Tree:
    if depth <= 0 or draw(st.integers(0, 9)) < 2:
        if w == 8 and draw(st.booleans()):
            return ("byte", draw(st.integers(0, 9)), 8)
        if draw(st.booleans()):
            return draw(consts(w))
        # Width-matching leaf made of bytes of the symbolic array.
        if w == 1:
            return ("extract", ("byte", draw(st.integers(0, 7)), 8), draw(st.integers(0, 7)), 1)
        leaf: Tree = ("byte", draw(st.integers(0, 7)), 8)
        while width_of(leaf) < w:
            leaf = ("concat", ("byte", draw(st.integers(0, 7)), 8), leaf, width_of(leaf) + 8)
        if width_of(leaf) > w:
            leaf = ("extract", leaf, draw(st.integers(0, width_of(leaf) - w)), w)
        return leaf
    d = depth - 1
    kinds = ["not", "neg", "bin", "bin", "bin", "self", "cmp", "ite", "extract", "read", "read"]
    kinds += ["const_chain", "const_chain", "ite_consts", "ext_extract", "ext_cmp"]
    if w > 1:
        kinds += ["concat", "zext", "sext"]
    if w in (16, 32):
        kinds.append("bytes_of")
    if w in (8, 16, 32):
        kinds += ["pieces", "pieces"]
    kind = draw(st.sampled_from(kinds))
    if kind in ("not", "neg"):
        return (kind, draw(trees(w, d)), w)
    if kind == "bin":
        op = draw(st.sampled_from(BIN_OPS))
        a = draw(trees(w, d))
        b = draw(st.one_of(trees(w, d), consts(w)))
        if draw(st.booleans()):
            a, b = b, a
        return ("bin", op, a, b, w)
    if kind == "self":
        return ("self", draw(st.sampled_from(BIN_OPS)), draw(trees(w, d)), w)
    if kind == "cmp":
        if w != 1:
            return ("zext", draw(trees(1, depth)), w)
        aw = draw(st.sampled_from(WIDTHS))
        a = draw(trees(aw, d))
        b = draw(st.one_of(trees(aw, d), consts(aw)))
        if draw(st.booleans()):
            a, b = b, a
        return ("cmp", draw(st.sampled_from(CMP_OPS)), a, b, 1)
    if kind == "ite":
        return ("ite", draw(trees(1, d)), draw(trees(w, d)), draw(trees(w, d)), w)
    if kind == "ite_consts":
        return ("ite", draw(trees(1, d)), draw(consts(w)), draw(consts(w)), w)
    if kind == "const_chain":
        # op(c1, op(c2, x)) and mirrored forms: targets constant reassociation rules.
        op1 = draw(st.sampled_from(BIN_OPS))
        op2 = draw(st.sampled_from(["add", "sub", op1]))
        inner: Tree = ("bin", op2, draw(consts(w)), draw(trees(w, d)), w)
        if draw(st.booleans()):
            inner = ("bin", op2, inner[3], inner[2], w)
        outer = ("bin", op1, draw(consts(w)), inner, w)
        if draw(st.booleans()):
            outer = ("bin", op1, inner, outer[2], w)
        return outer
    if kind == "ext_extract":
        # Extract from a zero/sign extension: below, across and above the extended bits.
        xw = draw(st.sampled_from([x for x in (1, 8, 16) if x <= 16]))
        src_w = max(w, xw) + draw(st.sampled_from([1, 8, 16]))
        ext = (draw(st.sampled_from(["zext", "sext"])), draw(trees(xw, d)), src_w)
        return ("extract", ext, draw(st.integers(0, src_w - w)), w)
    if kind == "ext_cmp":
        # Comparison of a constant with an extended value (both argument orders).
        if w != 1:
            return ("zext", draw(trees(1, depth)), w)
        xw = draw(st.sampled_from([1, 8, 16]))
        ew = draw(st.sampled_from([x for x in (8, 16, 32) if x > xw]))
        ext = (draw(st.sampled_from(["zext", "sext"])), draw(trees(xw, d)), ew)
        c = draw(consts(ew))
        near = ("const", draw(st.sampled_from([0, 1, (1 << xw) - 1, 1 << xw, (1 << ew) - (1 << xw)])), ew)
        c = draw(st.sampled_from([c, near]))
        a, b = (c, ext) if draw(st.booleans()) else (ext, c)
        return ("cmp", draw(st.sampled_from(CMP_OPS)), a, b, 1)
    if kind == "extract":
        src_w = draw(st.sampled_from([x for x in WIDTHS if x >= w] + [w + 8]))
        off = draw(st.integers(0, src_w - w))
        return ("extract", draw(trees(src_w, d)), off, w)
    if kind == "read":
        if w != 8:
            return ("zext", draw(trees(8, depth)), w) if w > 8 else ("extract", draw(trees(8, depth)), 0, w)
        arr = draw(st.sampled_from(["a", "c"]))

        def index(dd: int) -> st.SearchStrategy[Tree]:
            small = st.integers(0, 9).map(lambda k: ("const", k, 32))
            masked = trees(8, dd).map(lambda t: ("zext", ("bin", "and", ("const", 7, 8), t, 8), 32))
            return st.one_of(small, masked, trees(32, dd))

        writes = draw(st.lists(st.tuples(index(d - 1), trees(8, d - 1)), max_size=4))
        return ("read", arr, draw(index(d)), writes, 8)
    if kind == "concat":
        lw = draw(st.sampled_from([x for x in (1, 8, 16) if x < w]))
        return ("concat", draw(trees(w - lw, d)), draw(trees(lw, d)), w)
    if kind in ("zext", "sext"):
        src_w = draw(st.sampled_from([x for x in WIDTHS if x <= w]))
        return (kind, draw(trees(src_w, d)), w)
    if kind == "bytes_of":
        return ("bytes_of", draw(trees(w, d)), w)
    if kind == "pieces":
        # Extracts of one value concatenated: adjacent pieces exercise the merging rules,
        # overlapping or out-of-order ones check that merging stays sound.
        src_w = draw(st.sampled_from([x for x in (8, 16, 32) if x >= 8]))
        sizes = draw(st.sampled_from([[w], [w // 2, w // 2], [w // 4] * 4 if w >= 16 else [4, 4]]))
        sizes = [min(sz, src_w) for sz in sizes]
        if sum(sizes) != w:
            sizes = [w] if w <= src_w else [src_w] * (w // src_w)
        if draw(st.booleans()):
            # Descending adjacent offsets (a store/load round trip), possibly shifted.
            start = draw(st.integers(0, max(0, src_w - sum(sizes))))
            offs, pos = [], start + sum(sizes)
            for sz in sizes:
                pos -= sz
                offs.append(min(pos, src_w - sz))
        else:
            offs = [draw(st.integers(0, src_w - sz)) for sz in sizes]
        order = draw(st.sampled_from(["right", "left"]))
        return ("pieces", draw(trees(src_w, d)), list(zip(offs, sizes)), order, w)
    raise AssertionError(kind)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    width=st.sampled_from(WIDTHS),
    mem=st.binary(min_size=0, max_size=8),
    default=st.sampled_from([0, 0xFF, 0x5A]),
)
def test_constructors_agree_with_reference(data: st.DataObject, width: int, mem: bytes, default: int) -> None:
    tree = data.draw(trees(width, 4))
    expected = ref_eval(tree, mem, default)
    e = build(tree)
    assert e.width == width
    assignment = E.Assignment({A: mem}, default=default)
    assert assignment.evaluate(e) == expected
    # Evaluating the same DAG again (memoized) and through the convenience API agrees too.
    assert assignment.evaluate(e) == expected
    if default == 0:
        assert E.evaluate(e, {A: mem}) == expected
    # Concrete constructions must fold: building from constants only never leaves a non-const.
    if not E.arrays_in([e]):
        assert E.is_const(e)


@settings(max_examples=200, deadline=None)
@given(
    op=st.sampled_from(BIN_OPS),
    w=st.sampled_from((1, 8, 16, 32)),
    data=st.data(),
)
def test_constant_folding_matches_reference(op: str, w: int, data: st.DataObject) -> None:
    a = data.draw(consts(w))[1] & ((1 << w) - 1)
    b = data.draw(consts(w))[1] & ((1 << w) - 1)
    fn = getattr(E, op + "_" if op in ("and", "or") else op)
    e = fn(E.const(a, w), E.const(b, w))
    assert e.op is E.Op.CONST
    assert e.value == ref_binary(op, a, b, w)


@settings(max_examples=300, deadline=None)
@given(op=st.sampled_from(("udiv", "sdiv")), first=st.integers(0, 255), second=st.integers(0, 255))
def test_a_division_of_a_division_by_constants_keeps_every_value(op: str, first: int, second: int) -> None:
    """``(x / c1) / c2`` as the constructors build it (one division where the product fits)
    gives SMT-LIB's value for every 8-bit x, divisors of zero and of either sign included."""
    fn = getattr(E, op)
    x = E.read(E.UpdateList(A), E.const(0, 32))
    e = fn(fn(x, E.const(first, 8)), E.const(second, 8))
    for value in range(256):
        expected = ref_binary(op, ref_binary(op, value, first, 8), second, 8)
        assert E.evaluate(e, {A: bytes([value])}) == expected, (op, first, second, value)


def test_printing_a_number_divides_it_once_per_digit_not_in_a_chain() -> None:
    """musl's digit loop divides by 10 again and again: the sixteenth quotient is one
    division of the number by 10**16, not sixteen nested ones."""
    x = E.read(E.UpdateList(A), E.const(0, 32))
    for i in range(1, 8):
        x = E.concat(E.read(E.UpdateList(A), E.const(i, 32)), x)
    for op in ("udiv", "sdiv"):
        q = x
        for _ in range(16):
            q = getattr(E, op)(q, E.const(10, 64))
        assert q.args == (x, E.const(10 ** 16, 64))
        # and "no digits left" is a comparison of the number, no division left in it
        ops = {n.op for n in postorder([E.eq(q, E.const(0, 64))])}
        assert not ops & {E.Op.UDIV, E.Op.SDIV}, ops


@settings(max_examples=300, deadline=None)
@given(op=st.sampled_from(("udiv", "sdiv")), divisor=st.integers(0, 255))
def test_a_quotient_compared_with_zero_keeps_every_value(op: str, divisor: int) -> None:
    """``x / d == 0`` (built as a comparison of x) holds for exactly the 8-bit x for which
    SMT-LIB's quotient is 0, for every divisor, zero and negative ones included."""
    x = E.read(E.UpdateList(A), E.const(0, 32))
    e = E.eq(getattr(E, op)(x, E.const(divisor, 8)), E.const(0, 8))
    for value in range(256):
        expected = int(ref_binary(op, value, divisor, 8) == 0)
        assert E.evaluate(e, {A: bytes([value])}) == expected, (op, divisor, value)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), width=st.sampled_from((8, 16, 32)), mem=st.binary(min_size=8, max_size=8))
def test_the_few_values_found_include_every_value_the_expression_takes(
        data: st.DataObject, width: int, mem: bytes) -> None:
    """expr.value_sets.few_values: where it names a set, the expression's value for any
    input is in it (core/memory/access.py reads only at those offsets)."""
    tree = data.draw(trees(width, 3))
    e = build(tree)
    found = few_values(e, 8)
    if found is not None:
        assert len(found) <= 8
        assert ref_eval(tree, mem, 0) in found, (found, tree)


def test_a_value_chosen_by_conditions_has_few_values_and_an_input_byte_many() -> None:
    byte = E.read(E.UpdateList(A), E.const(0, 32))
    first, second = E.eq(byte, E.const(43, 8)), E.ult(byte, E.const(9, 8))
    cursor = E.add(E.mul(E.const(8, 64), E.zext(first, 64)), E.mul(E.const(8, 64), E.zext(second, 64)))
    assert few_values(cursor, 8) == [0, 8, 16]
    assert few_values(E.ite(first, E.const(0x1000, 64), E.const(0x2008, 64)), 8) == [0x1000, 0x2008]
    assert few_values(E.zext(byte, 64), 8) is None  # 256 values
    assert few_values(E.add(cursor, E.zext(E.extract(byte, 0, 4), 64)), 8) is None  # 16 x 3


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), width=st.sampled_from((8, 16, 32)), mem=st.binary(min_size=8, max_size=8))
def test_an_expression_never_exceeds_its_unsigned_bound(data: st.DataObject, width: int, mem: bytes) -> None:
    """expr.bounds.unsigned_max: no input gives the expression a larger value (``ult`` and
    ``ule`` against a constant fold to true or false on it)."""
    tree = data.draw(trees(width, 3))
    assert ref_eval(tree, mem, 0) <= unsigned_max(build(tree)), tree


def test_a_masked_table_index_is_in_bounds_without_a_query() -> None:
    """cksum's ``crctab[k][(crc >> 24) ^ byte]``: the offset ``4 * ((crc ^ byte) & 255)`` lies
    within the 8,192-byte table whatever the checksum so far; the bounds check is a
    constant (it took z3 4-5 s a query), and one the bound does not settle stays symbolic."""
    word = E.concat(E.concat(E.read(E.UpdateList(A), E.const(3, 32)), E.read(E.UpdateList(A), E.const(2, 32))),
                    E.concat(E.read(E.UpdateList(A), E.const(1, 32)), E.read(E.UpdateList(A), E.const(0, 32))))
    crc = E.xor(E.lshr(E.mul(word, E.const(0x04C11DB7, 32)), E.const(24, 32)), word)
    offset = E.mul(E.const(4, 64), E.zext(E.and_(crc, E.const(255, 32)), 64))
    assert unsigned_max(offset) == 1020
    assert at_most(offset, 8192 - 4) is E.TRUE
    assert at_most(offset, 1016) is E.ule(offset, E.const(1016, 64))  # 1020 is possible
    assert unsigned_max(E.lshr(word, E.const(24, 32))) == 255
    assert unsigned_max(E.urem(word, E.const(10, 32))) == 9
    assert unsigned_max(E.concat(E.const(0, 8), E.extract(word, 8, 8))) == 255
    assert unsigned_max(word) == 2**32 - 1  # an input word: any value


def _in_range(value: int, span: tuple[int, int], width: int) -> bool:
    lo, hi = span
    return hi - lo < 1 << width and lo + ((value - lo) % (1 << width)) <= hi


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), width=st.sampled_from(WIDTHS), mem=st.binary(min_size=8, max_size=8))
def test_an_expression_takes_only_values_in_its_range(data: st.DataObject, width: int, mem: bytes) -> None:
    """expr.bounds.value_range: whatever the input, the value is in the range (modulo the
    width: a range may cross zero)."""
    tree = data.draw(trees(width, 3))
    assert _in_range(ref_eval(tree, mem, 0), value_range(build(tree)), width), tree


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), mem=st.binary(min_size=8, max_size=8))
def test_a_comparison_the_ranges_settle_has_that_value_on_every_input(data: st.DataObject, mem: bytes) -> None:
    """expr.bounds.known_truth: where it answers, the condition has that value on the input."""
    tree = data.draw(trees(1, 3))
    truth = known_truth(build(tree))
    if truth is not None:
        assert ref_eval(tree, mem, 0) == int(truth), tree


RANGE_OPS = ("add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "and", "lshr", "ashr", "shl")


@pytest.mark.parametrize("op", RANGE_OPS)
def test_ranges_settle_comparisons_only_as_every_8_bit_input_does(op: str) -> None:
    """Each operation the ranges follow, with constants of both signs, zero and past the
    width, inside a sum as printed digits are (``'0' + x % 10``), compared with constants by
    every comparison: known_truth's answer, where it gives one, is every input's."""
    x = E.read(E.UpdateList(A), E.const(0, 32))
    fn = getattr(E, op + "_" if op == "and" else op)
    settled = 0
    for c in (0, 1, 3, 10, 127, 128, 246, 255):
        for shape in (fn(x, E.const(c, 8)), E.add(E.const(48, 8), fn(x, E.const(c, 8))),
                      E.sub(E.const(48, 8), fn(x, E.const(c, 8)))):
            for k in (0, 9, 39, 57, 128, 250):
                for compare in (E.eq, E.ult, E.ule, E.slt, E.sle):
                    for cond in (compare(shape, E.const(k, 8)), compare(E.const(k, 8), shape)):
                        truth = known_truth(cond)
                        if truth is None:
                            continue
                        settled += 1
                        for value in range(256):
                            assert E.evaluate(cond, {A: bytes([value])}) == int(truth), (E.format_expr(cond), value)
    assert settled  # the ranges do settle some of them


def test_a_printed_digit_is_never_the_nul_byte_by_its_range() -> None:
    """stat's question, 200 of its first 721 queries: is the digit ``'0' + x / d % 10`` of a
    64-bit number 0? Its range is 39..57, so never; and ``9 + x / 10**18 < 19`` always."""
    word = E.read(E.UpdateList(A), E.const(0, 32))
    for i in range(1, 8):
        word = E.concat(E.read(E.UpdateList(A), E.const(i, 32)), word)
    remainder = E.srem(E.sdiv(word, E.const(1000, 64)), E.const(10, 64))
    for digit in (E.add(E.const(48, 64), remainder), E.sub(E.const(48, 64), remainder)):
        byte = E.extract(digit, 0, 8)
        assert value_range(byte) == (39, 57)
        assert known_truth(E.eq(E.const(0, 8), byte)) is False
        assert known_truth(E.bool_not(E.eq(E.const(0, 8), byte))) is True
        assert known_truth(E.eq(E.const(48, 8), byte)) is None  # the digit 0 is possible
    leading = E.add(E.const(9, 64), E.sdiv(word, E.const(10**18, 64)))
    assert known_truth(E.ult(leading, E.const(19, 64))) is True
    assert known_truth(E.ult(word, E.const(19, 64))) is None  # an input word: any value
