"""Parallel exploration: the speed-up of 2 worker processes over one process, and the cost of
rebuilding a state by replay against exploring it.

    python benchmarks/parallel_benchmarks.py            # about 3 minutes
    python benchmarks/parallel_benchmarks.py --quick    # a smoke run

1. Speed-up: each program explored to the end by one process (plain ``explore``) and by
   ``workers=2`` (local processes), alternated, ``--repeat`` times; the median of the ratios.
2. Rebuild by replay: a worker explores the program for a moment and hands every exploring
   state over as a job; a fresh worker rebuilds them all (replaying their events, no
   solver). Cost per replayed event, against the cost per fork of exploring (the whole
   single-process run's time over its forks).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

import symex
from symex.description import RunDescription
from symex.parallel.jobs import ROOT_JOB
from symex.parallel.worker import StepOrder, Worker

ROOT = Path(__file__).resolve().parent.parent


def programs(quick: bool) -> list[tuple[str, Any]]:
    n = 9 if quick else 12
    return [
        (f"neighbours N={n}", symex.compile(ROOT / "benchmarks" / "programs" / "neighbours.c",
                                            [f"-DN={n}"])),
        ("regexp (7-byte pattern)", symex.compile(ROOT / "tests" / "programs" / "regexp.c")),
    ]


def timed(program: Any, **options: Any) -> tuple[float, symex.Result]:
    started = time.perf_counter()
    result = symex.explore(program, **options)
    return time.perf_counter() - started, result


def speed_up(quick: bool, repeat: int) -> None:
    print("## 1. Two worker processes against one process (same run, alternated)")
    print("| program | paths | 1 process (s) | 2 workers (s) | speed-up (median) | "
          "jobs | moves |")
    print("|---|---|---|---|---|---|---|")
    for name, program in programs(quick):
        ratios, ones, twos = [], [], []
        jobs = moves = paths = 0
        for _ in range(repeat):
            one, alone = timed(program)
            two, split = timed(program, workers=2)
            assert split.paths == alone.paths, (split.paths, alone.paths)
            ones.append(one)
            twos.append(two)
            ratios.append(one / two)
            paths = alone.paths.total
            jobs, moves = split.statistics.parallel.jobs, split.statistics.parallel.balancing_moves
        print(f"| {name} | {paths} | {statistics.median(ones):.2f} | "
              f"{statistics.median(twos):.2f} | {statistics.median(ratios):.2f}x | {jobs} | "
              f"{moves} |")
    print()


def rebuild_cost(quick: bool) -> None:
    print("## 2. Rebuilding a state by replay against exploring it")
    print("| program | jobs rebuilt | events replayed | replay per event (us) | "
          "explore per fork (us) | ratio |")
    print("|---|---|---|---|---|---|")
    settings = RunDescription()
    for name, program in programs(quick):
        seconds, alone = timed(program)
        per_fork = seconds / max(alone.statistics.forks, 1)
        source = Worker(0, program, settings)
        source.step(StepOrder(jobs=((0, ROOT_JOB),), seconds=0.3))
        jobs = source.step(StepOrder(give=10 ** 6)).exported
        source.close()
        target = Worker(1, program, settings)
        target.step(StepOrder(jobs=tuple(enumerate(jobs))))
        run = target.exploration
        started = time.perf_counter()
        while run.replaying:
            run._step()
        elapsed = time.perf_counter() - started
        events = target.replay.replayed_events
        target.close()
        per_event = elapsed / max(events, 1)
        print(f"| {name} | {len(jobs)} | {events} | {per_event * 1e6:.1f} | "
              f"{per_fork * 1e6:.1f} | {per_fork / per_event:.1f}x cheaper |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    speed_up(options.quick, 1 if options.quick else options.repeat)
    rebuild_cost(options.quick)


if __name__ == "__main__":
    main()
