"""Constant writes over a symbolic object read at a symbolic index: spelled out as an
if-then-else ending in a select of the object (hybrid, as shipped) against the select
through the stores (``HybridEncoding(symbolic_few_writes=False)``, as before).

    python benchmarks/queries/symbolic_writes.py CORPUS... [--config z3] [--limit 400] \\
        [--budget 30] [--cutoff 10]
    python benchmarks/queries/symbolic_writes.py --programs [--config z3] [--repeat 2]

Each CORPUS is replayed by benchmarks/queries/replay.py twice, the two sides alternating
corpus by corpus in this run: once with the encoding as it was, once as shipped. Prints
each side's total over the queries both replayed and the ratio (before / shipped: above 1
means the spelled-out reads are faster). With ``--programs``, benchmarks/solver_default.py's
five programs are explored end to end instead, the two sides alternating in this process
(median of ``--repeat`` runs each; paths must be equal). Not a test: figures go to
docs/solver.md.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import time
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "src"))
sys.path.insert(0, str(HERE))

import replay  # noqa: E402

import symex  # noqa: E402
import symex.encodings as encodings  # noqa: E402
from symex.encodings import HybridEncoding  # noqa: E402


def replayed(corpus: str, options: argparse.Namespace, spelled_out: bool, out: Path) -> dict[str, float]:
    """Seconds per query of one side on ``corpus``."""
    encodings.ENCODINGS["hybrid"] = HybridEncoding(symbolic_few_writes=spelled_out)
    replay.main([corpus, "--config", options.config, "--limit", str(options.limit),
                 "--budget", str(options.budget), "--cutoff", str(options.cutoff), "--csv", str(out)])
    with out.open() as handle:
        return {row["query"]: float(row["seconds"]) for row in csv.DictReader(handle)}


def programs(options: argparse.Namespace) -> None:
    """Each of solver_default.py's programs explored with both sides, alternating."""
    sys.path.insert(0, str(HERE.parent))
    from solver_default import PROGRAMS  # noqa: PLC0415
    print(f"{'program':12} {'before s':>9} {'shipped s':>9} {'ratio':>6} paths")
    for name, (source, flags, budget) in PROGRAMS.items():
        program = symex.compile(source, list(flags))
        times: dict[bool, list[float]] = {False: [], True: []}
        paths: dict[bool, int] = {}
        for _ in range(options.repeat):
            for spelled_out in (False, True):
                encodings.ENCODINGS["hybrid"] = HybridEncoding(symbolic_few_writes=spelled_out)
                started = time.perf_counter()
                result = symex.explore(program, solver=options.config, max_instructions=budget, seed=0)
                times[spelled_out].append(time.perf_counter() - started)
                paths[spelled_out] = result.paths.total
        old, new = statistics.median(times[False]), statistics.median(times[True])
        print(f"{name:12} {old:9.2f} {new:9.2f} {old / new:6.2f} {paths[False]} {paths[True]}",
              flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", nargs="*")
    parser.add_argument("--programs", action="store_true", help="explore solver_default.py's programs")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--config", default="z3")
    parser.add_argument("--limit", type=int, default=400)
    parser.add_argument("--budget", type=float, default=30.0)
    parser.add_argument("--cutoff", type=float, default=10.0)
    options = parser.parse_args()
    if options.programs:
        programs(options)
        return 0
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for corpus in options.corpora:
            before = replayed(corpus, options, False, Path(scratch) / "before.csv")
            shipped = replayed(corpus, options, True, Path(scratch) / "shipped.csv")
            both = before.keys() & shipped.keys()
            old, new = sum(before[q] for q in both), sum(shipped[q] for q in both)
            rows.append((Path(corpus).name, len(both), len(before), len(shipped), old, new))
    print(f"\n{'corpus':32} {'both':>5} {'before':>7} {'shipped':>7} {'before s':>9} "
          f"{'shipped s':>9} {'ratio':>6}")
    for name, both_count, old_count, new_count, old, new in rows:
        print(f"{name:32} {both_count:5} {old_count:7} {new_count:7} {old:9.2f} {new:9.2f} "
              f"{old / new if new else float('nan'):6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
