"""The portfolio's wire format: queries survive encoding and decoding (also in another process)
with their meaning, their sharing and -- across queries -- the identity of arrays and writes."""

from __future__ import annotations

import multiprocessing
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symex.expr as E
from symex.solvers.wire import QueryDecoder, QueryEncoder

SYM = E.Array("sym", 16)
CONST_ARRAY = E.Array("tab", 6, bytes([7, 0x80, 0xFF, 1, 2, 3]))

BINARY = (
    E.add, E.sub, E.mul, E.udiv, E.sdiv, E.urem, E.srem, E.and_, E.or_, E.xor,
    E.shl, E.lshr, E.ashr,
)
COMPARE = (E.eq, E.ne, E.ult, E.ule, E.ugt, E.uge, E.slt, E.sle, E.sgt, E.sge)


def build_program(steps: list[tuple[int, int, int, int]]) -> list[E.Expr]:
    """Run a random "program" of constructor calls over a growing pool of expressions.

    Every step picks operands from the pool by index, so later expressions share earlier ones
    (a DAG, as in real path conditions). Writes build update lists with concrete and symbolic
    indices over the symbolic and the constant array.
    """
    pool: list[E.Expr] = [E.read(E.UpdateList(SYM), E.const(i, 32)) for i in range(4)]
    pool.append(E.read(E.UpdateList(CONST_ARRAY), E.zext(pool[0], 32)))
    updates = [E.UpdateList(SYM), E.UpdateList(CONST_ARRAY)]
    for kind, a, b, c in steps:
        x = pool[a % len(pool)]
        y = pool[b % len(pool)]
        if x.width != y.width:
            y = E.zext(y, x.width) if y.width < x.width else E.extract(y, 0, x.width)
        k = kind % 12
        if k <= 2:
            pool.append(BINARY[c % len(BINARY)](x, y))
        elif k == 3:
            pool.append(COMPARE[c % len(COMPARE)](x, y))
        elif k == 4:
            pool.append(E.concat(x, y) if x.width + y.width <= 64 else E.not_(x))
        elif k == 5:
            off = c % x.width
            pool.append(E.extract(x, off, 1 + (b % (x.width - off))))
        elif k == 6:
            if x.width < 64:
                ext = E.zext if c % 2 else E.sext
                pool.append(ext(x, min(64, x.width + 1 + c % 24)))
        elif k == 7:
            cond = x if x.width == 1 else E.ne(x, E.const(0, x.width))
            pool.append(E.ite(cond, y, E.const(c, y.width)))
        elif k == 8:
            pool.append(E.const(c, 1 + c % 40))
        elif k == 9:
            u = updates[c % 2]
            idx = E.const(c % 8, 32) if b % 2 else E.zext(E.extract(E.zext(x, max(x.width, 8)), 0, 3), 32)
            val = E.extract(E.zext(y, max(8, y.width)), 0, 8)
            updates.append(u.write(idx, val))
        elif k == 10:
            u = updates[b % len(updates)]
            idx = E.const(c % 8, 32) if a % 3 == 0 else E.zext(E.extract(E.zext(x, max(x.width, 8)), 0, 3), 32)
            pool.append(E.read(u, idx))
        else:
            pool.append(E.not_(x))
    return pool


programs = st.lists(
    st.tuples(st.integers(0, 11), st.integers(0, 99), st.integers(0, 99), st.integers(0, 255)),
    min_size=1,
    max_size=40,
)


def as_bool(e: E.Expr) -> E.Expr:
    return e if e.width == 1 else E.ne(e, E.const(0, e.width))


def same_structure(a: E.Expr, b: E.Expr, arrays: dict[E.Array, E.Array]) -> bool:
    """Whether ``b`` is ``a`` with every array replaced through ``arrays`` (iterative walk)."""
    stack = [(a, b)]
    seen: set[tuple[E.Expr, E.Expr]] = set()
    while stack:
        x, y = stack.pop()
        if (x, y) in seen:
            continue
        seen.add((x, y))
        if (x.op, x.width, x.value, len(x.args)) != (y.op, y.width, y.value, len(y.args)):
            return False
        stack.extend(zip(x.args, y.args))
        if x.op is E.Op.READ:
            assert x.updates is not None and y.updates is not None
            if arrays.get(x.updates.array) is not y.updates.array or len(x.updates) != len(y.updates):
                return False
            for wx, wy in zip(x.updates, y.updates):
                stack.append((wx.index, wy.index))
                stack.append((wx.value, wy.value))
    return True


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=programs, seed=st.integers(0, 2**32 - 1))
def test_round_trip_keeps_structure_and_meaning(steps: list[tuple[int, int, int, int]], seed: int) -> None:
    pool = build_program(steps)
    rng = random.Random(seed)
    exprs = rng.sample(pool, min(len(pool), 6))
    constraints = tuple(as_bool(e) for e in rng.sample(pool, min(len(pool), 4)))
    data = QueryEncoder().encode(constraints, exprs, (SYM, CONST_ARRAY))
    got_constraints, got_exprs, got_arrays = QueryDecoder().decode(data)

    new_sym, new_const = got_arrays
    assert (new_sym.name, new_sym.size, new_sym.initial) == ("sym", 16, None)
    assert (new_const.name, new_const.size, new_const.initial) == ("tab", 6, CONST_ARRAY.initial)
    # Decoded arrays are new objects (the decoder cannot know the sender's), so the expressions
    # are the originals with the arrays renamed -- node for node, because the smart
    # constructors leave their own results unchanged.
    renaming = {SYM: new_sym, CONST_ARRAY: new_const}
    assert len(got_constraints) == len(constraints) and len(got_exprs) == len(exprs)
    for old, new in zip((*constraints, *exprs), (*got_constraints, *got_exprs)):
        assert same_structure(old, new, renaming)

    contents = bytes(rng.randrange(256) for _ in range(16))
    before = E.Assignment({SYM: contents})
    after = E.Assignment({new_sym: contents})
    for old, new in zip((*constraints, *exprs), (*got_constraints, *got_exprs)):
        assert after.evaluate(new) == before.evaluate(old)


