"""Programs that branch on symbolic float and double arithmetic, checked against native runs.

Each test case symex writes is replayed on the program built natively by gcc (no
optimisation, glibc's libm): the native run must print exactly what symex says the path
printed and exit with the same status, so every branch symex took on a float is the one
the processor takes. Where the input space is small enough (a float made of 16 symbolic
high bits), the outcomes symex reaches are exactly the set a native enumeration of all
65,536 inputs reaches.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

import symex
from symex.core.shortfalls import ShortfallKind
from symex.output.ktest import KTest, KTestObject
from symex.replay import build_native, run_native

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="native replay needs gcc")

PROGRAMS = Path(__file__).parent / "programs" / "floats"


def explore(name: str, solver: str = "bitwuzla", flags: list[str] | None = None) -> symex.Result:
    """All paths of ``programs/floats/NAME`` (depth first, at most two minutes), every query
    answered by ``solver`` (float queries too: no float_solver route)."""
    program = symex.compile(PROGRAMS / name, flags or [])
    return symex.explore(program, solver=solver, float_solver="same", searcher="dfs", seed=0,
                         max_time=120.0)


def assert_replays_natively(name: str, result: symex.Result, tmp_path: Path,
                            flags: list[str] | None = None) -> None:
    """Every test of ``result`` prints and exits natively as symex says its path did."""
    executable = build_native(PROGRAMS / name, flags or [], out_dir=tmp_path)
    assert result.tests
    for test in result.tests:
        assert test.status is symex.PathStatus.COMPLETED, test.reason
        case = KTest(args=("prog",),
                     objects=tuple(KTestObject(k, v) for k, v in test.objects.items()))
        native = run_native(executable, case)
        inputs = {k: v.hex() for k, v in test.objects.items()}
        assert (native.stdout.encode(), native.exit_code) == (test.stdout, test.exit_code), inputs


def outputs(result: symex.Result) -> set[bytes]:
    """What the paths printed."""
    return {test.stdout for test in result.tests}


def test_arithmetic_nan_infinity_zero_and_subnormal_branches(tmp_path: Path) -> None:
    result = explore("arithmetic.c")
    assert_replays_natively("arithmetic.c", result, tmp_path)
    # every outcome of the chain is feasible (the two signs of infinity and zero come from
    # selects, not branches, so not every sign shows)
    assert {b"sig %d\n" % n for n in (1, 2, 5, 6, 7, 8, 9, 10)} <= outputs(result)


def test_conversions_at_their_boundaries(tmp_path: Path) -> None:
    result = explore("conversions.c")
    assert_replays_natively("conversions.c", result, tmp_path)
    printed = b"".join(outputs(result))
    for line in (b"largest float below 2^31", b"truncated toward zero", b"int not exact in float",
                 b"rounded", b"one ulp above 1", b"negative pick", b"out of int range"):
        assert line in printed
    assert b"never" not in printed  # a float below 2^31 in magnitude fits an unsigned int


@pytest.mark.slow
def test_math_functions_the_theory_computes(tmp_path: Path) -> None:
    result = explore("math.c")
    assert_replays_natively("math.c", result, tmp_path)
    printed = b"".join(outputs(result))
    for line in (b"between 3 and 4", b"near -2", b"twenty-five", b"rints to 7", b"negative zero",
                 b"y smaller", b"fmod", b"fma", b"subnormal y"):
        assert line in printed
    assert b"never" not in printed
    assert not result.shortfalls  # nothing was fixed: every function was solved


def test_sine_fixes_its_argument_and_says_so(tmp_path: Path) -> None:
    result = explore("sine.c")
    assert_replays_natively("sine.c", result, tmp_path)
    fixed = [s for s in result.shortfalls if s.kind is ShortfallKind.CONCRETIZED]
    assert [(s.site, s.count) for s in fixed] == [("sine.c:9", 1)]
    assert "sin argument" in fixed[0].what


def native_outcomes(flags: list[str], tmp_path: Path) -> set[bytes]:
    """The outcomes of classes.c's classify() over all 65,536 inputs, run natively."""
    executable = tmp_path / "enumerate"
    subprocess.run(["gcc", "-O0", "-DENUMERATE", *flags, str(PROGRAMS / "classes.c"), "-o",
                    str(executable), "-lm"], check=True)
    lines = subprocess.run([str(executable)], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    return {line.split()[0].encode() + b"\n" for line in lines}


@pytest.mark.parametrize("flags", [[], ["-DWIDE"]], ids=["float", "double"])
@pytest.mark.parametrize("solver", ["bitwuzla", pytest.param("z3", marks=pytest.mark.slow)])
def test_paths_are_the_outcomes_native_enumeration_reaches(flags: list[str], solver: str,
                                                           tmp_path: Path) -> None:
    expected = native_outcomes(flags, tmp_path)
    result = explore("classes.c", solver, flags)
    assert_replays_natively("classes.c", result, tmp_path, flags)
    assert sorted(outputs(result)) == sorted(expected)


def test_workers_and_a_replayed_tree_carry_symbolic_floats(tmp_path: Path) -> None:
    program = symex.compile(PROGRAMS / "classes.c")
    alone = symex.explore(program, solver="bitwuzla", searcher="dfs", seed=0,
                          record_tree=tmp_path / "tree.db")
    # two worker processes: float expressions cross between them (the wire format)
    parallel = symex.explore(program, solver="bitwuzla", workers=2, max_time=120.0)
    assert outputs(parallel) == outputs(alone) and parallel.paths.total == alone.paths.total
    assert_replays_natively("classes.c", parallel, tmp_path)
    # the recorded tree replayed path by path: every decision on a float is taken again
    replayed = symex.explore(program, solver="bitwuzla", continue_with=tmp_path / "tree.db",
                             restart_all_states=True, stop_after_replay=True)
    assert replayed.statistics.memo is not None
    assert replayed.statistics.memo.diverged_states == 0
    assert replayed.statistics.memo.replayed_instructions > 0
    assert outputs(replayed) == outputs(alone)


def test_klee_get_value_of_a_double_is_a_double_the_path_allows(tmp_path: Path) -> None:
    source = tmp_path / "value.c"
    source.write_text(
        "#include <klee/klee.h>\n"
        "int main(void) {\n"
        "  double x;\n"
        "  klee_make_symbolic(&x, sizeof x, \"x\");\n"
        "  if (!(x > 1.0 && x < 2.0)) return 0;\n"
        "  double v = klee_get_value_d(x);\n"
        "  if (!(v > 1.0 && v < 2.0)) return 9;\n"
        "  return v == x ? 7 : 8;\n"
        "}\n")
    result = symex.explore(symex.compile(source), solver="bitwuzla", searcher="dfs", seed=0)
    # the value is a double of the path's range (never 9); as in KLEE, x is not fixed to it,
    # so x == v and x != v are both feasible afterwards
    inside = [t for t in result.tests if t.exit_code]
    assert inside and {t.exit_code for t in inside} <= {7, 8}
    for test in inside:
        (x,) = struct.unpack("<d", test.objects["x"])
        assert 1.0 < x < 2.0
