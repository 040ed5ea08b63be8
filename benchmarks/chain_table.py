"""The solver chain's own table (KLEE OSDI'08 Table 1 style): queries reaching the core solver
and time, for no chain, each layer alone, and all layers, on fixed programs. One process, one
run per configuration. Usage: python benchmarks/chain_table.py"""

from __future__ import annotations

import time
from pathlib import Path

import symex

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = [
    ("regexp (assume)", ROOT / "tests/programs/regexp.c", ["-DASSUME_TERMINATED"]),
    ("2^10 branches", ROOT / "tests/programs/branches.c", ["-DN=10"]),
]
CHAINS = [(), ("independence",), ("cex",), ("trivial", "independence", "cache", "cex")]


def main() -> None:
    """Print one row per program and chain."""
    print(f"{'program':18s} {'chain':32s} {'paths':>6s} {'core queries':>13s} {'solver s':>9s} {'total s':>8s}")
    for label, source, flags in PROGRAMS:
        program = symex.compile(source, flags)
        for chain in CHAINS:
            start = time.perf_counter()
            result = symex.explore(program, solver_chain=chain)
            total = time.perf_counter() - start
            name = "+".join(chain) or "none"
            s = result.statistics
            print(f"{label:18s} {name:32s} {result.paths.completed:6d} {s.solver_queries:13,d} "
                  f"{s.solver_time:9.2f} {total:8.2f}")


if __name__ == "__main__":
    main()