def test_decoder_keeps_identity_across_queries() -> None:
    x = E.read(E.UpdateList(SYM), E.const(0, 32))
    written = E.UpdateList(SYM).write(E.zext(x, 32), E.const(5, 8))
    c1 = E.ult(x, E.const(10, 8))
    c2 = E.eq(E.read(written, E.const(3, 32)), E.const(5, 8))
    encoder, decoder = QueryEncoder(), QueryDecoder()
    (d1,), _, _ = decoder.decode(encoder.encode((c1,), (), ()))
    (e1, e2), (extra,), (arr,) = decoder.decode(encoder.encode((c1, c2), (E.not_(c2),), (SYM,)))
    # The path condition of the previous query comes back as the very same objects: that is
    # what lets an incremental session in the worker keep its context between queries.
    assert e1 is d1
    assert extra is E.not_(e2)
    (again,), _, (arr2,) = decoder.decode(encoder.encode((c2,), (), (SYM,)))
    assert again is e2 and arr2 is arr
    assert arr.name == "sym" and arr.size == 16


def test_arrays_with_one_name_stay_distinct() -> None:
    first, second = E.Array("input", 4), E.Array("input", 4)
    a = E.read(E.UpdateList(first), E.const(0, 32))
    b = E.read(E.UpdateList(second), E.const(0, 32))
    (c,), _, (d1, d2) = QueryDecoder().decode(QueryEncoder().encode((E.eq(a, b),), (), (first, second)))
    assert d1 is not d2
    # a == b over two different arrays is not trivially true, so it must not fold to TRUE.
    assert c.op is E.Op.EQ
    assert E.Assignment({d1: b"\x01", d2: b"\x02"}).evaluate(c) == 0
    assert E.Assignment({d1: b"\x03", d2: b"\x03"}).evaluate(c) == 1


def test_deep_and_shared_queries_encode_without_recursion_and_compactly() -> None:
    x = E.read(E.UpdateList(SYM), E.const(1, 32))
    chain = E.zext(x, 32)
    for i in range(100_000):
        chain = E.xor(E.add(chain, E.const(i, 32)), E.zext(x, 32))
    updates = E.UpdateList(SYM)
    for i in range(5_000):
        updates = updates.write(E.zext(E.read(updates, E.const(i % 16, 32)), 32), E.const(i % 256, 8))
    deep_read = E.read(updates, E.const(2, 32))
    doubled = x
    for _ in range(500):
        doubled = E.add(E.concat(E.const(0, 0 + 1), E.extract(doubled, 0, 7)), doubled)
    constraints = (E.ne(chain, E.const(0, 32)), E.ult(deep_read, E.const(9, 8)))
    data = QueryEncoder().encode(constraints, (doubled,), (SYM,))
    (c_chain, c_read), (d_doubled,), (arr,) = QueryDecoder().decode(data)
    # 500 doublings denote a tree of 2**500 nodes; the encoding is linear in the DAG instead.
    assert len(data) < 60 * 120_000
    contents = bytes(range(3, 19))
    before, after = E.Assignment({SYM: contents}), E.Assignment({arr: contents})
    assert after.evaluate(c_chain) == before.evaluate(constraints[0])
    assert after.evaluate(c_read) == before.evaluate(constraints[1])
    assert after.evaluate(d_doubled) == before.evaluate(doubled)


def _evaluate_in_child(data: bytes, contents: bytes, out: multiprocessing.connection.Connection) -> None:
    constraints, exprs, (arr, *_rest) = QueryDecoder().decode(data)
    assignment = E.Assignment({arr: contents})
    out.send([assignment.evaluate(e) for e in (*constraints, *exprs)])
    out.close()


def test_query_decodes_in_a_spawned_process() -> None:
    pool = build_program([(k, k * 7, k * 13, k * 31) for k in range(60)])
    constraints = tuple(as_bool(e) for e in pool[-8:])
    exprs = tuple(pool[4:12])
    data = QueryEncoder().encode(constraints, exprs, (SYM, CONST_ARRAY))
    contents = bytes(range(200, 216))
    expected = [E.Assignment({SYM: contents}).evaluate(e) for e in (*constraints, *exprs)]
    ctx = multiprocessing.get_context("spawn")
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_evaluate_in_child, args=(data, contents, send))
    child.start()
    send.close()
    try:
        assert receive.poll(60), "the child process did not answer"
        assert receive.recv() == expected
    finally:
        child.join(10)
        if child.is_alive():
            child.kill()
    assert child.exitcode == 0
