"""Memoized exploration's figures (issue 10's performance targets), each a ratio measured in
one process against a baseline run of the same program in the same process.

    python benchmarks/memo_benchmarks.py            # the run behind docs/benchmarks.md
    python benchmarks/memo_benchmarks.py --quick    # small inputs, one repeat: a smoke run

1. Replay: a run that records its tree, then a pure replay of it (``continue_with``,
   ``restart_all_states``, ``stop_after_replay``): time of each, their ratio (target: replay
   at least 20x faster), and the solver queries each made.
2. Recording overhead: the same run with and without ``record_tree``, alternating, best of
   ``--repeats``; target at most 5 %.
3. Tree size: bytes of tree.db per node after each recording (target at most 64).
4. Resume: one run of 2T seconds against two runs of T, the second continuing the first;
   the covered lines and branches of each (target: the two short runs cover at least what the
   long one does).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import symex

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests" / "programs"


def programs(quick: bool) -> list[tuple[str, Any, dict[str, Any]]]:
    """(name, program, explore options): solver-heavy programs that finish (or are bounded)."""
    n = 8 if quick else 10
    return [
        (f"neighbours N={n}", symex.compile(ROOT / "benchmarks" / "programs" / "neighbours.c",
                                            [f"-DN={n}"]), {}),
        ("regexp (7-byte pattern)", symex.compile(TESTS / "regexp.c"), {}),
        ("tokens --sym-stdin 4" if not quick else "tokens --sym-stdin 3",
         symex.compile(TESTS / "posix" / "tokens.c"), {"sym_stdin": 3 if quick else 4}),
        ("histogram, 20k instructions" if not quick else "histogram, 5k instructions",
         symex.compile(ROOT / "benchmarks" / "queries" / "programs" / "histogram.c"),
         {"max_instructions": 5_000 if quick else 20_000}),
    ]


def timed(program: Any, **options: Any) -> tuple[float, symex.Result]:
    started = time.perf_counter()
    result = symex.explore(program, searcher="dfs", seed=0, **options)
    return time.perf_counter() - started, result


def replay_and_size(work: Path, quick: bool) -> None:
    print("## 1. Replay of a recorded run, and 3. tree size")
    print("| program | paths | record | replay | record / replay | queries record / replay "
          "| nodes | bytes per node |")
    print("|---|---|---|---|---|---|---|---|")
    for name, program, options in programs(quick):
        tree = work / f"{abs(hash(name))}.db"
        recording, recorded = timed(program, record_tree=tree, **options)
        # the replay is not limited: it stops where the recording's paths stop
        inputs = {k: v for k, v in options.items() if k != "max_instructions"}
        replaying, replayed = timed(program, continue_with=tree, restart_all_states=True,
                                    stop_after_replay=True, **inputs)
        assert replayed.paths == recorded.paths, (name, recorded.paths, replayed.paths)
        memo = recorded.statistics.memo
        print(f"| {name} | {recorded.paths.total} | {recording:.2f} s | {replaying:.2f} s | "
              f"{recording / replaying:.1f}x | {recorded.statistics.solver_queries} / "
              f"{replayed.statistics.solver_queries} | {memo.tree_nodes} | "
              f"{memo.bytes_per_node:.1f} |")


def overhead(work: Path, quick: bool, repeats: int) -> None:
    print("\n## 2. Recording overhead (best of", repeats, "alternating runs)")
    print("| program | without | with tree | overhead | of which tree upkeep (PTTime) |")
    print("|---|---|---|---|---|")
    for name, program, options in programs(quick):
        plain, recording, upkeep = [], [], []
        for i in range(repeats):
            plain.append(timed(program, **options)[0])
            tree = work / f"overhead-{i}-{abs(hash(name))}.db"
            seconds, result = timed(program, record_tree=tree, **options)
            recording.append(seconds)
            upkeep.append(result.statistics.memo.tree_time)
        best_plain, best_recording = min(plain), min(recording)
        print(f"| {name} | {best_plain:.2f} s | {best_recording:.2f} s | "
              f"{100 * (best_recording / best_plain - 1):+.1f} % | "
              f"{100 * min(upkeep) / best_plain:.1f} % |")


def resume(work: Path, quick: bool) -> None:
    print("\n## 4. Resume: one run of 2T seconds against two of T, the second continuing")
    print("| program | T | run | lines | branches | paths |")
    print("|---|---|---|---|---|---|")
    cases = [("calc --sym-stdin 10", TESTS / "ordinary" / "calc.c", {"sym_stdin": 10}),
             ("tokens --sym-stdin 8", TESTS / "posix" / "tokens.c", {"sym_stdin": 8}),
             ("expr_parser", ROOT / "benchmarks" / "queries" / "programs" / "expr_parser.c", {})]
    for name, source, options in cases:
        program = symex.compile(source)
        # small programs reach their final coverage within seconds: a short T shows the race
        for period in (0.25, 0.5) if quick else (0.25, 0.5, 10.0):
            _, whole = timed(program, max_time=2 * period, **options)
            tree = work / f"resume-{abs(hash(name))}-{period}.db"
            _, first = timed(program, max_time=period, record_tree=tree, **options)
            _, second = timed(program, max_time=period, continue_with=tree, **options)
            lines = first.coverage.covered_lines | second.coverage.covered_lines
            branches = first.coverage.covered_branches | second.coverage.covered_branches
            total_lines = len(whole.coverage.total_lines)
            total_branches = len(whole.coverage.total_branches)
            print(f"| {name} | {period} s | one of 2T | {len(whole.coverage.covered_lines)}/"
                  f"{total_lines} | {len(whole.coverage.covered_branches)}/{total_branches} | "
                  f"{whole.paths.total} |")
            print(f"| {name} | {period} s | two of T | {len(lines)}/{total_lines} | "
                  f"{len(branches)}/{total_branches} | {first.paths.total} + "
                  f"{second.paths.total} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small inputs, one repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", choices=("replay", "overhead", "resume"))
    options = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="symex-memo-bench-"))
    try:
        repeats = 1 if options.quick else options.repeats
        if options.only in (None, "replay"):
            replay_and_size(work, options.quick)
        if options.only in (None, "overhead"):
            overhead(work, options.quick, repeats)
        if options.only in (None, "resume"):
            resume(work, options.quick)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
