"""explore() options for the command line: progress snapshots, branch and instruction coverage,
per-test coverage, max_forks, max_memory, exit_on_error, only_output_states_covering_new.

Real programs compiled with symex.compile, real z3. Line numbers are found from markers in the
sources, so the expected sets below are read off the C code, not off symex's output."""

from __future__ import annotations

import os
import signal
import textwrap
import threading
from pathlib import Path

import pytest

import symex
from symex import ConfigError, ErrorKind, Hooks, PathStatus, ProgressSnapshot

PROGRAMS = Path(__file__).parent / "programs"


def compile_source(tmp_path: Path, name: str, source: str, flags: list[str] | None = None
                   ) -> tuple[symex.ir.program.Program, Path, dict[str, int]]:
    """The compiled program, its path, and the line of every ``/* @NAME */`` marker."""
    path = tmp_path / name
    text = textwrap.dedent(source).lstrip("\n")
    path.write_text(text)
    marks = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if "/* @" in line:
            marks[line.split("/* @", 1)[1].split(" */", 1)[0]] = number
    return symex.compile(path, flags or []), path, marks


def assert_snapshot_matches(snapshot: ProgressSnapshot, result: symex.Result) -> None:
    assert (snapshot.completed, snapshot.errors, snapshot.partial) == (
        result.paths.completed, result.paths.errors, result.paths.partial)
    assert snapshot.tests == len(result.tests)
    assert snapshot.instructions == result.statistics.instructions
    assert snapshot.forks == result.statistics.forks
    assert snapshot.live_states == 0
    c = result.coverage
    assert (snapshot.covered_lines, snapshot.total_lines) == (len(c.covered_lines), len(c.total_lines))
    assert (snapshot.covered_branches, snapshot.total_branches) == (
        len(c.covered_branches), len(c.total_branches))
    assert (snapshot.covered_instructions, snapshot.total_instructions) == (
        c.covered_instructions, c.total_instructions)
    assert snapshot.solver_queries == result.statistics.solver_queries
    assert snapshot.memory_mb > 1.0


# -- progress ---------------------------------------------------------------------------------

LONG_LOOP = """
    #include <klee/klee.h>
    int main(void) {
      int x;
      unsigned s = 0;
      klee_make_symbolic(&x, sizeof x, "x");
      for (int i = 0; i < ROUNDS; i++)
        s = s * 31u + (unsigned)i;
      if (x > 10)
        return (int)(s & 1u);
      return 2;
    }
"""


def test_progress_is_reported_while_running_and_once_at_the_end(tmp_path: Path) -> None:
    # ~13 instructions per round: 6.5 million instructions, a fraction of a second to seconds
    # of exploration (compiled chains run this loop at over 10 M instructions/s)
    program, _, _ = compile_source(tmp_path, "loop.c", LONG_LOOP, ["-DROUNDS=500000"])
    snapshots: list[ProgressSnapshot] = []
    result = symex.explore(program, hooks=Hooks(on_progress=snapshots.append),
                           progress_interval=0.05)
    assert result.paths.completed == 2 and result.halted is None
    running = snapshots[:-1]
    assert len(running) >= 3, [s.elapsed for s in snapshots]
    assert not any(s.final for s in running) and snapshots[-1].final
    elapsed = [s.elapsed for s in snapshots]
    assert elapsed == sorted(elapsed) and len(set(elapsed)) == len(elapsed)
    # consecutive reports are at least the interval apart
    assert all(b - a >= 0.05 for a, b in zip(elapsed, elapsed[1:-1]))
    # counters only grow while running; the loop runs before the fork
    assert [s.instructions for s in running] == sorted(s.instructions for s in running)
    assert running[0].instructions > 0 and running[0].tests == 0
    assert_snapshot_matches(snapshots[-1], result)
    assert result.coverage.covered_instructions == result.coverage.total_instructions


def test_without_the_hook_nothing_is_reported_and_the_result_is_the_same(tmp_path: Path) -> None:
    program, _, _ = compile_source(tmp_path, "loop.c", LONG_LOOP, ["-DROUNDS=10"])
    plain = symex.explore(program)
    snapshots: list[ProgressSnapshot] = []
    hooked = symex.explore(program, hooks=Hooks(on_progress=snapshots.append))
    assert len(snapshots) == 1 and snapshots[0].final  # short run: only the final report
    assert [t.objects for t in plain.tests] == [t.objects for t in hooked.tests]


