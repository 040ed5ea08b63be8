"""Very deep expressions (long program paths) must not hit recursion limits anywhere."""

from __future__ import annotations

import gc

import symex.expr as E
from symex.expr import Op

N = 100_000


def test_sum_of_100k_symbolic_bytes() -> None:
    before = E.live_expr_count()
    arr = E.Array("big", N)
    ul = E.UpdateList(arr)
    total = E.zext(E.read(ul, E.const(0, 32)), 32)
    for k in range(1, N):
        total = E.add(total, E.zext(E.read(ul, E.const(k, 32)), 32))
    assert total.op is Op.ADD and total.width == 32

    data = bytes(k % 256 for k in range(N))
    # 390 full cycles of 0..255 (sum 32640 each) plus 0..159 (sum 12720).
    expected = 390 * 32640 + 12720
    assert E.Assignment({arr: data}).evaluate(total) == expected
    assert E.evaluate(total, {}) == 0

    order = E.postorder([total])
    # Per byte: index const, READ, ZEXT; plus N - 1 ADDs.
    assert len(order) == 3 * N + (N - 1)
    assert order[-1] is total
    assert E.arrays_in([total]) == [arr]

    text = E.format_expr(total, max_chars=500)
    assert text.startswith("(Add w32 (Add w32 ") and text.endswith("...")
    assert len(repr(total)) < 400
    del order

    # Collecting the chain must not crash (deallocation of nested objects).
    del total
    gc.collect()
    assert E.live_expr_count() <= before + 10


def test_deep_update_list_and_select_chain() -> None:
    arr = E.Array("m", 16)
    sym = E.zext(E.read(E.UpdateList(arr), E.const(0, 32)), 32)
    ul = E.UpdateList(arr)
    for k in range(20_000):
        ul = ul.write(E.add(E.const(k, 32), sym), E.const(k & 0xFF, 8))
    r = E.read(ul, E.const(5, 32))
    assert len(r.updates) == 20_000  # type: ignore[arg-type]
    # m[0] = 0: write k lands at index k, so index 5 holds 5 (the only match).
    assert E.evaluate(r, {arr: b"\x00"}) == 5
    assert len(E.postorder([r])) > 40_000

    c = E.ult(sym, E.const(3, 32))
    e = E.const(0, 32)
    for _ in range(20_000):
        e = E.ite(c, E.add(E.const(1, 32), e), e)
    assert e.op is Op.SELECT
    assert E.evaluate(e, {arr: b"\x01"}) == 20_000
    assert E.evaluate(e, {arr: b"\x09"}) == 0
    assert E.format_expr(e, max_chars=100).endswith("...")
    del e, r, ul
    gc.collect()
