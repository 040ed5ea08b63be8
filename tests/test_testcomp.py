"""Test-Comp test suites written from a real exploration, checked as XML, by reasoning about the
program, and by running the values on a native build that reads them like Test-Comp's harness."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import symex
from symex.core.outcome import PathStatus, TestCase
from symex.errors import SymexError
from symex.output.testcomp import COVER_BRANCHES, TestCompWriter, nondet_inputs, render_nondet

PROGRAM = r"""
extern int __VERIFIER_nondet_int(void);
extern unsigned char __VERIFIER_nondet_uchar(void);
extern char __VERIFIER_nondet_char(void);
extern _Bool __VERIFIER_nondet_bool(void);
extern long __VERIFIER_nondet_long(void);
extern unsigned int __VERIFIER_nondet_uint(void);
extern void reach_error(void);
int main(void) {
  int a = __VERIFIER_nondet_int();
  unsigned char c = __VERIFIER_nondet_uchar();
  char s = __VERIFIER_nondet_char();
  _Bool b = __VERIFIER_nondet_bool();
  long l = __VERIFIER_nondet_long();
  unsigned int u = __VERIFIER_nondet_uint();
  if (a == -5 && c == 200 && s == -3 && b && l == -4000000000L && u == 4000000000u)
    reach_error();
  return 0;
}
"""

# Test-Comp's harness reads one value per __VERIFIER_nondet_* call, in call order, as a
# decimal number. This one does the same from the file named by $INPUTS.
HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
static FILE *inputs;
static unsigned long long next_input(int is_signed) {
  char token[64];
  if (!inputs) inputs = fopen(getenv("INPUTS"), "r");
  if (!inputs || fscanf(inputs, "%63s", token) != 1) { fprintf(stderr, "missing input\n"); exit(99); }
  return is_signed ? (unsigned long long)strtoll(token, 0, 10) : strtoull(token, 0, 10);
}
int __VERIFIER_nondet_int(void) { return (int)next_input(1); }
unsigned char __VERIFIER_nondet_uchar(void) { return (unsigned char)next_input(0); }
char __VERIFIER_nondet_char(void) { return (char)next_input(1); }
_Bool __VERIFIER_nondet_bool(void) { return next_input(0) != 0; }
long __VERIFIER_nondet_long(void) { return (long)next_input(1); }
unsigned int __VERIFIER_nondet_uint(void) { return (unsigned int)next_input(0); }
void reach_error(void) { printf("reach_error\n"); exit(17); }
"""

DOCTYPE_TESTCASE = ('<!DOCTYPE testcase PUBLIC "+//IDN sosy-lab.org//DTD test-format testcase 1.1//EN" '
                    '"https://sosy-lab.org/test-format/testcase-1.1.dtd">')
DOCTYPE_METADATA = ('<!DOCTYPE test-metadata PUBLIC "+//IDN sosy-lab.org//DTD test-format test-metadata 1.1//EN" '
                    '"https://sosy-lab.org/test-format/test-metadata-1.1.dtd">')
# test-metadata-1.1.dtd: the children of <test-metadata>, in this order (inputtestsuitefile optional)
METADATA_CHILDREN = ["sourcecodelang", "producer", "specification", "programfile", "programhash",
                     "entryfunction", "architecture", "creationtime"]


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[TestCase]]:
    root = tmp_path_factory.mktemp("testcomp")
    source = root / "nondet.c"
    source.write_text(PROGRAM)
    result = symex.explore(symex.compile(source), searcher="dfs", max_time=120)
    writer = TestCompWriter(root / "suite", source)
    for test in result.tests:
        writer.add(test)
    writer.close()
    return source, root / "suite", list(result.tests)


def _inputs(path: Path) -> tuple[ET.Element, list[str]]:
    root = ET.parse(path).getroot()
    return root, [child.text or "" for child in root]


def test_metadata_follows_the_dtd(suite: tuple[Path, Path, list[TestCase]]) -> None:
    source, directory, _ = suite
    text = (directory / "metadata.xml").read_text()
    lines = text.splitlines()
    assert lines[0] == '<?xml version="1.0" encoding="UTF-8" standalone="no"?>'
    assert lines[1] == DOCTYPE_METADATA
    root = ET.fromstring(text.encode())
    assert root.tag == "test-metadata" and not root.attrib
    assert [child.tag for child in root] == METADATA_CHILDREN
    values = {child.tag: child.text for child in root}
    assert values["sourcecodelang"] == "C" and values["producer"] == "symex"
    assert values["specification"] == COVER_BRANCHES
    assert values["programfile"] == os.fspath(source)
    assert values["programhash"] == hashlib.sha256(source.read_bytes()).hexdigest()
    assert values["entryfunction"] == "main" and values["architecture"] == "64bit"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", values["creationtime"] or "")


