"""Every limit's extreme values behave as no limit: ``--max-time inf`` (or 1e10) once made
the solver's time limit wrap around (z3's unsigned milliseconds) or overflow a thread's wait,
and a branch it then could not decide hid an out-of-bounds read."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import symex
from symex.solvers.backend import MAX_CHECK_MS, check_milliseconds

OOB = """\
#include <klee/klee.h>
int main(void) {
  int t[4] = {1, 2, 3, 4};
  int i;
  klee_make_symbolic(&i, sizeof i, "i");
  if (i >= 0)
    return t[i];
  return 0;
}
"""

HUGE = 10 ** 18


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> symex.Program:
    source = tmp_path_factory.mktemp("extremes") / "oob.c"
    source.write_text(OOB)
    return symex.compile(str(source))


@pytest.mark.parametrize("options", [
    {"max_time": float("inf")}, {"max_time": 1e10}, {"max_time": 1e300},
    {"solver_timeout": float("inf")}, {"solver_timeout": 1e10}, {"solver_timeout": 1e300},
    {"max_instructions": HUGE}, {"max_depth": HUGE}, {"max_states": HUGE},
    {"max_forks": HUGE}, {"max_memory": float("inf")}, {"max_memory": HUGE},
    {"max_sym_array_size": HUGE}, {"max_time": 1e10, "solver": "bitwuzla"},
    {"max_time": 1e10, "solver": "cvc5"},
], ids=repr)
def test_an_extreme_limit_is_no_limit(program: symex.Program, options: dict) -> None:
    result = symex.explore(program, **options)
    assert result.halted is None
    assert (result.paths.completed, result.paths.errors) == (2, 1), result.messages
    assert [e.kind.value for e in result.errors] == ["ptr"]


def test_check_milliseconds() -> None:
    assert check_milliseconds(None) is None
    assert check_milliseconds(0.0001) == 1              # packages read 0 as "no limit"
    assert check_milliseconds(2.5) == 2500
    assert check_milliseconds(MAX_CHECK_MS / 1000) is None
    assert check_milliseconds(float("inf")) is None and check_milliseconds(float("nan")) is None


def test_the_command_line_with_an_infinite_time(tmp_path: Path) -> None:
    source = tmp_path / "oob.c"
    source.write_text(OOB)
    for limit in ("inf", "1e10"):
        ran = subprocess.run([sys.executable, "-m", "symex.cli", "run", "--max-time", limit,
                              "--output-dir", str(tmp_path / limit), str(source)],
                             capture_output=True, text=True, timeout=300)
        assert ran.returncode == 0, ran.stderr
        assert "1 error" in ran.stdout and "could not decide" not in ran.stderr, ran.stdout


def test_a_run_stopped_at_once_is_not_told_nothing_was_symbolic(tmp_path: Path) -> None:
    source = tmp_path / "oob.c"
    source.write_text(OOB)
    concrete = tmp_path / "concrete.c"
    concrete.write_text("int main(void) { return 0; }\n")
    for flags, program, hinted in ((["--max-time", "0"], source, False),
                                   (["--max-memory", "1"], source, False),
                                   ([], concrete, True)):
        ran = subprocess.run([sys.executable, "-m", "symex.cli", "run", *flags, "--output-dir",
                              str(tmp_path / f"out-{len(flags)}-{hinted}-{flags[:1]}"),
                              str(program)], capture_output=True, text=True, timeout=300)
        assert ran.returncode == 0, ran.stderr
        assert ("nothing in this run was symbolic" in ran.stdout) is hinted, (flags, ran.stdout)