def test_interrupt_still_gives_a_final_snapshot(tmp_path: Path) -> None:
    program = symex.compile(PROGRAMS / "branches.c", ["-DN=20"])  # 2^20 paths: far too many
    snapshots: list[ProgressSnapshot] = []
    ended: list[symex.TestCase] = []
    enough = threading.Event()

    finished = threading.Event()

    def on_progress(snapshot: ProgressSnapshot) -> None:
        snapshots.append(snapshot)
        if len(snapshots) == 3:
            enough.set()
        if snapshot.final:
            finished.set()

    def interrupt() -> None:
        if enough.wait(60):
            os.kill(os.getpid(), signal.SIGINT)
            # a KeyboardInterrupt raised inside a gc callback (Hypothesis installs one in
            # this process) is printed and dropped: press Ctrl-C again, as a person would
            for _ in range(5):
                if finished.wait(5):
                    return
                os.kill(os.getpid(), signal.SIGINT)

    # a shell starts a background job with SIGINT ignored, and Python keeps it so: Ctrl-C
    # must raise KeyboardInterrupt here whoever started the suite
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    sender = threading.Thread(target=interrupt)
    sender.start()
    try:
        result = symex.explore(program, hooks=Hooks(on_progress=on_progress,
                                                     on_path_end=ended.append),
                               progress_interval=0.1, max_time=60)
    finally:
        enough.set()
        finished.set()
        sender.join()
        signal.signal(signal.SIGINT, previous)
    assert result.halted == "interrupted"
    assert len(snapshots) >= 4 and snapshots[-1].final
    assert not any(s.final for s in snapshots[:-1])
    assert_snapshot_matches(snapshots[-1], result)
    assert result.paths.partial >= 1 and result.paths.total < 2 ** 20
    assert ended == list(result.tests)


# -- branch and instruction coverage ---------------------------------------------------------

SOME_BRANCHES = """
    #include <klee/klee.h>
    int main(void) {
      int x, y, r = 0;
      klee_make_symbolic(&x, sizeof x, "x");
      klee_make_symbolic(&y, sizeof y, "y");
      klee_assume(x > 5);
      klee_assume((y >= 0) & (y <= 1));
      if (x > 5) /* @if */
        r = 1;
      switch (y) { /* @switch */
      case 0: r += 10; break; /* @case0 */
      case 1: r += 20; break; /* @case1 */
      case 2: r += 30; break; /* @case2 */
      default: r += 40; break; /* @default */
      }
      return r;
    }
"""


def test_branch_outcomes_covered_and_total(tmp_path: Path) -> None:
    # the assumptions use no control flow (& not &&), so the only conditional branches are the
    # if (outcomes 0 true, 1 false) and the switch (0 default, 1..3 cases 0..2). x > 5 always:
    # only the true side; y is 0 or 1: only cases 0 and 1.
    program, path, line = compile_source(tmp_path, "some.c", SOME_BRANCHES)
    result = symex.explore(program)
    assert result.paths.completed == 2
    f = str(path)
    c = result.coverage
    assert c.total_branches == {(f, line["if"], 0), (f, line["if"], 1),
                                *((f, line["switch"], k) for k in range(4))}
    assert c.covered_branches == {(f, line["if"], 0), (f, line["switch"], 1), (f, line["switch"], 2)}
    assert c.branch_percent == pytest.approx(50.0)
    # the blocks of case 2 and the default never run: their lines and instructions are missed
    assert (f, line["case2"]) in c.total_lines and (f, line["case2"]) not in c.covered_lines
    assert (f, line["default"]) not in c.covered_lines
    assert (f, line["case1"]) in c.covered_lines
    assert 0 < c.covered_instructions < c.total_instructions
    assert 0.0 < c.instruction_percent < 100.0


