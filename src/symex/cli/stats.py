"""``symex stats DIR...``: the table KLEE users know from ``klee-stats``, read from run.stats.

Columns: Path, Instrs, Time(s), ICov(%), BCov(%), ICount, TSolver(%); ``--print-all`` adds
States, Queries, CacheHits, CacheMisses, one time column per solver layer, and MoKlee's
columns for runs over a recorded execution tree: Irepl, Inew, Ilost (instructions replayed,
new, lost to divergences), SDiv (diverged states), SPrepl (pruned states), Qrepl (queries the
replay saved), PTTime(s) (tree upkeep), TreeBytes and BytesPerNode. A ``Total`` row
follows when several directories are given. ``--workers`` prints instead a row per worker of
runs with workers (``symex run --workers N``), from their last snapshot. A rich table on a terminal, aligned plain text
otherwise, CSV with ``--csv``.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from symex.errors import SymexError, error_text
from symex.output.rendering import counted
from symex.output.runstats import RunStats, read_run_stats
from symex.output.test_index import read_test_index

__all__ = ["BASIC_COLUMNS", "WORKER_TABLE_COLUMNS", "add_parser", "main", "stats_table",
           "worker_table"]

BASIC_COLUMNS = ("Path", "Instrs", "Time(s)", "ICov(%)", "BCov(%)", "ICount", "TSolver(%)")
_EXTRA_COLUMNS = ("States", "Queries", "CacheHits", "CacheMisses")
#: MoKlee's columns: (title, run.stats column)
_MEMO_COLUMNS = (("Irepl", "Irepl"), ("Inew", "Inew"), ("Ilost", "Ilost"), ("SDiv", "SDiv"),
                 ("SPrepl", "SPrepl"), ("Qrepl", "Qrepl"), ("PTTime(s)", "PTTime"),
                 ("TreeBytes", "TreeBytes"))
#: solver_layers counters whose hits answer a query without the core solver
_CACHE_LAYERS = ("cache_hits", "cex_hits")


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Declare ``symex stats`` and its options."""
    stats = commands.add_parser("stats", help="summarise the statistics of symex output directories",
                                description="Print klee-stats' table for each output directory "
                                            "written by 'symex run'.")
    stats.add_argument("directories", nargs="+", metavar="DIR", help="a symex-out-N directory")
    stats.add_argument("--print-all", action="store_true",
                       help="also states, queries, cache hits and misses, per-layer solver times")
    stats.add_argument("--workers", action="store_true",
                       help="a row per worker of runs with workers (--workers N)")
    stats.add_argument("--csv", action="store_true", help="comma-separated values, for scripts")


def _layer_time_columns(runs: list[RunStats]) -> list[tuple[str, str]]:
    """(column title, solver_layers key) for every ``*_time`` counter of any run, chain order."""
    from symex.solvers.chain import CHAIN_LAYERS  # noqa: PLC0415 (the table with every column)

    order = [*CHAIN_LAYERS, "core"]
    keys = {k for run in runs for k in run.solver_layers if k.endswith("_time")}
    names = sorted((k[:-len("_time")] for k in keys),
                   key=lambda n: (order.index(n) if n in order else len(order), n))
    return [(f"T{name.capitalize()}(s)", f"{name}_time") for name in names]


def _values(path: str, run: RunStats, print_all: bool,
            layer_columns: list[tuple[str, str]]) -> list[object]:
    if not run.rows:
        # killed before its first progress row: nothing but the tests on disk is known
        width = len(BASIC_COLUMNS) + (len(_EXTRA_COLUMNS) + len(layer_columns)
                                      + len(_MEMO_COLUMNS) + 1 if print_all else 0)
        return [path] + [None] * (width - 1)
    last = run.last
    row: list[object] = [path, int(last["Instructions"]), round(last["WallTime"], 2),
                         round(run.instruction_coverage, 2), round(run.branch_coverage, 2),
                         run.total_instructions, round(run.solver_share, 2)]
    if print_all:
        layers = run.solver_layers
        row += [int(last["NumStates"]), int(last["NumQueries"]),
                int(sum(layers.get(k, 0) for k in _CACHE_LAYERS)),
                int(layers.get("core_queries", last["NumQueries"]))]
        row += [round(layers.get(key, 0.0), 3) for _, key in layer_columns]
        row += [round(last[column], 3) if column == "PTTime" else int(last[column])
                for _, column in _MEMO_COLUMNS]
        nodes = last["TreeNodes"]
        row.append(round(last["TreeBytes"] / nodes, 1) if nodes else 0.0)
    return row


