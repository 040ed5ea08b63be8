"""`symex ktest`: KLEE's ktest-tool output, byte for byte, run as a real subprocess."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest

from symex.output.ktest import KTest, KTestObject, write_ktest

CORPUS = Path("/work/shared/corpora/ktest")
KTEST_FILES = sorted(CORPUS.glob("*/*.ktest"))


def symex(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "symex.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


@pytest.mark.skipif(not KTEST_FILES, reason="KLEE ktest corpus not available")
@pytest.mark.parametrize("path", KTEST_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_output_matches_ktest_tool_byte_for_byte(path: Path) -> None:
    # ktest-tool was run in the file's directory with the bare file name
    proc = symex("ktest", path.name, cwd=path.parent)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == path.with_name(path.name + "-tool.txt").read_text()


@pytest.mark.skipif(not KTEST_FILES, reason="KLEE ktest corpus not available")
def test_several_files_are_printed_one_after_another() -> None:
    directory = CORPUS / "get_sign"
    names = ["test000001.ktest", "test000002.ktest", "test000003.ktest"]
    proc = symex("ktest", *names, cwd=directory)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "".join((directory / f"{n}-tool.txt").read_text() for n in names)


def test_every_representation_by_hand(tmp_path: Path) -> None:
    objects = tuple(KTestObject(f"o{i}", b"") for i in range(9)) + (
        KTestObject("byte", b"\xff"),                      # 1 byte: int -1, uint 255
        KTestObject("short", struct.pack("<h", -2)),        # 2 bytes
        KTestObject("long", struct.pack("<q", -(2**40))),   # 8 bytes
        KTestObject("three", b"a\x00~"),                   # 3 bytes: no int/uint lines
        KTestObject("padded", b"hi\x00\x00"),
    )
    path = tmp_path / "t.ktest"
    write_ktest(path, KTest(args=("prog", "-x"), objects=objects))
    proc = symex("ktest", str(path))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:3] == [f"ktest file : '{path}'", "args       : ['prog', '-x']", "num objects: 14"]
    # 14 objects: indices up to 13 are padded to two characters
    assert lines[3] == "object  0: name: 'o0'"
    assert "object  0: size: 0" in lines and "object  0: data: b''" in lines and "object  0: hex : 0x" in lines
    assert "object  0: int : 0" not in proc.stdout  # size 0 is not an integer size
    assert lines[lines.index("object  9: name: 'byte'"):][:7] == [
        "object  9: name: 'byte'", "object  9: size: 1", "object  9: data: b'\\xff'",
        "object  9: hex : 0xff", "object  9: int : -1", "object  9: uint: 255", "object  9: text: .",
    ]
    assert "object 10: int : -2" in lines and "object 10: uint: 65534" in lines
    assert f"object 11: int : {-(2**40)}" in lines and f"object 11: uint: {2**64 - 2**40}" in lines
    three = lines[lines.index("object 12: name: 'three'"):][:5]
    assert three == ["object 12: name: 'three'", "object 12: size: 3", "object 12: data: b'a\\x00~'",
                     "object 12: hex : 0x61007e", "object 12: text: a.~"]

    trimmed = symex("ktest", "--trim-zeros", str(path))
    assert "object 13: data: b'hi'" in trimmed.stdout.splitlines()
    assert "object 13: size: 4" in trimmed.stdout.splitlines()  # the size is the object's, untrimmed
    assert "object 13: int : 26984" in trimmed.stdout.splitlines()  # int of the whole 4 bytes


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"garbage", "not a .ktest file"),
        (b"KTEST\x00\x00\x00\x03", "truncated"),
        (b"KTEST" + struct.pack(">I", 7) + bytes(12), "unsupported .ktest version 7"),
    ],
)
def test_malformed_file_is_one_line_and_status_2(tmp_path: Path, content: bytes, message: str) -> None:
    good = tmp_path / "good.ktest"
    write_ktest(good, KTest(args=(), objects=()))
    bad = tmp_path / "bad.ktest"
    bad.write_bytes(content)
    proc = symex("ktest", str(good), str(bad))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1
    assert message in proc.stderr and "bad.ktest" in proc.stderr and "Traceback" not in proc.stderr


def test_missing_file_and_no_file(tmp_path: Path) -> None:
    proc = symex("ktest", str(tmp_path / "absent.ktest"))
    assert proc.returncode == 2 and "cannot read" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1
    proc = symex("ktest")
    assert proc.returncode == 2 and "give .ktest files" in proc.stderr


def test_an_output_directory_prints_every_test_in_order(tmp_path: Path) -> None:
    out = tmp_path / "symex-out-0"
    out.mkdir()
    for number in (2, 10, 1):
        write_ktest(out / f"test{number:06d}.ktest",
                    KTest(args=("prog",), objects=(KTestObject("n", bytes([number])),)))
    (out / "test000002.ptr.err").write_text("Error: out of bounds\n")
    (out / "info").write_text("not a test\n")
    proc = symex("ktest", str(out))
    assert proc.returncode == 0, proc.stderr
    one_by_one = "".join(
        symex("ktest", str(out / f"test{n:06d}.ktest")).stdout for n in (1, 2, 10))
    assert proc.stdout == one_by_one
    assert proc.stdout.count("ktest file : ") == 3
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = symex("ktest", str(empty))
    assert proc.returncode == 2 and "holds no .ktest files" in proc.stderr


def test_write_makes_a_seed_from_text_with_escapes(tmp_path: Path) -> None:
    out = tmp_path / "seed.ktest"
    proc = symex("ktest", "--write", str(out), "--object", "packet-0", r"set k 0 0 1\r\nv\r\n",
                 "--object", "packet-1", r"get \x6b\\\0")
    assert proc.returncode == 0, proc.stderr
    from symex.output.ktest import read_ktest
    written = read_ktest(out)
    assert [(o.name, o.data) for o in written.objects] == [
        ("packet-0", b"set k 0 0 1\r\nv\r\n"), ("packet-1", b"get k\\\0")]
    bad = symex("ktest", "--write", str(tmp_path / "bad.ktest"), "--object", "a", r"x\q")
    assert bad.returncode == 2 and "unknown escape \\q" in bad.stderr
    assert not (tmp_path / "bad.ktest").exists()
    nothing = symex("ktest", "--write", str(tmp_path / "empty.ktest"))
    assert nothing.returncode == 2 and "--object" in nothing.stderr
