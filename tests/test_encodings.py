"""The three encodings and the Translator, without any solver.

Terms are built by an evaluating TermBuilder: each term *is* its value under one fixed
assignment of the solver variables (bit-vectors are :class:`BV`, booleans ``bool``, arrays
:class:`ArrayValue`), with semantics written here from the SMT-LIB definitions. An encoding is
right when, for the arrays its ``model`` reads back from that assignment, every expression's
term has the value :class:`symex.expr.Assignment` gives the expression, and the set-up
assertions are true.
"""

from __future__ import annotations

import random
import re
from typing import Any
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from immutables import Map

import symex.expr as E
from symex.encodings import ENCODINGS, Encoding, get_encoding
from symex.errors import ConfigError, SolverError
from symex.expr import Op
from symex.encodings.table import IndexRun, table_layout, table_read
from symex.solvers.translate import Translator

ENCODING_NAMES = ("array-assert", "nested-write", "ite", "hybrid")

# ---------------------------------------------------------------------------------------------
# The evaluating TermBuilder


class BV:
    """A bit-vector value with its width."""

    __slots__ = ("value", "width")

    def __init__(self, value: int, width: int) -> None:
        assert 0 <= value < (1 << width), (value, width)
        self.value = value
        self.width = width

    def __repr__(self) -> str:
        return f"BV({self.value}, {self.width})"


class ArrayValue:
    """A 32 -> 8 array: ``base`` bytes at 0.., then ``writes`` on top, 0 everywhere else
    (``writes`` is persistent, so a long chain of stores stays linear)."""

    __slots__ = ("base", "writes")

    def __init__(self, base: bytes, writes: Map[int, int] | None = None) -> None:
        self.base = base
        self.writes = Map() if writes is None else writes

    def get(self, i: int) -> int:
        if i in self.writes:
            return self.writes[i]
        return self.base[i] if i < len(self.base) else 0


def signed(v: int, w: int) -> int:
    return v - (1 << w) if v >> (w - 1) else v


