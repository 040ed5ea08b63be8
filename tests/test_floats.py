"""IEEE-754 arithmetic on bit patterns (:mod:`symex.expr.floats`) against the processor.

Every case runs through a native oracle (``programs/float_oracle.c``, built with gcc at
``-O0 -ffp-contract=off -fno-builtin`` so each C operation is one SSE instruction or one C
library call) and the bits must be equal: special values (signed zeros, infinities, NaNs with
payloads, subnormals, the extremes), values near rounding boundaries, and random bits.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from symex.expr import floats
from symex.expr.floats import BINARY32, BINARY64, Format, RoundingKind

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="the native oracle needs gcc")

ORACLE_SOURCE = Path(__file__).parent / "programs" / "float_oracle.c"


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> Callable[[list[str]], list[int]]:
    """A function from oracle lines (``op width a b c``, hex) to the native result bits."""
    binary = tmp_path_factory.mktemp("oracle") / "float_oracle"
    subprocess.run(["gcc", "-O0", "-ffp-contract=off", "-fno-builtin", "-o", str(binary),
                    str(ORACLE_SOURCE), "-lm"], check=True)

    def run(lines: list[str]) -> list[int]:
        output = subprocess.run([str(binary)], input="\n".join(lines) + "\n", text=True,
                                capture_output=True, check=True).stdout
        return [int(word, 16) for word in output.split()]
    return run


def specials(f: Format) -> list[int]:
    """Values where IEEE-754's rules have cases: zeros, infinities, NaNs (quiet and
    signalling, with payloads, both signs), subnormals, the least and greatest normals, one,
    halves (ties for the rounding functions) and integers at the precision's edge."""
    top = f.sign_bit
    values = [0, f.infinity, f.infinity | f.quiet_bit, f.infinity | f.quiet_bit | 5,
              f.infinity | 1, f.infinity | 0x1234, 1, 2, f.fraction_mask,
              1 << (f.precision - 1), f.exponent_mask - 1]
    for number in (1.0, 0.5, 1.5, 2.5, 3.5, -0.5, 0.1, 1e10, 2.0 ** (f.precision - 1) + 0.5,
                   2.0 ** f.precision, 2.0 ** 31, 2.0 ** 63, 2.0 ** 64, 4294967295.0, 3.0):
        values.append(floats.from_float(f, number))
    return [v for value in values for v in (value, value | top)]


def random_values(f: Format, count: int, rng: random.Random) -> list[int]:
    """Random bit patterns, half of them with exponents near one (where results are
    ordinary numbers rather than overflows)."""
    values = []
    for _ in range(count):
        if rng.random() < 0.5:
            values.append(rng.getrandbits(f.width))
        else:
            exponent = f.bias + rng.randint(-40, 40)
            values.append((rng.getrandbits(1) << (f.width - 1)) | (exponent << (f.precision - 1))
                          | rng.getrandbits(f.precision - 1))
    return values


def operands(f: Format, arity: int, seed: int) -> list[tuple[int, ...]]:
    """Every pair of specials (for two operands; a sample for three) and random tuples."""
    rng = random.Random(seed)
    pool = specials(f)
    if arity == 1:
        cases = [(a,) for a in pool]
    elif arity == 2:
        cases = [(a, b) for a in pool for b in pool]
    else:
        cases = [tuple(rng.choice(pool) for _ in range(3)) for _ in range(1500)]
    randoms = random_values(f, 600 * arity, rng)
    cases += [tuple(randoms[i:i + arity]) for i in range(0, len(randoms), arity)]
    # random operands mixed with specials
    cases += [tuple(rng.choice(pool) if rng.random() < 0.3 else rng.choice(randoms)
                    for _ in range(arity)) for _ in range(400)]
    return cases


def check(oracle: Callable[[list[str]], list[int]], name: str, f: Format,
          cases: list[tuple[int, ...]], ours: Callable[..., int]) -> None:
    """Assert that ``ours(*case)`` equals the oracle's ``name`` on every case."""
    lines = [f"{name} {f.width} " + " ".join(f"{x:x}" for x in (*case, 0, 0, 0)[:3])
             for case in cases]
    native = oracle(lines)
    assert len(native) == len(cases)
    wrong = [(case, expected, ours(*case)) for case, expected in zip(cases, native)
             if ours(*case) != expected]
    assert not wrong, (f"{name}/{f.width}: {len(wrong)} of {len(cases)} differ, e.g. "
                       + "; ".join(f"{tuple(hex(x) for x in c)} -> native {e:#x}, ours {o:#x}"
                                   for c, e, o in wrong[:4]))


