"""Pointers and indices walked backwards: negative constant operands of every width.

clang emits ``p--`` at -O0 as ``getelementptr ..., i32 -1``, and llvmlite hands an ``i32 -1``
back as 4294967295 even when asked for a signed value (only 64-bit constants come back signed),
so a lowering that trusted it moved ``p--`` forward by 2^32 - 1: false ``ptr`` errors and
loops that never ended. These tests run such programs beside their native builds.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import symex
from symex.core.outcome import PathStatus
from symex.output.ktest import KTest, KTestObject
from symex.replay import build_native, reproduces, run_native

PROGRAMS = Path(__file__).parent / "programs" / "backwards"

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="the native builds need gcc")


@needs_gcc
@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_backward_walks_print_what_the_native_build_prints(tmp_path: Path, level: str) -> None:
    source = PROGRAMS / "walk_back.c"
    executable = tmp_path / "walk_back"
    subprocess.run(["gcc", level, "-o", str(executable), str(source)], check=True)
    native = subprocess.run([str(executable)], capture_output=True, check=False, timeout=30)

    result = symex.explore(symex.compile(source, flags=[level]), max_time=60)

    assert len(result.tests) == 1
    test = result.tests[0]
    assert test.status is PathStatus.COMPLETED, (test.reason, test.error)
    assert test.stdout == native.stdout
    assert test.exit_code == native.returncode
    # five result lines, counted down: the loops walking back ended where they should
    assert [line.split(b":")[0] for line in test.stdout.splitlines()] == [b"4", b"3", b"2", b"1", b"0"]


def test_negative_gep_constants_of_every_index_width() -> None:
    # gep_widths.ll reads table[7] (end + i8 -1), table[6] (i16 -2), table[5] (i32 -3),
    # table[4] (i64 -4), the i16 at table[0] (end + 2 * i8 -4, bytes 01 02: 0x0201 = 513) and
    # table[7] through a global initialised with a constant GEP by i32 -1:
    # 8*1000 + 7*100 + 6*10 + 5 + 513 + 8 = 9286.
    result = symex.explore(symex.load(PROGRAMS / "gep_widths.ll"))
    test = result.tests[0]
    assert test.status is PathStatus.COMPLETED, (test.reason, test.error)
    assert test.stdout == b"9286\n"


@needs_gcc
def test_symbolic_backward_steps_replay_natively() -> None:
    """Every test of a program stepping back by symbolic i8 and i16 amounts replays natively:
    each error is a real out-of-bounds access there, each completed path prints the same."""
    source = PROGRAMS / "walk_back_symbolic.c"
    result = symex.explore(symex.compile(source), emit_all_errors=True, max_time=60)
    executable = build_native(source)

    assert result.paths.completed >= 3 and result.paths.errors >= 2
    for test in result.tests:
        ktest = KTest(args=(), objects=tuple(KTestObject(n, d) for n, d in test.objects.items()))
        outcome = run_native(executable, ktest)
        back8 = int.from_bytes(test.objects["back8"], "little", signed=True)
        back16 = int.from_bytes(test.objects["back16"], "little", signed=True)
        # the oracle, by hand: *p is inside buf for 0 <= back8 <= 7; *q is inside unless
        # 100 < back16 < 107 (buf[back16 - 107])
        p_inside = 0 <= back8 <= 7
        q_inside = not 100 < back16 < 107
        if test.status is PathStatus.ERROR:
            assert test.error is not None and test.error.kind.value == "ptr"
            assert not (p_inside and q_inside), test.objects
            assert reproduces("ptr", outcome), (test.objects, outcome)
        else:
            assert test.status is PathStatus.COMPLETED
            assert p_inside and q_inside, test.objects
            assert outcome.kind is None, outcome
            assert test.stdout.decode() == outcome.stdout
            assert test.exit_code == outcome.exit_code
