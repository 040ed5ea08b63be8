"""What the progress display of ``symex run`` costs: the same explorations with and without it.

    python benchmarks/progress_overhead.py            # the run behind docs/benchmarks.md
    python benchmarks/progress_overhead.py --quick    # smaller programs, a smoke run

Each program is explored ``--repeats`` times in each of three modes, alternating, in one
process: ``none`` (no ``on_progress`` hook: what the library user gets), ``live`` (the rich
status line ``symex run`` draws on a terminal, rendered into /dev/null as if it were one, with
the 1-second snapshot interval the command uses there), and ``live+stats`` (the line plus the
run.stats row the command writes for each snapshot). The figure is the ratio of the medians
(and of the minima, steadier on a shared machine). Because whole runs on a busy machine vary
by more than the 2% being looked for, the cost of one snapshot (building it, drawing the line,
committing the row) is also timed on its own: at one snapshot a second, that cost over one
second is the overhead.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from collections.abc import Callable

import symex
from symex.results import Hooks
from symex.output.progress import ProgressDisplay, ProgressMode
from symex.output.runstats import RunStatsWriter

TESTS = Path(__file__).resolve().parent.parent / "tests" / "programs"


def _timed(program: Any, on_progress: Callable[[Any], None] | None) -> float:
    start = time.perf_counter()
    symex.explore(program, searcher="dfs", seed=0, progress_interval=1.0,
                  hooks=Hooks(on_progress=on_progress))
    return time.perf_counter() - start


def _run_live(program: Any, with_stats: bool, scratch: Path) -> float:
    with open(os.devnull, "w") as sink:
        display = ProgressDisplay(ProgressMode.LIVE, sink)
        writer = RunStatsWriter(scratch / f"run-{time.monotonic_ns()}.stats") if with_stats else None

        def progressed(snapshot: Any) -> None:
            if writer is not None:
                writer.add(snapshot)
            display(snapshot)
        try:
            return _timed(program, progressed)
        finally:
            display.close()
            if writer is not None:
                writer.close()


def main() -> int:
    """Run the benchmark and print one line per program and mode."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small programs, one repeat")
    parser.add_argument("--repeats", type=int, default=5)
    options = parser.parse_args()
    repeats = 1 if options.quick else options.repeats
    n = 10 if options.quick else 14
    programs = [
        (f"2^{n} branches", symex.compile(TESTS / "branches.c", [f"-DN={n}"])),
        ("regexp", symex.compile(TESTS / "regexp.c", ["-DASSUME_TERMINATED"])),
    ]
    modes: dict[str, Callable[[Any, Path], float]] = {
        "none": lambda program, scratch: _timed(program, None),
        "live": lambda program, scratch: _run_live(program, False, scratch),
        "live+stats": lambda program, scratch: _run_live(program, True, scratch),
    }
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f}; {repeats} alternating runs per mode, median seconds")
    with tempfile.TemporaryDirectory() as scratch:
        for name, program in programs:
            _timed(program, None)  # warm-up: imports, solver start, caches
            times: dict[str, list[float]] = {mode: [] for mode in modes}
            for _ in range(repeats):
                for mode, run in modes.items():
                    times[mode].append(run(program, Path(scratch)))
            base = statistics.median(times["none"])
            fastest = min(times["none"])
            for mode in modes:
                median = statistics.median(times[mode])
                print(f"{name:14s} {mode:11s} {median:7.3f} s  median {median / base:.3f}x, "
                      f"min {min(times[mode]) / fastest:.3f}x of none "
                      f"(runs {', '.join(f'{t:.2f}' for t in times[mode])})")
        per_snapshot = _snapshot_cost(programs[0][1], Path(scratch))
        print(f"one snapshot shown (live line + committed run.stats row): "
              f"{per_snapshot * 1e3:.3f} ms, i.e. {per_snapshot * 100:.3f}% of a 1-second interval")
    return 0


def _snapshot_cost(program: Any, scratch: Path, calls: int = 200) -> float:
    """Seconds per snapshot shown: the live line redrawn and a run.stats row committed."""
    snapshots: list[Any] = []
    symex.explore(program, searcher="dfs", seed=0, progress_interval=0.0,
                  max_instructions=50_000, hooks=Hooks(on_progress=snapshots.append))
    with open(os.devnull, "w") as sink:
        display = ProgressDisplay(ProgressMode.LIVE, sink)
        writer = RunStatsWriter(scratch / "cost.stats", min_interval=0.0)
        start = time.perf_counter()
        for i in range(calls):
            snapshot = snapshots[i % len(snapshots)]
            writer.add(snapshot)
            display(snapshot)
        elapsed = time.perf_counter() - start
        display.close()
        writer.close()
    return elapsed / calls


if __name__ == "__main__":
    raise SystemExit(main())