class EvaluatingBuilder:
    """Variables take values from ``arrays`` (array variable name -> bytes; other array
    variables are all zeros) and, for bit-vector/boolean variables, from a generator seeded
    by ``seed`` and the name. Also answers ``bv_value``/``array_value`` like a backend after
    SAT, so an encoding's ``model`` can be read back."""

    def __init__(self, arrays: dict[str, bytes] | None = None, seed: int = 0) -> None:
        self.arrays = arrays or {}
        self.seed = seed
        self.bv_vars: dict[str, BV] = {}
        self.array_vars: dict[str, ArrayValue] = {}
        self.bool_vars: dict[str, bool] = {}

    def _rand(self, name: str, bits: int) -> int:
        return random.Random(f"{self.seed}/{name}").getrandbits(bits)

    # -- core language -------------------------------------------------------------------

    def bv_const(self, value: int, width: int) -> BV:
        return BV(value, width)

    def bool_const(self, value: bool) -> bool:
        return bool(value)

    def bv_var(self, name: str, width: int) -> BV:
        var = self.bv_vars.get(name)
        if var is None:
            # The ite encoding names byte i of array "a" "a[i]": take it from ``arrays`` too,
            # so one assignment fixes the arrays under every encoding.
            m = re.fullmatch(r"(.*)\[(\d+)\]", name)
            data = self.arrays.get(m.group(1)) if m and width == 8 else None
            if data is not None and int(m.group(2)) < len(data):  # type: ignore[union-attr]
                value = data[int(m.group(2))]  # type: ignore[union-attr]
            else:
                value = self._rand(name, width)
            var = self.bv_vars[name] = BV(value, width)
        assert var.width == width
        return var

    def bool_var(self, name: str) -> bool:
        if name not in self.bool_vars:
            self.bool_vars[name] = bool(self._rand(name, 1))
        return self.bool_vars[name]

    def array_var(self, name: str) -> ArrayValue:
        if name not in self.array_vars:
            self.array_vars[name] = ArrayValue(self.arrays.get(name, b""))
        return self.array_vars[name]

    def select(self, array: ArrayValue, index: BV) -> BV:
        assert isinstance(array, ArrayValue) and index.width == 32
        return BV(array.get(index.value), 8)

    def store(self, array: ArrayValue, index: BV, value: BV) -> ArrayValue:
        assert isinstance(array, ArrayValue) and index.width == 32 and value.width == 8
        return ArrayValue(array.base, array.writes.set(index.value, value.value))

    def bv_op(self, op: Op, args: Sequence[Any], width: int, offset: int = 0) -> BV:
        m = (1 << width) - 1
        if op is Op.SELECT:
            c, t, e = args
            assert isinstance(c, bool) and isinstance(t, BV) and isinstance(e, BV)
            assert t.width == e.width == width
            return t if c else e
        assert all(isinstance(a, BV) for a in args), (op, args)
        if op is Op.EXTRACT:
            (a,) = args
            assert offset + width <= a.width
            return BV((a.value >> offset) & m, width)
        if op is Op.CONCAT:
            a, b = args
            assert a.width + b.width == width
            return BV((a.value << b.width) | b.value, width)
        if op is Op.ZEXT:
            (a,) = args
            assert a.width <= width
            return BV(a.value, width)
        if op is Op.SEXT:
            (a,) = args
            assert a.width <= width
            return BV(signed(a.value, a.width) & m, width)
        if op is Op.NOT:
            (a,) = args
            assert a.width == width
            return BV(a.value ^ m, width)
        a, b = args
        assert a.width == b.width == width, (op, args, width)
        x, y = a.value, b.value
        sx, sy = signed(x, width), signed(y, width)
        if op is Op.ADD:
            r = x + y
        elif op is Op.SUB:
            r = x - y
        elif op is Op.MUL:
            r = x * y
        elif op is Op.UDIV:
            r = m if y == 0 else x // y
        elif op is Op.UREM:
            r = x if y == 0 else x % y
        elif op is Op.SDIV:
            if sy == 0:
                r = -1 if sx >= 0 else 1
            else:
                q = abs(sx) // abs(sy)
                r = q if (sx < 0) == (sy < 0) else -q
        elif op is Op.SREM:
            if sy == 0:
                r = sx
            else:
                r = abs(sx) % abs(sy)
                r = -r if sx < 0 else r
        elif op is Op.AND:
            r = x & y
        elif op is Op.OR:
            r = x | y
        elif op is Op.XOR:
            r = x ^ y
        elif op is Op.SHL:
            r = 0 if y >= width else x << y
        elif op is Op.LSHR:
            r = 0 if y >= width else x >> y
        elif op is Op.ASHR:
            r = (-1 if sx < 0 else 0) if y >= width else sx >> y
        else:
            raise AssertionError(f"bv_op got {op!r}")
        return BV(r & m, width)

    def compare(self, op: Op, a: BV, b: BV) -> bool:
        assert isinstance(a, BV) and isinstance(b, BV) and a.width == b.width
        x, y, w = a.value, b.value, a.width
        if op is Op.EQ:
            return x == y
        if op is Op.ULT:
            return x < y
        if op is Op.ULE:
            return x <= y
        if op is Op.SLT:
            return signed(x, w) < signed(y, w)
        if op is Op.SLE:
            return signed(x, w) <= signed(y, w)
        raise AssertionError(f"compare got {op!r}")

    def bool_op(self, op: Op, args: Sequence[Any]) -> bool:
        assert all(isinstance(a, bool) for a in args), (op, args)
        if op is Op.NOT:
            (a,) = args
            return not a
        if op is Op.SELECT:
            c, t, e = args
            return t if c else e
        if op is Op.AND:      # n-ary, as in SMT-LIB
            assert len(args) >= 2
            return all(args)
        if op is Op.OR:
            assert len(args) >= 2
            return any(args)
        a, b = args
        if op is Op.XOR:
            return a != b
        if op is Op.EQ:
            return a == b
        raise AssertionError(f"bool_op got {op!r}")

    def bool_to_bv(self, term: bool) -> BV:
        assert isinstance(term, bool)
        return BV(int(term), 1)

    def bv_to_bool(self, term: BV) -> bool:
        assert isinstance(term, BV) and term.width == 1
        return term.value == 1

    # -- model access (as a backend after SAT) -------------------------------------------

    def bv_value(self, term: BV) -> int:
        assert isinstance(term, BV)
        return term.value

    def array_value(self, array: ArrayValue, size: int) -> bytes:
        assert isinstance(array, ArrayValue)
        return bytes(array.get(i) for i in range(size))


# ---------------------------------------------------------------------------------------------
# Checking a translation against Assignment


def check_translation(encoding: str, roots: Sequence[E.Expr], arrays: Sequence[E.Array],
                      contents: dict[str, bytes], seed: int = 0) -> Translator:
    """Translate every node under ``roots`` and compare its value with Assignment's under the
    arrays as the encoding's model reads them; set-up assertions must hold."""
    builder = EvaluatingBuilder(contents, seed)
    translator = Translator(builder, get_encoding(encoding))
    order = E.postorder(roots)
    terms = {}
    for e in order:
        terms[e] = translator.bitvector(e)
        if e.width == 1:
            assert isinstance(translator.boolean(e), bool)
    setup = translator.take_setup()
    assert all(s is True for s in setup), "a set-up assertion is false"
    model = translator.model(arrays)
    assert [len(m) for m in model] == [a.size for a in arrays]
    assignment = E.Assignment(dict(zip(arrays, model)))
    for e in order:
        term = terms[e]
        assert isinstance(term, BV) and term.width == e.width
        assert term.value == assignment.evaluate(e), f"{encoding}: {e!r}"
        if e.width == 1:
            assert translator.boolean(e) == (term.value == 1)
    return translator


# ---------------------------------------------------------------------------------------------
# Hand-checked reads

A = E.Array("A", 4)                             # symbolic; the tests give it bytes A_BYTES
A_BYTES = bytes([0x02, 0x10, 0xF0, 0x03])
C = E.Array("C", 4, bytes([0x81, 0x02, 0xFF, 0x40]))   # constant


