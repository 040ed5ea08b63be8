"""Out-of-bounds reports name the object the pointer came from, at a signed offset.

Accesses below and above a global, a stack and a heap object, at concrete and symbolic
indices: each report names the object (its C name, kind, size and where it was declared or
allocated) and the offset from its start, negative below it, as AddressSanitizer does; each
error reproduces in the native build.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import symex
from symex.ir.compile import compile_c
from symex.output.ktest import KTest, KTestObject
from symex.replay import build_native, reproduces, run_native

SOURCE = r"""
#include <klee/klee.h>
#include <limits.h>
#include <stdlib.h>
int table[4] = {1, 2, 3, 4};
int main(void) {
  int k, i;
  char c;
  klee_make_symbolic(&k, sizeof k, "k");
  klee_make_symbolic(&i, sizeof i, "i");
  klee_make_symbolic(&c, sizeof c, "c");
  int local[4] = {5, 6, 7, 8};
  short *heap = malloc(5 * sizeof(short));
  switch (k) {
  case 0: return table[INT_MIN];         /* line 15: 8 GB below table */
  case 1: return table[4];               /* line 16: just past its end */
  case 2: return local[-3];              /* line 17 */
  case 3: klee_assume(c >= '0' - 2 & c <= '0' + 5); return local[c - '0'];   /* line 18 */
  case 4: return heap[-1];               /* line 19 */
  case 5: return heap[5];                /* line 20 */
  case 6: klee_assume(i < 0 & i > -3); return table[i];   /* line 21: symbolic, below */
  case 7: { const char *s = "abc"; return s[-5]; }   /* line 22: a string literal */
  }
  free(heap);
  return 0;
}
"""

LINE_OF_CASE = {k: 15 + k for k in range(8)}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, symex.Result]:
    source = tmp_path_factory.mktemp("reports") / "reports.c"
    source.write_text(SOURCE)
    return source, symex.explore(symex.compile(source), emit_all_errors=True, max_time=120)


def _errors_by_line(result: symex.Result) -> dict[int, list[symex.TestCase]]:
    found: dict[int, list[symex.TestCase]] = {}
    for test in result.tests:
        if test.error is not None:
            found.setdefault(test.error.location[1], []).append(test)
    return found


def test_each_report_names_the_object_and_a_signed_offset(run: tuple[Path, symex.Result]) -> None:
    source, result = run
    errors = _errors_by_line(result)
    assert sorted(errors) == sorted(LINE_OF_CASE.values())

    def only(line: int) -> str:
        messages = {t.error.message for t in errors[line] if t.error is not None}
        assert len(messages) == 1, messages
        return messages.pop()

    table = "of a 16-byte global object 'table' (declared at reports.c:5)"
    assert only(15) == f"out-of-bounds read of 4 bytes at offset {-(2 ** 31) * 4} {table}"
    assert only(16) == f"out-of-bounds read of 4 bytes at offset 16 {table}"
    local = "of a 16-byte stack object 'local' (declared at reports.c:12)"
    assert only(17) == f"out-of-bounds read of 4 bytes at offset -12 {local}"
    heap = "of a 10-byte heap object (allocated by malloc at reports.c:13)"
    assert only(19) == f"out-of-bounds read of 2 bytes at offset -2 {heap}"
    assert only(20) == f"out-of-bounds read of 2 bytes at offset 10 {heap}"
    # a string literal's site is in the debug info of clang 17 and later (zig cc's); older
    # clangs (Debian's clang-14) describe no literal, and the report says what it knows
    ir = compile_c(source).read_text()
    literal_described = any(line.startswith("@.str") and "!dbg" in line for line in ir.splitlines())
    assert only(22) == ("out-of-bounds read of 1 byte at offset -5 of a 4-byte global object"
                        + (" (a string literal at reports.c:22)" if literal_described else ""))

    # symbolic indices: the offset shown is the one the test's own input gives
    for line, name in ((18, "local"), (21, "table")):
        for test in errors[line]:
            assert test.error is not None
            m = re.fullmatch(r"out-of-bounds read of 4 bytes at offset (-?\d+) of a 16-byte "
                             rf"(stack|global) object '{name}' \(declared at reports.c:\d+\)",
                             test.error.message)
            assert m, test.error.message
            if line == 18:
                expected = (int.from_bytes(test.objects["c"], "little", signed=True) - ord("0")) * 4
            else:
                expected = int.from_bytes(test.objects["i"], "little", signed=True) * 4
            assert int(m.group(1)) == expected
            assert expected < 0 or expected >= 16


@pytest.mark.skipif(shutil.which("gcc") is None, reason="native replay needs gcc")
def test_every_reported_access_fails_natively(run: tuple[Path, symex.Result]) -> None:
    # The symbolic indices are kept within a few elements of their arrays: far below an
    # object AddressSanitizer may find another live object and see nothing. For the same
    # reason the reads just below a global (lines 21 and 22) are left out: ASan puts its
    # redzones after globals only, so what lies just below one is another global's data.
    # table[INT_MIN], 8 GB below, is unmapped natively.
    source, result = run
    executable = build_native(source)
    errors = [t for t in result.tests
              if t.error is not None and t.error.location[1] not in (21, 22)]
    assert errors
    for test in errors:
        ktest = KTest(args=(), objects=tuple(KTestObject(n, d) for n, d in test.objects.items()))
        outcome = run_native(executable, ktest)
        assert reproduces("ptr", outcome), (test.error, outcome)


def test_use_after_free_and_bad_frees_name_the_object(tmp_path: Path) -> None:
    source = tmp_path / "freed.c"
    source.write_text(r"""
#include <klee/klee.h>
#include <stdlib.h>
int main(void) {
  int k;
  klee_make_symbolic(&k, sizeof k, "k");
  char *p = malloc(8);
  if (k == 0) { free(p); return p[1]; }
  if (k == 1) { free(p + 2); return 0; }
  if (k == 2) { free(p); free(p); return 0; }
  free(p);
  return 0;
}
""")
    result = symex.explore(symex.compile(source), emit_all_errors=True)
    messages = sorted(t.error.message for t in result.tests if t.error is not None)
    heap = "8-byte heap object (allocated by malloc at freed.c:7)"
    assert messages == sorted([
        f"use after free: read of 1 byte at offset 1 of a freed {heap}",
        f"free of a pointer to offset 2 of a {heap}",
        f"double free of a {heap}",
    ])
