"""The one fold over expression DAGs (expr/fold.py): the same values as a plain recursive
definition, each node and each write of a shared update list computed once, and no
recursion however deep the expression."""

from __future__ import annotations

import random
from collections.abc import Sequence

from symex import expr as E
from symex.expr.digest import StructureHasher
from symex.expr.fold import DagFold


class Text(DagFold[str]):
    """Text of an expression, with a count of the calls each kind of step got."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = {"node": 0, "write": 0, "read": 0}

    def node(self, e: E.Expr, args: Sequence[str]) -> str:
        self.calls["node"] += 1
        return f"{e.op.name}{e.value if e.op is E.Op.CONST else ''}({','.join(args)})"

    def array(self, array: E.Array) -> str:
        return array.name

    def write(self, before: str, index: str, value: str) -> str:
        self.calls["write"] += 1
        return f"{before}[{index}:={value}]"

    def read(self, e: E.Expr, updates: str, index: str) -> str:
        self.calls["read"] += 1
        return f"{updates}@{index}"


def reference(e: E.Expr) -> str:
    """The same text, by the definition (recursive: small expressions only)."""
    if e.op is E.Op.READ:
        assert e.updates is not None
        text = e.updates.array.name
        for write in reversed(list(e.updates)):   # oldest first
            text = f"{text}[{reference(write.index)}:={reference(write.value)}]"
        return f"{text}@{reference(e.args[0])}"
    inner = ",".join(reference(a) for a in e.args)
    return f"{e.op.name}{e.value if e.op is E.Op.CONST else ''}({inner})"


def _random_exprs(seed: int, count: int) -> list[E.Expr]:
    rng = random.Random(seed)
    arrays = [E.Array(f"a{i}", 16) for i in range(3)]
    inputs = [E.read(E.UpdateList(a), E.const(j, 32)) for a in arrays for j in range(3)]
    lists = {a: E.UpdateList(a) for a in arrays}

    def build(depth: int) -> E.Expr:
        if depth == 0 or rng.random() < 0.2:
            if rng.random() < 0.3:
                return E.const(rng.randrange(256), 8)
            if rng.random() < 0.5:
                return rng.choice(inputs)
            array = rng.choice(arrays)
            lists[array] = lists[array].write(E.zext(rng.choice(inputs), 32), rng.choice(inputs))
            return E.read(lists[array], E.zext(rng.choice(inputs), 32))
        return rng.choice([E.add, E.sub, E.mul, E.and_])(build(depth - 1), build(depth - 1))

    return [build(rng.randrange(1, 7)) for _ in range(count)]


def test_values_are_the_recursive_definitions() -> None:
    fold = Text()
    for e in _random_exprs(1, 400):
        assert fold(e) == reference(e)


def test_each_node_and_each_shared_write_is_computed_once() -> None:
    a = E.Array("a", 64)
    x = E.read(E.UpdateList(E.Array("x", 4)), E.const(0, 32))
    updates = E.UpdateList(a)
    for i in range(50):
        updates = updates.write(E.const(i, 32), x)
    # ten reads through the same 50 writes at symbolic indices, and a sum over them
    reads = [E.read(updates, E.zext(E.add(x, E.const(i, 8)), 32)) for i in range(10)]
    total = reads[0]
    for r in reads[1:]:
        total = E.add(total, r)
    fold = Text()
    fold(total)
    assert fold.calls["write"] == 50                    # the shared history, once
    assert fold.calls["read"] == 10 + 1                 # ten reads, and x
    again = dict(fold.calls)
    fold(total)
    assert fold.calls == again                          # memoized across calls


def test_the_same_writes_over_two_arrays_fold_apart() -> None:
    """One chain of write nodes ending two arrays' lists (a decoded query shares equal
    writes): each list's value starts from its own array."""
    x = E.read(E.UpdateList(E.Array("x", 4)), E.const(0, 32))
    first = E.UpdateList(E.Array("a", 8)).write(E.const(1, 32), x).write(E.const(2, 32), x)
    second = E.UpdateList(E.Array("b", 8), first.head)
    both = E.add(E.read(first, E.zext(x, 32)), E.read(second, E.zext(x, 32)))
    fold = Text()
    assert fold(both) == reference(both)
    assert "b[" in fold(both) and "a[" in fold(both)


def test_a_deep_expression_folds_without_recursion() -> None:
    x = E.read(E.UpdateList(E.Array("x", 4)), E.const(0, 32))
    deep = x
    for i in range(100_000):
        deep = E.xor(E.add(deep, E.const(i & 0xFF, 8)), x) if i % 2 else E.add(deep, x)
    assert isinstance(StructureHasher().expr(deep), int)


def test_structure_hashes_are_the_same_in_every_process() -> None:
    """The digests recorded trees keep: fixed values for fixed expressions (these are the
    values the hand-written walk gave before the fold; a change breaks every recorded tree)."""
    a = E.Array("in", 4)
    b0 = E.read(E.UpdateList(a), E.const(0, 32))
    written = E.UpdateList(a).write(E.zext(b0, 32), E.const(7, 8))
    e = E.ult(E.add(b0, E.const(3, 8)), E.read(written, E.const(1, 32)))
    assert StructureHasher().expr(e) == EXPECTED_HASH
    assert StructureHasher(hash_constants=False).expr(e) == EXPECTED_HASH_NO_CONSTANTS


#: computed with the hand-written walk of expr/digest.py as it was before the fold (5900251)
EXPECTED_HASH = 0xC35DD859C979AA9F
EXPECTED_HASH_NO_CONSTANTS = 0x8EC1DF08BBA49D60