def a_byte(k: int) -> E.Expr:
    return E.read(E.UpdateList(A), E.const(k, 32))


def values_under(encoding: str, exprs: Sequence[E.Expr]) -> list[int]:
    """Values of ``exprs`` when A holds A_BYTES (and constant arrays their bytes)."""
    builder = EvaluatingBuilder({"A": A_BYTES, "C": C.initial or b""})
    translator = Translator(builder, get_encoding(encoding))
    values = [translator.bitvector(e).value for e in exprs]
    assert all(s is True for s in translator.take_setup())
    return values


@pytest.mark.parametrize("encoding", ENCODING_NAMES)
def test_reads_through_update_lists(encoding: str) -> None:
    i = E.zext(a_byte(0), 32)          # 2
    j = E.zext(a_byte(3), 32)          # 3
    big = E.zext(a_byte(1), 32)        # 16: past the end of both arrays
    c = E.UpdateList(C).write(i, E.const(0x55, 8))          # C[2] = 0x55 (symbolic index)
    c2 = c.write(E.const(3, 32), E.const(0x66, 8))          # C[3] = 0x66 (concrete)
    a = E.UpdateList(A).write(E.const(0, 32), E.const(0x77, 8)).write(j, a_byte(2))
    exprs = [
        E.read(c, E.const(2, 32)),    # the symbolic write hits: 0x55
        E.read(c, E.const(1, 32)),    # misses it: constant byte 0x02
        E.read(c, j),                 # symbolic read at 3, write at 2 misses: 0x40
        E.read(c2, j),                # concrete write at 3 is newest: 0x66
        E.read(c2, i),                # 0x55
        E.read(E.UpdateList(C), big), # past the end of a constant array: 0
        E.read(E.UpdateList(C), E.sub(j, E.const(3, 32))),  # C[0] = 0x81
        E.read(a, E.const(0, 32)),    # A[3] = A[2] is symbolic, then A[0] = 0x77: 0x77
        E.read(a, j),                 # A[3] = old A[2] = 0xF0
        E.read(a, i),                 # A[2] itself: 0xF0 (no write at 2)
        E.read(a, E.const(1, 32)),    # untouched: 0x10
        E.read(E.UpdateList(A), big), # past the end of a symbolic array: 0 (Assignment's rule)
    ]
    assert values_under(encoding, exprs) == [0x55, 0x02, 0x40, 0x66, 0x55, 0, 0x81, 0x77, 0xF0,
                                             0xF0, 0x10, 0]


@pytest.mark.parametrize("encoding", ENCODING_NAMES)
def test_booleans_and_bit_vectors_meet(encoding: str) -> None:
    x = E.zext(a_byte(1), 32)                          # 16
    lt = E.ult(x, E.const(17, 32))                     # true
    bit4 = E.extract(x, 4, 1)                          # 1 (a bit-vector of width 1)
    both = E.bool_and(lt, bit4)                        # connective over both kinds: 1
    picked = E.ite(both, x, E.const(5, 32))            # 16
    widened = E.zext(lt, 8)                            # boolean as a byte: 1
    signed = E.sext(E.bool_not(E.eq(bit4, lt)), 16)    # bit4 == lt, so not(...) = 0 -> 0
    joined = E.concat(lt, E.extract(x, 0, 7))          # 1:0010000 = 0x90
    assert values_under(encoding, [both, picked, widened, signed, joined]) == [1, 16, 1, 0, 0x90]


# ---------------------------------------------------------------------------------------------
# Random queries (hypothesis)

WIDTHS = (1, 8, 16, 32)
BIN = (E.add, E.sub, E.mul, E.udiv, E.sdiv, E.urem, E.srem, E.and_, E.or_, E.xor, E.shl,
       E.lshr, E.ashr)
CMP = (E.eq, E.ne, E.ult, E.ule, E.ugt, E.uge, E.slt, E.sle, E.sgt, E.sge)
RA = E.Array("ra", 6)
RC = E.Array("rc", 5, bytes([0, 0x80, 0xFF, 0, 0x11]))