def test_two_conditions_on_one_line_are_four_outcomes(tmp_path: Path) -> None:
    # `a > 0 && b > 0` on one line is two branches: with a > 0 assumed, "a > 0" is never
    # false, so three of the four outcomes are covered. Keyed by successor index alone, the
    # two branches would share keys and the untaken outcome would look covered.
    program, path, _ = compile_source(tmp_path, "two.c", """
        #include "klee/klee.h"
        int main(void) {
          int a, b;
          klee_make_symbolic(&a, sizeof a, "a");
          klee_make_symbolic(&b, sizeof b, "b");
          klee_assume(a > 0);
          if (a > 0 && b > 0) return 1;
          return 0;
        }
    """)
    coverage = symex.explore(program).coverage
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "&&" in text)
    on_line = {k for k in coverage.total_branches if k[1] == line}
    assert {k[2] for k in on_line} == {0, 1, 2, 3}
    assert {k[2] for k in coverage.covered_branches if k[1] == line} == {0, 2, 3}


def test_concrete_branches_are_covered_too(tmp_path: Path) -> None:
    # no symbolic input at all: the loop condition is taken both ways, the if only one way
    program, path, line = compile_source(tmp_path, "concrete.c", """
        int main(void) {
          int s = 0;
          for (int i = 0; i < 3; i++) /* @for */
            s += i;
          if (s == 99) /* @if */
            return 1;
          return 0;
        }
    """)
    result = symex.explore(program)
    f = str(path)
    assert result.coverage.covered_branches == {(f, line["for"], 0), (f, line["for"], 1),
                                                (f, line["if"], 1)}
    assert len(result.coverage.total_branches) == 4


def test_full_coverage_of_get_sign() -> None:
    program = symex.compile(Path(__file__).parents[1] / "examples" / "get_sign.c")
    c = symex.explore(program).coverage
    assert len(c.total_branches) == 4  # two ifs, two outcomes each
    assert c.covered_branches == c.total_branches and c.branch_percent == 100.0
    assert c.covered_instructions == c.total_instructions > 0
    assert c.instruction_percent == 100.0 and c.percent == 100.0


# -- per-test coverage ---------------------------------------------------------------------

GET_SIGN = """
    #include <klee/klee.h>
    int get_sign(int x) {
      if (x == 0) /* @if0 */
        return 0; /* @ret0 */
      if (x < 0) /* @ifneg */
        return -1; /* @retneg */
      else
        return 1; /* @retpos */
    } /* @close */
    int main(void) {
      int a;
      klee_make_symbolic(&a, sizeof(a), "a"); /* @make */
      return get_sign(a); /* @call */
    }
"""


def test_each_test_lists_the_lines_of_its_path(tmp_path: Path) -> None:
    program, path, line = compile_source(tmp_path, "sign.c", GET_SIGN)
    result = symex.explore(program, track_test_coverage=True)
    f = str(path)
    # every path runs main's two statements, the first if and get_sign's shared return (the
    # closing brace); main's single return is on its return statement
    common = {line["make"], line["call"], line["if0"], line["close"]}
    expected = {0: common | {line["ret0"]},
                -1: common | {line["ifneg"], line["retneg"]},
                1: common | {line["ifneg"], line["retpos"]}}
    seen = {}
    for test in result.tests:
        a = int.from_bytes(test.objects["a"], "little", signed=True)
        sign = (a > 0) - (a < 0)
        assert test.covered_lines is not None
        assert {file for file, _ in test.covered_lines} == {f}
        seen[sign] = {number for _, number in test.covered_lines}
    assert seen == expected
    # without the option the field stays empty
    assert all(t.covered_lines is None for t in symex.explore(program).tests)


# -- max_forks ----------------------------------------------------------------------------

def test_max_forks_limits_the_paths(tmp_path: Path) -> None:
    # 6 independent symbolic branches: each fork adds one state; after 3 forks there are 4
    # states and none splits again, so exactly 4 paths, each following its own inputs
    program = symex.compile(PROGRAMS / "branches.c", ["-DN=6"])
    result = symex.explore(program, max_forks=3)
    assert result.paths.completed == 4 and result.paths.total == 4
    assert result.statistics.forks == 3
    for test in result.tests:
        assert test.exit_code == sum(b > 100 for b in test.objects["b"])
    assert len({t.objects["b"] for t in result.tests}) == 4
    single = symex.explore(program, max_forks=0)
    assert single.paths.total == 1 and single.statistics.forks == 0
    assert single.tests[0].exit_code == sum(b > 100 for b in single.tests[0].objects["b"])


