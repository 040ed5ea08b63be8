"""What each of the interpreter's and the solver chain's work-removing switches is worth:
every program with all of them on, and with each one off, alternating in one process.

    python benchmarks/ab_switches.py                    # every program, best of 3
    python benchmarks/ab_switches.py --only regexp --repeat 5

The switches (environment variables, "0" turns one off):

- ``SYMEX_PROMOTE_ALLOCAS``: locals whose address never escapes live in registers
  (ir/promotion.py; read when a program is loaded, so each setting loads its own copy);
- ``SYMEX_INDEPENDENT_SPLITS``: a branch asks the solver only about the constraint groups
  its condition reads (core/independence.py);
- ``SYMEX_MEMOS``: Executor.simplify's rewrites and the casts' and literal comparisons'
  symbolic results are remembered;
- ``SYMEX_COMPILED_RUNS`` and ``SYMEX_CHAINS``: straight-line runs and chains of blocks as
  generated Python (core/interpreter/compiled_runs.py).

Prints CPU seconds (``time.process_time``: this machine is shared) for all on, then each
switch's "off / on" ratio, with paths and instructions, which no switch may change. Not a
test: figures go to docs/benchmarks.md with the command.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import symex
from symex.symargs import ArgvSpec

ROOT = Path(__file__).resolve().parent.parent

#: name -> (source, compile flags, KLEE-style arguments, libc)
PROGRAMS = {
    "regexp": ("tests/programs/regexp.c", ["-DASSUME_TERMINATED", "-DEND_OF_PATTERN=0"], [], True),
    "branches": ("tests/programs/branches.c", ["-DN=12"], [], True),
    "tokens": ("tests/programs/posix/tokens.c", [], ["--sym-stdin", "4"], True),
    "strings": ("benchmarks/programs/libc_strings.c", ["-DSIZE=12"], [], "musl"),
}

SWITCHES = ("SYMEX_PROMOTE_ALLOCAS", "SYMEX_INDEPENDENT_SPLITS", "SYMEX_MEMOS",
            "SYMEX_COMPILED_RUNS", "SYMEX_CHAINS")


def timed(program: symex.Program, arguments: list[str]) -> tuple[float, int, int]:
    """CPU seconds, completed paths and instructions of one dfs run."""
    started = time.process_time()
    result = symex.explore(program, searcher="dfs", sym_args=ArgvSpec.parse(arguments))
    return time.process_time() - started, result.paths.completed, result.statistics.instructions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated program names")
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    names = options.only.split(",") if options.only else list(PROGRAMS)
    print(f"{'program':9s} {'all on s':>9s} " + " ".join(f"{s[6:].lower():>17s}" for s in SWITCHES)
          + f" {'paths':>7s} {'instructions':>13s}")
    for name in names:
        source, flags, arguments, libc = PROGRAMS[name]
        settings = [None, *SWITCHES]  # None: all on
        programs = {}
        for off in settings:
            for switch in SWITCHES:
                os.environ[switch] = "0" if switch == off else "1"
            programs[off] = symex.compile(ROOT / source, flags=flags, libc=libc)
        best: dict[str | None, float] = {}
        seen: set[tuple[int, int]] = set()
        for _ in range(options.repeat):
            for off in settings:
                for switch in SWITCHES:
                    os.environ[switch] = "0" if switch == off else "1"
                seconds, paths, instructions = timed(programs[off], arguments)
                best[off] = min(best.get(off, seconds), seconds)
                seen.add((paths, instructions))
        for switch in SWITCHES:
            os.environ.pop(switch, None)
        paths, instructions = sorted(seen)[0]
        same = "" if len(seen) == 1 else f"  (differ: {sorted(seen)})"
        print(f"{name:9s} {best[None]:9.3f} "
              + " ".join(f"{best[s]:8.3f} ({best[s] / best[None]:4.2f}x)" for s in SWITCHES)
              + f" {paths:7,d} {instructions:13,d}{same}", flush=True)


if __name__ == "__main__":
    main()
