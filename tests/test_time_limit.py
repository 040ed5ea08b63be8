"""A time limit is a promise: a run with ``max_time`` ends within it (plus the writing of the
last tests), whatever the solver is doing, and says what the limit cut.

The hard query here is a preimage of a 32-bit multiply-xorshift hash over twelve symbolic
bytes: z3 does not answer it within minutes, so without the deadline the run would wait.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

import symex
from symex.core.outcome import TIME_LIMIT_REASON, PathStatus
from symex.description import RunDescription
from symex.engine import run_exploration
from symex.exploration import HALT_SOLVING_GRACE, HALT_TESTS_GRACE, Exploration
from symex.results import Hooks
from symex.solvers import create_solver

#: how much slower than an idle one the machine running these tests may be (CI and people
#: share machines): the margins past a time limit scale with it
LOADED = 3

HARD_QUERY = r"""
#include <klee/klee.h>
#include <stdint.h>
int main(void) {
  uint8_t b[12];
  klee_make_symbolic(b, sizeof b, "b");
  uint32_t h = 2166136261u;
  for (int round = 0; round < 4; round++)
    for (int i = 0; i < 12; i++) {
      h = (h ^ b[i]) * 16777619u;
      h ^= h >> 15;
    }
  if (h == 0x12345678u)
    return 1;
  return 0;
}
"""

WIDE = r"""
#include <klee/klee.h>
int main(void) {
  unsigned char b[12];
  klee_make_symbolic(b, sizeof b, "b");
  int n = 0;
  for (int i = 0; i < 12; i++)
    if (b[i] > 100 + i)
      n++;
  return n;
}
"""


def _program(tmp_path: Path, name: str, source: str) -> symex.Program:
    path = tmp_path / name
    path.write_text(source)
    return symex.compile(path)


@pytest.mark.slow
def test_a_query_running_at_the_time_limit_is_cut_there(tmp_path: Path) -> None:
    program = _program(tmp_path, "hard.c", HARD_QUERY)
    started = time.monotonic()
    result = symex.explore(program, max_time=2.0)
    elapsed = time.monotonic() - started
    # the limit, and room to halt on a machine three times as loaded as an idle one
    assert elapsed < 2.0 + 1.0 * LOADED, elapsed
    assert result.halted == TIME_LIMIT_REASON
    assert result.statistics.halted_paths == 1
    (test,) = result.tests
    assert test.status is PathStatus.PARTIAL and test.reason == TIME_LIMIT_REASON


def test_the_limit_holds_on_the_command_line_and_is_reported(tmp_path: Path) -> None:
    (tmp_path / "hard.c").write_text(HARD_QUERY)

    def timed(limit: str) -> tuple[float, subprocess.CompletedProcess[str]]:
        started = time.monotonic()
        ran = subprocess.run([sys.executable, "-m", "symex.cli", "run", "-q", "--max-time",
                              limit, "hard.c"], capture_output=True, text=True, cwd=tmp_path,
                             timeout=600)
        return time.monotonic() - started, ran

    # start-up, compiling and writing the results, measured as they are on this machine now
    overhead, _ = timed("0")
    elapsed, proc = timed("1")
    assert proc.returncode == 0, proc.stderr
    assert elapsed - overhead < 1.0 + 1.0 * LOADED, (elapsed, overhead)
    assert "symex: stopped early: max-time reached; 1 open path ended as partial" in proc.stdout


@pytest.mark.slow
def test_making_the_halted_paths_tests_gets_a_bounded_time(tmp_path: Path) -> None:
    """At a time limit, 4,096 open paths whose tests each take 10 ms to take in (a hook as
    slow as writing a big .ktest) would hold the run 41 s past its limit: their tests get
    HALT_TESTS_GRACE seconds in all, the rest end without one, and the run says so."""
    program = _program(tmp_path, "wide.c", WIDE)
    solver = create_solver("z3")
    taken = []

    def slow_hook(test: symex.TestCase) -> None:
        time.sleep(0.01)
        taken.append(test)

    run = Exploration(program, solver, RunDescription.build(searcher="bfs"),
                      hooks=Hooks(on_path_end=slow_hook))
    run.begin()
    run.start_paths()
    assert run.advance(live=4096) is None
    open_states = len(run.states)
    assert open_states >= 4096
    started = time.monotonic()
    result = run.conclude(TIME_LIMIT_REASON)
    took = time.monotonic() - started
    solver.close()
    stats = result.statistics
    assert took < HALT_TESTS_GRACE + 2.0 * LOADED, took
    assert stats.halted_paths == open_states
    assert 0 < stats.untested_paths < open_states
    tested = [t for t in result.tests if t.status is PathStatus.PARTIAL]
    assert len(tested) == open_states - stats.untested_paths == len(taken)
    assert any(f"{stats.untested_paths} of the {open_states} paths still open ended without "
               "a test" in m for m in result.messages)


def test_halted_states_get_a_bounded_time_for_their_inputs(tmp_path: Path) -> None:
    """Paths still open when the time is up whose inputs are unknown (as for states rebuilt
    from a recorded tree) get HALT_SOLVING_GRACE seconds of solving in all; those left over
    end without a test, and the run says how many."""
    program = _program(tmp_path, "wide.c", WIDE)
    solver = create_solver("z3")
    run = Exploration(program, solver, RunDescription.build(searcher="bfs"), hooks=Hooks())
    run.begin()
    run.start_paths()
    assert run.advance(live=4096) is None
    open_states = list(run.states.values())
    assert len(open_states) >= 4096
    for state in open_states:
        state.model = None  # unknown inputs: each test needs a solver call
    started = time.monotonic()
    result = run.conclude(TIME_LIMIT_REASON)
    took = time.monotonic() - started
    stats = result.statistics
    assert stats.halted_paths == len(open_states)
    assert 0 < stats.untested_paths < len(open_states)
    # the solving stopped at the grace; making the tests of the others is quick
    assert took < HALT_SOLVING_GRACE + 2.0 * LOADED, took
    tested = [t for t in result.tests if t.status is PathStatus.PARTIAL]
    assert len(tested) == len(open_states) - stats.untested_paths
    assert all(t.objects for t in tested)
    assert any(f"{stats.untested_paths} of the {len(open_states)} paths still open ended "
               "without a test" in m for m in result.messages)
    # the same solver serves a later run with no time limit: the deadline went with the run
    again = run_exploration(program, RunDescription.build(), solver=solver)
    assert again.paths.completed == 2 ** 12 and again.paths.partial == 0
    solver.close()