def test_max_forks_follows_the_model_at_error_checks(tmp_path: Path) -> None:
    # without forks left, the division by a symbolic divisor does not split off an error path
    program, _, _ = compile_source(tmp_path, "div.c", """
        #include <klee/klee.h>
        int main(void) {
          int d;
          klee_make_symbolic(&d, sizeof d, "d");
          return 100 / d;
        }
    """)
    assert symex.explore(program).paths.errors == 1
    result = symex.explore(program, max_forks=0)
    assert result.paths.total == 1 and result.statistics.forks == 0
    d = int.from_bytes(result.tests[0].objects["d"], "little", signed=True)
    assert (result.tests[0].status is PathStatus.ERROR) == (d == 0)


# -- exit_on_error --------------------------------------------------------------------------

TWO_BUGS = """
    #include <klee/klee.h>
    int main(void) {
      int x, a[4] = {0, 1, 2, 3};
      klee_make_symbolic(&x, sizeof x, "x");
      if (x == 1)
        return 100 / (x - 1); /* @div */
      if (x == 2)
        return a[x + 2]; /* @ptr */
      return 0;
    }
"""


def test_exit_on_error(tmp_path: Path) -> None:
    program, path, line = compile_source(tmp_path, "two.c", TWO_BUGS)
    full = symex.explore(program)
    assert (full.paths.completed, full.paths.errors) == (1, 2) and full.halted is None
    assert {e.kind for e in full.errors} == {ErrorKind.DIV, ErrorKind.PTR}

    first = symex.explore(program, exit_on_error=True)
    assert first.paths.errors == 1
    (error,) = first.errors
    assert first.halted == f"exit-on-error ({error.kind.value})"
    assert first.paths.total < full.paths.total or first.paths.partial > 0

    for kind, where in ((ErrorKind.DIV, "div"), (ErrorKind.PTR, "ptr")):
        result = symex.explore(program, exit_on_error={kind.value})
        assert result.halted == f"exit-on-error ({kind.value})"
        assert result.errors[-1].kind is kind and result.errors[-1].location == (str(path), line[where])
        error_tests = [t for t in result.tests if t.status is PathStatus.ERROR]
        assert error_tests[-1].error.kind is kind
    # one kind may be given as a plain string
    assert symex.explore(program, exit_on_error="div").halted == "exit-on-error (div)"
    # a kind the program never hits does not stop anything; ErrorKind members work as well
    others = symex.explore(program, exit_on_error=[ErrorKind.ASSERT, "free"])
    assert others.halted is None and others.paths.errors == 2


def test_exit_on_error_rejects_unknown_kinds(tmp_path: Path) -> None:
    program, _, _ = compile_source(tmp_path, "two.c", TWO_BUGS)
    with pytest.raises(ConfigError) as info:
        symex.explore(program, exit_on_error={"nope"})
    assert "nope" in str(info.value) and "ptr" in str(info.value) and "div" in str(info.value)


# -- only_output_states_covering_new -------------------------------------------------------

def test_only_tests_covering_new_code(tmp_path: Path) -> None:
    # two independent ifs: 4 paths, but any three of them take every outcome of both ifs, so the
    # last path to end reaches no block that an earlier path had not reached
    program, _, _ = compile_source(tmp_path, "two_ifs.c", """
        #include <klee/klee.h>
        int main(void) {
          int x, y, r;
          klee_make_symbolic(&x, sizeof x, "x");
          klee_make_symbolic(&y, sizeof y, "y");
          if (x > 0) r = 1; else r = 2;
          if (y > 0) r += 10; else r += 20;
          return r;
        }
    """)
    every = symex.explore(program)
    assert len(every.tests) == every.paths.total == 4
    assert [t.covers_new for t in every.tests] == [True, True, True, False]
    ended: list[symex.TestCase] = []
    only = symex.explore(program, only_output_states_covering_new=True,
                         hooks=Hooks(on_path_end=ended.append))
    assert only.paths.total == 4 and len(only.tests) == 3
    assert ended == list(only.tests)
    assert [t.objects for t in only.tests] == [t.objects for t in every.tests[:3]]


