"""End to end: the default configuration (z3, queries on floats routed to bitwuzla) against
z3 answering every query (``float_solver="same"``), on float programs and on integer ones.

    python benchmarks/float_route.py [--repeat N] [--max-time SECONDS]

On the float programs the route should win what bitwuzla wins on float queries; on integer
programs it must cost nothing: no query holds a float operation, so z3 answers all of them,
and the only extra work is the route's look for float operations in each query. Each program
runs with both configurations in this one process, alternating within each repetition so
machine noise hits both alike (dfs, seed 0, the default chain); the script prints wall times
and the route's time as a ratio of z3's, with their geometric means per kind of program.
A run that hits ``--max-time`` is marked: its ratio is a bound.
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

FLOATS = HERE.parent / "tests" / "programs" / "floats"
PROGRAMS: dict[str, tuple[str, Path, tuple[str, ...], int | None]] = {
    # name -> (kind, source, compile flags, max_instructions or None for every path)
    "arithmetic": ("float", FLOATS / "arithmetic.c", (), None),
    "conversions": ("float", FLOATS / "conversions.c", (), None),
    "math": ("float", FLOATS / "math.c", (), None),
    "classes": ("float", FLOATS / "classes.c", (), None),
    "classes-double": ("float", FLOATS / "classes.c", ("-DWIDE",), None),
    "regexp": ("integer", HERE.parent / "tests" / "programs" / "regexp.c", (), None),
    "maze": ("integer", HERE / "queries" / "programs" / "maze.c", (), None),
    "expr_parser": ("integer", HERE / "queries" / "programs" / "expr_parser.c", (), 100_000),
    "rle_adler": ("integer", HERE / "queries" / "programs" / "rle_adler.c", (), None),
    "histogram": ("integer", HERE / "queries" / "programs" / "histogram.c", (), 20_000),
}

#: label -> the options that make it (the route is the default: no option)
CONFIGS: dict[str, dict[str, str]] = {"z3 alone": {"float_solver": "same"}, "route": {}}


def main() -> None:
    """Print per-program times for both configurations and the route's ratio."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--max-time", type=float, default=300.0)
    parser.add_argument("--program", action="append", choices=sorted(PROGRAMS),
                        help="only these programs (default: all)")
    args = parser.parse_args()
    names = args.program or list(PROGRAMS)
    ratios: dict[str, list[float]] = {"float": [], "integer": []}
    print(f"{'program':16} {'kind':8} {'z3 alone':>10} {'route':>10} {'ratio':>7} "
          f"{'paths':>11} {'float queries':>14}")
    for name in names:
        kind, source, flags, budget = PROGRAMS[name]
        program = symex.compile(source, list(flags))
        times: dict[str, list[float]] = {label: [] for label in CONFIGS}
        paths: dict[str, int] = {}
        limited: dict[str, bool] = {}
        routed = 0
        for _ in range(args.repeat):
            for label, options in CONFIGS.items():
                start = time.perf_counter()
                result = symex.explore(program, max_instructions=budget, seed=0,
                                       searcher="dfs", max_time=args.max_time,
                                       **options)  # type: ignore[arg-type]
                times[label].append(time.perf_counter() - start)
                paths[label] = result.paths.total
                limited[label] = result.halted is not None
                if label == "route":
                    routed = int(result.statistics.solver_layers.get("route[floats].queries", 0))
        base, route = (statistics.median(times[label]) for label in CONFIGS)
        ratio = route / base
        ratios[kind].append(ratio)
        mark = {label: "+" if limited[label] else "" for label in CONFIGS}
        print(f"{name:16} {kind:8} {base:9.2f}{mark['z3 alone']:1} {route:9.2f}{mark['route']:1} "
              f"{ratio:6.2f}x {paths['z3 alone']:>5}/{paths['route']:<5} {routed:>14}",
              flush=True)
    print("(+: stopped at --max-time; paths: z3 alone / route)")
    for kind, values in ratios.items():
        if values:
            print(f"geometric mean of route / z3 alone, {kind} programs: "
                  f"{statistics.geometric_mean(values):.2f}x over {len(values)}")


if __name__ == "__main__":
    main()
