"""Constant tables read as if-then-else over their values, against pinning every byte.

    python benchmarks/table_reads.py [--repeat N] [--config CONFIG ...] [--only TEXT]

Runs each program to the end with each solver configuration twice per repetition: with the
encodings as shipped (an unwritten constant array read at a symbolic index is an
if-then-else over its distinct values, symex.encodings.table) and with the seed's encodings
(array-assert pins all of a constant array's bytes with one assertion each; ite chains one
if-then-else per non-zero byte). Both run in this one process, alternating, so machine noise
hits them alike. Prints wall time, solver time and core queries per run, and the ratio of the
medians (seed / shipped: above 1 means table reads are faster). Paths must be equal.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))

import symex  # noqa: E402
import symex.encodings as encodings  # noqa: E402
from symex.encodings import ArrayAssertEncoding, IteEncoding  # noqa: E402

PROGRAMS: dict[str, tuple[Path, tuple[str, ...], dict[str, Any]]] = {
    # name -> (source, compile flags, explore() options)
    "tokens --sym-stdin 3": (ROOT / "tests" / "programs" / "posix" / "tokens.c", (),
                             {"sym_stdin": 3}),
    "tokens --sym-stdin 4": (ROOT / "tests" / "programs" / "posix" / "tokens.c", (),
                             {"sym_stdin": 4}),
    "expr_parser": (HERE / "queries" / "programs" / "expr_parser.c", (),
                    {"max_instructions": 100_000}),
    "regexp (no table)": (ROOT / "tests" / "programs" / "regexp.c", (), {}),
}

DEFAULT_CONFIGS = ["z3", "bitwuzla", "z3:ite"]


def use_table_reads(on: bool) -> None:
    """Register the shipped encodings (``on``) or the seed's, under the same names."""
    encodings.ENCODINGS["array-assert"] = ArrayAssertEncoding(table_reads=on)
    encodings.ENCODINGS["ite"] = IteEncoding(table_reads=on)


def run_once(program: symex.Program, config: str, options: dict[str, Any]) -> tuple[float, float, int, int]:
    """(wall seconds, solver seconds, core queries, paths) of one exploration."""
    started = time.perf_counter()
    result = symex.explore(program, solver=config, seed=0, **options)
    wall = time.perf_counter() - started
    stats = result.statistics
    core = int(stats.solver_layers.get("core_queries", stats.solver_queries))
    paths = result.paths.completed + result.paths.errors + result.paths.partial
    return wall, stats.solver_time, core, paths


def main() -> None:
    """Print each program's runs and the seed/shipped ratio per configuration."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--config", action="append", help="solver configurations")
    parser.add_argument("--only", help="run only the programs whose name contains this")
    args = parser.parse_args()
    configs = args.config or DEFAULT_CONFIGS
    try:
        for name, (source, flags, options) in PROGRAMS.items():
            if args.only and args.only not in name:
                continue
            program = symex.compile(source, list(flags))
            for config in configs:
                runs: dict[bool, list[tuple[float, float, int, int]]] = {True: [], False: []}
                for _ in range(args.repeat):
                    for on in (False, True):
                        use_table_reads(on)
                        runs[on].append(run_once(program, config, options))
                paths = {run[3] for both in runs.values() for run in both}
                if len(paths) != 1:
                    raise SystemExit(f"{name} {config}: paths differ between runs: {paths}")
                line = [f"{name:22} {config:9} paths {paths.pop():6}"]
                for on, label in ((False, "seed"), (True, "tables")):
                    wall = statistics.median(r[0] for r in runs[on])
                    solver = statistics.median(r[1] for r in runs[on])
                    core = statistics.median(r[2] for r in runs[on])
                    line.append(f"{label}: {wall:7.2f} s (solver {solver:6.2f} s, "
                                f"{core:5.0f} core queries)")
                wall_ratio = (statistics.median(r[0] for r in runs[False])
                              / statistics.median(r[0] for r in runs[True]))
                solver_ratio = (statistics.median(r[1] for r in runs[False])
                                / max(statistics.median(r[1] for r in runs[True]), 1e-9))
                line.append(f"seed/tables: wall {wall_ratio:.2f}x, solver {solver_ratio:.2f}x")
                print(" | ".join(line), flush=True)
    finally:
        use_table_reads(True)


if __name__ == "__main__":
    main()
