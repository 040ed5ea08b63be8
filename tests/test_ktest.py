"""Tests of symex.output.ktest against real KLEE test cases and the documented byte layout."""

from __future__ import annotations

import ast
import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from symex.errors import SymexError
from symex.output.ktest import KTest, KTestError, KTestObject, read_ktest, write_ktest

CORPUS = Path("/work/shared/corpora/ktest")
KTEST_FILES = sorted(CORPUS.glob("*/*.ktest"))


def _parse_ktest_tool(text: str) -> tuple[list[str], list[tuple[str, int, bytes]]]:
    """Args and (name, size, data) per object, as printed by KLEE's ktest-tool."""
    args: list[str] = []
    objects: dict[int, dict[str, object]] = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "args":
            args = ast.literal_eval(value)
        elif key.startswith("object "):
            index = int(key.split()[1])
            field, _, rest = value.partition(":")
            objects.setdefault(index, {})[field.strip()] = rest.strip()
    result = []
    for index in sorted(objects):
        fields = objects[index]
        result.append(
            (
                ast.literal_eval(str(fields["name"])),
                int(str(fields["size"])),
                ast.literal_eval(str(fields["data"])),
            )
        )
    return args, result


@pytest.mark.skipif(not KTEST_FILES, reason="KLEE ktest corpus not available")
@pytest.mark.parametrize("path", KTEST_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_real_klee_files_match_ktest_tool(path: Path) -> None:
    expected_args, expected_objects = _parse_ktest_tool(path.with_name(path.name + "-tool.txt").read_text())
    ktest = read_ktest(path)
    assert list(ktest.args) == expected_args
    assert [(o.name, len(o.data), o.data) for o in ktest.objects] == expected_objects
    # byte-compatible: re-serialising yields exactly KLEE's file
    assert ktest.to_bytes() == path.read_bytes()


def test_layout_of_written_bytes() -> None:
    ktest = KTest(args=("prog",), objects=(KTestObject("x", b"\x01\x02"),), sym_argvs=1, sym_argv_len=8)
    expected = (
        b"KTEST"
        + b"\x00\x00\x00\x03"  # version 3
        + b"\x00\x00\x00\x01" + b"\x00\x00\x00\x04" + b"prog"
        + b"\x00\x00\x00\x01" + b"\x00\x00\x00\x08"  # symArgvs, symArgvLen
        + b"\x00\x00\x00\x01"
        + b"\x00\x00\x00\x01" + b"x" + b"\x00\x00\x00\x02" + b"\x01\x02"
    )
    assert ktest.to_bytes() == expected
    assert KTest.from_bytes(expected) == ktest


def test_legacy_bout_version1_has_no_symargv_fields() -> None:
    data = (
        b"BOUT\n" + struct.pack(">I", 1)
        + struct.pack(">I", 0)
        + struct.pack(">I", 1) + struct.pack(">I", 1) + b"a" + struct.pack(">I", 4) + b"\x07\x00\x00\x00"
    )
    ktest = KTest.from_bytes(data)
    assert ktest == KTest(args=(), objects=(KTestObject("a", b"\x07\x00\x00\x00"),))


text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)


@given(
    args=st.lists(text, max_size=4),
    objects=st.lists(st.tuples(text, st.binary(max_size=40)), max_size=5),
    sym_argvs=st.integers(0, 2**32 - 1),
    sym_argv_len=st.integers(0, 2**32 - 1),
)
def test_round_trip(args: list[str], objects: list[tuple[str, bytes]], sym_argvs: int, sym_argv_len: int) -> None:
    ktest = KTest(
        args=tuple(args),
        objects=tuple(KTestObject(n, d) for n, d in objects),
        sym_argvs=sym_argvs,
        sym_argv_len=sym_argv_len,
    )
    assert KTest.from_bytes(ktest.to_bytes()) == ktest


