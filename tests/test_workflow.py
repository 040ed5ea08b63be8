"""The acceptance test of the KLEE-style workflow, through the real `symex` command line:

run -> output directory -> `symex ktest` prints the tests -> `symex replay` confirms both bugs
natively -> the coverage symex reports equals what gcov measures when the test inputs run on
the program compiled by gcc with --coverage; KLEE's own .ktest files print as ktest-tool
prints them; symex's .ktest files are readable from the format description alone; and an
interrupted run leaves a directory whose tests replay.
"""

from __future__ import annotations

import ast
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from symex.ir.compile import include_dir
from symex.replay import runtime_source

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="native replay and gcov need gcc")

CORPUS = Path("/work/shared/corpora/ktest")

# Two bugs: x = 4 or 5 reads past the end of `table` (ptr); x = 7 with y = 0 divides by zero
# (div). Line 24 is dead code: x > 100 and x < 50 never hold together. (The two conditions are
# on separate lines: symex's branch coverage has one entry per line and outcome, so two
# conditions on one line would share entries.)
TWO_BUGS = """\
#include <klee/klee.h>

int table[4] = {1, 2, 3, 4};

int divide(int a, int b) {
  return a / b;
}

int main(void) {
  int x, y;
  klee_make_symbolic(&x, sizeof x, "x");
  klee_make_symbolic(&y, sizeof y, "y");
  int r = 0;
  if (x > 0 && x < 6)
    r = table[x];
  else if (x == 7)
    r = divide(100, y);
  else if (x < 0)
    r = 1;
  else
    r = 2;
  if (x > 100)
    if (x < 50)
      r = 3;
  return r;
}
"""
DEAD_LINE = 24
FUNCTION_OPENING_LINES = {5, 9}
DIVISION_LINE = 6
TABLE_LINE = 15

# Saves gcov's counters when a test crashes (the division by zero): gcov writes them at exit,
# which a process killed by SIGFPE never reaches.
GCOV_ON_CRASH = r"""
#include <signal.h>
#include <unistd.h>
extern void __gcov_dump(void);
static void dump_and_die(int sig) { __gcov_dump(); _exit(128 + sig); }
__attribute__((constructor)) static void install(void) {
  signal(SIGFPE, dump_and_die);
  signal(SIGSEGV, dump_and_die);
  signal(SIGABRT, dump_and_die);
}
"""

# 2^24 paths: far more than a test waits for, so the run is always interrupted mid-way.
MANY_PATHS = """\
#include <klee/klee.h>
int main(void) {
  unsigned char buf[24];
  klee_make_symbolic(buf, sizeof buf, "buf");
  int count = 0;
  for (int i = 0; i < 24; i++)
    if (buf[i] > 'm')
      count++;
  return count;
}
"""


