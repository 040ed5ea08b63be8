"""Conformance of every solver backend to the Backend protocol: the core language under QF_ABV
semantics (values worked out by hand below), solving, incrementality, models, limits."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from symex.expr.float_theory import FloatBuilder, FloatKind, FloatTest
from symex.expr import Op
from symex.solvers.backend import Backend, CheckResult
from symex.solvers.backends import BACKENDS, make_backend

NAMES = [*BACKENDS, "pysmt-cvc5"]


@pytest.fixture(params=NAMES)
def backend(request: pytest.FixtureRequest) -> Backend:
    b = make_backend(request.param)
    b.set_logic("QF_ABV")
    yield b
    b.close()


def c(b: Backend, value: int, width: int) -> Any:
    return b.bv_const(value, width)


def pinned(b: Backend, name: str, value: int, width: int) -> Any:
    """A variable asserted equal to ``value`` (so the solver cannot just fold constants)."""
    v = b.bv_var(name, width)
    b.assert_(b.compare(Op.EQ, v, c(b, value, width)))
    return v


def truth(b: Backend, term: Any) -> bool:
    return b.bv_value(b.bool_to_bv(term)) == 1


# (op, [(value, width) of args], result width, offset, expected) -- all by hand, SMT-LIB rules
BV_CASES = [
    (Op.ADD, [(200, 8), (100, 8)], 8, 0, 44),
    (Op.SUB, [(3, 8), (5, 8)], 8, 0, 254),
    (Op.MUL, [(16, 8), (17, 8)], 8, 0, 16),
    (Op.MUL, [(2**64 - 1, 64), (3, 64)], 64, 0, 2**64 - 3),
    (Op.UDIV, [(200, 8), (7, 8)], 8, 0, 28),
    (Op.UDIV, [(200, 8), (0, 8)], 8, 0, 255),  # by zero: all ones
    (Op.SDIV, [(249, 8), (2, 8)], 8, 0, 253),  # -7 / 2 = -3 (truncates)
    (Op.SDIV, [(249, 8), (254, 8)], 8, 0, 3),  # -7 / -2 = 3
    (Op.SDIV, [(7, 8), (0, 8)], 8, 0, 255),  # non-negative by zero: -1
    (Op.SDIV, [(249, 8), (0, 8)], 8, 0, 1),  # negative by zero: 1
    (Op.UREM, [(200, 8), (7, 8)], 8, 0, 4),
    (Op.UREM, [(200, 8), (0, 8)], 8, 0, 200),  # by zero: the dividend
    (Op.SREM, [(249, 8), (2, 8)], 8, 0, 255),  # -7 rem 2 = -1 (sign of dividend)
    (Op.SREM, [(7, 8), (254, 8)], 8, 0, 1),  # 7 rem -2 = 1
    (Op.SREM, [(249, 8), (0, 8)], 8, 0, 249),  # by zero: the dividend
    (Op.AND, [(0b11001100, 8), (0b10101010, 8)], 8, 0, 0b10001000),
    (Op.OR, [(0b11001100, 8), (0b10101010, 8)], 8, 0, 0b11101110),
    (Op.XOR, [(0b11001100, 8), (0b10101010, 8)], 8, 0, 0b01100110),
    (Op.NOT, [(0x0F, 8)], 8, 0, 0xF0),
    (Op.SHL, [(0x81, 8), (1, 8)], 8, 0, 0x02),
    (Op.SHL, [(0x81, 8), (8, 8)], 8, 0, 0),  # shift >= width: 0
    (Op.SHL, [(0x81, 8), (200, 8)], 8, 0, 0),
    (Op.LSHR, [(0x81, 8), (1, 8)], 8, 0, 0x40),
    (Op.LSHR, [(0x81, 8), (9, 8)], 8, 0, 0),
    (Op.ASHR, [(0x81, 8), (1, 8)], 8, 0, 0xC0),
    (Op.ASHR, [(0x81, 8), (10, 8)], 8, 0, 0xFF),  # negative shifted out: all ones
    (Op.ASHR, [(0x41, 8), (10, 8)], 8, 0, 0),
    (Op.CONCAT, [(0xAB, 8), (0xCD, 8)], 16, 0, 0xABCD),  # first argument is the high part
    (Op.CONCAT, [(1, 1), (0x5, 3)], 4, 0, 0xD),
    (Op.EXTRACT, [(0xABCD, 16)], 8, 4, 0xBC),
    (Op.EXTRACT, [(0xABCD, 16)], 1, 0, 1),
    (Op.EXTRACT, [(0xABCD, 16)], 16, 0, 0xABCD),
    (Op.ZEXT, [(0x80, 8)], 16, 0, 0x0080),
    (Op.SEXT, [(0x80, 8)], 16, 0, 0xFF80),
    (Op.SEXT, [(0x7F, 8)], 16, 0, 0x007F),
    (Op.SEXT, [(1, 1)], 32, 0, 0xFFFFFFFF),
    (Op.ZEXT, [(0x80, 8)], 8, 0, 0x80),  # no-op extension
    (Op.SEXT, [(0x80, 8)], 8, 0, 0x80),
]


@pytest.mark.parametrize("case", BV_CASES, ids=lambda k: f"{k[0].name}{[v for v, _ in k[1]]}")
def test_bv_op_values(backend: Backend, case: tuple) -> None:
    op, args, width, offset, expected = case
    terms = [pinned(backend, f"v{i}", v, w) for i, (v, w) in enumerate(args)]
    term = backend.bv_op(op, terms, width, offset)
    assert backend.check() is CheckResult.SAT
    assert backend.bv_value(term) == expected
    # and no other value is possible
    backend.assert_(backend.bool_op(Op.NOT, [backend.compare(Op.EQ, term, c(backend, expected,
                                                                               width))]))
    assert backend.check() is CheckResult.UNSAT


def test_constants_and_wide_values(backend: Backend) -> None:
    big = (1 << 100) + 12345
    t = backend.bv_const(big, 128)
    x = backend.bv_var("x", 128)
    backend.assert_(backend.compare(Op.EQ, x, t))
    assert backend.check() is CheckResult.SAT
    assert backend.bv_value(x) == big
    assert backend.bv_value(backend.bv_const(0xFF, 8)) == 0xFF


def test_same_name_same_variable(backend: Backend) -> None:
    x1, x2 = backend.bv_var("x", 8), backend.bv_var("x", 8)
    backend.assert_(backend.compare(Op.EQ, x1, c(backend, 3, 8)))
    backend.assert_(backend.bool_op(Op.NOT, [backend.compare(Op.EQ, x2, c(backend, 3, 8))]))
    assert backend.check() is CheckResult.UNSAT


def test_bv_ite(backend: Backend) -> None:
    a, b = pinned(backend, "a", 10, 8), pinned(backend, "b", 20, 8)
    t = backend.bv_op(Op.SELECT, [backend.bool_const(True), a, b], 8)
    f = backend.bv_op(Op.SELECT, [backend.compare(Op.ULT, b, a), a, b], 8)
    assert backend.check() is CheckResult.SAT
    assert (backend.bv_value(t), backend.bv_value(f)) == (10, 20)


# (op, a, b, width, expected)
COMPARE_CASES = [
    (Op.EQ, 5, 5, 8, True), (Op.EQ, 5, 6, 8, False),
    (Op.ULT, 3, 200, 8, True), (Op.ULT, 200, 3, 8, False), (Op.ULT, 4, 4, 8, False),
    (Op.ULE, 5, 5, 8, True), (Op.ULE, 6, 5, 8, False),
    (Op.SLT, 200, 3, 8, True),  # -56 < 3
    (Op.SLT, 3, 200, 8, False), (Op.SLT, 3, 3, 8, False),
    (Op.SLE, 3, 200, 8, False), (Op.SLE, 128, 127, 8, True), (Op.SLE, 7, 7, 8, True),
]


@pytest.mark.parametrize("case", COMPARE_CASES, ids=lambda k: f"{k[0].name}-{k[1]}-{k[2]}")
def test_comparisons(backend: Backend, case: tuple) -> None:
    op, a, b, width, expected = case
    term = backend.compare(op, pinned(backend, "a", a, width), pinned(backend, "b", b, width))
    assert backend.check() is CheckResult.SAT
    assert truth(backend, term) is expected


def test_bool_ops_and_conversions(backend: Backend) -> None:
    b = backend
    p, q = b.bool_var("p"), b.bool_var("q")
    b.assert_(p)
    b.assert_(b.bool_op(Op.NOT, [q]))
    T, F = b.bool_const(True), b.bool_const(False)
    expected = {
        "and": (b.bool_op(Op.AND, [p, q]), False),
        "and3": (b.bool_op(Op.AND, [p, T, b.bool_op(Op.NOT, [q])]), True),
        "or": (b.bool_op(Op.OR, [p, q]), True),
        "or-ff": (b.bool_op(Op.OR, [q, F]), False),
        "and1": (b.bool_op(Op.AND, [p]), True),
        "or1": (b.bool_op(Op.OR, [q]), False),
        "and0": (b.bool_op(Op.AND, []), True),
        "or0": (b.bool_op(Op.OR, []), False),
        "xor": (b.bool_op(Op.XOR, [p, q]), True),
        "xor-tt": (b.bool_op(Op.XOR, [p, T]), False),
        "not": (b.bool_op(Op.NOT, [p]), False),
        "iff": (b.bool_op(Op.EQ, [p, q]), False),
        "iff-ff": (b.bool_op(Op.EQ, [q, F]), True),
        "ite": (b.bool_op(Op.SELECT, [q, T, F]), False),
        "ite2": (b.bool_op(Op.SELECT, [p, b.bool_op(Op.NOT, [q]), F]), True),
        "tobool1": (b.bv_to_bool(c(b, 1, 1)), True),
        "tobool0": (b.bv_to_bool(c(b, 0, 1)), False),
    }
    assert b.check() is CheckResult.SAT
    assert {k: truth(b, t) for k, (t, _) in expected.items()} == {
        k: v for k, (_, v) in expected.items()}
    assert b.bv_value(b.bool_to_bv(p)) == 1
    assert b.bv_value(b.bool_to_bv(q)) == 0
    # a 1-bit vector from a boolean takes part in bit-vector arithmetic
    two = b.bv_op(Op.ADD, [b.bv_op(Op.ZEXT, [b.bool_to_bv(p)], 8), c(b, 1, 8)], 8)
    assert b.bv_value(two) == 2


def test_sat_and_unsat(backend: Backend) -> None:
    b = backend
    x = b.bv_var("x", 32)
    b.assert_(b.compare(Op.ULT, c(b, 10, 32), x))
    b.assert_(b.compare(Op.ULT, x, c(b, 12, 32)))
    assert b.check() is CheckResult.SAT
    assert b.bv_value(x) == 11
    b.assert_(b.compare(Op.EQ, b.bv_op(Op.UREM, [x, c(b, 2, 32)], 32), c(b, 0, 32)))
    assert b.check() is CheckResult.UNSAT


def test_check_under_assumptions(backend: Backend) -> None:
    b = backend
    x = b.bv_var("x", 16)
    g1, g2, g3 = b.bool_var("g1"), b.bool_var("g2"), b.bool_var("g3")
    for g, v in ((g1, 1), (g2, 2)):
        b.assert_(b.bool_op(Op.OR, [b.bool_op(Op.NOT, [g]), b.compare(Op.EQ, x, c(b, v, 16))]))
    b.assert_(b.bool_op(Op.OR, [b.bool_op(Op.NOT, [g3]), b.compare(Op.ULT, x, c(b, 2, 16))]))
    assert b.check([g1]) is CheckResult.SAT
    assert b.bv_value(x) == 1
    assert b.check([g2]) is CheckResult.SAT
    assert b.bv_value(x) == 2
    assert b.check([g1, g2]) is CheckResult.UNSAT
    assert b.check([g2, g3]) is CheckResult.UNSAT
    assert b.check([g1, g3]) is CheckResult.SAT
    assert b.check() is CheckResult.SAT  # assumptions do not stick


def test_push_pop_drops_assertions(backend: Backend) -> None:
    b = backend
    x = b.bv_var("x", 8)
    b.assert_(b.compare(Op.ULE, x, c(b, 1, 8)))
    b.push()
    b.assert_(b.compare(Op.EQ, x, c(b, 5, 8)))
    assert b.check() is CheckResult.UNSAT
    b.pop()
    b.push()
    b.assert_(b.compare(Op.EQ, x, c(b, 1, 8)))
    b.push()
    b.assert_(b.compare(Op.EQ, x, c(b, 0, 8)))
    assert b.check() is CheckResult.UNSAT
    b.pop()
    assert b.check() is CheckResult.SAT
    assert b.bv_value(x) == 1
    b.push()
    b.push()
    b.assert_(b.bool_const(False))
    assert b.check() is CheckResult.UNSAT
    b.pop(3)  # back to level 0: only x <= 1 remains
    b.assert_(b.compare(Op.EQ, x, c(b, 0, 8)))
    assert b.check() is CheckResult.SAT
    assert b.bv_value(x) == 0


def test_arrays_select_store(backend: Backend) -> None:
    b = backend
    a = b.array_var("a")
    i = pinned(b, "i", 5, 32)
    j = b.bv_var("j", 32)
    written = b.store(b.store(a, c(b, 1, 32), c(b, 1, 8)), c(b, 1, 32), c(b, 2, 8))
    s = b.store(a, i, c(b, 42, 8))
    b.assert_(b.compare(Op.EQ, b.select(a, c(b, 7, 32)), c(b, 99, 8)))
    b.assert_(b.compare(Op.EQ, b.select(s, j), c(b, 42, 8)))
    b.assert_(b.compare(Op.ULT, c(b, 4, 32), j))
    b.assert_(b.compare(Op.ULT, j, c(b, 7, 32)))
    assert b.check() is CheckResult.SAT
    assert b.bv_value(b.select(s, c(b, 5, 32))) == 42  # read of the write
    assert b.bv_value(b.select(s, c(b, 7, 32))) == 99  # read through the write
    assert b.bv_value(b.select(written, c(b, 1, 32))) == 2  # later write wins
    # j is 5 (the write) or 6, in which case a[6] must be 42
    jv = b.bv_value(j)
    assert jv in (5, 6)
    contents = b.array_value(a, 8)
    assert contents[7] == 99
    if jv == 6:
        assert contents[6] == 42
    # array extensionality-free read: an array mentioned nowhere reads as zeros
    assert b.array_value(b.array_var("unused"), 4) == bytes(4)


def test_array_value_matches_selects(backend: Backend) -> None:
    b = backend
    a = b.array_var("input")
    for i, v in enumerate(b"hello"):
        b.assert_(b.compare(Op.EQ, b.select(a, c(b, i, 32)), c(b, v, 8)))
    x = b.bv_var("x", 32)
    b.assert_(b.compare(Op.EQ, b.select(a, x), c(b, ord("!"), 8)))
    b.assert_(b.compare(Op.ULT, x, c(b, 8, 32)))
    assert b.check() is CheckResult.SAT
    contents = b.array_value(a, 8)
    assert contents[:5] == b"hello"
    assert contents[b.bv_value(x)] == ord("!")
    assert len(b.array_value(a, 1000)) == 1000


def test_array_value_is_fast(backend: Backend) -> None:
    b = backend
    a = b.array_var("big")
    b.assert_(b.compare(Op.EQ, b.select(a, c(b, 60000, 32)), c(b, 7, 8)))
    assert b.check() is CheckResult.SAT
    started = time.perf_counter()
    contents = b.array_value(a, 65536)
    assert contents[60000] == 7
    assert time.perf_counter() - started < 1.0  # decoded once, not 65536 evaluations


def test_value_of_unconstrained_variable_is_zero(backend: Backend) -> None:
    b = backend
    x, y = b.bv_var("x", 8), b.bv_var("y", 32)
    b.assert_(b.compare(Op.EQ, x, c(b, 3, 8)))
    assert b.check() is CheckResult.SAT
    assert b.bv_value(y) == 0


def test_reset_forgets_everything(backend: Backend) -> None:
    b = backend
    b.push()
    b.assert_(b.bool_const(False))
    assert b.check() is CheckResult.UNSAT
    b.reset()
    b.set_logic("QF_BV")
    x = b.bv_var("x", 8)
    b.assert_(b.compare(Op.EQ, x, c(b, 9, 8)))
    assert b.check() is CheckResult.SAT
    assert b.bv_value(x) == 9
    b.reset()
    b.set_logic("QF_ABV")
    a = b.array_var("a")
    b.assert_(b.compare(Op.EQ, b.select(a, c(b, 0, 32)), c(b, 4, 8)))
    assert b.check() is CheckResult.SAT
    assert b.array_value(a, 2)[0] == 4


P, Q = 2272212871, 3960419417  # two random 32-bit primes


def assert_factoring(b: Backend) -> None:
    """x * y = P * Q with 1 < x, y < 2^32 in 64 bits: hard for bit-blasting solvers."""
    x, y = b.bv_var("fx", 64), b.bv_var("fy", 64)
    b.assert_(b.compare(Op.EQ, b.bv_op(Op.MUL, [x, y], 64), c(b, P * Q, 64)))
    for v in (x, y):
        b.assert_(b.compare(Op.ULT, c(b, 1, 64), v))
        b.assert_(b.compare(Op.ULT, v, c(b, 1 << 32, 64)))


def test_timeout_gives_unknown(backend: Backend) -> None:
    assert_factoring(backend)
    started = time.perf_counter()
    assert backend.check(timeout=0.05) is CheckResult.UNKNOWN
    assert time.perf_counter() - started < 3.0
    assert backend.reason_unknown()
    # the backend is still usable afterwards, and the timeout does not stick
    backend.reset()
    backend.set_logic("QF_BV")
    x = backend.bv_var("x", 8)
    backend.assert_(backend.compare(Op.EQ, x, c(backend, 1, 8)))
    assert backend.check(timeout=10) is CheckResult.SAT
    assert backend.check() is CheckResult.SAT


def test_interrupt_from_another_thread(backend: Backend) -> None:
    if not backend.can_interrupt:
        pytest.skip(f"{backend.name} cannot be interrupted")
    assert_factoring(backend)
    results: list[CheckResult] = []
    worker = threading.Thread(target=lambda: results.append(backend.check(timeout=60)))
    started = time.perf_counter()
    worker.start()
    time.sleep(0.2)
    backend.interrupt()
    worker.join(10)
    assert not worker.is_alive()
    assert results == [CheckResult.UNKNOWN]
    assert time.perf_counter() - started < 5.0
    assert backend.reason_unknown()


def test_releases_gil_claim(backend: Backend) -> None:
    """A backend that says it releases the GIL lets another thread run during check."""
    if not backend.releases_gil:
        pytest.skip(f"{backend.name} holds the GIL")
    assert_factoring(backend)
    ticks = [0]
    stop = threading.Event()

    def count() -> None:
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    time.sleep(0.02)
    before = ticks[0]
    backend.check(timeout=0.5)
    during = ticks[0] - before
    stop.set()
    counter.join()
    assert during > 50


@pytest.mark.parametrize("name", NAMES)
def test_backend_reports_its_configuration_name(name: str) -> None:
    b = make_backend(name)
    try:
        assert b.name == name
        assert isinstance(b, Backend)
    finally:
        b.close()


def test_pysmt_rejects_a_solver_it_cannot_drive() -> None:
    from symex.errors import SolverError

    with pytest.raises(SolverError, match="pysmt-cvc5"):
        make_backend("pysmt-yices")


# -- floating point (SMT-LIB's theory; values by hand: IEEE-754 binary32/binary64) ---------

FLOAT_NAMES = ["z3", "bitwuzla", "cvc5"]
ONE_AND_HALF_32 = 0x3FC00000  # 1.5f
TWO_AND_QUARTER_32 = 0x40100000  # 2.25f


@pytest.fixture(params=FLOAT_NAMES)
def float_backend(request: pytest.FixtureRequest) -> Backend:
    b = make_backend(request.param)
    b.set_logic("QF_ABVFP")
    yield b
    b.close()


def float_of(b: Any, bits: int, width: int, name: str | None = None) -> Any:
    """The float with IEEE bits ``bits``: a pinned variable when named, else a constant."""
    term = pinned(b, name, bits, width) if name else c(b, bits, width)
    return b.fp_from_bits(term, width)


def same(b: Any, x: Any, bits: int, width: int) -> bool:
    """Whether the float ``x`` must be the float with bits ``bits`` (SMT-LIB ``=``)."""
    test = b.fp_test(FloatTest.SAME, [x, float_of(b, bits, width)])
    b.push()
    b.assert_(b.bool_op(Op.NOT, [test]))
    refuted = b.check() is CheckResult.UNSAT
    b.pop()
    return refuted


# (kind, args as (bits, width), expected bits) -- 32-bit floats unless a width says otherwise
FLOAT_CASES = [
    (FloatKind.ADD, [ONE_AND_HALF_32, TWO_AND_QUARTER_32], 0x40700000),  # 3.75
    (FloatKind.SUB, [ONE_AND_HALF_32, TWO_AND_QUARTER_32], 0xBF400000),  # -0.75
    (FloatKind.MUL, [ONE_AND_HALF_32, TWO_AND_QUARTER_32], 0x40580000),  # 3.375
    (FloatKind.DIV, [0x3F800000, 0x40400000], 0x3EAAAAAB),  # 1/3 rounded up (0x...AAAB)
    (FloatKind.REM, [0x40A00000, 0x40400000], 0xBF800000),  # IEEE remainder(5, 3) = -1
    (FloatKind.SQRT, [0x40800000], 0x40000000),  # sqrt(4) = 2
    (FloatKind.FMA, [0x40000000, 0x40400000, 0x3F800000], 0x40E00000),  # 2*3+1 = 7
    (FloatKind.ROUND_FLOOR, [0x40200000], 0x40000000),  # 2.5 -> 2
    (FloatKind.ROUND_CEIL, [0x40200000], 0x40400000),  # 2.5 -> 3
    (FloatKind.ROUND_TRUNC, [0xC0200000], 0xC0000000),  # -2.5 -> -2
    (FloatKind.ROUND_EVEN, [0x40200000], 0x40000000),  # 2.5 -> 2 (ties to even)
    (FloatKind.ROUND_AWAY, [0x40200000], 0x40400000),  # 2.5 -> 3 (ties away)
    (FloatKind.NEG, [0x3F800000], 0xBF800000),
    (FloatKind.ABS, [0xBF800000], 0x3F800000),
    (FloatKind.ADD, [0x80000000, 0x80000000], 0x80000000),  # -0 + -0 = -0
    (FloatKind.SUB, [0x3F800000, 0x3F800000], 0x00000000),  # 1 - 1 = +0
    (FloatKind.MUL, [0x7F7FFFFF, 0x40000000], 0x7F800000),  # overflow: +inf
    (FloatKind.DIV, [0x3F800000, 0x80000000], 0xFF800000),  # 1 / -0 = -inf
    (FloatKind.MUL, [0x00000001, 0x3F000000], 0x00000000),  # least subnormal / 2: a tie, to 0
]


@pytest.mark.parametrize("case", FLOAT_CASES, ids=lambda k: f"{k[0].name}{[hex(v) for v in k[1]]}")
def test_float_operations(float_backend: Any, case: tuple) -> None:
    kind, args, expected = case
    b = float_backend
    assert isinstance(b, FloatBuilder)
    terms = [float_of(b, bits, 32, f"f{i}") for i, bits in enumerate(args)]
    assert same(b, b.fp_term(kind, terms, 32), expected, 32)


def test_float_nan_tests_and_equalities(float_backend: Any) -> None:
    b = float_backend
    nan = float_of(b, 0x7FC00001, 32, "n")
    other_nan = float_of(b, 0xFFC00000, 32)
    plus_zero, minus_zero = float_of(b, 0, 32, "z"), float_of(b, 0x80000000, 32)

    def must(term: Any) -> bool:
        b.push()
        b.assert_(b.bool_op(Op.NOT, [term]))
        result = b.check() is CheckResult.UNSAT
        b.pop()
        return result

    assert must(b.fp_test(FloatTest.IS_NAN, [nan]))
    assert must(b.fp_test(FloatTest.SAME, [nan, other_nan]))  # the theory has one NaN
    assert must(b.bool_op(Op.NOT, [b.fp_test(FloatTest.EQ, [nan, nan])]))  # fp.eq: NaN != NaN
    assert must(b.fp_test(FloatTest.EQ, [plus_zero, minus_zero]))  # fp.eq: -0 == +0
    assert must(b.bool_op(Op.NOT, [b.fp_test(FloatTest.SAME, [plus_zero, minus_zero])]))
    assert must(b.fp_test(FloatTest.IS_ZERO, [minus_zero]))
    assert must(b.fp_test(FloatTest.IS_NEGATIVE, [minus_zero]))
    assert must(b.fp_test(FloatTest.LT, [minus_zero, float_of(b, 0x00000001, 32)]))
    assert must(b.fp_test(FloatTest.LEQ, [minus_zero, plus_zero]))
    assert must(b.bool_op(Op.NOT, [b.fp_test(FloatTest.LT, [nan, plus_zero])]))
    ite = b.fp_term(FloatKind.ITE, [b.fp_test(FloatTest.IS_NAN, [plus_zero]), nan, plus_zero], 32)
    assert same(b, ite, 0, 32)


def test_float_conversions(float_backend: Any) -> None:
    b = float_backend
    tenth = float_of(b, 0x3FB999999999999A, 64, "d")  # 0.1 as a double
    assert same(b, b.fp_convert(tenth, 32), 0x3DCCCCCD, 32)  # 0.1f, rounded to nearest
    assert same(b, b.fp_convert(float_of(b, 0x3DCCCCCD, 32, "f"), 64), 0x3FB99999A0000000, 64)
    minus_three = pinned(b, "i", 0xFFFFFFFD, 32)
    assert same(b, b.fp_from_integer(minus_three, 32, signed=True), 0xC0400000, 32)  # -3.0f
    # 0xFFFFFFFF unsigned is 4294967295, nearest float 2**32
    assert same(b, b.fp_from_integer(minus_three, 32, signed=False), 0x4F800000, 32)
    truncated = b.fp_to_signed(float_of(b, 0xC02CCCCD, 32, "g"), 32)  # -2.7f
    assert b.check() is CheckResult.SAT
    assert b.bv_value(truncated) == 0xFFFFFFFE  # -2: toward zero


def test_pysmt_has_no_floating_point() -> None:
    b = make_backend("pysmt")
    try:
        assert not isinstance(b, FloatBuilder)
    finally:
        b.close()
