"""The `symex run` command line, run as a real subprocess (in a temporary directory: every run
writes an output directory there)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from symex.output.rendering import counted, share, show_object

ROOT = Path(__file__).parents[1]
GET_SIGN = str(ROOT / "examples" / "get_sign.c")


def symex(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "symex.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def test_run_prints_the_summary_and_one_line_per_test(tmp_path: Path) -> None:
    proc = symex("run", GET_SIGN, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "symex: explored 3 paths: 3 completed, 0 errors, 0 partial"
    assert "symex: output directory: symex-out-0" in lines
    tests = [line for line in lines if line.startswith("test")]
    assert len(tests) == 3
    # one test per sign of a; exit codes 0, 1 and 255 (get_sign's -1 as an exit status)
    assert sorted(line.split()[3] for line in tests) == ["0", "1", "255"]
    assert len(list((tmp_path / "symex-out-0").glob("test*.ktest"))) == 3
    # both branches of get_sign, both outcomes each: all lines and branches covered
    assert "line coverage 100.0%" in proc.stdout and "branch coverage 100.0% (4 of 4" in proc.stdout


def test_a_symex_flag_after_the_program_goes_to_it_with_a_warning(tmp_path: Path) -> None:
    # KLEE's syntax: what follows PROGRAM is the program's; --sym-arg may stand there
    proc = symex("run", GET_SIGN, "--solver", "bitwuzla", "--sym-arg", "2", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert ("symex: warning: --solver after the program is passed to the program, as its "
            "arguments; put symex's options before PROGRAM") in proc.stderr
    assert "--sym-arg" not in proc.stderr.split("warning:")[1].split("\n")[0]
    quiet = symex("run", "--solver", "bitwuzla", GET_SIGN, cwd=tmp_path)
    assert quiet.returncode == 0 and "warning" not in quiet.stderr


def test_run_reports_errors_with_their_stack(tmp_path: Path) -> None:
    proc = symex("run", "--search", "bfs", "-O", "2",
                 str(ROOT / "tests/programs/errors/div_zero.c"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "error [div]" in proc.stdout and "division by zero" in proc.stdout
    assert "#0" in proc.stdout


@pytest.mark.parametrize("args, message", [
    (("run", "missing.c"), "no such file"),
    (("run", "--max-time", "soon", GET_SIGN), "invalid time 'soon'"),
    (("run", "--max-time", "5parsecs", GET_SIGN), "invalid time '5parsecs'"),
    (("run", "--max-instructions", "-3", GET_SIGN), "must not be negative"),
    (("run", "--max-memory", "lots", GET_SIGN), "invalid number 'lots'"),
    (("run", "--no-such-option", GET_SIGN), "unrecognized arguments"),
    (("run", "--search", "best", GET_SIGN), "unknown searcher 'best'"),
    (("run", "--search", "nosuch", GET_SIGN), "unknown searcher 'nosuch'"),
    (("run", "--exit-on-error-type", "bogus", GET_SIGN), "unknown error type 'bogus'"),
    (("run", "--exit-on-error-type", "ptr,bogus", GET_SIGN), "unknown error type 'bogus'"),
    (("run", "--solver", "nosuch", GET_SIGN), "unknown backend 'nosuch'"),
    (("run", "--test-format", "xml", GET_SIGN), "invalid choice: 'xml'"),
    (("run",), "the following arguments are required: program"),
    (("stats",), "the following arguments are required: DIR"),
    (("frobnicate",), "invalid choice: 'frobnicate'"),
])
def test_bad_command_lines_give_one_line_and_status_2(args: tuple[str, ...], message: str,
                                                      tmp_path: Path) -> None:
    proc = symex(*args, cwd=tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())  # nothing created for a bad command line


@pytest.mark.parametrize("option, message", [
    (("--memory-model", "nosuch"), "unknown memory model 'nosuch'"),
    (("--float-solver", "nosuch"), "unknown backend 'nosuch'"),
    (("--search", "nosuch"), "unknown searcher 'nosuch'"),
])
def test_a_bad_option_is_reported_before_the_program_is_compiled(
        option: tuple[str, ...], message: str, tmp_path: Path) -> None:
    """The option's mistake, not the program's: a big program is not compiled first."""
    broken = tmp_path / "broken.c"
    broken.write_text("int main(void) { return undeclared; }\n")
    proc = symex("run", *option, str(broken), cwd=tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr and "undeclared" not in proc.stderr, proc.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["broken.c"]


def test_klee_time_syntax_and_error_types_are_accepted(tmp_path: Path) -> None:
    proc = symex("run", "--quiet", "--max-time", "1min", "--exit-on-error-type", "Assert,ReportError",
                 "--exit-on-error-type", "ptr", GET_SIGN, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].startswith("symex: explored 3 paths")


def test_exit_on_error_stops_after_the_first_error(tmp_path: Path) -> None:
    # 2^8 paths; the 56 with exactly three bytes > 100 divide by zero, the others complete
    source = tmp_path / "third.c"
    source.write_text("""
