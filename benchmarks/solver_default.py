"""End to end: how long symex.explore takes with each candidate default solver configuration.

    python benchmarks/solver_default.py [--config CONFIG ...] [--repeat N]

The query replay (benchmarks/queries/replay.py) times queries in isolation and with no solver
chain. A user sees something else: explore() with the chain on, where most branches never reach
the solver. This runs the five query-corpus programs through explore() (dfs, seed 0, the
default chain) with each configuration, in this one process, alternating configurations
within each repetition so machine noise hits them alike, and prints each run's wall time
against the first configuration's. Time-limited recordings are bounded by instructions here,
so every configuration explores exactly the same paths.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import symex  # noqa: E402

PROGRAMS: dict[str, tuple[Path, tuple[str, ...], int | None]] = {
    # name -> (source, compile flags, max_instructions or None for every path)
    "regexp": (HERE.parent / "tests" / "programs" / "regexp.c", (), None),
    "maze": (HERE / "queries" / "programs" / "maze.c", (), None),
    "expr_parser": (HERE / "queries" / "programs" / "expr_parser.c", (), 100_000),
    "rle_adler": (HERE / "queries" / "programs" / "rle_adler.c", (), None),
    "histogram": (HERE / "queries" / "programs" / "histogram.c", (), 20_000),
}

DEFAULT_CONFIGS = ["z3", "bitwuzla", "cvc5", "z3:array-assert:assumptions",
                   "bitwuzla:array-assert:none", "portfolio(z3, bitwuzla)"]


def main() -> None:
    """Print per-program times per configuration and the geometric mean of the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", action="append", help="configurations (first = base)")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    configs = args.config or DEFAULT_CONFIGS
    times: dict[tuple[str, str], list[float]] = {}
    paths: dict[tuple[str, str], int] = {}
    for name, (source, flags, budget) in PROGRAMS.items():
        program = symex.compile(source, list(flags))
        for _ in range(args.repeat):
            for config in configs:
                solver = symex.solver(config)
                if hasattr(solver, "wait_ready"):
                    solver.wait_ready(60)  # worker start-up is not exploration time
                try:
                    start = time.perf_counter()
                    result = symex.explore(program, solver=solver, max_instructions=budget,
                                           seed=0)
                    elapsed = time.perf_counter() - start
                finally:
                    solver.close()
                times.setdefault((name, config), []).append(elapsed)
                paths[(name, config)] = result.paths.total
                print(f"{name:12} {config:32} {elapsed:7.2f} s  {result.paths.total} paths, "
                      f"{result.statistics.solver_queries} core queries", flush=True)
    print()
    print(f"{'program':12} " + " ".join(f"{c[:24]:>24}" for c in configs))
    ratios: dict[str, list[float]] = {c: [] for c in configs}
    for name in PROGRAMS:
        base = statistics.median(times[(name, configs[0])])
        cells = []
        for config in configs:
            t = statistics.median(times[(name, config)])
            ratios[config].append(t / base)
            cells.append(f"{t:8.2f}s ({t / base:5.2f}x)")
        print(f"{name:12} " + " ".join(f"{c:>24}" for c in cells))
    print(f"{'geo. mean':12} " + " ".join(
        f"{statistics.geometric_mean(ratios[c]):23.2f}x" for c in configs))


if __name__ == "__main__":
    main()
