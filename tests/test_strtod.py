"""strtod, strtof and atof of symbolic strings (``runtime/libc/strtod.c``): a decimal number
in Clinger's fast path becomes a symbolic double the program branches on, every other form
is read by the host's strtod with the string fixed; either way a test case replays natively
with the same output, bit for bit, and the same exit status."""

from __future__ import annotations

import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

import symex
from symex.core.shortfalls import ShortfallKind
from symex.env.strtod import host_strtod
from symex.output.ktest import KTest, KTestObject
from symex.replay import build_native, replay_command_line, run_native
from symex.symargs import ArgvSpec

FLOATS = Path(__file__).parent / "programs" / "floats"
PARSE = FLOATS / "parse.c"
RUNTIME_STRTOD = Path(symex.__file__).parent / "runtime" / "libc" / "strtod.c"
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="native replay needs gcc")


def by_outcome(result: symex.Result) -> dict[int | None, list[bytes]]:
    """The argument strings of the tests, by exit status (parse.c's classification)."""
    found: dict[int | None, list[bytes]] = defaultdict(list)
    for test in result.tests:
        found[test.exit_code].append(test.objects["arg00"].split(b"\0")[0])
    return found


@needs_gcc
def test_symbolic_arguments_parse_into_numbers_that_replay_natively() -> None:
    words = ("--sym-arg", "3")
    result = symex.explore(symex.compile(PARSE), sym_args=ArgvSpec.parse(words), max_time=240)
    assert result.halted is None and result.paths.partial == 0
    found = by_outcome(result)
    # the branches on the double forked: each class has inputs, which a native run confirms
    assert set(found) == {0, 1, 2, 3, 4, 5, 6}, found.keys()
    assert all(a.lstrip()[:1] == b"-" for a in found[3])
    executable = build_native(PARSE)
    for test in result.tests:
        ktest = KTest(("parse.c", *words),
                      tuple(KTestObject(name, data) for name, data in test.objects.items()))
        args, first = replay_command_line(ktest)
        native = run_native(executable, ktest, args=args, first_object=first)
        assert (native.stdout.encode(), native.exit_code) == (test.stdout, test.exit_code), args
    # hexadecimal, inf and nan are the host's: the string was fixed, and the run says so
    fixed = [s for s in result.shortfalls
             if s.kind is ShortfallKind.CONCRETIZED and s.what == "string byte"]
    assert fixed and fixed[0].site == "parse.c:37"


def test_the_musl_build_takes_symex_strtod_and_stays_symbolic() -> None:
    """With musl, symex's strtod comes before musl's (whose long double arithmetic symex keeps
    concrete): ".5" and a negative number are still found by branching on the double."""
    program = symex.compile(PARSE, ["-DQUIET"], libc="musl")
    result = symex.explore(program, sym_args=ArgvSpec.parse(["--sym-arg", "2"]), max_time=240)
    found = by_outcome(result)
    assert b".5" in found[4]
    assert found[3] and all(a.lstrip()[:1] == b"-" for a in found[3])


@needs_gcc
def test_the_c_strtod_agrees_with_the_c_library_on_a_million_strings(tmp_path: Path) -> None:
    """symex's strtod.c built natively (names prefixed, the host fallback a call of the real
    strtod) against glibc's: the same bits, end and errno on every string, the fast path's
    as much as the fallback's (strtod_check.c)."""
    checker = tmp_path / "check"
    subprocess.run(["gcc", "-O1", "-w", "-Dstrtod=sx_strtod", "-Dstrtof=sx_strtof",
                    "-Datof=sx_atof", "-c", str(RUNTIME_STRTOD), "-o", str(tmp_path / "sx.o")],
                   check=True)
    subprocess.run(["gcc", "-O1", str(FLOATS / "strtod_check.c"), str(tmp_path / "sx.o"),
                    "-o", str(checker)], check=True)
    run = subprocess.run([str(checker), "1000000"], capture_output=True, text=True, check=False)
    assert (run.returncode, run.stdout) == (0, "1000000 strings agree\n")


@pytest.mark.parametrize(("text", "single", "expected"), [
    (b"0x1p-2", False, (0.25, 6, False)),
    (b"  -inf!", False, (float("-inf"), 6, False)),
    (b"1e400", False, (float("inf"), 5, True)),
    (b"1e-400", False, (0.0, 6, True)),
    (b"3.4028236e38", True, (float("inf"), 12, True)),
    (b"12345678901234567890123", False, (1.2345678901234568e22, 23, False)),
    (b"abc", False, (0.0, 0, False)),
])
def test_the_host_reading(text: bytes, single: bool, expected: tuple[float, int, bool]) -> None:
    assert host_strtod(text, single) == expected
