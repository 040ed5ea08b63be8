"""The memory models beside each other (core.memory.model): on programs with symbolic pointers
into several objects (pointer chasing, a table of pointers) and into one (symbolic indices),
how many paths each model explores, how many solver queries it asks and how long it takes.

    python benchmarks/memory_models.py                  # every program, best of 3
    python benchmarks/memory_models.py --only pointer_chase --repeat 5

For each program: per model, the paths (completed + errors), solver queries and CPU seconds
(``time.process_time``, best of the repetitions, the models alternating), and each model's
ratios against ``forking`` (KLEE's, the default): paths and time. The error sites found are
compared: a model that finds other errors than ``forking`` is reported (the conformance
suite, tests/test_memory_models.py, holds them equal on its programs). Not a test: figures
go to docs/benchmarks.md with the command.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import symex
from symex.core.memory.models import MEMORY_MODEL_NAMES

ROOT = Path(__file__).resolve().parent.parent

#: name -> (source, compile flags)
PROGRAMS = {
    "pointer_chase": ("benchmarks/programs/pointer_chase.c", ["-DNODES=6", "-DSTEPS=4"]),
    "keyword_table": ("benchmarks/programs/keyword_table.c", []),
    "list_walk": ("tests/programs/memory_models/list_walk.c", []),
    "symbolic_index": ("benchmarks/programs/symbolic_index.c", []),
    "regexp": ("tests/programs/regexp.c", ["-DASSUME_TERMINATED", "-DEND_OF_PATTERN=0"]),
}


#: no run takes longer than this (a model that takes it is marked "halted")
MAX_TIME = 120.0


def timed(program: symex.Program, model: str) -> tuple[float, symex.Result]:
    """CPU seconds and the result of one dfs run under ``model``."""
    started = time.process_time()
    result = symex.explore(program, searcher="dfs", memory_model=model, emit_all_errors=True,
                           max_time=MAX_TIME)
    return time.process_time() - started, result


def error_sites(result: symex.Result) -> set[tuple[str, int]]:
    """The (kind, line) of every error the run found."""
    return {(t.error.kind.value, t.error.location[1]) for t in result.tests
            if t.error is not None and t.error.location is not None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated program names")
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    names = options.only.split(",") if options.only else list(PROGRAMS)
    print(f"{'program':15s} {'model':8s} {'paths':>6s} {'queries':>8s} {'cpu s':>7s} "
          f"{'paths/forking':>14s} {'time/forking':>13s}")
    for name in names:
        source, flags = PROGRAMS[name]
        program = symex.compile(ROOT / source, flags)
        best: dict[str, float] = {}
        results: dict[str, symex.Result] = {}
        for _ in range(options.repeat):
            for model in MEMORY_MODEL_NAMES:
                seconds, result = timed(program, model)
                best[model] = min(best.get(model, seconds), seconds)
                results[model] = result
        base = results["forking"]
        for model in MEMORY_MODEL_NAMES:
            result = results[model]
            paths = result.paths.completed + result.paths.errors
            base_paths = base.paths.completed + base.paths.errors
            note = "" if error_sites(result) == error_sites(base) else \
                f"  errors differ: {sorted(error_sites(result))} vs {sorted(error_sites(base))}"
            if result.halted:
                note += f"  halted: {result.halted}"
            print(f"{name:15s} {model:8s} {paths:6d} {result.statistics.solver_queries:8d} "
                  f"{best[model]:7.3f} {paths / base_paths:13.2f}x "
                  f"{best[model] / best['forking']:12.2f}x{note}", flush=True)


if __name__ == "__main__":
    main()
