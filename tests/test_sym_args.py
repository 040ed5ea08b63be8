"""Symbolic command-line arguments (``--sym-arg``, ``--sym-args``) as KLEE's POSIX runtime
makes them: object layout checked against real KLEE 3.2 tests, every test replayed natively.

Expected values come from the programs: a password check finds "hello"; an echo exits with
argc and prints its arguments; the KLEE corpus's argument strings are read off its bytes.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import symex
from symex.errors import ConfigError
from symex.output.ktest import KTest, read_ktest
from symex.replay import build_native, replay_command_line, run_native
from symex.symargs import ArgvSpec, SymArg, SymArgs, replay_argv

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "ktest" / "echo-posix"
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="native replay needs gcc")
needs_corpus = pytest.mark.skipif(
    not CORPUS.is_dir(), reason=f"KLEE's echo corpus ({CORPUS}) is not here: it lives outside "
                                f"the repository")

PASSWORD = r"""
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "hello") == 0) {
    puts("ok");
    return 1;
  }
  return 0;
}
"""

# an echo with -n (no newline), as the program of the KLEE corpus; exits with argc
ECHO = r"""
#include <stdio.h>
int main(int argc, char **argv) {
  int i = 1, newline = 1;
  if (argc > 1 && argv[1][0] == '-' && argv[1][1] == 'n' && argv[1][2] == 0) {
    newline = 0;
    i = 2;
  }
  for (int first = i; i < argc; i++) {
    if (i > first) putchar(' ');
    for (const char *p = argv[i]; *p; p++) putchar(*p);
  }
  if (newline) putchar('\n');
  return argc;
}
"""

# argv[1] symbolic (at most 3 characters), argv[2] the concrete "fixed"
MIXED = r"""
#include <string.h>
int main(int argc, char **argv) {
  if (argc != 3 || strcmp(argv[2], "fixed") != 0) return 99;
  if (argv[1][0] == 'x') return 10 + (int)strlen(argv[1]);
  return (int)strlen(argv[1]);
}
"""


def run_symex(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "symex.cli", *args], capture_output=True,
                          text=True, timeout=300)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def layout(ktest: KTest) -> list[tuple[str, int]]:
    return [(o.name, len(o.data)) for o in ktest.objects]


def c_string(data: bytes, max_len: int) -> bytes:
    """What the program sees: the bytes up to the first NUL, the last byte being NUL."""
    return data[:max_len].split(b"\0")[0]


# -- the value types and KLEE's syntax --------------------------------------------------


def test_parse_keeps_concrete_arguments_in_place() -> None:
    spec = ArgvSpec.parse(["a", "--sym-arg", "3", "b", "-sym-args", "0", "2", "4"])
    assert spec.items == ("a", SymArg(3), "b", SymArgs(0, 2, 4))
    assert spec.words() == ("a", "--sym-arg", "3", "b", "--sym-args", "0", "2", "4")
    assert spec.max_symbolic == 3


@pytest.mark.parametrize("words", [["--sym-arg", "-1"], ["--sym-arg"], ["--sym-args", "3", "1", "4"],
                                   ["--sym-args", "0", "0", "4"], ["--sym-args", "1", "2"],
                                   ["--sym-args", "0", "101", "1"]])
def test_bad_specs_are_config_errors(words: list[str]) -> None:
    with pytest.raises(ConfigError):
        ArgvSpec.parse(words)


@needs_corpus
def test_replay_argv_reads_the_klee_corpus() -> None:
    # KLEE 3.2, --sym-args 0 2 4: n_args, then argNN of 5 bytes whose 5th byte KLEE ignores
    cases = {"test000001.ktest": [], "test000002.ktest": [b""], "test000003.ktest": [b"-n"],
             "test001000.ktest": [b"-e", b"-nE\\"], "test001001.ktest": [b"-nen", b"\\t"]}
    for name, expected in cases.items():
        ktest = read_ktest(CORPUS / name)
        argv, used = replay_argv(ktest.args[1:], [(o.name, o.data) for o in ktest.objects])
        assert argv == expected, name
        assert used == len(ktest.objects)


def test_replay_argv_concrete_and_missing_objects() -> None:
    assert replay_argv(["x", "--sym-arg", "2", "y"], [("arg00", b"ab\0"), ("k", b"1234")]) == \
        ([b"x", b"ab", b"y"], 1)
    # no objects (a test without inputs): --sym-args gives MIN empty arguments
    assert replay_argv(["--sym-args", "1", "3", "2"], []) == ([b""], 0)
    # objects written by older KLEE versions end with model_version: consumed too
    assert replay_argv(["--sym-arg", "1"], [("arg00", b"a\0"), ("model_version", b"\1\0\0\0")]) \
        == ([b"a"], 2)


# -- the engine -----------------------------------------------------------------------


def test_objects_are_numbered_across_specs(tmp_path: Path) -> None:
    program = symex.compile(write(tmp_path, "count.c", "int main(int argc, char **argv) "
                                                       "{ return argc; }"))
    result = symex.explore(program, args=["c"], sym_args=[SymArg(1), SymArgs(1, 2, 2), "d"])
    # argv: name, "c", arg00, 1 or 2 arguments, "d": argc 5 or 6
    layouts = sorted((t.exit_code, [(k, len(v)) for k, v in t.objects.items()])
                     for t in result.tests)
    assert layouts == [(5, [("arg00", 2), ("n_args", 4), ("arg01", 3)]),
                       (6, [("arg00", 2), ("n_args", 4), ("arg01", 3), ("arg02", 3)])]


def test_echo_prints_its_symbolic_arguments(tmp_path: Path) -> None:
    program = symex.compile(write(tmp_path, "echo.c", ECHO))
    result = symex.explore(program, sym_args=[SymArgs(0, 2, 4)])
    assert {t.exit_code for t in result.tests} == {1, 2, 3}
    assert any(t.stdout == b"" for t in result.tests)  # "-n" alone
    for test in result.tests:
        n = int.from_bytes(test.objects["n_args"], "little")
        words = [c_string(test.objects[f"arg{k:02d}"], 4) for k in range(n)]
        assert test.exit_code == 1 + n
        if words and words[0] == b"-n":
            assert test.stdout == b" ".join(words[1:])
        else:
            assert test.stdout == b" ".join(words) + b"\n"


# -- the command line and native replay ---------------------------------------------------


@needs_gcc
def test_password_is_found_and_replays(tmp_path: Path) -> None:
    source = write(tmp_path, "password.c", PASSWORD)
    out = tmp_path / "out"
    done = run_symex("run", "-q", "--output-dir", str(out), str(source), "--sym-arg", "5")
    assert done.returncode == 0, done.stderr
    found = [p for p in sorted(out.glob("*.ktest"))
             if read_ktest(p).objects[0].data.startswith(b"hello\0")]
    assert found, "no test has the password"
    ktest = read_ktest(found[0])
    assert ktest.args == (str(source), "--sym-arg", "5")
    assert layout(ktest) == [("arg00", 6)]
    replayed = run_symex("replay", str(source), str(found[0]))
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout.startswith(f"{found[0].name}: exit 1\n")
    native = run_native(build_native(source), found[0], args=replay_command_line(ktest)[0])
    assert (native.exit_code, native.stdout) == (1, "ok\n")


@needs_gcc
@needs_corpus
def test_sym_args_layout_matches_klee_and_replays(tmp_path: Path) -> None:
    source = write(tmp_path, "echo.c", ECHO)
    out = tmp_path / "out"
    done = run_symex("run", "-q", "--output-dir", str(out), str(source), "--sym-args", "0", "2", "4")
    assert done.returncode == 0, done.stderr
    ours = [read_ktest(p) for p in sorted(out.glob("*.ktest"))]
    klee = {int.from_bytes(k.objects[0].data, "little"): k
            for k in map(read_ktest, sorted(CORPUS.glob("*.ktest")))}
    assert sorted(klee) == [0, 1, 2]
    counts = set()
    executable = build_native(source)
    for ktest in ours:
        assert ktest.args[1:] == klee[0].args[1:] == ("--sym-args", "0", "2", "4")
        n = int.from_bytes(ktest.objects[0].data, "little")
        counts.add(n)
        assert layout(ktest) == layout(klee[n])
        words = [c_string(o.data, 4) for o in ktest.objects[1:]]
        expected = b" ".join(words[1:]) if words[:1] == [b"-n"] else b" ".join(words) + b"\n"
        args, used = replay_command_line(ktest)
        assert (args, used) == (words, len(ktest.objects))
        native = run_native(executable, KTest(ktest.args, ktest.objects), args=args,
                            first_object=used)
        assert native.exit_code == 1 + n
        assert native.stdout.encode("utf-8", "surrogateescape") == expected or \
            native.stdout == expected.decode("utf-8", "replace")
    assert counts == {0, 1, 2}
    replayed = run_symex("replay", str(source), str(out))
    assert replayed.returncode == 0, replayed.stderr
    exits = sorted(int(line.rsplit(" ", 1)[1]) for line in replayed.stdout.splitlines()[:-1])
    assert exits == sorted(1 + int.from_bytes(k.objects[0].data, "little") for k in ours)


@needs_gcc
@pytest.mark.parametrize("placement", ["after", "before"])
def test_concrete_and_symbolic_arguments_mixed(tmp_path: Path, placement: str) -> None:
    source = write(tmp_path, "mixed.c", MIXED)
    out = tmp_path / "out"
    if placement == "after":  # KLEE's form: the spec among the program's arguments
        command = ["run", "-q", "--output-dir", str(out), str(source), "--", "--sym-arg", "3", "fixed"]
    else:  # symex's option form: the spec goes first, before the program's arguments
        command = ["run", "-q", "--output-dir", str(out), "--sym-arg", "3", str(source), "fixed"]
    done = run_symex(*command)
    assert done.returncode == 0, done.stderr
    tests = [(p, read_ktest(p)) for p in sorted(out.glob("*.ktest"))]
    # argv[1] of length 0..3, starting with 'x' or not: 0,1,2,3 and 11,12,13
    expected_exits = {0, 1, 2, 3, 11, 12, 13}
    seen = set()
    for path, ktest in tests:
        assert ktest.args == (str(source), "--sym-arg", "3", "fixed")
        assert layout(ktest) == [("arg00", 4)]
        word = c_string(ktest.objects[0].data, 3)
        exit_code = (10 if word[:1] == b"x" else 0) + len(word)
        seen.add(exit_code)
        replayed = run_symex("replay", str(source), str(path))
        assert replayed.stdout.startswith(f"{path.name}: exit {exit_code}\n"), replayed.stdout
    assert seen == expected_exits


@pytest.mark.parametrize("spec", [["--sym-arg", "-1"], ["--sym-args", "3", "1", "4"],
                                  ["--sym-arg", "x"], ["--sym-args", "0", "0", "2"]])
@pytest.mark.parametrize("placement", ["after", "before"])
def test_bad_values_are_one_line_exit_2(tmp_path: Path, spec: list[str], placement: str) -> None:
    source = write(tmp_path, "password.c", PASSWORD)
    out = tmp_path / "out"
    if placement == "after":
        command = ["run", "-q", "--output-dir", str(out), str(source), *spec]
    else:
        command = ["run", "-q", "--output-dir", str(out), *spec, str(source)]
    done = run_symex(*command)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not out.exists()


@needs_gcc
def test_inputs_after_the_arguments_replay_from_the_right_object(tmp_path: Path) -> None:
    # the program's own klee_int comes after arg00: natively it must get k, not arg00's bytes
    source = write(tmp_path, "after.c", "#include <klee/klee.h>\n#include <string.h>\n"
                   "int main(int argc, char **argv) {\n  int k = klee_int(\"k\");\n"
                   "  if (k < 0 || k > 50) return 0;\n  return k + (int)strlen(argv[1]);\n}\n")
    out = tmp_path / "out"
    done = run_symex("run", "-q", "--output-dir", str(out), str(source), "--sym-arg", "2")
    assert done.returncode == 0, done.stderr
    for path in sorted(out.glob("*.ktest")):
        ktest = read_ktest(path)
        assert [o.name for o in ktest.objects] == ["arg00", "k"]
        k = int.from_bytes(ktest.objects[1].data, "little", signed=True)
        expected = k + len(c_string(ktest.objects[0].data, 2)) if 0 <= k <= 50 else 0
        replayed = run_symex("replay", str(source), str(path))
        assert replayed.stdout.startswith(f"{path.name}: exit {expected}\n"), replayed.stdout