def test_non_utf8_names_round_trip() -> None:
    raw = b"KTEST" + struct.pack(">III", 3, 0, 0) + struct.pack(">III", 0, 1, 2) + b"\xff\xfe" + struct.pack(">I", 0)
    assert KTest.from_bytes(raw).to_bytes() == raw


def test_file_round_trip(tmp_path: Path) -> None:
    ktest = KTest(args=("a.out", "-v"), objects=(KTestObject("buf", bytes(range(16))), KTestObject("n", b"")))
    target = tmp_path / "t.ktest"
    write_ktest(target, ktest)
    assert read_ktest(target) == ktest
    write_ktest(target, KTest(args=(), objects=()))
    assert read_ktest(target) == KTest(args=(), objects=())
    assert [p.name for p in tmp_path.iterdir()] == ["t.ktest"]


@pytest.mark.skipif(not KTEST_FILES, reason="KLEE ktest corpus not available")
def test_every_truncation_is_rejected() -> None:
    data = KTEST_FILES[-1].read_bytes()
    for cut in range(len(data)):
        with pytest.raises(KTestError):
            KTest.from_bytes(data[:cut])


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"garbage that is not a ktest file",
        b"KTEST" + struct.pack(">I", 99) + bytes(12),  # unknown version
        b"KTEST" + struct.pack(">I", 0) + bytes(12),  # version 0 never existed
        b"KTEST" + struct.pack(">III", 3, 0xFFFFFFFF, 0),  # absurd argument count
        b"KTEST" + struct.pack(">IIIII", 3, 0, 0, 0, 0xFFFFFFFF),  # absurd object count
        b"KTEST" + struct.pack(">IIIII", 3, 0, 0, 0, 0) + b"extra",  # trailing bytes
    ],
)
def test_garbage_is_rejected(data: bytes) -> None:
    with pytest.raises(KTestError):
        KTest.from_bytes(data)


def test_error_type_and_missing_file(tmp_path: Path) -> None:
    assert issubclass(KTestError, SymexError)
    with pytest.raises(KTestError, match="cannot read"):
        read_ktest(tmp_path / "missing.ktest")
    bad = tmp_path / "bad.ktest"
    bad.write_bytes(b"KTEST\x00")
    with pytest.raises(KTestError, match="bad.ktest"):
        read_ktest(bad)


def _read_ktest_independently(data: bytes) -> tuple[list[bytes], list[tuple[bytes, bytes]]]:
    """A reader written from the format description alone (not from symex.output.ktest): magic, version,
    args, symArgvs/symArgvLen from version 2 on, objects; big-endian 32-bit integers."""
    assert data[:5] in (b"KTEST", b"BOUT\n")
    pos = 5

    def u32() -> int:
        nonlocal pos
        (value,) = struct.unpack_from(">I", data, pos)
        pos += 4
        return value

    def chunk() -> bytes:
        nonlocal pos
        size = u32()
        piece = data[pos : pos + size]
        assert len(piece) == size
        pos += size
        return piece

    version = u32()
    args = [chunk() for _ in range(u32())]
    if version >= 2:
        u32(), u32()
    objects = []
    for _ in range(u32()):
        name = chunk()
        objects.append((name, chunk()))
    assert pos == len(data)
    return args, objects


def test_written_files_are_read_by_an_independent_reader(tmp_path: Path) -> None:
    ktest = KTest(
        args=("/tmp/prog", "--flag", ""),
        objects=(KTestObject("nondet_int", b"\x2a\x00\x00\x00"), KTestObject("buf", bytes(range(200))),
                 KTestObject("empty", b""), KTestObject("nondet_int_1", b"\xff\xff\xff\xff")),
    )
    path = tmp_path / "test000001.ktest"
    write_ktest(path, ktest)
    args, objects = _read_ktest_independently(path.read_bytes())
    assert args == [b"/tmp/prog", b"--flag", b""]
    assert objects == [(b"nondet_int", b"*\x00\x00\x00"), (b"buf", bytes(range(200))), (b"empty", b""),
                       (b"nondet_int_1", b"\xff" * 4)]
