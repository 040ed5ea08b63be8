"""postorder/arrays_in, Assignment evaluation and format_expr."""

from __future__ import annotations

import gc

import pytest

import symex.expr as E
from symex.expr import Op


def c32(v: int) -> E.Expr:
    return E.const(v, 32)


def rd(arr: E.Array, i: int | E.Expr) -> E.Expr:
    return E.read(E.UpdateList(arr), c32(i) if isinstance(i, int) else i)


# --- postorder ---------------------------------------------------------------------------------


def test_postorder_small_expression_exact_order() -> None:
    a = E.Array("a", 4)
    b0, b1 = rd(a, 0), rd(a, 1)
    z0, z1 = E.zext(b0, 32), E.zext(b1, 32)
    e = E.add(z0, z1)
    assert E.postorder([e]) == [c32(0), b0, z0, c32(1), b1, z1, e]
    # Shared nodes appear once; a second root reuses what the first already listed.
    e2 = E.mul(z1, z1)
    assert E.postorder([e, e2]) == [c32(0), b0, z0, c32(1), b1, z1, e, e2]


def test_postorder_lists_update_exprs_before_read_oldest_first() -> None:
    a = E.Array("a", 8)
    i = E.zext(rd(a, 7), 32)
    v1 = rd(a, 6)
    ul = E.UpdateList(a).write(c32(1), E.const(5, 8)).write(i, v1)
    r = E.read(ul, E.add(c32(2), i))
    order = E.postorder([r])
    pos = {id(x): k for k, x in enumerate(order)}
    assert order[-1] is r
    for x in (c32(1), E.const(5, 8), i, v1, E.add(c32(2), i)):
        assert pos[id(x)] < pos[id(r)]
    # Older write (index 1 = 5) is listed before the newer one's index.
    assert pos[id(c32(1))] < pos[id(E.const(5, 8))] < pos[id(i)]
    assert len(order) == len({id(x) for x in order})


def _children_before_parents(order: list[E.Expr]) -> bool:
    pos = {id(x): k for k, x in enumerate(order)}
    for x in order:
        kids = list(x.args)
        if x.op is Op.READ:
            for node in x.updates:  # type: ignore[union-attr]
                kids += [node.index, node.value]
        if any(pos[id(k)] >= pos[id(x)] for k in kids):
            return False
    return True


def _build_sample() -> list[E.Expr]:
    a = E.Array("a", 8)
    k = E.Array("k", 2, b"\x01\x02")
    x = E.concat(rd(a, 1), rd(a, 0))
    ul = E.UpdateList(a)
    for j in range(5):
        ul = ul.write(E.zext(rd(a, j), 32), E.extract(x, j, 8))
    y = E.zext(E.read(ul, E.zext(rd(a, 2), 32)), 16)
    z = E.ite(E.ult(x, y), E.sdiv(x, y), E.zext(rd(k, E.zext(rd(a, 3), 32)), 16))
    return [E.eq(z, E.const(7, 16)), E.slt(y, x)]


def test_postorder_is_deterministic_and_topological() -> None:
    roots = _build_sample()
    first = E.postorder(roots)
    assert _children_before_parents(first)
    texts = [E.format_expr(x) for x in first]
    del roots, first
    gc.collect()
    again = E.postorder(_build_sample())
    assert [E.format_expr(x) for x in again] == texts


def test_postorder_shared_update_list_is_linear() -> None:
    a = E.Array("a", 4)
    ul = E.UpdateList(a)
    for j in range(2000):
        ul = ul.write(E.zext(rd(a, j % 4), 32), E.const(j & 0xFF, 8))
    reads = [E.read(ul, c32(j)) for j in range(200)]
    order = E.postorder(reads)
    # 4 array bytes (+4 index consts) + their 4 zexts + 256 byte consts + 200 reads + 196 new indices.
    assert len(order) == 4 + 4 + 4 + 256 + 200 + 196
    assert _children_before_parents(order)


def test_node_count_counts_shared_nodes_once_and_stops_at_its_limit() -> None:
    from symex.expr.walk import node_count

    a = E.Array("a", 4)
    b0, b1 = rd(a, 0), rd(a, 1)
    z0, z1 = E.zext(b0, 32), E.zext(b1, 32)
    e = E.mul(E.add(z0, z1), E.add(z0, z1))  # add is one node, shared
    assert node_count(e, 100) == 6  # b0, b1, z0, z1, add, mul: constants not counted
    chain = z0
    for k in range(1, 1001):
        chain = E.add(E.mul(chain, c32(3)), c32(k))
    assert node_count(chain, 1_000_000) == 2 + 2000
    assert node_count(chain, 10) == 11  # the walk stops one past the limit


