"""A symbolic allocation size is explored at a few sizes, each on a path of its own, and said.

Fixing it to its smallest value (KLEE's way, and symex's before) misses bugs that need a
large buffer; the run also said nothing about it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import symex
from symex.core.memory.allocation_sizes import SIZE_CAP
from symex.core.outcome import PathStatus
from symex.output.ktest import KTest, KTestObject
from symex.replay import build_native, reproduces, run_native

LARGE_ONLY = r"""
#include <klee/klee.h>
#include <stdlib.h>
int main(void) {
  unsigned n;
  klee_make_symbolic(&n, sizeof n, "n");
  klee_assume(n <= 10000);
  char *buf = malloc(n);
  if (!buf)
    return 0;
  if (n > 5000)
    buf[n] = 0;            /* one past the end: only a large buffer gets here */
  free(buf);
  return 1;
}
"""


def _compile(tmp_path: Path, name: str, source: str) -> tuple[Path, symex.Program]:
    path = tmp_path / name
    path.write_text(source)
    return path, symex.compile(path)


def _n(test: symex.TestCase) -> int:
    return int.from_bytes(test.objects["n"], "little")


def test_a_bug_that_needs_a_large_size_is_found_and_said(tmp_path: Path) -> None:
    _, program = _compile(tmp_path, "large.c", LARGE_ONLY)
    result = symex.explore(program)
    sizes = sorted(_n(t) for t in result.tests)
    # the smallest feasible size and the largest under the cap (10000 <= SIZE_CAP)
    assert 10000 <= SIZE_CAP
    assert sizes[0] == 0 and sizes[-1] == 10000
    (error,) = result.errors
    assert error.kind.value == "ptr"
    assert "out-of-bounds write of 1 byte at offset 10000 of a 10000-byte heap object" \
        in error.message
    (said,) = [m for m in result.messages if "malloc size" in m]
    assert said.startswith("symex: warning: the malloc size at large.c:8 is symbolic: "
                           "explored at sizes 0, 10000")


@pytest.mark.skipif(shutil.which("gcc") is None, reason="native replay needs gcc")
def test_every_size_path_replays_natively(tmp_path: Path) -> None:
    source, program = _compile(tmp_path, "large.c", LARGE_ONLY)
    result = symex.explore(program)
    executable = build_native(source)
    for test in result.tests:
        ktest = KTest(args=(), objects=tuple(KTestObject(n, d) for n, d in test.objects.items()))
        outcome = run_native(executable, ktest)
        if test.status is PathStatus.ERROR:
            assert reproduces("ptr", outcome), (test.objects, outcome)
        else:
            assert outcome.kind is None and outcome.exit_code == test.exit_code, outcome


def test_boundaries_from_the_path_and_the_cap(tmp_path: Path) -> None:
    _, program = _compile(tmp_path, "bounds.c", r"""
#include <klee/klee.h>
#include <stdlib.h>
int main(void) {
  unsigned n;
  klee_make_symbolic(&n, sizeof n, "n");
  if (n < 4 || n == 300)
    return 0;
  char *buf = malloc(n);
  return buf != 0;
}
""")
    result = symex.explore(program)
    sizes = sorted(_n(t) for t in result.tests if t.exit_code == 1)
    # smallest 4; largest under the cap; past the compared constants: 5 (4 + 1) and 301
    # (300 itself is excluded by the path)
    assert sizes == [4, 5, 301, SIZE_CAP]


def test_a_recorded_tree_replays_the_same_sizes(tmp_path: Path) -> None:
    _, program = _compile(tmp_path, "large.c", LARGE_ONLY)
    first = symex.explore(program, record_tree=tmp_path / "tree.db")
    again = symex.explore(program, continue_with=tmp_path / "tree.db", restart_all_states=True)
    assert sorted(t.path for t in again.tests) == sorted(t.path for t in first.tests)
    assert sorted(_n(t) for t in again.tests) == sorted(_n(t) for t in first.tests)
    assert again.statistics.memo is not None and again.statistics.memo.diverged_states == 0


def test_workers_explore_the_same_sizes(tmp_path: Path) -> None:
    _, program = _compile(tmp_path, "large.c", LARGE_ONLY)
    alone = symex.explore(program)
    shared = symex.explore(program, workers=2, parallel_backend="in-process")
    assert sorted(_n(t) for t in shared.tests) == sorted(_n(t) for t in alone.tests)


def test_a_variable_length_array_of_symbolic_length(tmp_path: Path) -> None:
    _, program = _compile(tmp_path, "vla.c", r"""
#include <klee/klee.h>
int main(void) {
  unsigned char n;
  klee_make_symbolic(&n, sizeof n, "n");
  if (n == 0)
    return 0;
  char a[n];
  a[n - 1] = 1;
  return a[n - 1] + (n > 200);
}
""")
    result = symex.explore(program)
    assert result.paths.errors == 0
    sizes = sorted(_n(t) for t in result.tests if t.exit_code is not None and t.exit_code > 0)
    assert sizes[0] == 1 and sizes[-1] == 255
    assert any("variable-length array size" in m for m in result.messages)