FORMATS = [pytest.param(BINARY32, id="binary32"), pytest.param(BINARY64, id="binary64")]

BINARY_OPERATIONS = [("fadd", floats.add), ("fsub", floats.sub), ("fmul", floats.mul),
                     ("fdiv", floats.div), ("frem", floats.rem), ("fmin", floats.minnum),
                     ("fmax", floats.maxnum)]


@pytest.mark.parametrize("f", FORMATS)
@pytest.mark.parametrize(("name", "function"), BINARY_OPERATIONS, ids=[n for n, _ in BINARY_OPERATIONS])
def test_binary_operations_match_the_processor(oracle, f, name, function) -> None:
    # fmin/fmax of two NaNs: C leaves which NaN comes back to the library, so only the NaN-ness
    # is compared there (both give a quiet NaN)
    cases = operands(f, 2, seed=hash(name) & 0xFFFF)
    if name in ("fmin", "fmax"):
        both_nan = [c for c in cases if floats.is_nan(f, c[0]) and floats.is_nan(f, c[1])]
        cases = [c for c in cases if c not in both_nan]
        native = oracle([f"{name} {f.width} {a:x} {b:x} 0" for a, b in both_nan])
        assert all(floats.is_nan(f, bits) for bits in native)
        assert all(floats.is_nan(f, function(f, a, b)) for a, b in both_nan)
    check(oracle, name, f, cases, lambda *case: function(f, *case))


@pytest.mark.parametrize("f", FORMATS)
def test_fused_multiply_add_rounds_once(oracle, f) -> None:
    # which NaN of two NaN factors comes back depends on the processor (glibc's fma is an
    # instruction where there is one, software elsewhere): only the NaN-ness is compared there
    cases = operands(f, 3, seed=3)
    both_nan = [c for c in cases if floats.is_nan(f, c[0]) and floats.is_nan(f, c[1])]
    assert all(floats.is_nan(f, bits) for bits in oracle(
        [f"fma {f.width} {a:x} {b:x} {c:x}" for a, b, c in both_nan]))
    assert all(floats.is_nan(f, floats.fma(f, *case)) for case in both_nan)
    check(oracle, "fma", f, [c for c in cases if c not in both_nan],
          lambda a, b, c: floats.fma(f, a, b, c))


@pytest.mark.parametrize("f", FORMATS)
def test_fused_multiply_add_of_cancelling_products_is_exact(oracle, f) -> None:
    # a*b + c where c = -round(a*b): the result is the product's rounding error, which a
    # separately rounded multiply and add would give as zero
    rng = random.Random(7)
    cases = []
    for a, b in zip(random_values(f, 300, rng), random_values(f, 300, rng)):
        product = floats.mul(f, a, b)
        cases.append((a, b, product ^ f.sign_bit))
    check(oracle, "fma", f, cases, lambda a, b, c: floats.fma(f, a, b, c))


ROUNDINGS = [("floor", RoundingKind.FLOOR), ("ceil", RoundingKind.CEIL),
             ("trunc", RoundingKind.TRUNC), ("rint", RoundingKind.RINT),
             ("round", RoundingKind.ROUND)]


@pytest.mark.parametrize("f", FORMATS)
@pytest.mark.parametrize(("name", "kind"), ROUNDINGS, ids=[n for n, _ in ROUNDINGS])
def test_rounding_to_integral_values_matches_the_library(oracle, f, name, kind) -> None:
    cases = operands(f, 1, seed=11)
    # halves and their neighbours: the ties each rounding treats its own way
    cases += [(floats.from_float(f, n + d),) for n in range(-6, 7) for d in (0.5, 0.25, 0.75)]
    check(oracle, name, f, cases, lambda a: floats.round_integral(f, a, kind))


@pytest.mark.parametrize("f", FORMATS)
def test_square_root_is_correctly_rounded(oracle, f) -> None:
    rng = random.Random(5)
    # perfect squares and their neighbours test the exactness decision
    squares = []
    for _ in range(200):
        root = floats.from_float(f, float(rng.randint(1, 1 << 11)))
        square = floats.mul(f, root, root)
        squares += [(square,), (square + 1,), (square - 1,)]
    check(oracle, "sqrt", f, operands(f, 1, seed=5) + squares, lambda a: floats.sqrt(f, a))