class Gen:
    """Random expressions drawn through hypothesis, over two update lists (one per array)
    whose writes have concrete and symbolic indices."""

    def __init__(self, data: Any) -> None:
        self.data = data
        self.lists = [E.UpdateList(RA), E.UpdateList(RC)]

    def draw(self, strategy: Any) -> Any:
        return self.data.draw(strategy)

    def index(self, depth: int) -> E.Expr:
        if self.draw(st.booleans()):
            return E.const(self.draw(st.integers(0, 7)), 32)
        return E.zext(self.expr(8, depth), 32) if self.draw(st.booleans()) else self.expr(32, depth)

    def write_some(self) -> None:
        for k in range(2):
            for _ in range(self.draw(st.integers(0, 3))):
                self.lists[k] = self.lists[k].write(self.index(1), self.expr(8, 1))

    def read(self, depth: int) -> E.Expr:
        updates = self.lists[self.draw(st.integers(0, 1))]
        if self.draw(st.booleans()):
            updates = E.UpdateList(updates.array)   # also read the arrays unwritten
        return E.read(updates, self.index(depth))

    def expr(self, width: int, depth: int) -> E.Expr:
        if depth <= 0 or self.draw(st.integers(0, 4)) == 0:
            return self.leaf(width, depth)
        kind = self.draw(st.sampled_from(("bin", "cmp", "ite", "not", "concat", "extract", "ext")))
        if kind == "cmp" or (width == 1 and kind in ("concat", "ext")):
            w = self.draw(st.sampled_from(WIDTHS))
            cmp = self.draw(st.sampled_from(CMP))
            c = cmp(self.expr(w, depth - 1), self.expr(w, depth - 1))
            return c if width == 1 else E.zext(c, width)
        if kind == "bin":
            op = self.draw(st.sampled_from(BIN))
            return op(self.expr(width, depth - 1), self.expr(width, depth - 1))
        if kind == "ite":
            return E.ite(self.expr(1, depth - 1), self.expr(width, depth - 1),
                         self.expr(width, depth - 1))
        if kind == "not":
            return E.not_(self.expr(width, depth - 1))
        if kind == "concat":
            low = self.draw(st.integers(1, width - 1))
            return E.concat(self.expr(width - low, depth - 1), self.expr(low, depth - 1))
        if kind == "extract":
            w = self.draw(st.sampled_from([w for w in WIDTHS if w > width] or [width]))
            offset = self.draw(st.integers(0, w - width))
            return E.extract(self.expr(w, depth - 1), offset, width)
        narrower = [w for w in WIDTHS if w < width]
        w = self.draw(st.sampled_from(narrower))
        ext = E.zext if self.draw(st.booleans()) else E.sext
        return ext(self.expr(w, depth - 1), width)

    def leaf(self, width: int, depth: int) -> E.Expr:
        choice = self.draw(st.integers(0, 2))
        if choice == 0:
            return E.const(self.draw(st.integers(0, (1 << width) - 1)), width)
        byte = self.read(depth - 1)
        if width <= 8:
            return E.extract(byte, self.draw(st.integers(0, 8 - width)), width)
        if choice == 1 or width < 16:
            return E.zext(byte, width)
        return E.concat(E.zext(self.read(depth - 1), width - 8), byte)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.binary(min_size=6, max_size=6), st.integers(0, 2**32))
def test_random_queries_evaluate_like_assignment(data: Any, ra: bytes, seed: int) -> None:
    gen = Gen(data)
    gen.write_some()
    roots = [gen.expr(w, 3) for w in data.draw(st.lists(st.sampled_from(WIDTHS), min_size=1,
                                                         max_size=4))]
    for encoding in ENCODING_NAMES:
        # Array variables: ra's bytes are given; rc's variable holds its constant bytes, as
        # the array-assert set-up asserts (nested-write and ite never read that variable).
        check_translation(encoding, roots, [RA, RC], {"ra": ra, "rc": RC.initial or b""}, seed)


@pytest.mark.parametrize("encoding", ENCODING_NAMES)
def test_random_assignments_of_the_byte_variables(encoding: str) -> None:
    # No contents given: array variables are all zeros, ite's byte variables are random; the
    # model read back must still explain every value.
    i = E.zext(E.read(E.UpdateList(RA), E.const(1, 32)), 32)
    ul = E.UpdateList(RC).write(i, E.read(E.UpdateList(RA), E.const(2, 32)))
    roots = [E.read(ul, E.zext(E.read(E.UpdateList(RA), E.const(k, 32)), 32)) for k in range(6)]
    for seed in range(20):
        check_translation(encoding, roots, [RA, RC], {"rc": RC.initial or b""}, seed)


# ---------------------------------------------------------------------------------------------
# Set-up assertions, declarations, state


def test_array_assert_setup_pins_every_constant_byte() -> None:
    # A read through a write over C needs C's array variable, pinned byte by byte.
    written = E.UpdateList(C).write(E.zext(a_byte(3), 32), E.const(0x55, 8))   # C[3] = 0x55
    r = E.read(written, E.zext(a_byte(0), 32))                                # C[2]
    good = Translator(EvaluatingBuilder({"A": A_BYTES, "C": C.initial or b""}),
                      get_encoding("array-assert"))
    assert good.bitvector(r).value == 0xFF
    setup = good.take_setup()
    assert len(setup) == C.size and all(s is True for s in setup)
    # A second read through writes over C, in the same context level: pinned already.
    good.bitvector(E.read(written.write(E.const(0, 32), E.const(1, 8)), E.zext(a_byte(3), 32)))
    assert good.take_setup() == []
    # With other bytes in C's array variable exactly the differing bytes' assertions fail.
    bad = Translator(EvaluatingBuilder({"A": A_BYTES, "C": bytes([0x81, 0, 0xFF, 0])}),
                     get_encoding("array-assert"))
    bad.bitvector(r)
    assert bad.take_setup() == [True, False, True, False]


