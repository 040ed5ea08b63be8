"""What z3's fresh checks are worth: each program explored with the incremental core given up
on after ``FRESH_AFTER_WORK`` units (the default) and never (``SYMEX_Z3_FRESH_AFTER=0``),
alternating in one process, the order reversed every other repetition.

    python benchmarks/fresh_checks.py [--repeat N] [--budget UNITS ...] [--only NAMES]

Programs: the five query-corpus programs of benchmarks/solver_default.py (dfs, seed 0, the
same instruction limits) and tests/programs/all_interval.c (a constraint puzzle whose
infeasible sides need proofs over every constraint). Prints each budget's median wall time
against "0"'s and how many checks went to a fresh solver; paths must not change. Not a test:
figures go to docs/solver.md with the command.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import symex  # noqa: E402
from solver_default import PROGRAMS  # noqa: E402
from symex.solvers.backends import z3_backend  # noqa: E402

ALL_INTERVAL = (HERE.parent / "tests" / "programs" / "all_interval.c", ("-DN=8",), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--budget", action="append",
                        help=f"work budgets to compare with 0 (default {z3_backend.FRESH_AFTER_WORK})")
    parser.add_argument("--only", help="comma-separated program names")
    options = parser.parse_args()
    budgets = ["0", *(options.budget or [str(z3_backend.FRESH_AFTER_WORK)])]
    programs = {**PROGRAMS, "all_interval": ALL_INTERVAL}
    names = options.only.split(",") if options.only else list(programs)
    # count the fresh checks of every z3 backend a run makes
    made: list[z3_backend.Z3Backend] = []
    original = z3_backend.Z3Backend.__init__

    def counting_init(self: z3_backend.Z3Backend) -> None:
        original(self)
        made.append(self)

    z3_backend.Z3Backend.__init__ = counting_init  # type: ignore[method-assign]
    print(f"{'program':13s} {'paths':>6s} " + " ".join(f"{b:>22s}" for b in budgets))
    for name in names:
        source, flags, limit = programs[name]
        program = symex.compile(str(source), list(flags))
        times: dict[str, list[float]] = {b: [] for b in budgets}
        fresh: dict[str, int] = {}
        paths: set[int] = set()
        for repetition in range(options.repeat):
            for budget in (budgets if repetition % 2 == 0 else budgets[::-1]):
                os.environ[z3_backend.FRESH_AFTER_VARIABLE] = budget
                made.clear()
                started = time.perf_counter()
                result = symex.explore(program, searcher="dfs", seed=0, max_instructions=limit)
                times[budget].append(time.perf_counter() - started)
                fresh[budget] = sum(b.fresh_checks for b in made)
                paths.add(result.paths.total)
        base = statistics.median(times["0"])
        cells = [f"{statistics.median(times[b]):6.2f}s {statistics.median(times[b]) / base:5.2f}x "
                 f"{fresh[b]:4d} fresh" for b in budgets]
        print(f"{name:13s} {'/'.join(map(str, sorted(paths))):>6s} " + " ".join(cells), flush=True)


if __name__ == "__main__":
    main()