@pytest.mark.parametrize("predicate", ["olt", "oeq", "une"])
@pytest.mark.parametrize("f", FORMATS)
def test_comparisons_treat_nan_as_unordered_and_zeros_as_equal(oracle, f, predicate) -> None:
    check(oracle, predicate, f, operands(f, 2, seed=13),
          lambda a, b: int(floats.compare(f, predicate, a, b)))


def test_widening_keeps_every_value_and_nan_payload(oracle) -> None:
    check(oracle, "ext", BINARY32, operands(BINARY32, 1, seed=17),
          lambda a: floats.convert(BINARY32, BINARY64, a))


def test_narrowing_rounds_once_and_keeps_the_top_of_nan_payloads(oracle) -> None:
    cases = operands(BINARY64, 1, seed=19)
    # doubles just around binary32's halfway points and its overflow and subnormal edges
    rng = random.Random(19)
    for _ in range(300):
        single = rng.getrandbits(31)
        double = floats.convert(BINARY32, BINARY64, single)
        cases += [(double + d,) for d in (-1, 1, 1 << 28, (1 << 28) - 1, (1 << 28) + 1)]
    check(oracle, "trunc32", BINARY64, cases, lambda a: floats.convert(BINARY64, BINARY32, a))


@pytest.mark.parametrize("width", [32, 64])
@pytest.mark.parametrize("f", FORMATS)
def test_conversion_to_signed_integers_truncates_or_gives_the_indefinite(oracle, f, width) -> None:
    check(oracle, f"tosi{width}", f, operands(f, 1, seed=23),
          lambda a: floats.to_signed(f, a, width))


@pytest.mark.parametrize("width", [32, 64])
@pytest.mark.parametrize("f", FORMATS)
def test_conversion_to_unsigned_integers_truncates_in_range(oracle, f, width) -> None:
    # out of range C leaves the result undefined and gcc's code differs from clang's there:
    # the values compared are those C defines, from -1 (exclusive) to 2**width
    def in_range(a: int) -> bool:
        return (not floats.is_nan(f, a) and floats.compare(f, "ogt", a, floats.from_float(f, -1.0))
                and floats.compare(f, "olt", a, floats.from_float(f, 2.0 ** width)))
    cases = [c for c in operands(f, 1, seed=29) if in_range(c[0])]
    assert len(cases) > 300
    check(oracle, f"toui{width}", f, cases, lambda a: floats.to_unsigned(f, a, width))


@pytest.mark.parametrize("f", FORMATS)
def test_integer_conversions_round_to_nearest_even(oracle, f) -> None:
    rng = random.Random(31)
    integers = [0, 1, (1 << 31) - 1, 1 << 31, (1 << 32) - 1, (1 << 63) - 1, 1 << 63,
                (1 << 64) - 1, (1 << f.precision) + 1, (1 << (f.precision + 1)) + 3]
    integers += [rng.getrandbits(rng.randint(1, 64)) for _ in range(1500)]
    check(oracle, "sitofp32", f, [(n & 0xFFFFFFFF,) for n in integers],
          lambda n: floats.from_signed(f, n, 32))
    check(oracle, "sitofp64", f, [(n,) for n in integers], lambda n: floats.from_signed(f, n, 64))
    check(oracle, "uitofp64", f, [(n,) for n in integers],
          lambda n: floats.from_unsigned(f, n, 64))


def test_python_floats_round_trip_through_bits() -> None:
    for value in (1.5, -2.75, 1e-310, float("inf"), 3.4028234663852886e38):
        assert floats.to_float(BINARY64, floats.from_float(BINARY64, value)) == value
    for value in (1.5, -2.75, 2.0 ** -140, float("-inf"), 3.4028234663852886e38):  # subnormal
        assert floats.to_float(BINARY32, floats.from_float(BINARY32, value)) == value
    assert floats.from_float(BINARY64, -0.0) == BINARY64.sign_bit
    assert floats.from_float(BINARY32, -0.0) == BINARY32.sign_bit
    # binary32 rounds: 0.1 is not a float, the nearest one is above it; beyond the greatest
    # float lies infinity, below the least subnormal's half zero
    assert floats.from_float(BINARY32, 0.1) == 0x3DCCCCCD
    assert floats.from_float(BINARY32, 1e39) == BINARY32.infinity
    assert floats.from_float(BINARY32, 1e-50) == 0