@pytest.mark.parametrize("encoding", ENCODING_NAMES)
def test_unwritten_constant_arrays_need_no_setup(encoding: str) -> None:
    # Whatever C's array variable holds, the constant bytes come from the encoding itself.
    t = Translator(EvaluatingBuilder({"A": A_BYTES, "C": bytes(4)}), get_encoding(encoding))
    assert t.bitvector(E.read(E.UpdateList(C), E.zext(a_byte(3), 32))).value == 0x40
    assert t.take_setup() == []


@pytest.mark.parametrize("encoding", ENCODING_NAMES)
def test_model_of_undeclared_constant_and_declared_arrays(encoding: str) -> None:
    unused = E.Array("unused", 3)
    t = Translator(EvaluatingBuilder({"A": A_BYTES}), get_encoding(encoding))
    t.bitvector(a_byte(2))
    assert t.model([A, unused, C]) == [A_BYTES, bytes(3), C.initial]


def test_uses_arrays_follows_declarations() -> None:
    for name in ENCODING_NAMES:
        t = Translator(EvaluatingBuilder(), get_encoding(name))
        t.boolean(E.ult(E.const(1, 8), E.const(2, 8)))    # folded: no read
        assert not t.uses_arrays()
        t.boolean(E.eq(a_byte(0), E.const(2, 8)))
        assert t.uses_arrays() == (name != "ite")
        t.clear()
        assert not t.uses_arrays()


@pytest.mark.parametrize("encoding", ENCODING_NAMES)
def test_arrays_with_equal_names_stay_distinct(encoding: str) -> None:
    first = E.Array("same", 2, b"\x01\x02")
    second = E.Array("same", 2, b"\x03\x04")
    sym1, sym2 = E.Array("s", 1), E.Array("s", 1)
    builder = EvaluatingBuilder({"same": b"\x01\x02", "s": b"\x09"})
    t = Translator(builder, get_encoding(encoding))
    idx = E.zext(E.read(E.UpdateList(sym1), E.const(0, 32)), 32)   # s (first) = 9
    rel = E.urem(idx, E.const(2, 32))                                # 1
    assert t.bitvector(E.read(E.UpdateList(first), rel)).value == 2
    t.bitvector(E.read(E.UpdateList(second), rel))
    t.bitvector(E.read(E.UpdateList(sym2), E.const(0, 32)))
    names = set(builder.array_vars) | set(builder.bv_vars)
    if encoding == "ite":
        assert {"s[0]", "s[0]#2"} <= names
    elif encoding == "hybrid":  # small constant arrays are spelled out, inputs stay arrays
        assert {"s", "s#2"} <= names and not {"same", "same#2"} & names
    else:
        assert {"same", "same#2", "s", "s#2"} <= names
    # The second constant array's set-up (if any) pins a different variable than the first's.
    assert all(s is True for s in t.take_setup()[: first.size])


@pytest.mark.parametrize("encoding", ENCODING_NAMES)
def test_snapshot_restore_follows_push_pop(encoding: str) -> None:
    builder = EvaluatingBuilder({"A": A_BYTES, "C": C.initial or b""})
    t = Translator(builder, get_encoding(encoding))
    outer = E.eq(a_byte(0), E.const(2, 8))
    assert t.boolean(outer) is True
    t.take_setup()
    state = t.snapshot()                       # push
    written = E.UpdateList(C).write(E.zext(a_byte(3), 32), E.const(7, 8))
    inner = E.eq(E.read(written, E.zext(a_byte(1), 32)), E.const(0, 8))
    assert t.boolean(inner) is True            # C[16] is past the end: 0
    inner_setup = t.take_setup()
    assert len(inner_setup) == (4 if encoding == "array-assert" else 0)
    t.restore(state)                           # pop: C was declared inside the popped level
    hits = t.cache_hits
    assert t.boolean(outer) is True and t.cache_hits == hits + 1
    assert t.boolean(inner) is True
    assert len(t.take_setup()) == len(inner_setup)    # declared, and set up, again
    if encoding not in ("ite", "hybrid"):  # hybrid spells the small constant C out
        assert "C#2" in builder.array_vars
    t.clear()                                  # reset: everything is declared afresh
    assert t.boolean(inner) is True
    assert len(t.take_setup()) == len(inner_setup)


def test_cached_terms_are_reused() -> None:
    t = Translator(EvaluatingBuilder({"A": A_BYTES}), get_encoding("array-assert"))
    e = E.add(E.zext(a_byte(0), 32), E.zext(a_byte(1), 32))
    first = t.bitvector(e)
    assert t.bitvector(e) is first and t.cache_hits == 1


def test_boolean_needs_width_one() -> None:
    t = Translator(EvaluatingBuilder(), get_encoding("ite"))
    with pytest.raises(ValueError):
        t.boolean(a_byte(0))


