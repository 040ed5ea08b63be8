"""The `symex run` command line, run as a real subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


def symex(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "symex.cli", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)


def test_run_prints_the_summary_and_one_line_per_test() -> None:
    proc = symex("run", "examples/get_sign.c")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "symex: explored 3 paths: 3 completed, 0 errors, 0 partial"
    tests = [line for line in lines if line.startswith("test")]
    assert len(tests) == 3
    # one test per sign of a; exit codes 0, 1 and 255 (get_sign's -1 as an exit status)
    assert sorted(line.split()[3] for line in tests) == ["0", "1", "255"]


def test_run_reports_errors_with_their_stack(tmp_path: Path) -> None:
    proc = symex("run", "--search", "bfs", "-O", "2", "tests/programs/errors/div_zero.c")
    assert proc.returncode == 0, proc.stderr
    assert "error [div]" in proc.stdout and "division by zero" in proc.stdout
    assert "#0" in proc.stdout


@pytest.mark.parametrize("args, message", [
    (("run", "missing.c"), "no such file"),
    (("run", "--max-time", "soon", "examples/get_sign.c"), "invalid float value"),
    (("run", "--no-such-option", "examples/get_sign.c"), "unrecognized arguments"),
    (("run", "--search", "best", "examples/get_sign.c"), "unknown searcher 'best'"),
])
def test_bad_command_lines_give_one_line_and_status_2(args: tuple[str, ...], message: str) -> None:
    proc = symex(*args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_compile_errors_show_the_compilers_message(tmp_path: Path) -> None:
    source = tmp_path / "broken.c"
    source.write_text("int main(void) { return y; }\n")
    proc = symex("run", str(source))
    assert proc.returncode == 2
    assert "use of undeclared identifier 'y'" in proc.stderr and "Traceback" not in proc.stderr


def test_malformed_ir_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ll"
    bad.write_text("this is not LLVM IR\n")
    proc = symex("run", str(bad))
    assert proc.returncode == 2
    assert "not valid LLVM IR" in proc.stderr and "Traceback" not in proc.stderr


def test_interrupt_keeps_what_was_found(tmp_path: Path) -> None:
    import signal
    import time

    # 2^20 paths: still exploring when the interrupt comes
    symex("run", "--max-instructions", "1", "-D", "N=20", "tests/programs/branches.c")  # warm the IR cache
    proc = subprocess.Popen([sys.executable, "-m", "symex.cli", "run", "--search", "bfs", "-D", "N=20",
                             "tests/programs/branches.c"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(4.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "stopped early: interrupted" in out and "Traceback" not in err
    tests = [line for line in out.splitlines() if line.startswith("test")]
    explored = int(out.splitlines()[0].split()[2])
    assert explored == len(tests) > 0
