"""Coverage reports of an exploration: an lcov ``.info`` file and a self-contained HTML page.

Both are written from :class:`symex.results.Coverage`. symex knows *whether* a line or branch
outcome was executed, not how often, so the lcov counts are 1 (executed) and 0 (not executed);
``genhtml`` and other lcov tools read them as usual.
"""

from __future__ import annotations

import html
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

from symex.output.atomic_write import write_atomically
from symex.output.sources import SourceFiles

if TYPE_CHECKING:
    from symex.results import Coverage

__all__ = ["write_html_report", "write_lcov"]


def _files(coverage: Coverage) -> list[str]:
    files = {file for file, _ in coverage.total_lines} | {file for file, _ in coverage.covered_lines}
    files |= {file for file, _, _ in coverage.total_branches}
    return sorted(files)


def _branches_by_line(coverage: Coverage) -> dict[str, dict[int, list[tuple[int, bool]]]]:
    """file -> line -> [(outcome index, covered)] in outcome order."""
    table: dict[str, dict[int, list[tuple[int, bool]]]] = defaultdict(lambda: defaultdict(list))
    for file, line, index in sorted(coverage.total_branches | coverage.covered_branches):
        table[file][line].append((index, (file, line, index) in coverage.covered_branches))
    return table


def write_lcov(path: Path, coverage: Coverage, *, test_name: str = "symex") -> None:
    """Write ``coverage`` as an lcov tracefile (``TN``/``SF``/``BRDA``/``DA``/... records) to ``path``.

    One record per source file; a branch outcome of a line no path executed has the count
    ``-``, as lcov writes it.
    """
    branches = _branches_by_line(coverage)
    lines_by_file: dict[str, set[int]] = defaultdict(set)
    for file, line in coverage.total_lines | coverage.covered_lines:
        lines_by_file[file].add(line)
    out: list[str] = []
    for file in _files(coverage):
        out.append(f"TN:{test_name}")
        out.append(f"SF:{file}")
        file_branches = branches.get(file, {})
        found = hit = 0
        for line in sorted(file_branches):
            line_ran = (file, line) in coverage.covered_lines or any(c for _, c in file_branches[line])
            for index, covered in file_branches[line]:
                taken = ("1" if covered else "0") if line_ran else "-"
                out.append(f"BRDA:{line},0,{index},{taken}")
                found += 1
                hit += covered
        if found:
            out.append(f"BRF:{found}")
            out.append(f"BRH:{hit}")
        executed = 0
        for line in sorted(lines_by_file[file]):
            covered = (file, line) in coverage.covered_lines
            executed += covered
            out.append(f"DA:{line},{1 if covered else 0}")
        out.append(f"LF:{len(lines_by_file[file])}")
        out.append(f"LH:{executed}")
        out.append("end_of_record")
    write_atomically(Path(path), "".join(f"{line}\n" for line in out))