def test_arrays_in_first_encounter_order() -> None:
    p, q, r = E.Array("p", 4), E.Array("q", 4), E.Array("r", 4)
    e = E.add(E.zext(rd(q, 0), 32), E.zext(rd(p, E.zext(rd(r, 1), 32)), 32))
    assert E.arrays_in([e]) == [q, r, p]
    assert E.arrays_in([c32(4)]) == []
    assert E.is_const(c32(4)) and not E.is_const(rd(p, 0))


# --- evaluation --------------------------------------------------------------------------------


def test_evaluate_defaults_and_constant_arrays() -> None:
    a = E.Array("a", 4)
    missing = E.Array("m", 4)
    k = E.Array("k", 2, b"\x10\x20")
    idx = E.zext(rd(a, 0), 32)
    e_a1 = rd(a, 1)
    e_a3 = rd(a, 3)
    asg = E.Assignment({a: b"\x01\x05"}, default=0xAA)
    assert asg.evaluate(e_a1) == 5
    assert asg.evaluate(e_a3) == 0xAA  # past the end of the given bytes
    assert asg.evaluate(rd(missing, 2)) == 0xAA
    assert asg.evaluate(rd(k, idx)) == 0x20  # a[0] = 1 -> k[1]
    assert E.Assignment({a: bytearray(b"\x07")}).evaluate(rd(k, idx)) == 0  # k[7] is past k's end
    assert E.evaluate(E.add(E.zext(e_a1, 32), c32(1)), {a: b"\x00\xff"}) == 0x100


def test_evaluate_update_list_newest_match_wins() -> None:
    a = E.Array("a", 4)
    i = E.zext(rd(a, 0), 32)
    j = E.zext(rd(a, 1), 32)
    ul = E.UpdateList(a).write(i, E.const(11, 8)).write(j, E.const(22, 8))
    r = E.read(ul, c32(2))
    assert E.evaluate(r, {a: bytes([2, 2, 99])}) == 22  # both writes hit 2, newest wins
    assert E.evaluate(r, {a: bytes([2, 3, 99])}) == 11
    assert E.evaluate(r, {a: bytes([0, 1, 99])}) == 99  # no write hits 2: the array byte
    assert E.evaluate(r, {a: bytes([0, 1])}) == 0


def test_evaluate_all_and_satisfies() -> None:
    a = E.Array("a", 2)
    x = E.zext(rd(a, 0), 16)
    y = E.zext(rd(a, 1), 16)
    asg = E.Assignment({a: bytes([3, 250])})
    assert asg.evaluate_all([E.add(x, y), E.sub(x, y), E.sdiv(E.sext(rd(a, 1), 16), x)]) == [
        253,
        (3 - 250) & 0xFFFF,
        (-2) & 0xFFFF,  # 250 is -6 as a signed byte; -6 / 3 = -2
    ]
    assert asg.satisfies([E.ult(x, y), E.ne(x, y)])
    assert not asg.satisfies([E.ult(x, y), E.eq(x, y)])
    with pytest.raises(ValueError):
        asg.satisfies([x])


# --- printing ----------------------------------------------------------------------------------


def test_format_expr_shapes() -> None:
    a = E.Array("a", 4)
    assert E.format_expr(c32(5)) == "(w32 5)"
    assert E.format_expr(rd(a, 2)) == "(Read w8 (w32 2) a)"
    e = E.add(c32(3), E.zext(rd(a, 0), 32))
    assert E.format_expr(e) == "(Add w32 (w32 3) (ZExt w32 (Read w8 (w32 0) a)))"
    assert E.format_expr(E.ult(c32(3), E.zext(rd(a, 0), 32))) == "(Ult (w8 3) (Read w8 (w32 0) a))"
    assert E.format_expr(E.extract(E.mul(c32(3), E.zext(rd(a, 1), 32)), 8, 8)) == (
        "(Extract w8 8 (Mul w32 (w32 3) (ZExt w32 (Read w8 (w32 1) a))))"
    )
    i = E.zext(rd(a, 1), 32)
    ul = E.UpdateList(a).write(c32(0), E.const(7, 8)).write(i, E.const(9, 8))
    assert E.format_expr(E.read(ul, c32(3))) == (
        "(Read w8 (w32 3) [(ZExt w32 (Read w8 (w32 1) a))=(w8 9), (w32 0)=(w8 7)] @ a)"
    )


def test_format_expr_max_chars_and_repr() -> None:
    a = E.Array("a", 4)
    e = E.zext(rd(a, 0), 32)
    for _ in range(30):
        e = E.mul(e, e)  # 2**30 leaves when printed in full
    text = E.format_expr(e, max_chars=80)
    assert text.endswith("...") and len(text) == 83
    assert text.startswith("(Mul w32 (Mul w32 ")
    assert len(repr(e)) <= 310