def test_testcases_hold_the_values_in_call_order(suite: tuple[Path, Path, list[TestCase]]) -> None:
    _, directory, tests = suite
    # the condition has six conjuncts: one path fails at each of them, one path passes all
    assert len(tests) == 7
    files = sorted(directory.glob("test*.xml"))
    assert [f.name for f in files] == [f"test{i:06d}.xml" for i in range(1, 8)]
    ranges = [(-2**31, 2**31 - 1), (0, 255), (-128, 127), (0, 1), (-2**63, 2**63 - 1), (0, 2**32 - 1)]
    wanted = [-5, 200, -3, 1, -4000000000, 4000000000]
    errors = 0
    for path, test in zip(files, tests):
        text = path.read_text()
        assert text.splitlines()[:2] == ['<?xml version="1.0" encoding="UTF-8" standalone="no"?>', DOCTYPE_TESTCASE]
        root, inputs = _inputs(path)
        assert root.tag == "testcase" and all(child.tag == "input" and not child.attrib for child in root)
        values = [int(v) for v in inputs]
        assert len(values) == 6
        assert all(low <= v <= high for v, (low, high) in zip(values, ranges)), values
        reaches = [v == w for v, w in zip(values, wanted)] == [True] * 6
        if test.error is not None:
            errors += 1
            assert test.error.kind.value == "reach_error"
            assert values == wanted
            assert root.attrib == {"coversError": "true"}
        else:
            # a completed path stops at the first conjunct its values make false
            assert test.status is PathStatus.COMPLETED and not reaches
            assert root.attrib == {}
    assert errors == 1


@pytest.mark.skipif(shutil.which("gcc") is None, reason="native replay needs gcc")
def test_values_replayed_natively_reach_the_same_outcome(suite: tuple[Path, Path, list[TestCase]],
                                                         tmp_path: Path) -> None:
    source, directory, tests = suite
    harness = tmp_path / "harness.c"
    harness.write_text(HARNESS)
    exe = tmp_path / "native"
    subprocess.run(["gcc", "-O0", str(source), str(harness), "-o", str(exe)], check=True, capture_output=True)
    for path, test in zip(sorted(directory.glob("test*.xml")), tests):
        values = tmp_path / "values.txt"
        values.write_text("\n".join(_inputs(path)[1]) + "\n")
        proc = subprocess.run([str(exe)], env={**os.environ, "INPUTS": str(values)}, capture_output=True,
                              text=True, timeout=30)
        if test.error is not None:
            assert (proc.returncode, proc.stdout) == (17, "reach_error\n"), path.name
        else:
            assert (proc.returncode, proc.stdout) == (test.exit_code, ""), path.name


@pytest.mark.parametrize(
    ("kind", "data", "text"),
    [
        ("int", b"\xff\xff\xff\xff", "-1"),
        ("uint", b"\xff\xff\xff\xff", "4294967295"),
        ("char", b"\x80", "-128"),
        ("uchar", b"\x80", "128"),
        ("bool", b"\x02", "1"),
        ("bool", b"\x00", "0"),
        ("short", b"\x00\x80", "-32768"),
        ("ushort", b"\x00\x80", "32768"),
        ("long", b"\x00" * 7 + b"\x80", str(-2**63)),
        ("ulong", b"\xff" * 8, str(2**64 - 1)),
        ("size_t", b"\x01" + b"\x00" * 7, "1"),
        ("loff_t", b"\xfe" + b"\xff" * 7, "-2"),
        # floats: the shortest decimal that reads back (strtof/strtod) as the same value
        ("double", bytes.fromhex("000000000000f43f"), "1.25"),
        ("double", bytes.fromhex("0000000000000080"), "-0.0"),
        ("float", bytes.fromhex("cdcccc3d"), "0.1"),
        ("float", bytes.fromhex("ffff7f3f"), "0.99999994"),
        ("float", bytes.fromhex("0000807f"), "INFINITY"),
        ("double", bytes.fromhex("000000000000f0ff"), "-INFINITY"),
        ("double", bytes.fromhex("010000000000f07f"), "NAN"),
    ],
)
def test_render_nondet(kind: str, data: bytes, text: str) -> None:
    assert render_nondet(kind, data) == text


def test_only_nondet_objects_are_inputs_and_names_give_their_type() -> None:
    objects = {
        "nondet_uint": b"\xff\xff\xff\xff",
        "buf": b"\xff\xff\xff\xff",             # klee_make_symbolic: not a Test-Comp input
        "nondet_int_1": b"\xff\xff\xff\xff",
        "nondet_size_t_2": b"\x05" + bytes(7),
        "nondet_ulong_10": b"\xff" * 8,
        "nondet_intx": b"\x01\x00\x00\x00",     # not a nondet kind
        "my_nondet_int": b"\x01\x00\x00\x00",
    }
    assert nondet_inputs(objects) == ["4294967295", "-1", "5", str(2**64 - 1)]


def test_writer_errors_and_numbering(tmp_path: Path) -> None:
    with pytest.raises(SymexError, match="cannot write a Test-Comp suite"):
        TestCompWriter(tmp_path / "suite", tmp_path / "absent.c")
    source = tmp_path / "p.c"
    source.write_text("int main(void) { return 0; }\n")
    writer = TestCompWriter(tmp_path / "deep" / "suite", source, entry="start", producer="me & you")
    meta = ET.parse(tmp_path / "deep" / "suite" / "metadata.xml").getroot()
    assert meta.find("producer").text == "me & you" and meta.find("entryfunction").text == "start"  # type: ignore[union-attr]
    empty = TestCase(objects={}, status=PathStatus.COMPLETED)
    assert writer.add(empty).name == "test000001.xml"
    second = writer.add(TestCase(objects={"nondet_char": b"<"}, status=PathStatus.PARTIAL))
    assert second.name == "test000002.xml"
    assert _inputs(second)[1] == ["60"]
    assert _inputs(tmp_path / "deep" / "suite" / "test000001.xml")[1] == []
    writer.close()
    with pytest.raises(SymexError, match="after close"):
        writer.add(empty)