def test_registry() -> None:
    assert set(ENCODINGS) == set(ENCODING_NAMES)
    for name, encoding in ENCODINGS.items():
        assert isinstance(encoding, Encoding) and encoding.name == name
    assert ENCODINGS["ite"].uses_arrays is False
    with pytest.raises(ConfigError, match="array-assert, nested-write, ite, hybrid"):
        get_encoding("arrays")


# ---------------------------------------------------------------------------------------------
# Depth


@pytest.mark.parametrize("encoding", ENCODING_NAMES)
def test_100k_deep_add_chain(encoding: str) -> None:
    n = 100_000
    ul = E.UpdateList(A)
    total = E.zext(E.read(ul, E.const(0, 32)), 32)
    for k in range(1, n):
        total = E.add(total, E.zext(E.read(ul, E.const(k % 4, 32)), 32))
    # Bytes 2, 16, 240, 3 sum to 261 per cycle of 4; n is 25,000 cycles.
    t = Translator(EvaluatingBuilder({"A": A_BYTES}), get_encoding(encoding))
    assert t.bitvector(total).value == 25_000 * 261


@pytest.mark.parametrize("encoding", ENCODING_NAMES)
def test_long_update_list_and_nested_reads(encoding: str) -> None:
    # 1,200 writes at symbolic indices, each value read from the previous list: nesting of
    # reads inside update lists grows with the path too.
    sym = E.zext(a_byte(0), 32)        # 2
    ul = E.UpdateList(C)
    for k in range(1_200):
        value = E.add(E.read(ul, E.add(sym, E.const(k % 3, 32))), E.const(1, 8))
        ul = ul.write(E.add(sym, E.const(k % 3, 32)), value)
    r = E.read(ul, sym)
    # Index 2 is written 400 times, each time with its previous value + 1: 0xFF + 400.
    roots = [r, E.read(ul, E.add(sym, E.const(1, 32)))]   # index 3: 0x40 + 400
    values = values_under(encoding, roots)
    assert values == [(0xFF + 400) & 0xFF, (0x40 + 400) & 0xFF]


@pytest.mark.parametrize("encoding", ENCODING_NAMES)
def test_update_node_shared_by_two_arrays(encoding: str) -> None:
    # An update node says nothing of its array, so one node may head lists over two arrays;
    # each read must still see its own array underneath.
    sym = E.zext(a_byte(3), 32)                                      # 3
    writes = E.UpdateList(A).write(E.and_(sym, E.const(1, 32)), E.const(0x99, 8))  # [1] = 0x99
    over_c = E.UpdateList(C, writes.head)
    exprs = [E.read(writes, sym), E.read(over_c, sym), E.read(over_c, E.const(1, 32))]
    assert values_under(encoding, exprs) == [0x03, 0x40, 0x99]


# ---------------------------------------------------------------------------------------------
# Constant tables read at symbolic indices (symex.encodings.table)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0, 0, 1, 7, 0x20, 0xFF]), min_size=1, max_size=40),
       st.sampled_from([1, 2, 4]), st.lists(st.integers(0, 2**32 - 1), max_size=8))
def test_table_read_is_the_byte_at_every_index(values: list[int], element: int,
                                               far: list[int]) -> None:
    # Tables of 1-, 2- and 4-byte elements (little-endian, so runs of equal bytes have
    # strides); every index in and around the table, and far past it, reads as Assignment.
    table = b"".join(v.to_bytes(element, "little") if v != 0xFF else b"\xff" * element
                     for v in values)
    layout = table_layout(table)
    builder = EvaluatingBuilder()
    for i in [*range(len(table) + 9), *far]:
        got = table_read(layout, BV(i, 32), builder)
        assert got.value == (table[i] if i < len(table) else 0), (table, i)


def test_table_layout_groups_values_into_strided_runs() -> None:
    # 'a'..'z' style classes in a table of shorts: the low bytes are one run of stride 2.
    shorts = [0] * 8 + [0x0408] * 26 + [0] * 8
    table = b"".join(v.to_bytes(2, "little") for v in shorts)
    layout = table_layout(table)
    assert layout.default == 0 and layout.size == len(table)
    assert layout.groups == ((0x04, (IndexRun(17, 67, 2),)), (0x08, (IndexRun(16, 66, 2),)))
    # A most common non-zero byte is the default; bytes past the end still read 0.
    ones = table_layout(b"\x01\x01\x00\x01")
    assert ones.default == 1 and ones.groups == ((0, (IndexRun(2, 2, 1),)),)
    assert [table_read(ones, BV(i, 32), EvaluatingBuilder()).value for i in range(6)] == \
        [1, 1, 0, 1, 0, 0]


def test_an_unwritten_table_read_pins_nothing() -> None:
    # The 768-byte ctype table is the case this is for: no assertion at all when unwritten.
    table = E.Array("class_table", 768, bytes((i * 7) % 5 for i in range(768)))
    t = Translator(EvaluatingBuilder({"A": A_BYTES}), get_encoding("array-assert"))
    index = E.add(E.zext(a_byte(1), 32), E.const(256, 32))        # 16 + 256
    assert t.bitvector(E.read(E.UpdateList(table), index)).value == (272 * 7) % 5
    assert t.take_setup() == []


