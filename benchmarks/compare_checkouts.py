"""Concrete speed of this checkout beside another one, alternating, on the same machine.

    git worktree add /tmp/base 2954f95                      # the checkout to compare with
    python benchmarks/compare_checkouts.py /tmp/base/src    # sort.c, 3 alternations
    python benchmarks/compare_checkouts.py /tmp/base/src --rounds 2 --alternations 5

Each measurement is a fresh process with ``PYTHONPATH`` set to one checkout's ``src``:
``symex.explore(symex.compile(benchmarks/programs/sort.c), args=[ROUNDS])``, best of 3 in
that process, printed as millions of LLVM instructions per second. The two checkouts take
turns, so a machine that gets busier or quieter over the run affects both alike; the ratio
of the best figures is printed at the end.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from collections.abc import Sequence

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent / "src"

MEASURE = """
import sys, time, symex
program = symex.compile(sys.argv[1])
best = float("inf")
for _ in range(3):
    start = time.perf_counter()
    result = symex.explore(program, args=[sys.argv[2]])
    best = min(best, time.perf_counter() - start)
print(result.statistics.instructions, result.statistics.instructions / best / 1e6)
"""


def measure(src: Path, rounds: int) -> tuple[int, float]:
    """Instructions and M instr/s of one process running ``src``'s symex."""
    env = dict(os.environ, PYTHONPATH=str(src))
    done = subprocess.run([sys.executable, "-c", MEASURE, str(HERE / "programs" / "sort.c"),
                           str(rounds)], env=env, capture_output=True, text=True, check=True)
    instructions, rate = done.stdout.split()
    return int(instructions), float(rate)


def main(argv: Sequence[str] | None = None) -> int:
    """Alternate the two checkouts and print each figure and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("baseline", type=Path, help="the other checkout's src directory")
    parser.add_argument("--rounds", type=int, default=2, help="sort rounds (argv[1] of sort.c)")
    parser.add_argument("--alternations", type=int, default=3)
    options = parser.parse_args(argv)
    best = {"baseline": 0.0, "this": 0.0}
    for _ in range(options.alternations):
        for name, src in (("baseline", options.baseline), ("this", SOURCE)):
            instructions, rate = measure(src, options.rounds)
            best[name] = max(best[name], rate)
            print(f"{name:<9} {instructions:>10,} instructions  {rate:6.2f} M instr/s", flush=True)
    print(f"this / baseline: {best['this'] / best['baseline']:.2f}x "
          f"({best['this']:.2f} against {best['baseline']:.2f} M instr/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
