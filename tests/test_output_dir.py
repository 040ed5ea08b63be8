"""`symex run` writes KLEE's output directory: tests, errors, info, run.stats, assembly.ll."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from symex.output.ktest import read_ktest

ROOT = Path(__file__).parents[1]

# Two bugs on different paths: assert fails only for x == 150 (line 9), division by zero
# only for x == -10 (line 13). Five paths: those two, x > 100 otherwise (exit 1), x < -5
# otherwise (exit 10 / (x + 10)), and -5 <= x <= 100 (exit 0).
TWO_BUGS = """\
#include <assert.h>
#include <klee/klee.h>

int main(void) {
  int x;
  klee_make_symbolic(&x, sizeof x, "x");
  if (x > 100) {
    /* only x == 150 fails */
    assert(x != 150);
    return 1;
  }
  if (x < -5)
    return 10 / (x + 10);
  return 0;
}
"""
ASSERT_LINE, DIV_LINE = 9, 13


def symex(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "symex.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def info_fields(directory: Path) -> dict[str, str]:
    fields = {}
    for line in (directory / "info").read_text().splitlines():
        match = re.fullmatch(r"symex: done: (.+?) = (\S+).*", line)
        if match:
            fields[match.group(1)] = match.group(2)
        elif ": " in line:
            key, value = line.split(": ", 1)
            fields.setdefault(key, value)
    return fields


@pytest.fixture(scope="module")
def two_bugs_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    work = tmp_path_factory.mktemp("run")
    (work / "two_bugs.c").write_text(TWO_BUGS)
    proc = symex("run", "--quiet", "two_bugs.c", cwd=work)
    assert proc.returncode == 0, proc.stderr
    return work, proc


def test_the_directory_is_symex_out_0_with_a_last_link(two_bugs_run: tuple[Path, object]) -> None:
    work, _ = two_bugs_run
    out = work / "symex-out-0"
    assert out.is_dir()
    assert (work / "symex-last").resolve() == out.resolve()
    names = sorted(p.name for p in out.iterdir())
    for required in ("assembly.ll", "info", "messages.txt", "run.stats"):
        assert required in names
    assert not [n for n in names if n.endswith(".tmp")]


def test_each_test_reads_back_with_inputs_for_its_path(two_bugs_run: tuple[Path, object]) -> None:
    work, _ = two_bugs_run
    out = work / "symex-out-0"
    ktests = sorted(out.glob("test*.ktest"))
    assert [p.name for p in ktests] == [f"test{n:06d}.ktest" for n in range(1, 6)]
    values = {}
    for path in ktests:
        test = read_ktest(path)
        assert test.args == ("two_bugs.c",)
        assert [o.name for o in test.objects] == ["x"]
        values[path.name] = int.from_bytes(test.objects[0].data, "little", signed=True)
    # every path of the program is represented exactly once
    xs = list(values.values())
    assert xs.count(150) == 1 and xs.count(-10) == 1
    assert sum(1 for x in xs if x > 100 and x != 150) == 1
    assert sum(1 for x in xs if x < -5 and x != -10) == 1
    assert sum(1 for x in xs if -5 <= x <= 100) == 1


def test_two_err_files_name_the_kind_line_and_stack(two_bugs_run: tuple[Path, object]) -> None:
    work, _ = two_bugs_run
    out = work / "symex-out-0"
    errs = sorted(out.glob("*.err"))
    assert len(errs) == 2
    by_kind = {p.name.split(".")[1]: p for p in errs}
    assert set(by_kind) == {"assert", "div"}
    for kind, line, x, source in (("assert", ASSERT_LINE, 150, "assert(x != 150);"),
                                  ("div", DIV_LINE, -10, "return 10 / (x + 10);")):
        text = by_kind[kind].read_text()
        assert text.startswith("Error: ")
        assert f"Line: {line}\n" in text
        assert re.search(r"^File: .*two_bugs\.c$", text, re.MULTILINE)
        assert "\t#000 in main at " in text and f"two_bugs.c:{line}\n" in text
        assert f"\t     {source}\n" in text
        # the .err belongs to the test with the same number, whose input triggers the bug
        ktest = read_ktest(out / (by_kind[kind].name.split(".")[0] + ".ktest"))
        assert int.from_bytes(ktest.objects[0].data, "little", signed=True) == x
        asm = re.search(r"^assembly\.ll line: (\d+)$", text, re.MULTILINE)
        if kind == "div":  # the sdiv is one instruction, found in assembly.ll
            assert asm is not None
            assert "div" in (out / "assembly.ll").read_text().splitlines()[int(asm.group(1)) - 1]


def test_info_counts_match_the_program(two_bugs_run: tuple[Path, object]) -> None:
    work, proc = two_bugs_run
    fields = info_fields(work / "symex-out-0")
    assert fields["explored paths"] == "5"
    assert fields["completed paths"] == "3"
    assert fields["error paths"] == "2"
    assert fields["partial paths"] == "0"
    assert fields["generated tests"] == "5"
    assert int(fields["total instructions"]) > 0
    assert fields["stopped"] == "all paths explored"
    assert "two_bugs.c" in fields["command line"]
    assert fields["line coverage"] == "100.00%"  # every line of main runs on some path
    assert "instructions in" in proc.stdout and "line coverage 100.0%" in proc.stdout


def test_run_stats_is_sqlite_ending_at_the_final_counts(two_bugs_run: tuple[Path, object]) -> None:
    work, _ = two_bugs_run
    out = work / "symex-out-0"
    db = sqlite3.connect(out / "run.stats")
    rows = db.execute("SELECT Instructions, WallTime, CompletedPaths, ErrorPaths, Tests, "
                      "CoveredLines, TotalLines FROM stats ORDER BY Row").fetchall()
    assert rows
    instructions, _, completed, errors, tests, covered, total = rows[-1]
    assert instructions == int(info_fields(out)["total instructions"])
    assert (completed, errors, tests) == (3, 2, 5)
    assert covered == total > 0
    layers = dict(db.execute("SELECT name, value FROM solver_layers"))
    assert "core_queries" in layers


def test_assembly_and_messages(two_bugs_run: tuple[Path, object]) -> None:
    work, _ = two_bugs_run
    out = work / "symex-out-0"
    # clang writes "define dso_local i32 @main", zig "define i32 @main"
    assert re.search(r"^define (dso_local )?i32 @main\(", (out / "assembly.ll").read_text(), re.M)
    assert (out / "messages.txt").is_file()


def test_a_second_run_takes_the_next_number(tmp_path: Path) -> None:
    (tmp_path / "two_bugs.c").write_text(TWO_BUGS)
    (tmp_path / "symex-out-0").mkdir()
    proc = symex("run", "--quiet", "--max-instructions", "5", "two_bugs.c", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "symex-out-1" / "info").is_file()
    assert os.readlink(tmp_path / "symex-last") == "symex-out-1"
    assert "stopped: max-instructions reached" in (tmp_path / "symex-out-1" / "info").read_text()


def test_output_dir_must_be_new_or_empty(tmp_path: Path) -> None:
    (tmp_path / "two_bugs.c").write_text(TWO_BUGS)
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "file").write_text("mine\n")
    proc = symex("run", "--output-dir", "taken", "two_bugs.c", cwd=tmp_path)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "not empty" in proc.stderr
    assert sorted(p.name for p in taken.iterdir()) == ["file"]
    proc = symex("run", "--quiet", "--output-dir", "fresh/out", "two_bugs.c", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert len(list((tmp_path / "fresh" / "out").glob("*.ktest"))) == 5


def test_write_cov_lists_the_lines_each_test_ran(tmp_path: Path) -> None:
    (tmp_path / "two_bugs.c").write_text(TWO_BUGS)
    proc = symex("run", "--quiet", "--write-cov", "--output-dir", "out", "two_bugs.c", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out"
    for ktest in out.glob("*.ktest"):
        x = int.from_bytes(read_ktest(ktest).objects[0].data, "little", signed=True)
        lines = {int(entry.rsplit(":", 1)[1]) for entry in
                 ktest.with_suffix(".cov").read_text().split()}
        assert 7 in lines  # the first comparison runs on every path
        assert (ASSERT_LINE in lines) == (x > 100)
        assert (DIV_LINE in lines) == (x < -5)


def test_sigint_leaves_a_valid_directory(tmp_path: Path) -> None:
    many = tmp_path / "many.c"
    many.write_text((ROOT / "tests" / "programs" / "branches.c").read_text())
    symex("run", "--quiet", "--max-instructions", "1", "-D", "N=20", "--output-dir", "warm",
          "many.c", cwd=tmp_path)  # compile once, so the interrupt lands in the exploration
    proc = subprocess.Popen([sys.executable, "-m", "symex.cli", "run", "--quiet", "-D", "N=20",
                             "--output-dir", "out", "many.c"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = tmp_path / "out"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list(out.glob("*.ktest"))) < 3:
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    ktests = list(out.glob("*.ktest"))
    assert len(ktests) >= 3
    for path in ktests:
        assert len(read_ktest(path).objects[0].data) == 20
    assert not list(out.glob("*.tmp")) and not list(out.glob(".*.tmp"))
    assert f"symex: interrupted; {len(ktests)} tests and the statistics so far are in out" in stderr
    db = sqlite3.connect(out / "run.stats")
    assert db.execute("SELECT COUNT(*) FROM stats").fetchone()[0] >= 1
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    info = (out / "info").read_text()
    assert "stopped: interrupted" in info
    assert f"symex: done: generated tests = {len(ktests)}" in info


def test_testcomp_format_writes_the_suite_beside_the_ktests(tmp_path: Path) -> None:
    (tmp_path / "tc.c").write_text("""
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);
int main(void) {
  int x = __VERIFIER_nondet_int();
  if (x == 42)
    reach_error();
  return 0;
}
""")
    proc = symex("run", "--quiet", "--test-format", "testcomp", "--output-dir", "out", "tc.c",
                 cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    suite = tmp_path / "out" / "test-suite"
    assert (suite / "metadata.xml").is_file()
    assert sorted(p.name for p in suite.glob("test*.xml")) == ["test000001.xml", "test000002.xml"]
    assert len(list((tmp_path / "out").glob("*.ktest"))) == 2
    # the reach_error path needs x == 42: its Test-Comp input says so
    (err,) = (tmp_path / "out").glob("*.reach_error.err")
    assert "<input>42</input>" in (suite / (err.name.split(".")[0] + ".xml")).read_text()
    assert (tmp_path / "out" / "coverage.info").read_text().startswith("TN:")
    assert "<html" in (tmp_path / "out" / "coverage.html").read_text()


def test_a_discarded_directory_is_gone_and_the_last_link_restored(tmp_path: Path) -> None:
    from symex.output.directory import OutputDirectory

    first = OutputDirectory.create(parent=tmp_path)
    second = OutputDirectory.create(parent=tmp_path)
    assert (tmp_path / "symex-last").resolve() == second.path.resolve()
    second.discard()
    assert not second.path.exists()
    assert (tmp_path / "symex-last").resolve() == first.path.resolve()
    first.discard()
    assert not first.path.exists() and not (tmp_path / "symex-last").is_symlink()


def test_info_and_verbose_say_which_compiler_built_the_program(tmp_path: Path) -> None:
    from symex.ir.compile import find_compiler
    (tmp_path / "p.c").write_text("#include <klee/klee.h>\nint main(void) { int x; "
                                  "klee_make_symbolic(&x, sizeof x, \"x\"); return x > 1; }\n")
    compiler = find_compiler()
    ran = symex("run", "-v", "--output-dir", "c", "p.c", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    said = f"compiled by {' '.join(compiler.command)} ({compiler.version})"
    assert said in ran.stderr
    info = (tmp_path / "c" / "info").read_text()
    assert f"compiler: {' '.join(compiler.command)} ({compiler.version})" in info
    # an IR file: what its !llvm.ident says (the compiler that made it, not ours)
    ir = (tmp_path / "c" / "assembly.ll").read_text()
    ident = re.search(r'!llvm.ident = !\{!(\d+)\}', ir)
    assert ident is not None
    name = re.search(rf'^!{ident.group(1)} = !{{!"([^"]+)"}}', ir, re.MULTILINE)
    assert name is not None
    (tmp_path / "p.ll").write_text(ir)
    again = symex("run", "--output-dir", "ir", "p.ll", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert f"compiler: {name.group(1)}" in (tmp_path / "ir" / "info").read_text()


def test_a_full_disk_stops_the_run_with_one_line_and_whole_files(tmp_path: Path) -> None:
    """The output directory on a 256 KiB file system (a tmpfs mounted in a mount namespace
    of the run's own: unshare, as root or through an unprivileged user namespace)."""
    import shutil
    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "-rm", "true"], capture_output=True).returncode != 0:
        pytest.skip("no mount namespace can be made here (unshare -rm)")
    (tmp_path / "many.c").write_text((ROOT / "tests" / "programs" / "branches.c").read_text())
    symex("run", "-q", "--max-instructions", "1", "-D", "N=16", "--output-dir", "warm", "many.c",
          cwd=tmp_path)  # compiled once, outside the small file system
    full = tmp_path / "full"
    full.mkdir()
    script = (f"mount -t tmpfs -o size=256k tmpfs {full} && {sys.executable} -m symex.cli run "
              f"-q -D N=16 --output-dir {full}/out many.c; echo status=$?; "
              f"for f in {full}/out/*.ktest; do cat $f; done > {tmp_path}/ktests; "
              f"cat {full}/out/info > {tmp_path}/info")
    ran = subprocess.run(["unshare", "-rm", "sh", "-c", script], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert "status=1" in ran.stdout, ran.stdout + ran.stderr
    lines = ran.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in ran.stderr, ran.stderr
    assert "No space left on device" in lines[0] and "tests written are whole" in lines[0]
    info = (tmp_path / "info").read_text()
    assert "stopped: cut short: No space left on device" in info
    written = int(re.search(r"generated tests = (\d+)", info).group(1))
    assert written > 0 and f"the {written} tests written are whole" in lines[0]
    # every test written is a whole .ktest (16 bytes of input each)
    data = (tmp_path / "ktests").read_bytes()
    assert data.count(b"KTEST") == written


def test_write_no_tests_leaves_statistics_and_no_test_files(tmp_path: Path) -> None:
    (tmp_path / "two_bugs.c").write_text(TWO_BUGS)
    proc = symex("run", "--write-no-tests", "--output-dir", "out", "two_bugs.c", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out"
    names = {p.name for p in out.iterdir()}
    assert not [n for n in names if n.startswith("test")], names
    assert {"info", "run.stats", "coverage.info", "assembly.ll"} <= names
    fields = info_fields(out)
    assert (fields["explored paths"], fields["error paths"], fields["generated tests"]) == \
        ("5", "2", "0")
    # both errors, at their lines, are still in the summary
    assert f"two_bugs.c:{ASSERT_LINE}" in proc.stdout and f"two_bugs.c:{DIV_LINE}" in proc.stdout
