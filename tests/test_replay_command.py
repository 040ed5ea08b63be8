"""`symex replay`: test cases run on the natively built program, error tests confirmed.

The output directories here are written by hand in KLEE's layout (testNNNNNN.ktest plus a
testNNNNNN.KIND.err for error tests), so the command is tested apart from `symex run`;
tests/test_workflow.py replays a directory `symex run` wrote.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from symex.output.ktest import KTest, KTestObject, write_ktest

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="native replay needs gcc")

PROGRAM = r"""
#include <klee/klee.h>
#include <stdio.h>
#include <stdlib.h>
int table[4];
int main(int argc, char **argv) {
  int k;
  klee_make_symbolic(&k, sizeof k, "k");
  if (k == 1) return table[k + 10];        /* out of bounds: ptr */
  if (k == 2) return 100 / (k - 2);        /* div */
  if (k == 3) { volatile int x = 1; while (x) {} }
  if (k == 4) abort();
  if (k == 5) return argc * 10 + (argc > 1 ? argv[1][0] - '0' : 0);
  return k + OFFSET;
}
"""


def symex(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "symex.cli", *args], capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("prog") / "prog.c"
    path.write_text(PROGRAM)
    return path


def _test(directory: Path, number: int, k: int, error: str | None = None, args: tuple[str, ...] = ("prog",)) -> None:
    objects = (KTestObject("k", struct.pack("<i", k)),)
    write_ktest(directory / f"test{number:06d}.ktest", KTest(args=args, objects=objects))
    if error is not None:
        (directory / f"test{number:06d}.{error}.err").write_text("Error: something\nFile: prog.c\n")


def test_every_error_reproduces(program: Path, tmp_path: Path) -> None:
    out = tmp_path / "symex-out-1"
    out.mkdir()
    _test(out, 1, 0)
    _test(out, 2, 1, "ptr")
    _test(out, 3, 2, "div")
    _test(out, 4, 4, "abort")
    _test(out, 5, 5, args=("prog", "7"))  # argv[1] comes from the test's args
    (out / "info").write_text("not a test\n")
    proc = symex("replay", "-D", "OFFSET=40", program.as_posix(), out.as_posix())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "test000001.ktest: exit 40"  # k = 0: returns 0 + OFFSET
    # the sanitizers report the global overflow and the division, then exit with status 1
    assert lines[1] == "test000002.ktest: exit 1, reproduces ptr error"
    assert lines[2] == "test000003.ktest: exit 1, reproduces div error"
    assert lines[3] == "test000004.ktest: signal 6 (SIGABRT), reproduces abort error"
    assert lines[4] == "test000005.ktest: exit 27"  # argc 2 -> 20, argv[1] "7" -> 7
    assert lines[5] == "symex replay: 5 tests: 3 of 3 errors reproduced; 2 clean"
    assert len(lines) == 6


def test_an_error_that_does_not_reproduce_is_listed_and_exit_1(program: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    _test(out, 1, 1, "ptr")
    _test(out, 2, 0, "ptr")     # k = 0 runs cleanly natively
    _test(out, 3, 2, "assert")  # natively a division by zero, not an assertion
    proc = symex("replay", "-DOFFSET=0", str(program), str(out))
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[1] == "test000002.ktest: DOES NOT REPRODUCE (expected ptr, native run: exit 0)"
    assert lines[2] == "test000003.ktest: DOES NOT REPRODUCE (expected assert, native run: exit 1, div error)"
    assert lines[-1] == ("symex replay: 3 tests: 1 of 3 errors reproduced, 2 did not reproduce "
                         "(test000002.ktest, test000003.ktest); 0 clean")


def test_single_file_timeout_and_native_only_failure(program: Path, tmp_path: Path) -> None:
    _test(tmp_path, 7, 3)
    proc = symex("replay", "--timeout", "0.5", "-D", "OFFSET=0", str(program), str(tmp_path / "test000007.ktest"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["test000007.ktest: timeout",
                                        "symex replay: 1 test: 0 of 0 errors reproduced; 0 clean, 1 timed out"]
    # an error test that hangs natively did not reproduce
    (tmp_path / "test000007.exec.err").write_text("")
    proc = symex("replay", "--timeout", "0.5", "-D", "OFFSET=0", str(program), str(tmp_path / "test000007.ktest"))
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[0] == "test000007.ktest: DOES NOT REPRODUCE (expected exec, native run: timeout)"
    # a test without .err that fails natively is said so, without failing the replay
    _test(tmp_path, 8, 4)
    proc = symex("replay", "-D", "OFFSET=0", str(program), str(tmp_path / "test000008.ktest"))
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[0] == \
        "test000008.ktest: signal 6 (SIGABRT) (abort error natively; symex reported none)"


def test_bad_input_is_one_line_and_status_2(program: Path, tmp_path: Path) -> None:
    _test(tmp_path, 1, 0)
    good = str(tmp_path / "test000001.ktest")
    not_ktest = tmp_path / "notes.ktest"
    not_ktest.write_text("hello\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    broken = tmp_path / "broken.c"
    broken.write_text("int main(void) { return nope; }\n")
    cases = [
        (("replay", str(tmp_path / "absent.c"), good), "no such file"),
        (("replay", str(program), str(tmp_path / "absent.ktest")), "no such file or directory"),
        (("replay", str(program), str(not_ktest)), "not a .ktest file"),
        (("replay", str(program), str(empty)), "holds no .ktest files"),
        (("replay", str(tmp_path / "prog.ll"), good), "native replay needs the C source"),
        (("replay", "--timeout", "0", str(program), good), "--timeout must be positive"),
    ]
    for args, message in cases:
        proc = symex(*args)
        assert proc.returncode == 2, args
        assert message in proc.stderr and "Traceback" not in proc.stderr, (args, proc.stderr)
        assert len(proc.stderr.splitlines()) == 1, proc.stderr
    proc = symex("replay", str(broken), good)
    assert proc.returncode == 2 and "nope" in proc.stderr and "undeclared" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_every_error_path_counts_not_only_those_with_err_files(tmp_path: Path) -> None:
    """symex writes a .err file for the first error at a site only; the other paths that
    ended there are errors too (tests.csv says so) and must reproduce as errors."""
    source = tmp_path / "sites.c"
    source.write_text(r"""
