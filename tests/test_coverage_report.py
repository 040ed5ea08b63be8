"""lcov export and HTML report: parsed back by readers of the formats written here, checked with
genhtml when it is installed, and from a real exploration whose coverage follows from the program."""

from __future__ import annotations

import shutil
import subprocess
from collections import defaultdict
from html.parser import HTMLParser
from pathlib import Path

import pytest

import symex
from symex.output.coverage_report import write_html_report, write_lcov
from symex.results import Coverage

SOURCE = """\
int classify(int x) {
  if (x > 10)
    return 2;
  if (x > 100)
    return 3;
  return 1;
}
#include <klee/klee.h>
int main(void) {
  int x;
  klee_make_symbolic(&x, sizeof x, "x");
  return classify(x);
}
"""


def parse_lcov(text: str) -> dict[str, dict[str, object]]:
    """file -> {"TN", "DA": {line: count}, "BRDA": {(line, block, branch): taken}, "LF", "LH", "BRF", "BRH"}.

    Written from the lcov tracefile description (geninfo(1)): records from SF to end_of_record."""
    records: dict[str, dict[str, object]] = {}
    current: dict[str, object] | None = None
    test_name = None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key == "TN":
            test_name = value
        elif key == "SF":
            assert current is None, "SF inside a record"
            current = {"TN": test_name, "DA": {}, "BRDA": {}}
            records[value] = current
        elif key == "DA":
            assert current is not None
            number, count = value.split(",")[:2]
            current["DA"][int(number)] = int(count)  # type: ignore[index]
        elif key == "BRDA":
            assert current is not None
            number, block, branch, taken = value.split(",")
            current["BRDA"][(int(number), int(block), int(branch))] = taken  # type: ignore[index]
        elif key in ("LF", "LH", "BRF", "BRH"):
            assert current is not None
            current[key] = int(value)
        elif line == "end_of_record":
            assert current is not None
            current = None
        else:
            raise AssertionError(f"unexpected lcov line {line!r}")
    assert current is None, "missing end_of_record"
    return records


