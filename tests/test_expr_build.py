"""Smart constructors: interning, canonical forms, required simplifications, folding tables."""

from __future__ import annotations

import copy

import pytest

import symex.expr as E
from symex.expr import Op


@pytest.fixture
def arr() -> E.Array:
    return E.Array("a", 16)


def byte(arr: E.Array, i: int) -> E.Expr:
    return E.read(E.UpdateList(arr), E.const(i, 32))


def word(arr: E.Array, width: int, base: int = 0) -> E.Expr:
    """A symbolic ``width``-bit value built from little-endian bytes (not an extract of anything)."""
    out = byte(arr, base)
    for k in range(1, width // 8):
        out = E.concat(byte(arr, base + k), out)
    return out


def opaque(arr: E.Array, width: int, base: int = 0) -> E.Expr:
    """A symbolic value whose extracts do not simplify into anything else."""
    return E.mul(E.const(3, width), word(arr, width, base))


def c32(v: int) -> E.Expr:
    return E.const(v, 32)


# --- interning ---------------------------------------------------------------------------------


def test_same_structure_is_same_object(arr: E.Array) -> None:
    x = word(arr, 32)
    e1 = E.mul(E.add(x, c32(7)), E.zext(byte(arr, 5), 32))
    e2 = E.mul(E.add(x, c32(7)), E.zext(byte(arr, 5), 32))
    assert e1 is e2
    assert E.const(5, 32) is E.const(5, 32)
    assert E.const(-1, 8) is E.const(255, 8)


def test_different_widths_or_arrays_are_different_objects(arr: E.Array) -> None:
    assert E.const(5, 32) is not E.const(5, 16)
    other = E.Array("a", 16)  # same name, different array
    assert byte(arr, 0) is not byte(other, 0)
    assert E.zext(byte(arr, 0), 16) is not E.zext(byte(arr, 0), 32)
    assert E.extract(word(arr, 32), 0, 8) is not E.extract(word(arr, 32), 8, 8)


def test_reads_through_equal_update_lists_intern(arr: E.Array) -> None:
    i = E.zext(byte(arr, 9), 32)
    ul = E.UpdateList(arr).write(i, E.const(3, 8))
    same = E.UpdateList(arr, ul.head)
    assert E.read(ul, c32(1)) is E.read(same, c32(1))
    # A separate but identical write is a different list (update nodes are not interned).
    ul2 = E.UpdateList(arr).write(i, E.const(3, 8))
    assert E.read(ul, c32(1)) is not E.read(ul2, c32(1))


def test_expr_has_no_truth_value(arr: E.Array) -> None:
    with pytest.raises(TypeError):
        bool(E.eq(byte(arr, 0), E.const(1, 8)))
    with pytest.raises(TypeError):
        if E.TRUE:
            pass


def test_copies_keep_identity(arr: E.Array) -> None:
    e = E.add(word(arr, 32), c32(1))
    ul = E.UpdateList(arr).write(c32(0), E.const(1, 8))
    state = {"e": e, "arr": arr, "ul": ul}
    clone = copy.deepcopy(state)
    assert clone["e"] is e and clone["arr"] is arr and clone["ul"] is ul


def test_update_list_is_persistent(arr: E.Array) -> None:
    base = E.UpdateList(arr).write(c32(0), E.const(1, 8))
    left = base.write(c32(0), E.const(2, 8))
    right = base.write(c32(0), E.const(3, 8))
    assert (len(base), len(left), len(right)) == (1, 2, 2)
    assert E.read(base, c32(0)) is E.const(1, 8)
    assert E.read(left, c32(0)) is E.const(2, 8)
    assert E.read(right, c32(0)) is E.const(3, 8)
    assert left.head.next is base.head and right.head.next is base.head  # type: ignore[union-attr]


def test_array_properties() -> None:
    sym = E.Array("s", 4)
    con = E.Array("k", 3, b"xyz")
    assert sym.is_symbolic and not con.is_symbolic
    assert con.initial == b"xyz"
    with pytest.raises(ValueError):
        E.Array("bad", 4, b"xy")


# --- misuse ------------------------------------------------------------------------------------


def test_width_mismatch_raises(arr: E.Array) -> None:
    with pytest.raises(ValueError):
        E.add(byte(arr, 0), c32(1))
    with pytest.raises(ValueError):
        E.eq(byte(arr, 0), E.const(0, 16))
    with pytest.raises(ValueError):
        E.ite(byte(arr, 0), c32(1), c32(2))
    with pytest.raises(ValueError):
        E.ite(E.TRUE, c32(1), E.const(2, 8))
    with pytest.raises(ValueError):
        E.zext(c32(1), 16)
    with pytest.raises(ValueError):
        E.extract(byte(arr, 0), 4, 8)
    with pytest.raises(ValueError):
        E.read(E.UpdateList(arr), E.const(0, 16))
    with pytest.raises(ValueError):
        E.UpdateList(arr).write(c32(0), c32(0))
    with pytest.raises(ValueError):
        E.bool_and(byte(arr, 0), E.TRUE)
    with pytest.raises(TypeError):
        E.add(5, c32(1))  # type: ignore[arg-type]


# --- constant folding (values computed by hand) -----------------------------------------------


def fold8(fn: object, a: int, b: int) -> int:
    e = fn(E.const(a, 8), E.const(b, 8))  # type: ignore[operator]
    assert e.op is Op.CONST
    return e.value


@pytest.mark.parametrize(
    ("a", "b", "quotient", "remainder"),
    [
        (0xF9, 2, 0xFD, 0xFF),  # -7 / 2 = -3 rem -1
        (7, 0xFE, 0xFD, 1),  # 7 / -2 = -3 rem 1
        (0xF9, 0xFE, 3, 0xFF),  # -7 / -2 = 3 rem -1
        (0x80, 0xFF, 0x80, 0),  # -128 / -1 overflows to -128, rem 0
        (5, 0, 0xFF, 5),  # x / 0 = -1 for x >= 0; rem is the dividend
        (0xFB, 0, 1, 0xFB),  # -5 / 0 = 1; rem -5
        (0, 0, 0xFF, 0),
        (100, 7, 14, 2),
    ],
)
def test_signed_division_table(a: int, b: int, quotient: int, remainder: int) -> None:
    assert fold8(E.sdiv, a, b) == quotient
    assert fold8(E.srem, a, b) == remainder


def test_signed_division_32_bit_overflow() -> None:
    assert E.sdiv(c32(0x80000000), c32(0xFFFFFFFF)) is c32(0x80000000)
    assert E.srem(c32(0x80000000), c32(0xFFFFFFFF)) is c32(0)


def test_unsigned_division_table() -> None:
    assert fold8(E.udiv, 200, 0) == 0xFF
    assert fold8(E.urem, 200, 0) == 200
    assert fold8(E.udiv, 200, 7) == 28
    assert fold8(E.urem, 200, 7) == 4


@pytest.mark.parametrize(
    ("fn", "a", "b", "result"),
    [
        (E.shl, 0x81, 1, 0x02),
        (E.shl, 1, 7, 0x80),
        (E.shl, 0xFF, 8, 0),
        (E.shl, 0xFF, 9, 0),
        (E.lshr, 0x80, 7, 1),
        (E.lshr, 0xFF, 8, 0),
        (E.lshr, 0xFF, 0xFF, 0),
        (E.ashr, 0x80, 7, 0xFF),
        (E.ashr, 0xF0, 2, 0xFC),
        (E.ashr, 0x80, 8, 0xFF),
        (E.ashr, 0x80, 200, 0xFF),
        (E.ashr, 0x40, 8, 0),
        (E.ashr, 0x40, 2, 0x10),
    ],
)
def test_shift_table(fn: object, a: int, b: int, result: int) -> None:
    assert fold8(fn, a, b) == result


def test_comparison_and_extension_folding() -> None:
    assert E.slt(E.const(0x80, 8), E.const(0x7F, 8)) is E.TRUE  # -128 < 127
    assert E.ult(E.const(0x80, 8), E.const(0x7F, 8)) is E.FALSE
    assert E.sge(E.const(0xFF, 8), E.const(0, 8)) is E.FALSE  # -1 >= 0
    assert E.sext(E.const(0x80, 8), 16) is E.const(0xFF80, 16)
    assert E.zext(E.const(0x80, 8), 16) is E.const(0x0080, 16)
    assert E.neg(E.const(1, 8)) is E.const(0xFF, 8)
    assert E.not_(E.const(0x0F, 8)) is E.const(0xF0, 8)
    assert E.concat(E.const(0xAB, 8), E.const(0xCD, 8)) is E.const(0xABCD, 16)
    assert E.extract(E.const(0xABCD, 16), 4, 8) is E.const(0xBC, 8)


# --- canonical forms and identities ------------------------------------------------------------


def test_commutative_constant_goes_first(arr: E.Array) -> None:
    x = word(arr, 32)
    for fn in (E.add, E.mul, E.and_, E.or_, E.xor, E.eq):
        e = fn(x, c32(6))
        assert e.args[0] is c32(6), fn
        assert fn(c32(6), x) is e


def test_derived_comparisons(arr: E.Array) -> None:
    x, y = word(arr, 32), word(arr, 32, 4)
    assert E.ne(x, y) is E.not_(E.eq(x, y))
    assert E.ugt(x, y) is E.ult(y, x)
    assert E.uge(x, y) is E.ule(y, x)
    assert E.sgt(x, y) is E.slt(y, x)
    assert E.sge(x, y) is E.sle(y, x)


def test_arithmetic_identities(arr: E.Array) -> None:
    x = word(arr, 32)
    zero, one, ones = c32(0), c32(1), c32(0xFFFFFFFF)
    assert E.add(x, zero) is x
    assert E.sub(x, zero) is x
    assert E.sub(x, x) is zero
    assert E.mul(x, zero) is zero
    assert E.mul(one, x) is x
    assert E.and_(x, zero) is zero
    assert E.and_(ones, x) is x
    assert E.and_(x, x) is x
    assert E.or_(x, zero) is x
    assert E.or_(x, ones) is ones
    assert E.or_(x, x) is x
    assert E.xor(zero, x) is x
    assert E.xor(x, x) is zero
    for shift in (E.shl, E.lshr, E.ashr):
        assert shift(x, zero) is x
    assert E.not_(E.not_(x)) is x
    assert E.neg(x).op is Op.SUB and E.neg(x).args == (zero, x)


def test_constant_reassociation(arr: E.Array) -> None:
    x = word(arr, 32)
    assert E.add(c32(3), E.add(c32(4), x)) is E.add(c32(7), x)
    assert E.add(E.add(x, c32(4)), c32(3)) is E.add(c32(7), x)
    # sub(x, c) = add(-c, x), which then reassociates.
    assert E.sub(x, c32(1)) is E.add(c32(0xFFFFFFFF), x)
    assert E.sub(E.add(x, c32(5)), c32(5)) is x


def test_comparison_identities(arr: E.Array) -> None:
    x = word(arr, 16)
    assert E.eq(x, x) is E.TRUE
    assert E.ult(x, x) is E.FALSE
    assert E.ule(x, x) is E.TRUE
    assert E.slt(x, x) is E.FALSE
    assert E.sle(x, x) is E.TRUE
    assert E.ne(x, x) is E.FALSE


def test_ite_and_boolean_rules(arr: E.Array) -> None:
    x, y = word(arr, 32), word(arr, 32, 4)
    c = E.ult(x, y)
    assert E.ite(E.TRUE, x, y) is x
    assert E.ite(E.FALSE, x, y) is y
    assert E.ite(c, x, x) is x
    assert E.ite(c, E.TRUE, E.FALSE) is c
    assert E.ite(c, E.FALSE, E.TRUE) is E.not_(c)
    assert E.ite(c, x, y).op is Op.SELECT
    assert E.eq(E.TRUE, c) is c
    assert E.eq(c, E.FALSE) is E.not_(c)
    assert E.bool_and(c, E.TRUE) is c
    assert E.bool_and(E.FALSE, c) is E.FALSE
    assert E.bool_or(c, E.FALSE) is c
    assert E.bool_or(E.TRUE, c) is E.TRUE
    assert E.bool_not(E.bool_not(c)) is c


# --- extensions and extracts -------------------------------------------------------------------


def test_extension_rules(arr: E.Array) -> None:
    b = byte(arr, 0)
    assert E.zext(b, 8) is b and E.sext(b, 8) is b
    assert E.zext(E.zext(b, 16), 32) is E.zext(b, 32)
    assert E.sext(E.sext(b, 16), 32) is E.sext(b, 32)
    # A zero-extended value is non-negative, so sign-extending it further adds zeros.
    assert E.sext(E.zext(b, 16), 32) is E.zext(b, 32)
    assert E.trunc(E.zext(b, 32), 8) is b


def test_extract_rules(arr: E.Array) -> None:
    x = word(arr, 32)
    b = byte(arr, 0)
    assert E.extract(x, 0, 32) is x
    assert E.extract(E.extract(x, 8, 16), 4, 8) is E.extract(x, 12, 8)
    hi, lo = word(arr, 16, 4), word(arr, 16, 8)
    cat = E.concat(hi, lo)
    assert E.extract(cat, 0, 16) is lo
    assert E.extract(cat, 16, 16) is hi
    assert E.extract(cat, 2, 8) is E.extract(lo, 2, 8)
    assert E.extract(cat, 20, 8) is E.extract(hi, 4, 8)
    assert E.extract(cat, 12, 8).args[0] is cat  # straddles both halves: stays
    assert E.extract(E.zext(x, 64), 0, 8) is E.extract(x, 0, 8)
    assert E.extract(E.zext(b, 32), 0, 8) is b
    assert E.extract(E.zext(b, 32), 2, 4) is E.extract(b, 2, 4)
    assert E.extract(E.sext(b, 32), 1, 6) is E.extract(b, 1, 6)
    # Bits above the zero extension are known zeros; a low slice wider than x is a narrower zext.
    assert E.extract(E.zext(b, 32), 8, 16) is E.const(0, 16)
    assert E.extract(E.zext(b, 32), 0, 16) is E.zext(b, 16)
    assert E.extract(E.sext(b, 32), 0, 16) is E.sext(b, 16)


@pytest.mark.parametrize("width", [16, 32, 64])
@pytest.mark.parametrize("kind", ["opaque", "loaded"])
def test_store_load_round_trip_is_identity(arr: E.Array, width: int, kind: str) -> None:
    x = opaque(arr, width) if kind == "opaque" else word(arr, width)
    stored = [E.extract(x, 8 * k, 8) for k in range(width // 8)]
    # Load little-endian as the interpreter does: concat(b_n-1, concat(..., concat(b1, b0))).
    loaded = stored[0]
    for k in range(1, width // 8):
        loaded = E.concat(stored[k], loaded)
    assert loaded is x
    # Through memory: write the bytes into an update list at concrete addresses, read them back.
    ul = E.UpdateList(E.Array("mem", 64))
    for k, b in enumerate(stored):
        ul = ul.write(c32(k), b)
    reread = E.read(ul, c32(0))
    for k in range(1, width // 8):
        reread = E.concat(E.read(ul, c32(k)), reread)
    assert reread is x


def test_partial_load_round_trips(arr: E.Array) -> None:
    x = opaque(arr, 32)
    b = [E.extract(x, 8 * k, 8) for k in range(4)]
    assert E.concat(b[2], b[1]) is E.extract(x, 8, 16)
    assert E.concat(E.concat(b[3], b[2]), E.concat(b[1], b[0])) is x
    y = byte(arr, 12)
    # A right-nested chain ending in an unrelated byte keeps the merged prefix.
    assert E.concat(b[3], E.concat(b[2], y)) is E.concat(E.extract(x, 16, 16), y)
    # Non-adjacent extracts do not merge.
    assert E.concat(b[3], b[1]).op is Op.CONCAT


# --- comparisons against extended values ------------------------------------------------------


def test_eq_with_zext(arr: E.Array) -> None:
    b = byte(arr, 0)
    assert E.eq(c32(0x41), E.zext(b, 32)) is E.eq(E.const(0x41, 8), b)
    assert E.eq(E.zext(b, 32), c32(0x141)) is E.FALSE


def test_eq_with_sext(arr: E.Array) -> None:
    b = byte(arr, 0)
    assert E.eq(c32(0xFFFFFF80), E.sext(b, 32)) is E.eq(E.const(0x80, 8), b)
    assert E.eq(c32(0x7F), E.sext(b, 32)) is E.eq(E.const(0x7F, 8), b)
    # 0x80 sign-extends from 8 bits to 0xFFFFFF80, never 0x00000080; 0x100 is out of range.
    assert E.eq(c32(0x80), E.sext(b, 32)) is E.FALSE
    assert E.eq(c32(0x100), E.sext(b, 32)) is E.FALSE


def test_unsigned_compare_with_zext(arr: E.Array) -> None:
    b = byte(arr, 0)
    z = E.zext(b, 32)
    assert E.ult(z, c32(0x10)) is E.ult(b, E.const(0x10, 8))
    assert E.ult(c32(0x10), z) is E.ult(E.const(0x10, 8), b)
    assert E.ule(z, c32(0x10)) is E.ule(b, E.const(0x10, 8))
    assert E.ule(c32(0x10), z) is E.ule(E.const(0x10, 8), b)
    # Constants beyond 8 bits decide the comparison: a zext'd byte is at most 0xFF.
    assert E.ult(z, c32(0x100)) is E.TRUE
    assert E.ule(z, c32(0x100)) is E.TRUE
    assert E.ult(c32(0x100), z) is E.FALSE
    assert E.ule(c32(0x100), z) is E.FALSE
    assert E.ugt(z, c32(0x1FF)) is E.FALSE
    assert E.uge(c32(0x1FF), z) is E.TRUE


# --- reads -------------------------------------------------------------------------------------


def test_read_constant_array() -> None:
    k = E.Array("k", 3, bytes([7, 8, 9]))
    ul = E.UpdateList(k)
    assert E.read(ul, c32(1)) is E.const(8, 8)
    assert E.read(ul, c32(3)) is E.const(0, 8)
    assert E.read(ul, c32(0xFFFFFFFF)) is E.const(0, 8)
    sym_index = E.zext(E.read(E.UpdateList(E.Array("i", 1)), c32(0)), 32)
    r = E.read(ul, sym_index)
    assert r.op is Op.READ and r.updates.array is k  # type: ignore[union-attr]


def test_read_through_concrete_writes(arr: E.Array) -> None:
    v1, v2 = E.const(1, 8), E.const(2, 8)
    ul = E.UpdateList(arr).write(c32(3), v1).write(c32(5), v2).write(c32(3), v2)
    assert E.read(ul, c32(3)) is v2  # newest write wins
    assert E.read(ul, c32(5)) is v2
    # No matching write: a read of the bare array.
    r = E.read(ul, c32(7))
    assert r is byte(arr, 7)
    assert len(r.updates) == 0  # type: ignore[arg-type]


def test_read_stops_at_symbolic_write(arr: E.Array) -> None:
    sym = E.zext(byte(arr, 15), 32)
    base = E.UpdateList(arr).write(c32(1), E.const(1, 8))
    with_sym = base.write(sym, E.const(9, 8))
    ul = with_sym.write(c32(2), E.const(2, 8))
    assert E.read(ul, c32(2)) is E.const(2, 8)  # found before the symbolic write
    r = E.read(ul, c32(1))
    assert r.op is Op.READ
    # The READ is over the list starting at the symbolic write, not the full list.
    assert r.updates.head is with_sym.head  # type: ignore[union-attr]
    assert r is E.read(with_sym, c32(1))
    rs = E.read(ul, sym)
    assert rs.updates.head is ul.head  # type: ignore[union-attr]