def test_error_paths_are_always_output(tmp_path: Path) -> None:
    # one block only: the normal path ends first and takes the credit for it; the division
    # error forked off at the division covers nothing new but is output all the same
    program, _, _ = compile_source(tmp_path, "one_block.c", """
        #include <klee/klee.h>
        int main(void) {
          int x;
          klee_make_symbolic(&x, sizeof x, "x");
          return 10 / (x != 7);
        }
    """)
    result = symex.explore(program, only_output_states_covering_new=True)
    assert (result.paths.completed, result.paths.errors) == (1, 1)
    assert [(t.status, t.covers_new) for t in result.tests] == [
        (PathStatus.COMPLETED, True), (PathStatus.ERROR, False)]
    assert int.from_bytes(result.tests[1].objects["x"], "little") == 7


# -- max_memory and solver statistics ---------------------------------------------------------

def test_max_memory_halts_at_once() -> None:
    program = symex.compile(PROGRAMS / "branches.c", ["-DN=8"])
    result = symex.explore(program, max_memory=1)
    assert result.halted == "max-memory reached"
    assert result.paths.partial == 1 and result.paths.total == 1
    assert result.statistics.instructions == 0
    assert result.tests[0].reason == "max-memory reached"
    # a generous limit changes nothing
    assert symex.explore(program, max_memory=1_000_000).paths.completed == 256


def test_solver_layers_are_the_chain_counters() -> None:
    program = symex.compile(PROGRAMS / "branches.c", ["-DN=4"])
    result = symex.explore(program)
    layers = result.statistics.solver_layers
    assert layers["core_queries"] == result.statistics.solver_queries > 0
    assert {"cache_hits", "cex_hits", "independence_hits", "trivial_hits"} <= set(layers)
    assert symex.explore(program, solver_chain=()).statistics.solver_layers == {}


TABLE = """
#include <stdio.h>
#include <klee/klee.h>
int table[4096];                       /* 16,384 bytes */
int main(void) {
    unsigned i;
    klee_make_symbolic(&i, sizeof i, "i");
    table[7] = 1;
    if (table[i & 4095])               /* a symbolic offset into the table */
        puts("hit");
    else
        puts("miss");
    return 0;
}
"""


def test_max_sym_array_size_fixes_offsets_into_bigger_objects(tmp_path: Path) -> None:
    program, _, _ = compile_source(tmp_path, "table.c", TABLE)
    whole = symex.explore(program, max_time=60)
    assert sorted(t.stdout for t in whole.tests) == [b"hit\n", b"miss\n"]
    # the table is over the limit: its index takes one value, one path, and it is said
    fixed = symex.explore(program, max_time=60, max_sym_array_size=16_383)
    assert len(fixed.tests) == 1
    assert any("offset into a 16,384-byte object" in s.describe() for s in fixed.shortfalls)
    # at the limit (not over it) nothing is fixed
    exact = symex.explore(program, max_time=60, max_sym_array_size=16_384)
    assert sorted(t.stdout for t in exact.tests) == [b"hit\n", b"miss\n"]
    with pytest.raises(ConfigError, match="max_sym_array_size"):
        symex.explore(program, max_sym_array_size=-1)


HASHED_TABLE = """
#include <stdio.h>
#include <klee/klee.h>
int table[4096];
int main(void) {
    unsigned char key[4];
    klee_make_symbolic(key, sizeof key, "key");
    unsigned h = 2166136261u;                        /* FNV-1a, as a hash table would */
    for (int k = 0; k < 4; k++)
        h = (h ^ key[k]) * 16777619u;
    table[h & 4095] = 1;
    if (key[0] == 'x')
        puts("x");
    else
        puts("other");
    return 0;
}
"""


