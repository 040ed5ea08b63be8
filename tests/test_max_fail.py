"""KLEE's --max-fail: up to N read/write/close calls per path fail with EIO, each where the
symbolic objects read_fail, write_fail and close_fail (made after the files', stdin's and
stdout's, as KLEE's POSIX runtime) equal the call's number on the path.

tests/programs/posix/max_fail.c opens the symbolic file A, reads it and closes it: the read
failing exits 2, the close failing exits 3, neither exits 0."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import symex
from symex.symargs import ArgvSpec, MaxFail, SymFiles

PROGRAM = Path(__file__).parent / "programs" / "posix" / "max_fail.c"


def _number(test: symex.TestCase, name: str) -> int:
    return int.from_bytes(test.objects[name], "little", signed=True)


@pytest.mark.parametrize("libc", ["symex", "musl"])
def test_each_call_may_fail_once(libc: str) -> None:
    result = symex.explore(symex.compile(PROGRAM, libc=libc), sym_files=(1, 4), max_fail=1)
    assert result.paths.completed == 3 and result.paths.errors == 0
    by_exit = {t.exit_code: t for t in result.tests}
    assert set(by_exit) == {0, 2, 3}
    # the first read fails where read_fail is 1, and errno says EIO
    assert by_exit[2].stdout == b"read failed: 1\n" and _number(by_exit[2], "read_fail") == 1
    # the first close fails where close_fail is 1; the read before it did not fail
    assert by_exit[3].stdout == b"close failed: 1\n" and _number(by_exit[3], "close_fail") == 1
    assert _number(by_exit[3], "read_fail") != 1
    # the objects come after the file's, in KLEE's order
    names = list(by_exit[0].objects)
    assert names[names.index("A-data-stat") + 1:] == ["read_fail", "write_fail", "close_fail"]


def test_without_max_fail_no_call_fails_and_no_objects_are_made() -> None:
    result = symex.explore(symex.compile(PROGRAM), sym_files=(1, 4))
    (test,) = result.tests
    assert test.exit_code == 0 and "read_fail" not in test.objects


def test_the_count_bounds_the_failures_on_a_path() -> None:
    # with musl, printf's write can fail too: two failures allow the read (or the close) and
    # then the write reporting it to fail, leaving no output; one failure never does
    program = symex.compile(PROGRAM, libc="musl")
    one = symex.explore(program, sym_files=(1, 4), max_fail=1)
    two = symex.explore(program, sym_files=(1, 4), max_fail=2)
    assert all(t.stdout for t in one.tests if t.exit_code in (2, 3))
    assert {t.exit_code for t in two.tests if not t.stdout} == {0, 2, 3}


def test_the_option_in_klee_syntax() -> None:
    spec = ArgvSpec.parse(["--sym-files", "1", "4", "-max-fail", "1", "x"])
    assert spec.items == (SymFiles(1, 4), MaxFail(1), "x") and spec.max_fail == 1
    assert spec.words() == ("--sym-files", "1", "4", "--max-fail", "1", "x")
    with pytest.raises(symex.SymexError, match="--max-fail expects an integer"):
        ArgvSpec.parse(["--max-fail", "many"])


def test_the_command_line_takes_max_fail(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "symex.cli", "run", "-q", "--output-dir", "out",
                           str(PROGRAM), "--sym-files", "1", "4", "--max-fail", "1"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "explored 3 paths: 3 completed" in proc.stdout


def test_test_lines_leave_out_failure_objects_that_are_zero(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "symex.cli", "run", "--output-dir", "out",
                           str(PROGRAM), "--sym-files", "1", "4", "--max-fail", "1"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith("test0")]
    assert len(lines) == 3
    # the failing read's test names its object; a 0 (calls count from 1: none fails) is not
    # shown, though the .ktest keeps every object
    assert any("exit 2" in line and "read_fail=1" in line for line in lines)
    assert not any(f"{name}=0" in line for line in lines
                   for name in ("read_fail", "write_fail", "close_fail"))


@pytest.mark.skipif(__import__("shutil").which("gcc") is None, reason="native replay needs gcc")
def test_replay_says_native_runs_inject_no_failures(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "symex.cli", "run", "-q", "--output-dir", "out",
                          str(PROGRAM), "--sym-files", "1", "4", "--max-fail", "1"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    replay = subprocess.run([sys.executable, "-m", "symex.cli", "replay", str(PROGRAM), "out"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert replay.returncode == 0, replay.stderr
    # every test runs natively as the path without failures: exit 0 (no error was expected)
    assert replay.stdout.count("exit 0") == 3
    assert "made with --max-fail: a native run makes no read, write or close fail" in replay.stdout