def symex(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "symex.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def read_ktest_from_format_description(data: bytes) -> tuple[list[bytes], list[tuple[bytes, bytes]]]:
    """KLEE's .ktest layout as documented: magic "KTEST" (or legacy "BOUT\\n"), version, then
    big-endian 32-bit counts and lengths: args, symArgvs and symArgvLen (version >= 2),
    objects as (name, size, bytes). Written for this test, not taken from symex.output.ktest."""
    assert data[:5] in (b"KTEST", b"BOUT\n"), data[:5]
    offset = 5

    def word() -> int:
        nonlocal offset
        value = int.from_bytes(data[offset : offset + 4], "big")
        offset += 4
        return value

    def blob() -> bytes:
        nonlocal offset
        size = word()
        chunk = data[offset : offset + size]
        assert len(chunk) == size
        offset += size
        return chunk

    version = word()
    args = [blob() for _ in range(word())]
    if version >= 2:
        word(), word()
    objects = [(blob(), blob()) for _ in range(word())]
    assert offset == len(data), "trailing bytes"
    return args, objects


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("workflow")
    program = root / "two_bugs.c"
    program.write_text(TWO_BUGS)
    out = root / "symex-out-1"
    proc = symex("run", "-q", "--write-cov", "--output-dir", str(out), str(program), cwd=root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return program, out


def _tests(out: Path) -> list[Path]:
    return sorted(out.glob("test*.ktest"))


def test_run_writes_the_directory_with_both_bugs(run: tuple[Path, Path]) -> None:
    _, out = run
    assert (out / "info").is_file() and (out / "run.stats").is_file()
    tests = _tests(out)
    assert [t.name for t in tests] == [f"test{i:06d}.ktest" for i in range(1, len(tests) + 1)]
    assert sorted(p.name.split(".", 1)[1] for p in out.glob("*.err")) == ["div.err", "ptr.err"]


def test_ktest_prints_every_test(run: tuple[Path, Path]) -> None:
    _, out = run
    tests = _tests(out)
    proc = symex("ktest", *(t.name for t in tests), cwd=out)
    assert proc.returncode == 0, proc.stderr
    printed: list[list[tuple[str, int, bytes]]] = []
    for line in proc.stdout.splitlines():
        if line.startswith("ktest file : "):
            printed.append([])
        elif ": name: " in line:
            printed[-1].append((line.split(": name: ")[1].strip("'"), 0, b""))
        elif ": size: " in line:
            name, _, _ = printed[-1][-1]
            printed[-1][-1] = (name, int(line.split(": size: ")[1]), b"")
        elif ": data: " in line:
            name, size, _ = printed[-1][-1]
            printed[-1][-1] = (name, size, ast.literal_eval(line.split(": data: ")[1]))
    assert len(printed) == len(tests)
    for path, objects in zip(tests, printed):
        _, expected = read_ktest_from_format_description(path.read_bytes())
        assert objects == [(n.decode(), len(d), d) for n, d in expected]
        # klee_make_symbolic(&x, ...), then &y: two 4-byte objects in creation order
        assert [(name, size) for name, size, _ in objects] == [("x", 4), ("y", 4)]


def test_ktest_files_are_readable_from_the_format_description(run: tuple[Path, Path]) -> None:
    program, out = run
    by_kind = {p.name.split(".")[1]: p.name.split(".")[0] for p in out.glob("*.err")}
    for path in _tests(out):
        args, objects = read_ktest_from_format_description(path.read_bytes())
        assert len(args) == 1 and Path(args[0].decode()).name == program.name  # argv[0]: the program
        values = {name.decode(): struct.unpack("<i", data)[0] for name, data in objects}
        stem = path.name[: -len(".ktest")]
        # the error tests hold inputs that trigger the bug they are named after
        if stem == by_kind["ptr"]:
            assert values["x"] in (4, 5)
        if stem == by_kind["div"]:
            assert (values["x"], values["y"]) == (7, 0)


def test_replay_confirms_both_bugs(run: tuple[Path, Path]) -> None:
    program, out = run
    proc = symex("replay", str(program), str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    tests = _tests(out)
    assert len(lines) == len(tests) + 1
    for line, path in zip(lines, tests):
        assert line.startswith(f"{path.name}: ")
    assert sum("reproduces ptr error" in line for line in lines) == 1
    assert sum("reproduces div error" in line for line in lines) == 1
    assert "DOES NOT REPRODUCE" not in proc.stdout
    assert lines[-1].startswith(f"symex replay: {len(tests)} tests: 2 of 2 errors reproduced")
    # every clean test exits with the r its inputs select
    for line, path in zip(lines, tests):
        if "error" in line:
            continue
        objects = read_ktest_from_format_description(path.read_bytes())[1]
        values = {n.decode(): struct.unpack("<i", d)[0] for n, d in objects}
        x, y = values["x"], values["y"]
        r = {1: 2, 2: 3, 3: 4}.get(x) if 0 < x < 6 else (100 // y if x == 7 else (1 if x < 0 else 2))
        assert line == f"{path.name}: exit {r & 0xff}"


def _gcov_lines(program: Path, tests: list[Path], build: Path) -> tuple[set[int], set[int]]:
    """(executable lines, executed lines) of ``program`` per gcov, over runs of every test."""
    build.mkdir()
    crash = build / "gcov_on_crash.c"
    crash.write_text(GCOV_ON_CRASH)
    exe = build / "native"
    # no sanitizers: the out-of-bounds read then just reads a neighbour and the path goes on,
    # and the division's SIGFPE is caught to save the counters
    subprocess.run(["gcc", "--coverage", "-O0", "-g", "-I", str(include_dir()), str(program),
                    str(runtime_source()), str(crash), "-o", str(exe)], check=True, capture_output=True, cwd=build)
    for test in tests:
        subprocess.run([str(exe)], env={**os.environ, "KTEST_FILE": str(test)}, capture_output=True,
                       timeout=30, cwd=build)
    gcda = build / f"native-{program.stem}.gcda"
    assert gcda.is_file()
    proc = subprocess.run(["gcov", "-t", gcda.name], capture_output=True, text=True, check=True, cwd=build)
    executable: set[int] = set()
    executed: set[int] = set()
    for line in proc.stdout.splitlines():
        count, number, *_ = (part.strip() for part in line.split(":", 2))
        if number == "0" or count == "-":
            continue
        executable.add(int(number))
        if count not in ("#####", "=====", "$$$$$"):
            executed.add(int(number))
    return executable, executed


def _lcov_lines(info: Path, file: str) -> tuple[set[int], set[int]]:
    executable: set[int] = set()
    executed: set[int] = set()
    current = None
    for line in info.read_text().splitlines():
        if line.startswith("SF:"):
            current = line[3:]
        elif line.startswith("DA:") and current == file:
            number, count = line[3:].split(",")[:2]
            executable.add(int(number))
            if int(count) > 0:
                executed.add(int(number))
    return executable, executed


def test_coverage_matches_gcov_line_for_line(run: tuple[Path, Path], tmp_path: Path) -> None:
    program, out = run
    tests = _tests(out)
    gcov_executable, gcov_executed = _gcov_lines(program, tests, tmp_path / "gcov")
    symex_executable, symex_executed = _lcov_lines(out / "coverage.info", str(program))
    # The per-test .cov files (--write-cov) together cover exactly what the export says.
    per_test: set[int] = set()
    for cov in out.glob("test*.cov"):
        for entry in cov.read_text().splitlines():
            file, _, number = entry.rpartition(":")
            assert file == str(program)
            per_test.add(int(number))
    assert per_test == symex_executed

    # The sets are compared over the lines both call executable. The only kind of line that
    # leaves out is a function's opening line (`int divide(int a, int b) {`, `int main(void) {`):
    # gcc counts the prologue there, clang's -O0 debug info puts no instruction on it (the
    # argument stores carry the parameters' own locations, none here is on another line).
    both = gcov_executable & symex_executable
    assert gcov_executable ^ symex_executable <= FUNCTION_OPENING_LINES, \
        (sorted(gcov_executable), sorted(symex_executable))
    assert {DIVISION_LINE, TABLE_LINE, DEAD_LINE} <= both
    assert len(both) >= 12, (sorted(gcov_executable), sorted(symex_executable))
    assert gcov_executed & both == symex_executed & both
    assert DEAD_LINE not in symex_executed and DEAD_LINE not in gcov_executed
    assert {DIVISION_LINE, TABLE_LINE} <= symex_executed

    # `symex stats` reports the branch coverage of the same run: lcov's BRH/BRF
    info = (out / "coverage.info").read_text().splitlines()
    brf = sum(int(line[4:]) for line in info if line.startswith("BRF:"))
    brh = sum(int(line[4:]) for line in info if line.startswith("BRH:"))
    assert 0 < brh < brf  # `x < 50` is never true
    proc = symex("stats", "--csv", str(out))
    assert proc.returncode == 0, proc.stderr
    header, row = proc.stdout.splitlines()[:2]
    stats = dict(zip(header.split(","), row.split(",")))
    assert float(stats["BCov(%)"]) == pytest.approx(100.0 * brh / brf, abs=0.01)
    assert 0 < float(stats["ICov(%)"]) < 100  # the dead line's instructions never ran


SVCOMP = """\
extern int __VERIFIER_nondet_int(void);
extern unsigned char __VERIFIER_nondet_uchar(void);
extern void reach_error(void);
int main(void) {
  int a = __VERIFIER_nondet_int();
  unsigned char c = __VERIFIER_nondet_uchar();
  if (a < -1000 && c == 250)
    reach_error();
  return 0;
}
"""


def test_testcomp_suite_holds_the_values_of_the_ktest_files(tmp_path: Path) -> None:
    program = tmp_path / "svcomp.c"
    program.write_text(SVCOMP)
    out = tmp_path / "out"
    proc = symex("run", "-q", "--test-format", "testcomp", "--output-dir", str(out), str(program))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    suite = out / "test-suite"
    meta = ET.parse(suite / "metadata.xml").getroot()
    assert meta.tag == "test-metadata" and meta.findtext("entryfunction") == "main"
    tests = _tests(out)
    assert len(tests) == 3  # a >= -1000; a < -1000 and c != 250; the reach_error path
    assert sorted(p.name for p in suite.glob("test*.xml")) == [t.name.replace(".ktest", ".xml") for t in tests]
    for path in tests:
        objects = read_ktest_from_format_description(path.read_bytes())[1]
        assert [name for name, _ in objects] == [b"nondet_int", b"nondet_uchar"]
        expected = [str(struct.unpack("<i", objects[0][1])[0]), str(objects[1][1][0])]
        root = ET.parse(suite / path.name.replace(".ktest", ".xml")).getroot()
        assert [e.text for e in root.findall("input")] == expected
        reaches = int(expected[0]) < -1000 and expected[1] == "250"
        assert (root.get("coversError") == "true") == reaches
        assert (out / path.name.replace(".ktest", ".reach_error.err")).exists() == reaches


@pytest.mark.skipif(not list(CORPUS.glob("*/*.ktest")), reason="KLEE ktest corpus not available")
def test_klee_files_print_as_ktest_tool_prints_them() -> None:
    for directory in sorted({p.parent for p in CORPUS.glob("*/*.ktest")}):
        names = sorted(p.name for p in directory.glob("*.ktest"))
        proc = symex("ktest", *names, cwd=directory)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == "".join((directory / f"{name}-tool.txt").read_text() for name in names)


def test_an_interrupted_run_leaves_a_directory_whose_tests_replay(tmp_path: Path) -> None:
    program = tmp_path / "many.c"
    program.write_text(MANY_PATHS)
    out = tmp_path / "symex-out-1"
    process = subprocess.Popen([sys.executable, "-m", "symex.cli", "run", "-q", "--output-dir", str(out),
                                str(program)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while len(list(out.glob("*.ktest"))) < 10:
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "no tests written within 120 s"
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert "Traceback" not in stderr
    assert process.returncode in (0, 130), stderr
    assert "interrupted" in (out / "info").read_text()
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no half-written files
    tests = sorted(out.glob("*.ktest"))
    assert [t.name for t in tests] == [f"test{i:06d}.ktest" for i in range(1, len(tests) + 1)]
    for path in tests:
        _, objects = read_ktest_from_format_description(path.read_bytes())
        assert [(name, len(data)) for name, data in objects] == [(b"buf", 24)]

    proc = symex("replay", str(program), str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == len(tests) + 1
    for line, path in zip(lines, tests):
        data = read_ktest_from_format_description(path.read_bytes())[1][0][1]
        # the program returns how many of the 24 bytes are above 'm'
        assert line == f"{path.name}: exit {sum(b > ord('m') for b in data)}"
