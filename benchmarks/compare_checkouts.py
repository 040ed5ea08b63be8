"""Speed of this checkout beside another one, alternating, on the same machine: concrete
(sort.c) by default, or with ``--symbolic`` the dfs runs of ``benchmarks/ab_switches.py``'s
programs (regexp, branches, tokens, strings; CPU seconds, best of 3 in each process).

    git worktree add /tmp/base 2954f95                      # the checkout to compare with
    python benchmarks/compare_checkouts.py /tmp/base/src    # sort.c, 3 alternations
    python benchmarks/compare_checkouts.py /tmp/base/src --rounds 2 --alternations 5
    python benchmarks/compare_checkouts.py /tmp/base/src --symbolic --alternations 2

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


SYMBOLIC = """
import sys, time, symex
sys.path.insert(0, sys.argv[1])
from ab_switches import PROGRAMS, ROOT, timed
for name, (source, flags, arguments, libc) in PROGRAMS.items():
    program = symex.compile(ROOT / source, flags=flags, libc=libc)
    best = min(timed(program, arguments) for _ in range(3))
    print(name, f"{best[0]:.3f}", best[1], best[2], flush=True)
"""


def measure_symbolic(src: Path) -> dict[str, tuple[float, int, int]]:
    """Per program: CPU seconds, paths and instructions of one process running ``src``'s
    symex (the programs and runs of ``ab_switches.py``, from this checkout)."""
    env = dict(os.environ, PYTHONPATH=str(src))
    done = subprocess.run([sys.executable, "-c", SYMBOLIC, str(HERE)], env=env,
                          capture_output=True, text=True, check=True)
    rows = {}
    for line in done.stdout.split("\n"):
        if line.strip():
            name, seconds, paths, instructions = line.split()
            rows[name] = (float(seconds), int(paths), int(instructions))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Alternate the two checkouts and print each figure and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("baseline", type=Path, help="the other checkout's src directory")
    parser.add_argument("--rounds", type=int, default=2, help="sort rounds (argv[1] of sort.c)")
    parser.add_argument("--alternations", type=int, default=3)
    parser.add_argument("--symbolic", action="store_true",
                        help="time ab_switches.py's symbolic programs instead of sort.c")
    options = parser.parse_args(argv)
    if options.symbolic:
        fastest: dict[str, dict[str, float]] = {"baseline": {}, "this": {}}
        for _ in range(options.alternations):
            for name, src in (("baseline", options.baseline), ("this", SOURCE)):
                for program, (seconds, paths, instructions) in measure_symbolic(src).items():
                    fastest[name][program] = min(fastest[name].get(program, seconds), seconds)
                    print(f"{name:<9} {program:9s} {seconds:7.3f} s  {paths:7,d} paths  "
                          f"{instructions:11,d} instructions", flush=True)
        for program, seconds in fastest["this"].items():
            print(f"{program}: this / baseline {seconds / fastest['baseline'][program]:.2f}x")
        return 0
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