#include <klee/klee.h>
int table[4];
int main(void) {
  unsigned char k;
  klee_make_symbolic(&k, sizeof k, "k");
  int i = 0;
  if (k > 10) i = 5;          /* two paths reach the read below out of bounds */
  if (k > 20) i = 6;
  return table[i];
}
""")
    run = subprocess.run([sys.executable, "-m", "symex.cli", "run", "-q", "--output-dir", "out",
                          str(source)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stderr
    out = tmp_path / "out"
    assert len(list(out.glob("*.err"))) == 1  # one site
    rows = (out / "tests.csv").read_text().splitlines()
    assert rows[0] == "test,status,error,exit_code,instructions,reason"
    assert sum(1 for row in rows[1:] if ",error,ptr," in row) == 2
    proc = symex("replay", str(source), str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "symex replay: 3 tests: 2 of 2 errors reproduced; 1 clean"


def test_a_partial_path_that_fails_past_where_symex_stopped_is_told_apart(
        program: Path, tmp_path: Path) -> None:
    """A test whose path symex cut short (tests.csv: partial, with the reason) runs on
    natively and may fail later: said as such, not as a failure symex missed."""
    out = tmp_path / "symex-out-1"
    out.mkdir()
    _test(out, 1, 4)  # aborts natively (k = 4)
    _test(out, 2, 4)
    (out / "tests.csv").write_text("test,status,error,exit_code,instructions,reason\n"
                                   "1,partial,,,120,exit-on-error (assert)\n"
                                   "2,completed,,0,300,\n")
    proc = symex("replay", "-D", "OFFSET=0", str(program), str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == [
        "test000001.ktest: signal 6 (SIGABRT) (abort error natively, past where symex stopped "
        "the path: exit-on-error (assert))",
        "test000002.ktest: signal 6 (SIGABRT) (abort error natively; symex reported none)",
        "symex replay: 2 tests: 0 of 0 errors reproduced; 0 clean, 1 failed natively without "
        "a symex error, 1 partial path failed natively past where symex stopped it"]
