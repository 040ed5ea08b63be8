"""Garbage collection while paths run: symex's thresholds and frozen start-up heap
(symex.core.interpreter.collection, as shipped) against Python's defaults, alternating in one process.

    python benchmarks/collection.py [--repeat N] [--seconds S]

Programs: tests/programs/regexp.c (many short paths) and rle_adler.c (solver work), run to
the end; and, where benchmarks/memcached.py has built it (``--memcached PATH``), memcached
with two symbolic packets for ``--seconds`` (default 40), where the many live states make
full collections expensive. Prints instructions per second and seconds spent collecting
(``gc.callbacks``) for each setting, and the ratio shipped / defaults of instructions per
second (above 1: the shipped setting is faster).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import symex  # noqa: E402
import symex.exploration as engine  # noqa: E402  (the loop that collects less often)
from symex.core.interpreter.collection import fewer_collections  # noqa: E402

COLLECTING = [0.0, 0.0]


def _timer(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        COLLECTING[1] = time.perf_counter()
    else:
        COLLECTING[0] += time.perf_counter() - COLLECTING[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--memcached", type=Path, help="a memcached built by benchmarks/memcached.py")
    options = parser.parse_args()
    runs: list[tuple[str, object, dict[str, object]]] = [
        ("regexp", symex.compile(HERE.parent / "tests/programs/regexp.c",
                                 ["-DASSUME_TERMINATED", "-DEND_OF_PATTERN=0"]), {}),
        ("rle_adler", symex.compile(HERE / "queries/programs/rle_adler.c"), {}),
    ]
    if options.memcached is not None:
        os.environ.setdefault("SYMEX_LIBC", "musl")
        runs.append(("memcached", symex.compile(options.memcached),
                     dict(args=["-p", "11211", "-U", "0", "-t", "1", "-u", "root"], sym_packets=(2, 64),
                          max_time=options.seconds, searcher=["random-path", "nurs:covnew"],
                          max_idle_time_outs=16)))
    gc.callbacks.append(_timer)
    for name, program, arguments in runs:
        rates: dict[bool, list[float]] = {True: [], False: []}
        collecting: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(options.repeat):
            for shipped in (True, False):
                engine.fewer_collections = fewer_collections if shipped else contextlib.nullcontext
                COLLECTING[0] = 0.0
                started = time.perf_counter()
                result = symex.explore(program, seed=0, **arguments)  # type: ignore[arg-type]
                elapsed = time.perf_counter() - started
                rates[shipped].append(result.statistics.instructions / elapsed)
                collecting[shipped].append(COLLECTING[0])
        engine.fewer_collections = fewer_collections
        ours, theirs = statistics.median(rates[True]), statistics.median(rates[False])
        print(f"{name}: shipped {ours / 1e3:.0f} k instructions/s (collecting "
              f"{statistics.median(collecting[True]):.2f} s), defaults {theirs / 1e3:.0f} k/s "
              f"(collecting {statistics.median(collecting[False]):.2f} s); shipped / defaults = "
              f"{ours / theirs:.2f}x", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
