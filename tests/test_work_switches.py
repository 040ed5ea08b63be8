"""The switches that remove work (benchmarks/ab_switches.py) change nothing a user sees:
with each of them off, a run has the same paths, outcomes, outputs, errors, instruction
counts and coverage as with all of them on. Only the inputs of a test may differ where the
solver is asked the same question in other words (a promoted local keeps a value whole; a
branch asks about one group of constraints), and then they still take the test's path:
each test's exit code is what the program computes from its inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

import symex
from c_programs import write

SWITCHES = ("SYMEX_PROMOTE_ALLOCAS", "SYMEX_INDEPENDENT_SPLITS", "SYMEX_MEMOS")

PROGRAM = r"""
#include <klee/klee.h>
static int weight(int c) {            /* c, the loop's i and w live in registers */
  int w = 0;
  if (c == 'x') w = 5;
  else if (c > 'm') w = 3;
  else if (c == 0) w = -1;
  return w;
}
int main(void) {
  unsigned char in[5];
  klee_make_symbolic(in, sizeof in, "in");
  int total = 0;
  for (int i = 0; i < 3; i++)
    total += weight(in[i]);           /* the same comparisons, byte after byte */
  if (in[3] == in[0] + 1) total += 100;   /* ties in[3] to in[0] */
  if (in[3] > 200) total += 1000;
  int q = 7 / (in[4] - 9);            /* may divide by zero: an error */
  return total + q;
}
"""


def weight(c: int) -> int:
    return 5 if c == ord("x") else 3 if c > ord("m") else -1 if c == 0 else 0


def expected_exit(objects: dict[str, bytes]) -> int | None:
    """main's exit status on these inputs, computed here as C does (None: division by 0)."""
    i = objects["in"]
    total = sum(weight(c) for c in i[:3]) + 100 * (i[3] == i[0] + 1) + 1000 * (i[3] > 200)
    if i[4] == 9:
        return None
    divisor = i[4] - 9
    quotient = abs(7) // abs(divisor) * (1 if divisor > 0 else -1)  # C truncates toward 0
    return (total + quotient) & 0xFF


@pytest.mark.parametrize("off", [None, *SWITCHES])
def test_each_switch_off_gives_the_same_run(off: str | None, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    source = write(tmp_path, "switches.c", PROGRAM)
    results = []
    for setting in (None, off):
        for switch in SWITCHES:
            monkeypatch.setenv(switch, "0" if switch == setting else "1")
        results.append(symex.explore(symex.compile(source), emit_all_errors=True))
    on, changed = results
    # weight: 4 ways a byte (in[1], in[2]: 16). in[3] == in[0] + 1 and in[3] > 200 after
    # in[0]'s way: 'x' (in[3] = 121 when tied: 1 + 2 untied), above 'm' (tied: 111..256,
    # both sides of 200: 2 + 2), 0 and the rest (tied: at most 110: 1 + 2); then the
    # divisor is 9 (an error) or not
    assert on.paths.completed == on.paths.errors == 16 * (3 + 4 + 3 + 3)

    def seen(result: symex.Result) -> list[tuple[object, ...]]:
        return [(t.status, t.exit_code, t.path, t.instructions,
                 t.error.message if t.error else None) for t in result.tests]
    assert seen(changed) == seen(on)
    assert changed.coverage.covered_lines == on.coverage.covered_lines
    assert changed.statistics.instructions == on.statistics.instructions
    for test in changed.tests:
        assert test.exit_code == expected_exit(test.objects), test.objects
