"""The POSIX model: files, standard input and output, the system calls and stdio over them
(env/posix.py, runtime/libc/unistd.c and stdio.c), symbolic files and stdin, native replay.

Concrete programs are compared with the same source built by gcc and run natively on the same
input in the same kind of directory; symbolic runs are checked against what the program's
branches make reachable.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import symex
from symex.core.outcome import PathStatus
from symex.errors import ConfigError
from symex.output.ktest import KTest, KTestObject, read_ktest
from symex.replay import build_native, replay_command_line, replay_environment, run_native
from symex.symargs import ArgvSpec, SymArg, SymFiles, SymStdin, SymStdout, replay_argv
from c_programs import COMPILERS, needs_gcc

PROGRAMS = Path(__file__).parent / "programs" / "posix"




def native(name: str, directory: Path, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    """Build ``name`` with gcc and run it in ``directory`` with ``stdin``."""
    executable = directory / (Path(name).stem + ".native")
    subprocess.run(["gcc", "-O0", "-o", str(executable), str(PROGRAMS / name)], check=True)
    return subprocess.run([str(executable)], input=stdin, capture_output=True, cwd=directory,
                          check=False, timeout=30)


def as_ktest(test: symex.TestCase, *args: str) -> KTest:
    """A test case as the .ktest symex writes for it: ``args`` (program, then its options in
    KLEE's syntax) and the test's objects."""
    return KTest(args, tuple(KTestObject(name, data) for name, data in test.objects.items()))


def only_test(result: symex.Result) -> symex.TestCase:
    assert len(result.tests) == 1, [t.reason for t in result.tests]
    return result.tests[0]


# -- concrete runs print what the native build prints ------------------------------------------

WC_INPUTS = [b"", b"one", b"hello world\nfoo  bar baz\n\nx", b"  \t\n\n  lead and trail  \n",
             bytes(range(1, 128))]


@needs_gcc
@pytest.mark.parametrize("text", WC_INPUTS)
def test_wc_on_concrete_stdin_prints_what_native_wc_prints(text: bytes, tmp_path: Path) -> None:
    program = symex.compile(PROGRAMS / "wc.c")
    test = only_test(symex.explore(program, stdin=text))
    expected = native("wc.c", tmp_path, text)
    assert test.status is PathStatus.COMPLETED and test.exit_code == 0
    assert test.stdout == expected.stdout
    # the counts by hand for the third input: 3 newlines, 6 words, 27 characters
    if text.startswith(b"hello"):
        assert test.stdout.split() == [b"3", b"6", b"27"]


@needs_gcc
@pytest.mark.parametrize("compiler", COMPILERS)
def test_stdio_program_prints_what_native_build_prints(compiler: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMEX_CC", compiler)
    text = b"alpha\nbeta gamma\n\nlast"
    expected = native("stdio_ops.c", tmp_path, text)
    assert expected.returncode == 0
    program = symex.compile(PROGRAMS / "stdio_ops.c")
    test = only_test(symex.explore(program, stdin=text))
    assert test.exit_code == 0
    assert test.stdout == expected.stdout
    assert test.stderr == expected.stderr == b"done\n"
    assert b"4 lines\n" in test.stdout and b"longest line 14\n" in test.stdout


@needs_gcc
@pytest.mark.parametrize("compiler", COMPILERS)
def test_every_system_call_returns_what_linux_returns(compiler: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMEX_CC", compiler)
    (tmp_path / "data.txt").write_bytes(b"0123456789\n")
    expected = native("syscalls.c", tmp_path)
    assert expected.returncode == 0
    monkeypatch.chdir(tmp_path)
    program = symex.compile(PROGRAMS / "syscalls.c")
    test = only_test(symex.explore(program, host_files=["data.txt"]))
    assert test.exit_code == 0
    assert test.stdout.decode() == expected.stdout.decode()
    assert test.stderr == expected.stderr == b"to stderr\n"
    # the host file is untouched and nothing the program created reached the host
    assert (tmp_path / "data.txt").read_bytes() == b"0123456789\n"
    assert not (tmp_path / "out.txt").exists()


def test_host_files_are_only_visible_when_named(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "data.txt").write_bytes(b"0123456789\n")
    monkeypatch.chdir(tmp_path)
    program = symex.compile(PROGRAMS / "syscalls.c")
    test = only_test(symex.explore(program))
    assert test.stdout == b"open data.txt >= 3: 0\n"
    # read(-1, ...) returned -1 and the program wrote buf[-1]: its own bug, found
    assert test.status is PathStatus.ERROR and test.error.kind.value == "ptr"


def test_missing_host_file_is_one_config_error(tmp_path: Path) -> None:
    program = symex.compile(PROGRAMS / "wc.c")
    with pytest.raises(ConfigError, match="host file"):
        symex.explore(program, host_files=[tmp_path / "absent"])


def test_time_pid_and_cwd_are_fixed() -> None:
    program = symex.compile(PROGRAMS / "fixed.c")
    test = only_test(symex.explore(program))
    assert test.stdout == (b"time 1577836800 1577836800\npid 42\ncwd /\n"
                           b"small buffer NULL\n")


def test_no_stdin_given_is_end_of_file() -> None:
    program = symex.compile(PROGRAMS / "wc.c")
    assert only_test(symex.explore(program)).stdout.split() == [b"0", b"0", b"0"]


# -- symbolic files and stdin -------------------------------------------------------------------

def test_symbolic_file_read_with_fgets_reaches_the_abort() -> None:
    program = symex.compile(PROGRAMS / "boom_file.c")
    result = symex.explore(program, sym_files=(1, 16))
    aborts = [t for t in result.tests if t.status is PathStatus.ERROR]
    assert len(aborts) == 1
    assert aborts[0].error.kind.value == "abort"
    assert list(aborts[0].objects) == ["A-data", "A-data-stat"]
    assert aborts[0].objects["A-data"].startswith(b"boom\n")
    assert len(aborts[0].objects["A-data"]) == 16 and len(aborts[0].objects["A-data-stat"]) == 144
    # other paths: a first line that is not "boom\n"
    assert all(not t.objects["A-data"].startswith(b"boom\n") for t in result.tests
               if t.status is PathStatus.COMPLETED)


def test_read_lseek_fstat_on_a_symbolic_file() -> None:
    program = symex.compile(PROGRAMS / "symfile_stat.c")
    result = symex.explore(program, sym_files=(1, 8))
    by_exit = {t.exit_code: t.objects["A-data"] for t in result.tests}
    # fstat gives size 8 and lseek/read reach the last two bytes: returns 1..4 are unreachable
    assert set(by_exit) == {0, 10, 11}
    assert by_exit[10][6:] == b"xy" and by_exit[10][0:1] == b"!"
    assert by_exit[11][6:] == b"xy" and by_exit[11][0:1] != b"!"
    assert by_exit[0][6:] != b"xy"



STAT_TIMES = r"""
#include <stdio.h>
#include <sys/stat.h>
int main(void) {
  struct stat st;
  if (stat("A", &st) != 0)
    return 2;
  /* no kernel gives a time a second of nanoseconds or more (gnulib's utimens checks) */
  if (st.st_atim.tv_nsec >= 1000000000 || st.st_mtim.tv_nsec < 0 || st.st_ctim.tv_nsec >= 1000000000)
    return 1;
  if (st.st_mtim.tv_nsec == 999999999)
    return 3;
  return 0;
}
"""


@pytest.mark.parametrize("libc", ["symex", "musl"])
def test_a_symbolic_files_times_have_nanoseconds_below_a_second(tmp_path: Path, libc: str) -> None:
    source = tmp_path / "times.c"
    source.write_text(STAT_TIMES)
    result = symex.explore(symex.compile(source, libc=libc), sym_files=(1, 8))
    assert {t.exit_code for t in result.tests} == {0, 3}  # symbolic still, but never 1

TOKEN_KINDS = {b"NUMBER", b"IDENT", b"OP", b"PAREN", b"ERROR", b"END"}


def test_tokenizer_on_symbolic_stdin_covers_every_token_kind() -> None:
    program = symex.compile(PROGRAMS / "tokens.c")
    result = symex.explore(program, sym_stdin=8, max_time=8)
    seen = set()
    for test in result.tests:
        seen |= set(test.stdout.split())
        assert list(test.objects) == ["stdin", "stdin-stat"]
    assert seen == TOKEN_KINDS
    assert result.coverage.percent == 100.0


def test_sym_stdin_among_the_arguments_as_klee_writes_it() -> None:
    program = symex.compile(PROGRAMS / "wc.c")
    result = symex.explore(program, sym_args=ArgvSpec.parse(["--sym-stdin", "2"]))
    outputs = {t.stdout.split()[0] + b" " + t.stdout.split()[1] for t in result.tests}
    # two bytes: 0-2 newlines, 0-1 words (a word needs a non-space byte)
    assert {b"0 0", b"1 0", b"2 0", b"0 1", b"1 1"} <= outputs
    assert all(len(t.objects["stdin"]) == 2 for t in result.tests)


def test_stdin_and_sym_stdin_together_are_refused() -> None:
    program = symex.compile(PROGRAMS / "wc.c")
    with pytest.raises(ConfigError, match="stdin"):
        symex.explore(program, stdin=b"x", sym_stdin=3)


# -- KLEE's syntax ------------------------------------------------------------------------------

def test_argv_spec_reads_and_writes_the_environment_options() -> None:
    words = ["x", "--sym-arg", "3", "--sym-files", "2", "10", "-sym-stdin", "4", "--sym-stdout"]
    spec = ArgvSpec.parse(words)
    assert spec.items == ("x", SymArg(3), SymFiles(2, 10), SymStdin(4), SymStdout())
    assert spec.words() == ("x", "--sym-arg", "3", "--sym-files", "2", "10", "--sym-stdin", "4",
                            "--sym-stdout")
    assert spec.sym_files == SymFiles(2, 10) and spec.sym_stdin == SymStdin(4)
    assert spec.max_symbolic == 1


@pytest.mark.parametrize("words", [["--sym-files", "1"], ["--sym-files", "a", "2"],
                                   ["--sym-stdin"], ["--sym-stdin", "-1"], ["--sym-files", "27", "1"]])
def test_bad_environment_options_are_config_errors(words: list[str]) -> None:
    with pytest.raises(ConfigError):
        ArgvSpec.parse(words)


def test_replay_argv_skips_the_environment_objects() -> None:
    objects = [("arg00", b"ab\0"), ("A-data", b"xyz"), ("A-data-stat", bytes(144)),
               ("stdin", b"in"), ("stdin-stat", bytes(144)), ("model_version", b"\1\0\0\0"),
               ("own", b"\7")]
    argv, used = replay_argv(["--sym-arg", "2", "--sym-files", "1", "3", "--sym-stdin", "2"],
                             objects)
    assert argv == [b"ab"]
    assert used == 6


# -- native replay ------------------------------------------------------------------------------

def run_symex(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "symex.cli", *args], capture_output=True,
                          text=True, timeout=300)


@needs_gcc
def test_symbolic_file_test_replays_natively_and_aborts_the_same_way(tmp_path: Path) -> None:
    source = PROGRAMS / "boom_file.c"
    out = tmp_path / "out"
    done = run_symex("run", "-q", "--output-dir", str(out), str(source), "--sym-files", "1", "16")
    assert done.returncode == 0, done.stderr
    errors = sorted(out.glob("*.abort.err"))
    assert len(errors) == 1
    ktest_path = out / (errors[0].name.split(".")[0] + ".ktest")
    ktest = read_ktest(ktest_path)
    assert ktest.args == (str(source), "--sym-files", "1", "16")
    assert [(o.name, len(o.data)) for o in ktest.objects] == [("A-data", 16), ("A-data-stat", 144)]
    replayed = run_symex("replay", str(source), str(ktest_path))
    assert replayed.returncode == 0, replayed.stderr
    assert "1 of 1 error reproduced" in replayed.stdout
    # and a clean test: the file exists natively with the test's bytes
    executable = build_native(source)
    for path in sorted(out.glob("*.ktest"))[:10]:
        clean = read_ktest(path)
        data = clean.objects[0].data
        if data.startswith(b"boom\n") or b"\n" not in data and b"\0" in data:
            continue
        outcome = run_native(executable, path, environment=replay_environment(clean))
        assert (outcome.exit_code, outcome.stdout) == (0, "ok\n"), data


@needs_gcc
def test_symbolic_stdin_tests_replay_with_the_same_output() -> None:
    source = PROGRAMS / "tokens.c"
    result = symex.explore(symex.compile(source), sym_stdin=3)
    executable = build_native(source)
    assert len(result.tests) > 20
    for test in result.tests:
        ktest = as_ktest(test, "tokens.c", "--sym-stdin", "3")
        args, first = replay_command_line(ktest)
        assert (args, first) == ([], 2)
        environment = replay_environment(ktest)
        assert environment.stdin == test.objects["stdin"] and environment.files == ()
        outcome = run_native(executable, ktest, environment=environment, first_object=first)
        assert outcome.stdout.encode() == test.stdout, test.objects["stdin"]


@needs_gcc
@pytest.mark.parametrize("libc", ["symex", "musl"])
def test_a_symbolic_argument_may_name_the_symbolic_file(libc: str) -> None:
    """open(argv[1]) with a symbolic argument: paths where it names A (as KLEE's runtime
    forks on it), one where it names the working directory (it opens; its read fails), one
    where it names no file; each replays natively with the same exit."""
    source = PROGRAMS / "open_named.c"
    words = ("--sym-args", "1", "1", "2", "--sym-files", "1", "4")
    result = symex.explore(symex.compile(source, libc=libc), sym_args=ArgvSpec.parse(words))
    assert result.paths.completed == 4 and result.paths.errors == 0
    by_name = {(t.objects["arg00"].split(b"\0")[0], t.exit_code): t for t in result.tests}
    assert set(by_name) == {(b"A", 1), (b"A", 0), (b".", 0)} | {k for k in by_name if k[1] == 2}
    assert by_name[b"A", 1].objects["A-data"][:1] == b"x"
    assert by_name[b"A", 0].objects["A-data"][:1] != b"x"
    no_file = [name for name, status in by_name if status == 2]
    assert len(no_file) == 1 and no_file[0] not in (b"A", b".")
    executable = build_native(source)
    for test in result.tests:
        ktest = as_ktest(test, source.name, *words)
        args, first = replay_command_line(ktest)
        outcome = run_native(executable, ktest, args=args, environment=replay_environment(ktest),
                             first_object=first)
        assert outcome.exit_code == test.exit_code, test.objects


@needs_gcc
def test_the_working_directory_reads_as_a_directory() -> None:
    """fopen(".") succeeds and its read fails with EISDIR, fopen(".", "w") fails, readdir
    lists ".", ".." and A: what the native build prints in a directory holding A."""
    source = PROGRAMS / "directory.c"
    result = symex.explore(symex.compile(source, libc="musl"), sym_files=(1, 2))
    test = only_test(result)
    assert test.stdout == b"read: EISDIR\nwrite: EISDIR\ndots 2 A 1 others 0\n"
    ktest = as_ktest(test, source.name, "--sym-files", "1", "2")
    outcome = run_native(build_native(source), ktest, environment=replay_environment(ktest))
    assert outcome.stdout.encode() == test.stdout


@needs_gcc
def test_the_user_database_holds_root() -> None:
    """getpwnam with a symbolic name finds root, the one user of the model's /etc/passwd, and
    the test replays natively (root is uid 0, group root, on every Linux)."""
    source = PROGRAMS / "users.c"
    words = ("--sym-args", "1", "1", "5")
    result = symex.explore(symex.compile(source, libc="musl"), sym_args=ArgvSpec.parse(words))
    found = [t for t in result.tests if t.exit_code == 0]
    assert len(found) == 1 and result.paths.errors == 0
    (test,) = found
    assert test.objects["arg00"].split(b"\0")[0] == b"root"
    assert test.stdout == b"root 0 root\n"
    ktest = as_ktest(test, source.name, *words)
    args, first = replay_command_line(ktest)
    outcome = run_native(build_native(source), ktest, args=args, first_object=first)
    assert outcome.stdout.encode() == test.stdout


def test_sym_stdin_before_the_program_on_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = run_symex("run", "-q", "--output-dir", str(out), "--sym-stdin", "1",
                     str(PROGRAMS / "wc.c"))
    assert done.returncode == 0, done.stderr
    tests = [read_ktest(p) for p in sorted(out.glob("*.ktest"))]
    # one byte: a newline, another space, or a word character
    assert len(tests) == 3
    assert all(t.args[1:] == ("--sym-stdin", "1") for t in tests)
    assert all([o.name for o in t.objects] == ["stdin", "stdin-stat"] for t in tests)
    bad = run_symex("run", "-q", "--output-dir", str(tmp_path / "bad"), "--sym-files", "1",
                    str(PROGRAMS / "wc.c"))
    assert bad.returncode == 2 and "--sym-files" in bad.stderr


@needs_gcc
def test_read_ahead_keeps_stream_positions_as_native(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # stdio reads ahead into the FILE: ftell, fseek(SEEK_CUR), ungetc, a write after reads,
    # and getchar followed by fread on stdin must all see the stream's own position
    monkeypatch.chdir(tmp_path)
    text = b"xyz0123456789"
    expected = native("read_ahead.c", tmp_path, text)
    assert expected.returncode == 0, expected.stderr
    assert b"now: abcXefgh\n" in expected.stdout
    program = symex.compile(PROGRAMS / "read_ahead.c")
    test = only_test(symex.explore(program, stdin=text))
    assert test.exit_code == 0
    assert test.stdout == expected.stdout