def test_hybrid_spells_small_objects_out_and_keeps_inputs_and_big_ones_as_arrays() -> None:
    from symex.encodings.hybrid import SMALL_ARRAY_BYTES
    from symex.encodings.ite import IteArray
    encoding = get_encoding("hybrid")
    builder = EvaluatingBuilder()
    small = E.Array("small", SMALL_ARRAY_BYTES, bytes(SMALL_ARRAY_BYTES))
    big = E.Array("big", SMALL_ARRAY_BYTES + 1, bytes(SMALL_ARRAY_BYTES + 1))
    small_input = E.Array("input", 4)
    assert type(encoding.declare(small, builder)[0]) is IteArray
    assert type(encoding.declare(big, builder)[0]) is not IteArray
    assert type(encoding.declare(small_input, builder)[0]) is not IteArray
    assert encoding.uses_arrays is True


class ConstArrayBuilder(EvaluatingBuilder):
    """An evaluating builder with constant arrays of zeros, as z3, bitwuzla and cvc5 have
    constant arrays (the tests' buffers are zeros but for a few bytes)."""

    def const_array(self, value: int) -> ArrayValue:
        assert value == 0
        return ArrayValue(b"")


def test_a_mostly_uniform_constant_array_is_a_constant_array_with_stores_not_pinned() -> None:
    """memcached's 16 KB read buffer, zeros but for a few bytes, read through the packet's
    writes at a symbolic index: where the backend has constant arrays it is zero everywhere
    with a store per other byte (no set-up assertion: there were 16,384, 7 s in z3), and
    reads give the same bytes as the pinned variable would."""
    buffer = bytearray(16384)
    buffer[5], buffer[9000] = 0x41, 0x0A
    big = E.Array("rbuf", len(buffer), bytes(buffer))
    written = E.UpdateList(big).write(E.zext(a_byte(3), 32), E.const(0x55, 8))   # rbuf[3] = 0x55
    reads = [E.read(written, E.const(k, 32)) for k in (3, 5, 6, 9000, 16383)]
    for builder in (ConstArrayBuilder({"A": A_BYTES}), EvaluatingBuilder({"A": A_BYTES, "rbuf": bytes(buffer)})):
        translator = Translator(builder, get_encoding("array-assert"))
        assert [translator.bitvector(r).value for r in reads] == [0x55, 0x41, 0, 0x0A, 0]
        setup = translator.take_setup()
        assert len(setup) == (0 if isinstance(builder, ConstArrayBuilder) else len(buffer))
    # a buffer with many different bytes is still pinned (the seed measured z3 faster so)
    mixed = E.Array("mixed", 64, bytes(range(64)))
    translator = Translator(ConstArrayBuilder(), get_encoding("array-assert"))
    translator.bitvector(E.read(E.UpdateList(mixed).write(E.zext(a_byte(0), 32), E.const(1, 8)),
                                E.const(7, 32)))
    assert len(translator.take_setup()) == 64


class CountingBuilder(ConstArrayBuilder):
    """Counts the stores and constant arrays a translation builds (declaring the buffer's
    variable costs nothing while no assertion or read uses it)."""

    def __init__(self, arrays: dict[str, bytes] | None = None) -> None:
        super().__init__(arrays)
        self.array_terms = 0

    def const_array(self, value: int) -> ArrayValue:
        self.array_terms += 1
        return super().const_array(value)

    def store(self, array: Any, index: Any, value: Any) -> Any:
        self.array_terms += 1
        return super().store(array, index, value)


def _packet_in_buffer() -> tuple[E.Array, E.UpdateList, E.Expr]:
    """memcached's shape: a 16 KB zero buffer, 8 symbolic packet bytes written at 100..107,
    and the packet's first byte as an offset (0..255)."""
    buffer = E.Array("rbuf", 16384, bytes(16384))
    packet = E.Array("packet", 8)
    written = E.UpdateList(buffer)
    for k in range(8):
        written = written.write(E.const(100 + k, 32), E.read(E.UpdateList(packet), E.const(k, 32)))
    return packet, written, E.zext(E.read(E.UpdateList(packet), E.const(0, 32)), 32)


def test_hybrid_reads_a_big_constant_array_through_few_writes_without_array_terms() -> None:
    """A symbolic-index read of a big constant array through a few writes is an if-then-else
    over them (z3 took 4-15 s a query through the array theory on memcached's buffer); the
    same read through more writes than FEW_WRITES keeps the array."""
    from symex.encodings.hybrid import FEW_WRITES, HybridEncoding
    packet, written, offset = _packet_in_buffer()
    packet_bytes = bytes([3, 0, 0, 0x41, 0, 0, 0, 0])    # offset 3: buffer[103] is packet[3]
    read = E.read(written, E.add(E.const(100, 32), offset))
    builder = CountingBuilder({"packet": packet_bytes})
    translator = Translator(builder, HybridEncoding())
    assert translator.bitvector(read).value == 0x41
    assert builder.array_terms == 0 and translator.take_setup() == []
    past = E.read(written, E.add(E.const(16383, 32), offset))     # 16386: past the end reads 0
    assert Translator(CountingBuilder({"packet": packet_bytes}), HybridEncoding()).bitvector(past).value == 0
    off = CountingBuilder({"packet": packet_bytes})
    assert Translator(off, HybridEncoding(few_writes=0)).bitvector(read).value == 0x41
    assert off.array_terms > 0
    many = E.UpdateList(E.Array("big", 16384, bytes(16384)))
    for k in range(FEW_WRITES + 1):
        many = many.write(E.const(k, 32), E.const(1, 8))
    kept = CountingBuilder({"packet": packet_bytes})
    assert Translator(kept, HybridEncoding()).bitvector(E.read(many, offset)).value == 1
    assert kept.array_terms > 0


