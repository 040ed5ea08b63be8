"""A query time limit (``--max-solver-time``, ``explore(solver_timeout=...)``): a branch side
the solver cannot decide in time is left unexplored and the path goes on along the side its
inputs take, instead of ending (KLEE ends it).

tests/programs/hard_branch.c branches on "four rounds of BLAKE2b's mixing of two symbolic
words give a constant" (z3 answers unknown after seconds), then on the low byte of a third
word (independent of the hard constraint, so its question leaves it out)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import symex
from symex.core.shortfalls import ShortfallKind

PROGRAM = Path(__file__).parent / "programs" / "hard_branch.c"
MASK = 2**64 - 1


def _mix(a: int, b: int) -> int:
    """What the program computes before its hard branch."""
    def rotr(x: int, n: int) -> int:
        return ((x >> n) | (x << (64 - n))) & MASK

    v0, v1, v2, v3 = a, b, 0x6A09E667F3BCC908, 0xBB67AE8584CAA73B
    for _ in range(4):
        v0 = (v0 + v1) & MASK
        v3 = rotr(v3 ^ v0, 32)
        v2 = (v2 + v3) & MASK
        v1 = rotr(v1 ^ v2, 24)
        v0 = (v0 + v1) & MASK
        v3 = rotr(v3 ^ v0, 16)
        v2 = (v2 + v3) & MASK
        v1 = rotr(v1 ^ v2, 63)
        v0, v1, v2, v3 = v1, v2, v3, v0
    return v0 ^ v1 ^ v2 ^ v3


def test_an_undecided_side_is_skipped_and_the_path_goes_on() -> None:
    result = symex.explore(symex.compile(PROGRAM), solver_timeout=0.3)
    # the constant's side is never decided; the other goes on and splits on the low byte
    assert result.paths.partial == 0 and result.paths.errors == 0
    assert sorted(t.exit_code for t in result.tests) == [0, 2]
    for test in result.tests:
        a = int.from_bytes(test.objects["a"], "little")
        b = int.from_bytes(test.objects["b"], "little")
        # each test follows its path natively: the side taken was assumed
        assert _mix(a, b) != 0x123456789ABCDEF0
        c = int.from_bytes(test.objects["c"], "little")
        assert test.exit_code == (2 if c & 0xFF == 7 else 0)
    undecided = [s for s in result.shortfalls if s.kind is ShortfallKind.UNDECIDED]
    assert [(s.site, s.count) for s in undecided] == [("hard_branch.c:13", 1)]


def test_the_command_line_option_and_its_warning(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "symex.cli", "run", "--max-solver-time", "0.3",
                           "--output-dir", str(tmp_path / "out"), str(PROGRAM)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "explored 2 paths: 2 completed, 0 errors, 0 partial" in proc.stdout
    messages = (tmp_path / "out" / "messages.txt").read_text()
    assert "a branch at hard_branch.c:13 had a side the solver could not decide in time once" in messages