_CSS = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 2em; font-family: monospace; }
table.summary td, table.summary th { padding: 0.2em 0.8em; text-align: right; }
table.summary th:first-child, table.summary td:first-child { text-align: left; }
table.source { border-collapse: collapse; font-family: monospace; font-size: 0.9em; }
table.source td { padding: 0 0.5em; white-space: pre; vertical-align: top; }
table.source td.num { color: #888; text-align: right; user-select: none; }
table.source td.br { color: #555; text-align: right; }
tr.covered td.code { background: #d6f5d6; }
tr.uncovered td.code { background: #f9d0d0; }
tr.covered.partial td.code { background: #fbefc4; }
tr.none td.code { background: transparent; }
.legend span { padding: 0.1em 0.6em; margin-right: 0.5em; font-family: monospace; }
"""


def _percent(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "-"


def write_html_report(directory: Path, coverage: Coverage, sources: SourceFiles | None = None) -> Path:
    """Write ``index.html`` (one self-contained file, inline CSS) into ``directory``; return its path.

    Source files are read through ``sources`` (which may confine them to a directory).
    Every line of every source file is one table row whose class says ``covered``,
    ``uncovered`` (executable, never executed) or ``none`` (not executable code); a covered
    line with a branch outcome never taken also has the class ``partial``.
    """
    target_dir = Path(directory)
    target_dir.mkdir(parents=True, exist_ok=True)
    branches = _branches_by_line(coverage)
    parts: list[str] = [
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
        "<title>symex coverage report</title>\n",
        f"<style>{_CSS}</style>\n</head>\n<body>\n<h1>symex coverage report</h1>\n",
        "<table class=\"summary\">\n<tr><th>file</th><th>lines</th><th>line coverage</th>"
        "<th>branch outcomes</th><th>branch coverage</th></tr>\n",
    ]
    files = _files(coverage)
    for file in files:
        total = sum(1 for f, _ in coverage.total_lines if f == file)
        covered = sum(1 for f, _ in coverage.covered_lines if f == file)
        outcomes = [c for entries in branches.get(file, {}).values() for _, c in entries]
        parts.append(
            f"<tr><td><a href=\"#file{files.index(file)}\">{html.escape(file)}</a></td>"
            f"<td>{covered}/{total}</td><td>{_percent(covered, total)}</td>"
            f"<td>{sum(outcomes)}/{len(outcomes)}</td><td>{_percent(sum(outcomes), len(outcomes))}</td></tr>\n")
    parts.append(
        f"<tr class=\"total\"><th>total</th><th>{len(coverage.covered_lines)}/{len(coverage.total_lines)}</th>"
        f"<th>{_percent(len(coverage.covered_lines), len(coverage.total_lines))}</th>"
        f"<th>{len(coverage.covered_branches)}/{len(coverage.total_branches)}</th>"
        f"<th>{_percent(len(coverage.covered_branches), len(coverage.total_branches))}</th></tr>\n")
    parts.append("</table>\n")
    parts.append(f"<p>instructions executed: {coverage.covered_instructions} of {coverage.total_instructions} "
                 f"({_percent(coverage.covered_instructions, coverage.total_instructions)})</p>\n")
    parts.append("<p class=\"legend\"><span style=\"background:#d6f5d6\">covered</span>"
                 "<span style=\"background:#fbefc4\">partly covered branch</span>"
                 "<span style=\"background:#f9d0d0\">not covered</span>"
                 "<span>not executable</span></p>\n")

    for number, file in enumerate(files):
        parts.append(f"<h2 id=\"file{number}\">{html.escape(file)}</h2>\n")
        executable = {line for f, line in coverage.total_lines if f == file}
        executed = {line for f, line in coverage.covered_lines if f == file}
        file_branches = branches.get(file, {})
        found = (sources if sources is not None else SourceFiles()).lines(file)
        source = found if found is not None else []
        if found is None:
            parts.append("<p>(source file not readable; listing the lines symex knows)</p>\n")
        last = max([len(source), *executable, *executed, *file_branches], default=0)
        parts.append("<table class=\"source\">\n")
        for line in range(1, last + 1):
            entries = file_branches.get(line, [])
            taken = sum(1 for _, c in entries if c)
            if line in executed:
                kind = "covered partial" if taken < len(entries) else "covered"
            elif line in executable:
                kind = "uncovered"
            else:
                kind = "none"
            branch_cell = f"{taken}/{len(entries)}" if entries else ""
            code = source[line - 1] if line <= len(source) else ""
            parts.append(
                f"<tr class=\"{kind}\" id=\"f{number}-L{line}\" data-line=\"{line}\">"
                f"<td class=\"num\">{line}</td><td class=\"br\">{branch_cell}</td>"
                f"<td class=\"code\">{html.escape(code)}</td></tr>\n")
        parts.append("</table>\n")
    parts.append("</body>\n</html>\n")
    index = target_dir / "index.html"
    write_atomically(index, "".join(parts))
    return index