def _total(rows: list[list[object]], runs: list[RunStats], print_all: bool) -> list[object]:
    runs = [run for run in runs if run.rows]
    instrs = sum(int(r.last["Instructions"]) for r in runs)
    wall = sum(r.last["WallTime"] for r in runs)
    icount = sum(r.total_instructions for r in runs)
    covered = sum(r.last["CoveredInstructions"] for r in runs)
    branches = sum(r.last["TotalBranches"] for r in runs)
    covered_branches = sum(r.last["CoveredBranches"] for r in runs)
    solver = sum(r.last["SolverTime"] for r in runs)
    total: list[object] = [
        "Total", instrs, round(wall, 2), round(100.0 * covered / icount if icount else 0.0, 2),
        round(100.0 * covered_branches / branches if branches else 0.0, 2), icount,
        round(100.0 * solver / wall if wall else 0.0, 2)]
    if print_all:
        for column in range(len(BASIC_COLUMNS), len(rows[0])):
            values = [row[column] for row in rows if row[column] is not None]
            summed = sum(v for v in values if isinstance(v, (int, float)))
            total.append(round(summed, 3) if isinstance(summed, float) else summed)
        # a ratio is not summed: the whole of the runs' bytes over the whole of their nodes
        nodes = sum(r.last["TreeNodes"] for r in runs)
        total[-1] = round(sum(r.last["TreeBytes"] for r in runs) / nodes, 1) if nodes else 0.0
    return total


def _read_runs(directories: list[str]) -> list[RunStats]:
    runs = []
    for directory in directories:
        if not Path(directory).is_dir():
            raise SymexError(f"{directory} is not a directory; pass a directory written by 'symex run'")
        if not (Path(directory) / "run.stats").is_file():
            raise SymexError(f"{directory} is not a symex output directory (it has no run.stats); "
                             f"pass a directory written by 'symex run'")
        runs.append(read_run_stats(Path(directory) / "run.stats"))
    return runs


def unfinished_notes(directories: list[str], runs: list[RunStats]) -> list[str]:
    """A line for each run that did not finish (no ``info`` file: killed), saying what its
    figures are and what its directory holds."""
    notes = []
    for directory, run in zip(directories, runs):
        if (Path(directory) / "info").is_file():
            continue
        entries = read_test_index(directory)
        if entries is not None:
            counts = {status: sum(1 for e in entries.values() if e.status == status)
                      for status in ("completed", "error", "partial")}
            held = (f"its {counted(len(entries), 'test')} ({counts['completed']} completed, "
                    f"{counted(counts['error'], 'error')}, {counts['partial']} partial) are on "
                    f"disk (tests.csv)")
        else:
            held = f"{counted(len(list(Path(directory).glob('*.ktest'))), 'test')} are on disk"
        if run.rows:
            notes.append(f"{directory} did not finish (it has no info file): its figures are "
                         f"from its last progress row, {run.last['WallTime']:.1f} s into the "
                         f"run; {held}")
        else:
            notes.append(f"{directory} did not finish and wrote no progress row (one is "
                         f"written every 2 s): its instructions, time and coverage are not "
                         f"known; {held}")
    return notes


