"""What linking a C library adds to a run's start: load (link + lower) a program with symex's
own library and with musl, in the same process, alternating, and print the times and the
difference. The IR and both libraries are built (and cached) before the timing starts.

    python benchmarks/libc_load.py                      # the test programs, 5 rounds
    python benchmarks/libc_load.py prog.c --rounds 10
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from symex.loading import load, program_ir

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PROGRAMS = (ROOT / "examples" / "get_sign.c", ROOT / "tests" / "programs" / "libc" / "realistic.c")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("programs", nargs="*", type=Path, default=list(DEFAULT_PROGRAMS))
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    for source in options.programs:
        files = {libc: program_ir(source, libc=libc) for libc in ("symex", "musl")}
        times: dict[str, list[float]] = {"symex": [], "musl": []}
        functions = {}
        for _ in range(options.rounds):
            for libc in ("symex", "musl"):
                started = time.perf_counter()
                program = load(files[libc], libc=libc)
                times[libc].append(time.perf_counter() - started)
                functions[libc] = len(program.functions)
        own, musl = (statistics.median(times[k]) for k in ("symex", "musl"))
        print(f"{source.name}: load with symex's library {own * 1000:.0f} ms ({functions['symex']} functions), "
              f"with musl {musl * 1000:.0f} ms ({functions['musl']} functions): musl adds {musl - own:.2f} s "
              f"(median of {options.rounds})")


if __name__ == "__main__":
    main()
