"""Compiled runs (core/interpreter/compiled_runs.py): straight-line runs of a block executed by generated
Python functions must change nothing a user sees: the same tests, paths, outputs, errors and
instruction counts as the per-instruction closures, also where a run stops in the middle
(symbolic operands, errors, copy-on-write, the end of a time slice) and under the recorded
tree's exact replay. And the generated code must be debuggable.
"""

from __future__ import annotations

import traceback
from pathlib import Path

import pytest

import symex
from symex.core.interpreter import compiled_runs
from c_programs import write

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "tests" / "programs"

MIXED = r"""
#include <klee/klee.h>
#include <stdio.h>
#include <stdlib.h>
int table[16];
int main(void) {
  unsigned char in[4];
  klee_make_symbolic(in, sizeof in, "in");
  int local[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  int *heap = malloc(8 * sizeof(int));
  for (int i = 0; i < 8; i++) {
    heap[i] = local[i] * 3 + i;   /* a run of loads, arithmetic and stores */
    table[i + (in[0] & 7)] = heap[i] >> 1;   /* a store at a symbolic index stops a run */
  }
  long long wide = (long long)in[1] * 1000003 - 77;
  int q = 100 / (in[2] - 3);      /* a division that may be by zero: an error path */
  if (table[in[3] & 15] > 5 && wide % 7 == 3)
    printf("deep %d\n", q);
  short s = (short)(in[1] << 8 | in[0]);
  unsigned shifted = 1u << (in[3] & 31);
  printf("%d %u %d\n", s >> 3, shifted >> 2, table[3]);
  free(heap);
  return (int)(wide & 0xff);
}
"""


def explore_both(monkeypatch: pytest.MonkeyPatch, source: Path, flags: list[str] = (),
                 **options: object) -> tuple[symex.Result, symex.Result]:
    program = symex.compile(source, flags=list(flags))
    results = []
    for enabled in ("0", "1"):
        monkeypatch.setenv(compiled_runs.ENABLE_VARIABLE, enabled)
        results.append(symex.explore(program, **options))
    return results[0], results[1]


def same(plain: symex.Result, runs: symex.Result) -> None:
    assert [(t.objects, t.status, t.exit_code, t.path, t.stdout, t.instructions,
             t.error.message if t.error else None, t.reason) for t in runs.tests] == \
        [(t.objects, t.status, t.exit_code, t.path, t.stdout, t.instructions,
          t.error.message if t.error else None, t.reason) for t in plain.tests]
    assert runs.statistics.instructions == plain.statistics.instructions
    assert runs.coverage.covered_lines == plain.coverage.covered_lines
    assert runs.coverage.covered_branches == plain.coverage.covered_branches


@pytest.mark.parametrize("name, flags, options", [
    ("sort", [], {}),
    ("regexp", ["-DASSUME_TERMINATED"], {}),
    ("tokens", [], {"sym_stdin": 2}),
    ("mixed", [], {"emit_all_errors": True}),
    ("mixed", [], {"searcher": "random-path", "seed": 3}),
    # -O2: loops carry values in phis, which runs move on the edges they take themselves
    ("mixed", ["-O2"], {}),
    ("regexp", ["-DASSUME_TERMINATED", "-O2"], {}),
    # tests that carry their blocks: runs leave every branch to its closure
    ("mixed", [], {"track_test_coverage": True}),
])
def test_runs_change_nothing_a_user_sees(name: str, flags: list[str], options: dict,
                                         monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    sources = {"sort": ROOT / "benchmarks" / "programs" / "sort.c",
               "regexp": PROGRAMS / "regexp.c", "tokens": PROGRAMS / "posix" / "tokens.c",
               "mixed": write(tmp_path, "mixed.c", MIXED)}
    plain, runs = explore_both(monkeypatch, sources[name], flags, **options)
    assert runs.tests
    same(plain, runs)


@pytest.mark.parametrize("name, flags", [("mixed", []), ("mixed", ["-O2"]), ("sort", [])])
def test_chains_change_nothing_runs_alone_show(name: str, flags: list[str],
                                               monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    source = {"sort": ROOT / "benchmarks" / "programs" / "sort.c",
              "mixed": write(tmp_path, "mixed.c", MIXED)}[name]
    program = symex.compile(source, flags=flags)
    results = []
    for enabled in ("0", "1"):
        monkeypatch.setenv(compiled_runs.CHAIN_VARIABLE, enabled)
        results.append(symex.explore(program, searcher="bfs"))
    same(*results)


def test_runs_keep_the_recorded_trees_exact_replay(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    # a tree recorded with runs off, cut by an instruction limit, is continued with runs on:
    # the replay must reach the recorded frontiers at exactly the recorded instruction counts
    source = PROGRAMS / "regexp.c"
    program = symex.compile(source, flags=["-DASSUME_TERMINATED"])
    monkeypatch.setenv(compiled_runs.ENABLE_VARIABLE, "0")
    whole = symex.explore(program)
    first = symex.explore(program, record_tree=tmp_path / "tree", max_instructions=200_000)
    monkeypatch.setenv(compiled_runs.ENABLE_VARIABLE, "1")
    rest = symex.explore(program, continue_with=tmp_path / "tree")
    assert rest.statistics.memo is not None and rest.statistics.memo.diverged_states == 0
    finished = [t for t in first.tests if t.status.value != "partial"]
    assert sorted(t.path for t in finished + list(rest.tests)) == sorted(t.path for t in whole.tests)


def test_generated_code_can_be_dumped_and_shows_in_tracebacks(monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    monkeypatch.setenv(compiled_runs.DUMP_VARIABLE, str(tmp_path / "dump"))
    program = symex.compile(ROOT / "benchmarks" / "programs" / "sort.c")
    result = symex.explore(program)
    assert result.tests[0].status.value == "completed"
    dumped = (tmp_path / "dump" / "sort_round.py").read_text()
    assert "def make_run_" in dumped and "load i32" in dumped  # each instruction's IR as comment
    assert "def make_chain" in dumped and "# block " in dumped  # the loops' blocks, chained
    # a run called with something that is no state fails inside the generated code, and the
    # traceback quotes its line
    namespace: dict = {}
    exec(compile(dumped, "<symex runs of sort_round>", "exec"), namespace)
    maker = next(v for k, v in namespace.items() if k.startswith("make_run_"))
    run = maker(None, [False], None, None, None, [], [], (), b"", b"")
    with pytest.raises(AttributeError) as failure:
        run(object(), None, [0] * 1000)
    assert "get = state.objects.get" in "".join(traceback.format_tb(failure.value.__traceback__))
