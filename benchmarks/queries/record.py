"""Record the committed query corpus: run symex on each program in ``programs/`` with no solver
chain, so every query the executor asks reaches the log, and pack each log (``index.csv`` plus
one SMT-LIB2 file per query) into ``<program>.smt2.tar.xz`` next to this script.

Usage: ``python benchmarks/queries/record.py [PROGRAM...]`` (default: all five). Prints one
line per program (queries, sat, unsat, unknown, packed bytes) for the README.
"""

from __future__ import annotations

import csv
import sys
import tarfile
import tempfile
from collections import Counter
from pathlib import Path

import symex

HERE = Path(__file__).resolve().parent
#: programs shared with the test suite are recorded from there rather than copied here
SHARED_SOURCES = {"regexp": HERE.parents[1] / "tests" / "programs" / "regexp.c"}

# program name -> (compile flags, max_time seconds); times keep each log to a few thousand
# queries so the packed files stay small
RUNS: dict[str, tuple[tuple[str, ...], float]] = {
    "regexp": ((), 60.0),
    "maze": ((), 60.0),
    "expr_parser": ((), 20.0),
    "rle_adler": ((), 20.0),
    "histogram": ((), 30.0),
}


def record(name: str) -> tuple[int, Counter[str], int]:
    """Record ``programs/<name>.c`` (or the shared test program) and pack it; return (queries,
    answers, packed bytes)."""
    flags, max_time = RUNS[name]
    program = symex.compile(SHARED_SOURCES.get(name, HERE / "programs" / f"{name}.c"), flags)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / name
        symex.explore(program, write_queries=log, solver_chain=(), max_time=max_time, seed=0)
        with (log / "index.csv").open(newline="") as index:
            rows = list(csv.DictReader(index))
        answers = Counter(row["status"] for row in rows)
        packed = HERE / f"{name}.smt2.tar.xz"
        with tarfile.open(packed, "w:xz", preset=9) as tar:
            # index first, then queries in order, so a reader can stream the archive
            tar.add(log / "index.csv", arcname=f"{name}/index.csv")
            for row in rows:
                tar.add(log / row["file"], arcname=f"{name}/{row['file']}")
    return len(rows), answers, packed.stat().st_size


def main(argv: list[str]) -> int:
    """Record the programs named in ``argv`` (all by default) and print their counts."""
    names = argv or list(RUNS)
    for name in names:
        count, answers, size = record(name)
        print(f"{name}: {count} queries, sat={answers['sat']} unsat={answers['unsat']} "
              f"unknown={answers['unknown']}, {size} bytes packed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