@pytest.mark.parametrize("backend", ["z3", "bitwuzla"])
def test_a_packet_read_at_its_own_offset_is_solved_right(backend: str) -> None:
    """Real solvers, default encoding: buffer[100 + (p0 & 7)] == 0x41 needs a packet byte
    0x41 at index p0 & 7, which cannot be byte 0 itself (0x41 & 7 is 1); a read at 200 + p0
    only meets zeros (and past the end, zeros too), so asking for 1 there is unsatisfiable."""
    from symex.solvers import create_solver
    pytest.importorskip(backend)
    packet, written, offset = _packet_in_buffer()
    solver = create_solver(backend, timeout=60)
    index = E.and_(offset, E.const(7, 32))
    want = E.eq(E.read(written, E.add(E.const(100, 32), index)), E.const(0x41, 8))
    (data,) = solver.get_initial_values([want], [packet])
    j = data[0] & 7
    assert j != 0 and data[j] == 0x41
    beyond = E.eq(E.read(written, E.add(E.const(200, 32), offset)), E.const(1, 8))
    with pytest.raises(SolverError):
        solver.get_initial_values([beyond], [packet])


def _table_over_input() -> tuple[E.Array, E.Array, E.UpdateList]:
    """PCRE's shape (KLEE's query log): a symbolic object (``buf``, 64 bytes) whose first 40
    bytes the program wrote with constants (a table, 7 k + 3 at k), read at an index computed
    from a symbolic input byte (``key``)."""
    key = E.Array("key", 1)
    buf = E.Array("buf", 64)
    table = E.UpdateList(buf)
    for k in range(40):
        table = table.write(E.const(k, 32), E.const((7 * k + 3) & 0xFF, 8))
    return key, buf, table


def test_hybrid_reads_a_symbolic_object_through_constant_writes_without_stores() -> None:
    """A symbolic-index read of a symbolic object through a few writes at constant indices is
    an if-then-else over them ending in the object's own byte (z3 took 2-3.6 s on PCRE's
    queries of this shape through the stores, 0.1 s spelled out); through a write at a
    symbolic index the stores stay."""
    from symex.encodings.hybrid import HybridEncoding
    key, buf, table = _table_over_input()
    index = E.zext(E.read(E.UpdateList(key), E.const(0, 32)), 32)
    for key_byte, expected in ((5, 38), (39, (7 * 39 + 3) & 0xFF), (41, 0xAB)):
        builder = CountingBuilder({"key": bytes([key_byte]), "buf": bytes([0xAB]) * 64})
        translator = Translator(builder, HybridEncoding())
        assert translator.bitvector(E.read(table, index)).value == expected
        assert builder.array_terms == 0
    stored = CountingBuilder({"key": bytes([5]), "buf": bytes(64)})
    moved = table.write(index, E.const(1, 8))   # a write at the read's own symbolic index
    assert Translator(stored, HybridEncoding()).bitvector(E.read(moved, index)).value == 1
    assert stored.array_terms > 0


@pytest.mark.parametrize("backend", ["z3", "bitwuzla"])
def test_a_table_written_over_a_symbolic_object_is_solved_right(backend: str) -> None:
    """Real solvers, default encoding: table[key] == 7 * 9 + 3 only at key 9; past the
    table's 40 bytes the read is the object's own (symbolic) byte, which a model may set."""
    from symex.solvers import create_solver
    pytest.importorskip(backend)
    key, buf, table = _table_over_input()
    solver = create_solver(backend, timeout=60)
    index = E.zext(E.read(E.UpdateList(key), E.const(0, 32)), 32)
    inside = E.ult(index, E.const(40, 32))
    (found,) = solver.get_initial_values([inside, E.eq(E.read(table, index), E.const(66, 8))], [key])
    assert found == bytes([9])
    with pytest.raises(SolverError):
        solver.get_initial_values([inside, E.eq(E.read(table, index), E.const(4, 8))], [key])
    beyond = E.eq(E.read(table, E.add(index, E.const(40, 32))), E.const(0x5A, 8))
    key_bytes, buf_bytes = solver.get_initial_values([E.ult(index, E.const(24, 32)), beyond],
                                                     [key, buf])
    assert buf_bytes[40 + key_bytes[0]] == 0x5A
