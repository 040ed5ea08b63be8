"""Memory of waiting states in real explorations: parking and paged copies on, then off.

    python benchmarks/waiting_states.py            # the runs behind docs/benchmarks.md
    python benchmarks/waiting_states.py --quick    # smaller programs, a few seconds

engine_speed.py's section 3 measures one synthetic state; this runs explorations that leave
thousands of states waiting at once (bfs, so the frontier is a whole level of the tree) and
reports the Python heap (tracemalloc) per live state when the most states are alive (heap
growth since the run started, divided by their number), with symex as
it is and, in the same process, with the two memory savings turned off: parking
(``Executor.park`` made a no-op, so waiting states keep whole register files) and paged
copies (``PAGED_OBJECT_SIZE`` out of reach, so a write copies the whole object). The growth
includes what the run itself builds (coverage, caches, finished tests), so the per-state
figure is an upper bound.

Programs: ``tests/programs/branches.c`` (2^N independent branches), a loop keeping values in
registers across its forks at -O2, and a program whose paths each write into a shared 8 KB
buffer before forking again.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any
from collections.abc import Sequence

import symex
from symex.core.memory import objects as memory
from symex.core.interpreter.executor import Executor

ROOT = Path(__file__).resolve().parent.parent
BRANCHES = ROOT / "tests" / "programs" / "branches.c"

BUFFER_PROGRAM = r"""
#include <klee/klee.h>
static unsigned char buf[8192];
int main(void) {
  unsigned char in[N];
  klee_make_symbolic(in, sizeof in, "in");
  for (int i = 0; i < N; i++) {
    if (in[i] > 'm') buf[i * 512] = in[i];       /* each path writes its own pages */
    else buf[i * 512 + 7] = 1;
  }
  return buf[0];
}
"""


REGISTER_PROGRAM = r"""
#include <klee/klee.h>
#include <stdio.h>
__attribute__((noinline)) static unsigned step(unsigned c, unsigned acc, unsigned i) {
  if (c > 'm') { printf("+"); return acc * 33u + c; }
  printf("-");
  return acc ^ (c << (i & 7));
}
int main(void) {
  unsigned char in[N];
  klee_make_symbolic(in, sizeof in, "in");
  unsigned a = 1, b = 2, c = 3, d = 5;
  for (int i = 0; i < N; i++) {
    a = step(in[i], a, i);
    b += a; c ^= b; d = d * 7u + c;
  }
  return (int)((a + b + c + d) & 0xff);
}
"""


def _heap_at_most_states(program: symex.Program) -> tuple[float, int, float]:
    """Heap growth (bytes) over the run's start when the most states were alive, that count,
    and the run's seconds (one bfs run)."""
    most = [0, 0]

    def progress(snapshot: Any) -> None:
        if snapshot.live_states > most[0]:
            most[0] = snapshot.live_states
            most[1] = tracemalloc.get_traced_memory()[0]

    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    start = time.perf_counter()
    result = symex.explore(program, searcher="bfs",
                           hooks=symex.Hooks(on_progress=progress), progress_interval=0.0)
    seconds = time.perf_counter() - start
    tracemalloc.stop()
    assert not result.errors
    return most[1] - before, max(most[0], 1), seconds


def _without_savings() -> tuple[Any, int]:
    """Turn parking and paged copies off; returns what restores them."""
    saved = (Executor.park, memory.PAGED_OBJECT_SIZE)
    Executor.park = lambda self, state: None  # type: ignore[method-assign]
    memory.PAGED_OBJECT_SIZE = 1 << 62
    return saved


def main(argv: Sequence[str] | None = None) -> int:
    """Run each program with and without the savings and print the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small programs")
    options = parser.parse_args(argv)
    n = 8 if options.quick else 12
    with tempfile.TemporaryDirectory(prefix="symex-waiting-") as workdir:
        source = Path(workdir) / "buffer.c"
        source.write_text(BUFFER_PROGRAM)
        registers = Path(workdir) / "registers.c"
        registers.write_text(REGISTER_PROGRAM)
        programs = [
            (f"branches.c N={n} -O0", symex.compile(BRANCHES, [f"-DN={n}"])),
            (f"registers -O2, {n} forks", symex.compile(registers, [f"-DN={n}", "-O2"])),
            (f"8 KB buffer, {n - 2} forks", symex.compile(source, [f"-DN={n - 2}"])),
        ]
        print(f"{'program':<24} {'states':>7} {'B/state now':>12} {'B/state before':>15} "
              f"{'ratio':>6} {'time ratio':>10}")
        for name, program in programs:
            symex.explore(program, searcher="bfs")  # warm the caches both runs share
            heap, states, seconds = _heap_at_most_states(program)
            park, paged = _without_savings()
            try:
                old_heap, old_states, old_seconds = _heap_at_most_states(program)
            finally:
                Executor.park = park  # type: ignore[method-assign]
                memory.PAGED_OBJECT_SIZE = paged
            now, before = heap / states, old_heap / old_states
            print(f"{name:<24} {states:>7,} {now:>12,.0f} {before:>15,.0f} "
                  f"{now / before:>6.2f} {seconds / old_seconds:>10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
