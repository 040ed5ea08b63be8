"""`symex stats DIR...` on real output directories of `symex run`."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]

# Three paths (one per sign of a), every instruction and both outcomes of both branches run.
FULL = (ROOT / "examples" / "get_sign.c").read_text()

# c is at most 255, so `c > 300` never holds: one of the two branch outcomes and the
# `return 1` block are never executed.
DEAD_BRANCH = """\
#include <klee/klee.h>

int main(void) {
  unsigned char c;
  klee_make_symbolic(&c, sizeof c, "c");
  if (c > 300)
    return 1;
  return 0;
}
"""

HEADER = ["Path", "Instrs", "Time(s)", "ICov(%)", "BCov(%)", "ICount", "TSolver(%)"]


def symex(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "symex.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def instructions_in_info(directory: Path) -> int:
    for line in (directory / "info").read_text().splitlines():
        if line.startswith("symex: done: total instructions = "):
            return int(line.rsplit(" ", 1)[1])
    raise AssertionError("info has no instruction count")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("stats")
    (work / "full.c").write_text(FULL)
    (work / "dead.c").write_text(DEAD_BRANCH)
    for name in ("full", "dead"):
        proc = symex("run", "--quiet", "--output-dir", name, f"{name}.c", cwd=work)
        assert proc.returncode == 0, proc.stderr
    return work


def parse_csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_csv_has_klees_columns_and_the_runs_numbers(runs: Path) -> None:
    proc = symex("stats", "--csv", "full", "dead", cwd=runs)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].split(",") == HEADER
    rows = parse_csv(proc.stdout)
    assert [r["Path"] for r in rows] == ["full", "dead", "Total"]
    full, dead, total = rows
    assert int(full["Instrs"]) == instructions_in_info(runs / "full")
    assert int(dead["Instrs"]) == instructions_in_info(runs / "dead")
    assert int(total["Instrs"]) == int(full["Instrs"]) + int(dead["Instrs"])
    assert int(total["ICount"]) == int(full["ICount"]) + int(dead["ICount"])
    # get_sign: everything runs; dead: one outcome of the only branch never happens
    assert float(full["ICov(%)"]) == 100.0 and float(full["BCov(%)"]) == 100.0
    assert float(dead["BCov(%)"]) == 50.0
    assert 0.0 < float(dead["ICov(%)"]) < 100.0
    for row in rows:
        assert 0.0 <= float(row["TSolver(%)"]) <= 100.0
        assert float(row["Time(s)"]) >= 0.0


def test_plain_table_is_aligned_text(runs: Path) -> None:
    proc = symex("stats", "full", cwd=runs)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == HEADER
    assert lines[1].split()[0] == "full" and len(lines) == 2  # no Total row for one directory
    assert lines[1].split()[3] == "100.00"


def test_print_all_adds_states_queries_cache_and_layer_times(runs: Path) -> None:
    proc = symex("stats", "--csv", "--print-all", "full", cwd=runs)
    assert proc.returncode == 0, proc.stderr
    (row,) = parse_csv(proc.stdout)
    for column in ("States", "Queries", "CacheHits", "CacheMisses", "TCore(s)", "TCache(s)",
                   "TIndependence(s)"):
        assert column in row
    assert int(row["States"]) == 0  # the run ended with every path explored
    # every query that reached the core solver missed the caches in front of it
    assert int(row["CacheMisses"]) == int(row["Queries"])


def test_a_directory_that_is_not_an_output_directory_is_one_line_and_status_2(runs: Path) -> None:
    for bad in ("nowhere", "full.c", "."):
        proc = symex("stats", "full", bad, cwd=runs)
        assert proc.returncode == 2
        assert len(proc.stderr.strip().splitlines()) == 1 and bad in proc.stderr
        assert "Traceback" not in proc.stderr


def _killed_run(work: Path, name: str, *, after_first_row: bool) -> Path:
    """A `symex run` SIGKILLed once it wrote tests (and, if asked, its first run.stats row)."""
    import signal
    import sqlite3
    import time

    regexp = ROOT / "tests" / "programs" / "regexp.c"
    process = subprocess.Popen([sys.executable, "-m", "symex.cli", "run", "-q", "--output-dir",
                                name, "-DSIZE=10", str(regexp)], cwd=work,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = work / name
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            index = out / "tests.csv"
            if index.is_file() and index.read_text().count("\n") > 3:
                if not after_first_row:
                    break
                with sqlite3.connect(out / "run.stats") as db:
                    if db.execute("SELECT COUNT(*) FROM stats").fetchone()[0]:
                        break
            time.sleep(0.01)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert not (out / "info").exists()
    return out


def test_a_killed_run_says_what_is_known(tmp_path: Path) -> None:
    _killed_run(tmp_path, "early", after_first_row=False)
    proc = symex("stats", "--csv", "early", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = parse_csv(proc.stdout)
    assert rows[0]["Path"] == "early" and rows[0]["Instrs"] == ""  # not known, not zero
    tests = len(list((tmp_path / "early").glob("*.ktest")))
    note = proc.stderr.strip()
    assert note.startswith("symex stats: early did not finish and wrote no progress row")
    # the index counts every test whose line was flushed: all of them, or all but the last
    assert f"its {tests} tests (" in note or f"its {tests - 1} tests (" in note

    _killed_run(tmp_path, "later", after_first_row=True)
    proc = symex("stats", "--csv", "later", cwd=tmp_path)
    rows = parse_csv(proc.stdout)
    assert int(rows[0]["Instrs"]) > 0
    assert "later did not finish (it has no info file): its figures are from its last " \
           "progress row" in proc.stderr