def test_max_sym_array_size_fixes_the_key_behind_a_hashed_offset(tmp_path: Path) -> None:
    """Past --max-sym-array-size, the input bytes an offset is computed from are fixed, not
    the offset alone: fixing ``hash(key) & 4095`` would leave a preimage problem in every
    later query about the key (and key[0] == 'x' would still fork, a 12-bit hash leaving
    keys of both kinds); with the key fixed the branch is decided: one path, and its test's
    key is the one the path took."""
    program, _, _ = compile_source(tmp_path, "hashed.c", HASHED_TABLE)
    both = symex.explore(program, max_time=60)
    assert sorted(t.stdout for t in both.tests) == [b"other\n", b"x\n"]
    fixed = symex.explore(program, max_time=60, max_sym_array_size=4096)
    (test,) = fixed.tests
    assert test.stdout == (b"x\n" if test.objects["key"][0] == ord("x") else b"other\n")
    (shortfall,) = fixed.shortfalls
    assert "offset into a 16,384-byte object" in shortfall.describe()
    # the fixed key bytes are answers a recorded tree keeps: its replay, without the
    # solver, takes the same path and writes the same key
    recorded = symex.explore(program, max_time=60, max_sym_array_size=4096,
                             record_tree=tmp_path / "tree.db")
    replayed = symex.explore(program, max_sym_array_size=4096, continue_with=tmp_path / "tree.db",
                             restart_all_states=True)
    assert replayed.statistics.memo.diverged_states == 0
    assert [t.objects for t in replayed.tests] == [t.objects for t in recorded.tests]
    assert replayed.statistics.solver_queries == 0


# -- write_no_tests ------------------------------------------------------------------------

def test_no_tests_are_made_and_errors_are_still_counted(tmp_path: Path) -> None:
    # the same five paths as with tests (the assert fails for x == 150 alone, the division by
    # zero for x == -10 alone), none of them yielding a test
    program, _, _ = compile_source(tmp_path, "two_bugs.c", """
        #include <assert.h>
        #include <klee/klee.h>
        int main(void) {
          int x;
          klee_make_symbolic(&x, sizeof x, "x");
          if (x > 100) { assert(x != 150); return 1; }
          if (x < -5) return 10 / (x + 10);
          return 0;
        }
    """)
    with_tests = symex.explore(program)
    ended: list[symex.TestCase] = []
    errors: list[object] = []
    without = symex.explore(program, write_no_tests=True,
                            hooks=Hooks(on_path_end=ended.append,
                                        on_error=lambda error, test: errors.append(error)))
    assert len(with_tests.tests) == 5
    assert without.tests == () or list(without.tests) == []
    assert ended == [] and errors == []
    assert without.paths == with_tests.paths
    assert sorted(e.kind.value for e in without.errors) == ["assert", "div"]


THREE_SWITCHES = """
#include <klee/klee.h>
static int pick(unsigned char c) {
  switch (c) {
  case 'a': return 1;
  case 'b': return 2;
  case 'c': return 3;
  case 'd': return 4;
  default: return 0;
  }
}
int main(void) {
  unsigned char in[3];
  klee_make_symbolic(in, sizeof in, "in");
  return pick(in[0]) * 25 + pick(in[1]) * 5 + pick(in[2]);
}
"""


def test_a_switchs_inputs_are_its_paths_tests(tmp_path: Path) -> None:
    """Each option of a switch is checked with a query whose answer is inputs that take it:
    those inputs are the path's test, so a path that ends after its switches asks nothing
    more (ten thousand paths of switches ran twice as long when each solved again)."""
    program, _, _ = compile_source(tmp_path, "switches.c", THREE_SWITCHES)
    result = symex.explore(program)

    def pick(byte: int) -> int:
        return {ord("a"): 1, ord("b"): 2, ord("c"): 3, ord("d"): 4}.get(byte, 0)

    # every test's inputs take the path it was written for, and every path is there
    codes = []
    for test in result.tests:
        first, second, third = test.objects["in"]
        assert test.exit_code == pick(first) * 25 + pick(second) * 5 + pick(third)
        codes.append(test.exit_code)
    assert sorted(codes) == list(range(125))
    # the options' queries only: 5 at the first switch, 5 for each of 5 states at the second,
    # of 25 at the third; none when a path ends
    assert result.statistics.solver_layers["queries"] <= 5 + 25 + 125
