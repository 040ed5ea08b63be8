"""Issue 6, part 4: ordinary C programs run with concrete input print under symex exactly what
their native gcc builds print.

Each program in tests/programs/ordinary (base64 decoding, CRC-32/Adler-32, sort of lines, a
calculator) and the POSIX tests' wc run on several inputs, empty and invalid ones among them:
symex's single path must have the native run's stdout, stderr and exit status. Some expected
outputs are also checked by hand (Python's zlib and base64, sorted(), arithmetic) so that a
bug shared by both builds cannot hide.
"""

from __future__ import annotations

import base64
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest

import symex
from symex.core.outcome import PathStatus

PROGRAMS = Path(__file__).parent / "programs"

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")


@pytest.fixture(scope="module")
def natives(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every program built once with gcc -Wall -Werror (they are meant to be warning-free)."""
    directory = tmp_path_factory.mktemp("native")
    built = {}
    for source in [*sorted((PROGRAMS / "ordinary").glob("*.c")), PROGRAMS / "posix" / "wc.c"]:
        executable = directory / source.stem
        subprocess.run(["gcc", "-Wall", "-Wextra", "-Werror", "-O0", "-o", str(executable),
                        str(source)], check=True)
        built[source.stem] = executable
    return built


def source_of(name: str) -> Path:
    return PROGRAMS / ("posix" if name == "wc" else "ordinary") / f"{name}.c"


def run_both(name: str, natives: dict[str, Path], stdin: bytes, args: list[str] | None = None,
             cwd: Path | None = None) -> tuple[symex.TestCase, subprocess.CompletedProcess[bytes]]:
    """The program under symex (one path) and natively, on the same stdin and arguments."""
    expected = subprocess.run([str(natives[name]), *(args or [])], input=stdin,
                              capture_output=True, cwd=cwd, check=False, timeout=30)
    program = symex.compile(source_of(name))
    # named as the program opens them, relative to the directory both runs are in
    host_files = [a for a in (args or []) if cwd is not None and (cwd / a).exists()]
    result = symex.explore(program, stdin=stdin, args=args, host_files=host_files or None)
    assert len(result.tests) == 1, [(t.status, t.reason) for t in result.tests]
    test = result.tests[0]
    assert test.status is PathStatus.COMPLETED, (test.reason, test.error)
    assert test.stdout == expected.stdout
    assert test.stderr == expected.stderr
    assert test.exit_code == expected.returncode
    return test, expected


# -- base64 -d ---------------------------------------------------------------------------------

BASE64_CASES = [
    (b"", b"", 0),
    (b"aGVsbG8gd29ybGQK\n", b"hello world\n", 0),
    (b"QQ==\n", b"A", 0),
    (b"QUI=", b"AB", 0),
    (base64.encodebytes(bytes(range(256))), bytes(range(256)), 0),
    (b"aGVs bG8*\n", b"hel", 1),    # '*' is not in the alphabet; the first quad was printed
    (b"QQ=A", b"", 1),              # data after padding
    (b"Q===", b"", 1),              # padding too early
    (b"QUJD\nRA", b"ABC", 1),       # truncated: a quad is incomplete at the end
]


@pytest.mark.parametrize(("text", "decoded", "status"), BASE64_CASES)
def test_base64_decode_matches_native(text: bytes, decoded: bytes, status: int,
                                      natives: dict[str, Path]) -> None:
    test, _ = run_both("base64d", natives, text)
    assert test.exit_code == status
    assert test.stdout == decoded
    assert test.stderr.startswith(b"base64: ") == (status == 1)


# -- CRC-32 and Adler-32 -----------------------------------------------------------------------

CHECKSUM_INPUTS = [b"", b"a", b"hello world\n", bytes(range(256)) * 3, b"\xff" * 1000]


@pytest.mark.parametrize("data", CHECKSUM_INPUTS, ids=lambda d: f"{len(d)}B")
def test_checksum_matches_native_and_zlib(data: bytes, natives: dict[str, Path]) -> None:
    test, _ = run_both("checksum", natives, data)
    assert test.stdout == (f"crc32 {zlib.crc32(data):08x} adler32 {zlib.adler32(data):08x} "
                           f"bytes {len(data)}\n").encode()


# -- sort --------------------------------------------------------------------------------------

SORT_INPUTS = [b"", b"one line without newline", b"pear\napple\nfig\napple\n",
               b"b\n\na\nB\n 1\n10\n9\n", b"\n\n\n"]


@pytest.mark.parametrize("text", SORT_INPUTS)
def test_sort_matches_native(text: bytes, natives: dict[str, Path]) -> None:
    test, _ = run_both("sortlines", natives, text)
    lines = text.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    assert test.stdout == b"".join(line + b"\n" for line in sorted(lines))


# -- calculator --------------------------------------------------------------------------------

CALC_CASES = [
    (b"", b"", 0),
    (b"3 + 4 * (2 - 1)\n", b"7\n", 0),
    (b"  -7 % 3\n100/7\n((1))\n\n2*-3", b"-1\n14\n1\n-6\n", 0),
    (b"1 +\n", b"", 1),                          # a number expected
    (b"8 / (4 - 4)\n5\n", b"5\n", 1),            # division by zero, next line still done
    (b"2 * (3\n4 4\nx\n", b"", 1),               # missing ), trailing garbage, no number
]


@pytest.mark.parametrize(("text", "printed", "status"), CALC_CASES)
def test_calculator_matches_native(text: bytes, printed: bytes, status: int,
                                   natives: dict[str, Path]) -> None:
    test, _ = run_both("calc", natives, text)
    assert (test.stdout, test.exit_code) == (printed, status)
    assert (test.stderr != b"") == (status == 1)


# -- wc (F's), and the file-name form of the programs ------------------------------------------

@pytest.mark.parametrize("text", [b"", b"\n", b"one two\tthree\nfour", b"\xff\x80 x\n"])
def test_wc_matches_native(text: bytes, natives: dict[str, Path]) -> None:
    run_both("wc", natives, text)


def test_programs_read_a_named_host_file(natives: dict[str, Path], tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "in.txt").write_bytes(b"zeta\nalpha\n1+2\n")
    monkeypatch.chdir(tmp_path)
    run_both("checksum", natives, b"ignored", ["in.txt"], tmp_path)
    sorted_test, _ = run_both("sortlines", natives, b"", ["in.txt"], tmp_path)
    assert sorted_test.stdout == b"1+2\nalpha\nzeta\n"
    calc_test, _ = run_both("calc", natives, b"", ["in.txt"], tmp_path)
    assert calc_test.exit_code == 1 and calc_test.stdout == b"3\n"


def test_missing_file_is_reported_as_natively(natives: dict[str, Path], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    test, _ = run_both("base64d", natives, b"", ["absent.b64"], tmp_path)
    assert test.exit_code == 1 and b"cannot open" in test.stderr