#include <klee/klee.h>
int main(void) {
  unsigned char b[8];
  int n = 0;
  klee_make_symbolic(b, sizeof b, "b");
  for (int i = 0; i < 8; i++)
    if (b[i] > 100)
      n++;
  return 100 / (n - 3);
}
""")
    proc = symex("run", "--quiet", "--exit-on-error", "--output-dir", "out", str(source), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "stopped early: exit-on-error (div)" in proc.stdout
    assert len(list((tmp_path / "out").glob("*.err"))) == 1
    first = proc.stdout.splitlines()[0].split()
    assert int(first[2]) < 256 and first[6] == "1"  # "explored N paths: C completed, 1 errors"
    other_kind = symex("run", "--quiet", "--exit-on-error-type", "assert", "--output-dir", "all",
                       str(source), cwd=tmp_path)
    assert other_kind.returncode == 0, other_kind.stderr
    assert other_kind.stdout.splitlines()[0].startswith("symex: explored 256 paths: 200 completed, 56 errors")


def test_compile_errors_show_the_compilers_message(tmp_path: Path) -> None:
    source = tmp_path / "broken.c"
    source.write_text("int main(void) {\n  return y;\n}\n")
    proc = symex("run", str(source), cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    # symex's one line, then the compiler's output as it printed it
    assert lines[0].startswith("symex: error: compiling ") and "broken.c failed" in lines[0]
    assert any("use of undeclared identifier 'y'" in line for line in lines[1:])
    # the caret stays under the y of "  return y;": the compiler's lines are not joined
    quoted = next(i for i, line in enumerate(lines) if line.rstrip().endswith("return y;"))
    assert lines[quoted + 1].index("^") == lines[quoted].index("y;")
    assert "Traceback" not in proc.stderr
    assert not list(tmp_path.glob("symex-out-*"))


def test_a_run_that_cannot_start_leaves_nothing_behind(tmp_path: Path) -> None:
    """No main: an error, no output directory, and symex-last still names the last run."""
    proc = symex("run", "-q", GET_SIGN, cwd=tmp_path)
    assert proc.returncode == 0
    library = tmp_path / "library.c"
    library.write_text("int helper(int x) { return x + 1; }\n")
    proc = symex("run", str(library), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("symex: error: ") and "no main function" in proc.stderr
    assert sorted(p.name for p in tmp_path.glob("symex-out-*")) == ["symex-out-0"]
    assert (tmp_path / "symex-last").resolve() == (tmp_path / "symex-out-0").resolve()


def test_malformed_ir_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ll"
    bad.write_text("this is not LLVM IR\n")
    proc = symex("run", str(bad), cwd=tmp_path)
    assert proc.returncode == 2
    assert "not valid LLVM IR" in proc.stderr and "Traceback" not in proc.stderr


def test_progress_lines_when_not_a_terminal(tmp_path: Path) -> None:
    program = str(ROOT / "tests/programs/branches.c")  # 2^16 paths: still running after 3 s
    proc = symex("run", "--max-time", "3", "--progress-interval", "0.5", "-D", "N=16", program,
                 cwd=tmp_path)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    progress = [line for line in proc.stderr.splitlines() if line.startswith("symex: [")]
    assert len(progress) >= 3, proc.stderr
    assert all(" instrs, " in line and " states, " in line and "solver" in line
               for line in progress)
    quiet = symex("run", "--quiet", "--max-time", "3", "--progress-interval", "0.5", "-D", "N=16",
                  program, cwd=tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_interrupt_keeps_what_was_found(tmp_path: Path) -> None:
    import signal
    import time

    branches = str(ROOT / "tests/programs/branches.c")
    # 2^20 paths: still exploring when the interrupt comes
    symex("run", "--max-instructions", "1", "-D", "N=20", branches, cwd=tmp_path)  # warm the IR cache
    proc = subprocess.Popen([sys.executable, "-m", "symex.cli", "run", "--search", "bfs", "-D", "N=20",
                             "--output-dir", "out", branches], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # interrupted once exploring (its statistics file made), however loaded the machine is
    deadline = time.monotonic() + 300
    while not (tmp_path / "out" / "run.stats").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(2.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "stopped early: interrupted" in out and "Traceback" not in err
    explored = int(out.splitlines()[0].split()[2])
    assert explored > 0
    # every path has its test, but those the 5 s for making the halted paths' tests left over
    # (HALT_TESTS_GRACE), which the summary counts
    untested = re.search(r"(\d+) of them without a test", out)
    missing = int(untested.group(1)) if untested else 0
    assert len(list((tmp_path / "out").glob("*.ktest"))) == explored - missing
    assert "symex: interrupted; " in err and " are in out" in err


def test_the_process_ends_after_atexit_handlers_with_the_commands_status(tmp_path: Path) -> None:
    # the symex program skips Python's teardown of the heap at exit: what a library registered
    # with atexit still runs, after the command's own output, and the status is the command's
    script = ("import atexit, sys\n"
              "atexit.register(lambda: print('handler ran', flush=True))\n"
              "from symex.cli import command_process\n"
              "sys.argv = ['symex', *sys.argv[1:]]\n"
              "command_process()\n")
    proc = subprocess.run([sys.executable, "-c", script, "run", "--quiet", GET_SIGN],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "symex: explored 3 paths: 3 completed, 0 errors, 0 partial"
    assert lines[-1] == "handler ran"
    failing = subprocess.run([sys.executable, "-c", script, "run", "--quiet", "missing.c"],
                             capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert failing.returncode == 2 and "missing.c" in failing.stderr


def test_a_reader_that_stops_early_gets_no_traceback(tmp_path: Path) -> None:
    # `symex run prog.c | head -1`: the rest of the 4,096 tests' lines, more than a pipe holds, find it
    # closed; the run still ends with its status and nothing on stderr but its own lines
    program = str(ROOT / "tests/programs/branches.c")
    proc = subprocess.Popen([sys.executable, "-m", "symex.cli", "run", "-D", "N=12",
                             program], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # the reader goes away after one line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 0, err
    assert first.startswith(b"symex: explored 4096 paths")
    assert "Traceback" not in err and "Exception ignored" not in err, err


def test_test_lines_show_what_a_person_reads(tmp_path: Path) -> None:
    tokens = str(ROOT / "tests/programs/posix/tokens.c")
    proc = symex("run", tokens, "--sym-stdin", "3", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith("test")]
    # at most 50 test lines, then one line saying where the others are
    assert len(lines) == 50
    assert proc.stdout.splitlines()[-1].startswith("... and ")
    assert "more tests in symex-out-0" in proc.stdout.splitlines()[-1]
    # standard input as text, its stat object left out
    assert all("stdin-stat" not in line for line in lines)
    assert any('stdin="' in line for line in lines)


def test_quiet_prints_the_summary_only(tmp_path: Path) -> None:
    proc = symex("run", "-q", str(ROOT / "tests/programs/errors/div_zero.c"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert all(line.startswith("symex: ") for line in lines), lines
    assert lines[-1] == "symex: output directory: symex-out-0"
    assert proc.stderr == ""


@pytest.mark.parametrize("name, data, shown", [
    ("stdin", b"ab\n\0\0", r'stdin="ab\n"'),
    ("arg00", b'say "hi"\\\0', r'arg00="say \"hi\"\\"'),
    # --sym-arg 5 for "ss": a 6-byte buffer, text up to its NUL
    ("arg01", b"ss\0\0\0\0", 'arg01="ss"'),
    # an argument of 4 or 8 bytes is still text, not a number
    ("arg02", b"ab\0\0", 'arg02="ab"'),
    ("A-data", b"\x01\x02", "A-data=0102"),
    # an int holding 12345 is a number, though its bytes "90" are printable
    ("x", (12345).to_bytes(4, "little"), "x=12345"),
    ("x", (11).to_bytes(4, "little"), "x=11"),
    ("y", (-2).to_bytes(8, "little", signed=True), "y=-2"),
    ("h", (-300).to_bytes(2, "little", signed=True), "h=-300"),
    # large values get their bit pattern too
    ("a", bytes.fromhex("01000081"), "a=-2130706431 (0x81000001)"),
    ("n", (1 << 40).to_bytes(8, "little"), "n=1099511627776 (0x0000010000000000)"),
    ("c", b"\x07", "c=7"),
    ("c", b"A", "c=65 ('A')"),
    ("c", b"\xff", "c=-1"),
    ("name", b"hello\0\0\0\0\0", 'name="hello"'),
    ("mixed", b"ab\0c\0", "mixed=61620063 00".replace(" ", "")),
    ("big", bytes(range(40)), "big=000102030405060708090a0b0c0d0e0f... (40 bytes)"),
    ("empty", b"", "empty="),
    # a __VERIFIER_nondet_float/double result is the float it holds
    ("nondet_double", bytes.fromhex("0000000000000440"), "nondet_double=2.5"),
    ("nondet_float_2", bytes.fromhex("ffff7f3f"), "nondet_float_2=0.99999994"),
])
def test_objects_are_shown_as_numbers_text_or_cut_hex(name: str, data: bytes, shown: str) -> None:
    assert show_object(name, data) == shown


def test_counts_agree_with_their_nouns() -> None:
    assert counted(1, "path") == "1 path"
    assert counted(0, "path") == "0 paths"
    assert counted(2, "branch") == "2 branches"
    assert counted(1, "solver query", "solver queries") == "1 solver query"
    assert counted(3, "solver query", "solver queries") == "3 solver queries"
    assert share(7, 8, "line") == "87.5% (7 of 8 lines)"
    assert share(1, 1, "line") == "100.0% (1 of 1 line)"
    assert share(0, 0, "branch") == "none to cover (0 branches)"


def test_version_names_the_installed_release(tmp_path: Path) -> None:
    """``symex --version`` answers as every command-line tool does: one line, status 0, the
    release pip installed (its metadata, not a second copy of the number)."""
    from importlib.metadata import version
    proc = symex("--version", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"symex {version('symex')}"