class _Rows(HTMLParser):
    """Collects the source rows of the report: line -> (classes, code text)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, dict[int, tuple[frozenset[str], str]]] = defaultdict(dict)
        self.tags: set[str] = set()
        self.external: list[str] = []
        self._file = ""
        self._row: tuple[int, frozenset[str]] | None = None
        self._in_code = False
        self._in_h2 = False
        self._code = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.add(tag)
        if tag in ("link", "script", "img") or (a.get("src")):
            self.external.append(tag)
        if tag == "h2":
            self._in_h2, self._file = True, ""
        if tag == "tr" and "data-line" in a:
            self._row = (int(a["data-line"] or 0), frozenset((a.get("class") or "").split()))
        if tag == "td" and a.get("class") == "code":
            self._in_code, self._code = True, ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "h2":
            self._in_h2 = False
        if tag == "td" and self._in_code:
            self._in_code = False
            assert self._row is not None
            self.rows[self._file][self._row[0]] = (self._row[1], self._code)

    def handle_data(self, data: str) -> None:
        if self._in_h2:
            self._file += data
        if self._in_code:
            self._code += data


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "classify.c"
    path.write_text(SOURCE)
    return path


def _hand_coverage(file: str) -> Coverage:
    # as if only x <= 10 had been explored: line 3 never ran, nor line 5; both branches
    # (lines 2 and 4) took only their false outcome (index 1)
    return Coverage(
        covered_lines=frozenset({(file, 2), (file, 4), (file, 6), (file, 11), (file, 12)}),
        total_lines=frozenset({(file, n) for n in (2, 3, 4, 5, 6, 11, 12)}),
        covered_branches=frozenset({(file, 2, 1), (file, 4, 1)}),
        total_branches=frozenset({(file, 2, 0), (file, 2, 1), (file, 4, 0), (file, 4, 1)}),
        covered_instructions=30, total_instructions=40,
    )


def test_lcov_records(source: Path, tmp_path: Path) -> None:
    other = "/nonexistent/other.c"
    coverage = _hand_coverage(str(source))
    coverage = Coverage(
        covered_lines=coverage.covered_lines,
        total_lines=coverage.total_lines | {(other, 7), (other, 8)},
        covered_branches=coverage.covered_branches,
        total_branches=coverage.total_branches | {(other, 7, 0), (other, 7, 1)},
    )
    info = tmp_path / "cov.info"
    write_lcov(info, coverage, test_name="run1")
    records = parse_lcov(info.read_text())
    assert sorted(records) == sorted([str(source), other])
    mine = records[str(source)]
    assert mine["TN"] == "run1"
    assert mine["DA"] == {2: 1, 3: 0, 4: 1, 5: 0, 6: 1, 11: 1, 12: 1}
    assert (mine["LF"], mine["LH"]) == (7, 5)
    assert mine["BRDA"] == {(2, 0, 0): "0", (2, 0, 1): "1", (4, 0, 0): "0", (4, 0, 1): "1"}
    assert (mine["BRF"], mine["BRH"]) == (4, 2)
    # a file no path entered: its branch line never ran, so lcov's "-" for the outcomes
    theirs = records[other]
    assert theirs["DA"] == {7: 0, 8: 0} and (theirs["LF"], theirs["LH"]) == (2, 0)
    assert theirs["BRDA"] == {(7, 0, 0): "-", (7, 0, 1): "-"}


@pytest.mark.skipif(shutil.which("genhtml") is None, reason="genhtml (lcov) is not installed")
def test_genhtml_reads_the_export(source: Path, tmp_path: Path) -> None:
    info = tmp_path / "cov.info"
    write_lcov(info, _hand_coverage(str(source)))
    proc = subprocess.run(["genhtml", "--branch-coverage", "-o", str(tmp_path / "html"), str(info)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "lines......: 71.4% (5 of 7 lines)" in proc.stdout
    assert "branches...: 50.0% (2 of 4 branches)" in proc.stdout
    assert (tmp_path / "html" / "index.html").is_file()


def test_html_report_marks_every_line(source: Path, tmp_path: Path) -> None:
    index = write_html_report(tmp_path / "report", _hand_coverage(str(source)))
    assert index == tmp_path / "report" / "index.html"
    assert [p.name for p in index.parent.iterdir()] == ["index.html"]  # one self-contained file
    text = index.read_text()
    parser = _Rows()
    parser.feed(text)
    assert "style" in parser.tags and parser.external == []
    rows = parser.rows[str(source)]
    source_lines = SOURCE.splitlines()
    assert sorted(rows) == list(range(1, len(source_lines) + 1))
    assert [rows[n][1] for n in sorted(rows)] == source_lines
    kinds = {n: rows[n][0] - {"partial"} for n in rows}
    assert {n for n, k in kinds.items() if k == {"covered"}} == {2, 4, 6, 11, 12}
    assert {n for n, k in kinds.items() if k == {"uncovered"}} == {3, 5}
    assert {n for n, k in kinds.items() if k == {"none"}} == {1, 7, 8, 9, 10, 13}
    # lines 2 and 4 ran but one branch outcome of each was never taken
    assert {n for n in rows if "partial" in rows[n][0]} == {2, 4}
    assert "30 of 40" in text and "71.4%" in text and "50.0%" in text


def test_html_report_escapes_and_survives_a_missing_source(tmp_path: Path) -> None:
    missing = str(tmp_path / "gone <&>.c")
    coverage = Coverage(covered_lines=frozenset({(missing, 2)}), total_lines=frozenset({(missing, 2), (missing, 3)}))
    parser = _Rows()
    parser.feed(write_html_report(tmp_path / "r", coverage).read_text())
    rows = parser.rows[missing]  # the file name came back unescaped: it was escaped in the HTML
    assert {n: rows[n][0] for n in rows} == {1: {"none"}, 2: {"covered"}, 3: {"uncovered"}}


def test_reports_of_a_real_exploration(source: Path, tmp_path: Path) -> None:
    # the x > 100 test comes after x > 10 returned, so line 5 can never run; every other line can
    result = symex.explore(symex.compile(source), max_time=120)
    coverage = result.coverage
    file = str(source)
    assert {line for f, line in coverage.total_lines if f == file} >= {2, 3, 4, 5, 6, 11, 12}
    info = tmp_path / "cov.info"
    write_lcov(info, coverage)
    record = parse_lcov(info.read_text())[file]
    da = record["DA"]
    assert da[5] == 0  # type: ignore[index]
    assert {n for n, c in da.items() if c} == {line for f, line in coverage.covered_lines if f == file}  # type: ignore[union-attr]
    assert {2, 3, 4, 6, 11, 12} <= {n for n, c in da.items() if c}  # type: ignore[union-attr]
    # branch of line 4: only its false outcome (successor order: true first) is feasible
    brda = record["BRDA"]
    assert brda[(2, 0, 0)] == "1" and brda[(2, 0, 1)] == "1"  # type: ignore[index]
    assert brda[(4, 0, 0)] == "0" and brda[(4, 0, 1)] == "1"  # type: ignore[index]
    parser = _Rows()
    parser.feed(write_html_report(tmp_path / "html", coverage).read_text())
    assert parser.rows[file][5][0] == {"uncovered"}
    assert parser.rows[file][4][0] == {"covered", "partial"}