#: ``--workers`` columns: (title, run.stats ``workers`` column)
WORKER_TABLE_COLUMNS = (("Worker", "Worker"), ("Searcher", "Searcher"),
                        ("Instrs", "Instructions"), ("Completed", "CompletedPaths"),
                        ("Errors", "ErrorPaths"), ("Partial", "PartialPaths"), ("Jobs", "Jobs"),
                        ("Queries", "NumQueries"), ("TSolver(s)", "SolverTime"),
                        ("Replayed", "ReplayedEvents"), ("SharedHits", "SharedCacheHits"))


def worker_table(directories: list[str], runs: list[RunStats] | None = None
                 ) -> tuple[list[str], list[list[object]]]:
    """Header and a row per worker of each directory's run (none for a run without workers).

    Raises :class:`SymexError` as :func:`stats_table` does."""
    header = ["Path"] + [title for title, _ in WORKER_TABLE_COLUMNS]
    rows: list[list[object]] = []
    for directory, run in zip(directories, runs if runs is not None else _read_runs(directories)):
        for worker in run.workers:
            rows.append([directory] + [round(worker[column], 2) if column == "SolverTime"
                                       else worker[column] for _, column in WORKER_TABLE_COLUMNS])
    return header, rows


def stats_table(directories: list[str], print_all: bool = False,
                runs: list[RunStats] | None = None) -> tuple[list[str], list[list[object]]]:
    """Header and rows (a ``Total`` row last when several directories) for ``directories``.

    Raises :class:`SymexError` naming the first directory that is not a symex output directory."""
    runs = runs if runs is not None else _read_runs(directories)
    layer_columns = _layer_time_columns(runs) if print_all else []
    header = list(BASIC_COLUMNS)
    if print_all:
        header += list(_EXTRA_COLUMNS) + [title for title, _ in layer_columns]
        header += [title for title, _ in _MEMO_COLUMNS] + ["BytesPerNode"]
    rows = [_values(d, r, print_all, layer_columns) for d, r in zip(directories, runs)]
    if len(rows) > 1:
        rows.append(_total(rows, runs, print_all))
    return header, rows


def _text(value: object) -> str:
    if value is None:
        return "-"  # not known (a run killed before its first progress row)
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def main(options: argparse.Namespace) -> int:
    """Run ``symex stats`` with parsed ``options``; the exit status."""
    try:
        runs = _read_runs(options.directories)
        if options.workers:
            header, rows = worker_table(options.directories, runs)
        else:
            header, rows = stats_table(options.directories, options.print_all, runs)
        for note in unfinished_notes(options.directories, runs):
            sys.stderr.write(f"symex stats: {note}\n")
    except SymexError as exc:
        sys.stderr.write(error_text("symex stats", exc))
        return 2
    try:
        if options.csv:
            writer = csv.writer(sys.stdout, lineterminator="\n")
            writer.writerow(header)
            writer.writerows([["" if value is None else value for value in row] for row in rows])
        elif sys.stdout.isatty():
            from rich.console import Console
            from rich.table import Table

            table = Table()
            for index, title in enumerate(header):
                table.add_column(title, justify="left" if index == 0 else "right", no_wrap=True)
            for row in rows:
                table.add_row(*(_text(v) for v in row))
            console = Console()
            # a table wider than the terminal: let the terminal wrap it rather than rich cut
            # every cell down to one character
            cells = [header] + [[_text(v) for v in row] for row in rows]
            needed = sum(max(len(r[i]) for r in cells) + 3 for i in range(len(header))) + 1
            if needed > console.width:
                console = Console(width=needed)
            console.print(table)
        else:
            cells = [header] + [[_text(v) for v in row] for row in rows]
            widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
            for r in cells:
                # the path column left-aligned, numbers right-aligned, as klee-stats
                sys.stdout.write("  ".join([r[0].ljust(widths[0])]
                                           + [c.rjust(w) for c, w in zip(r[1:], widths[1:])]).rstrip()
                                 + "\n")
    except BrokenPipeError:
        return 0
    return 0
