"""A big, mostly-zero buffer read through the input's writes at symbolic offsets: encoded
as a constant array with a store per non-zero byte (as shipped), against the array
variable pinned by one assertion per byte (as before).

    python benchmarks/uniform_arrays.py [--repeat N] [--config CONFIG ...]

The program is a server's parser in miniature (memcached's): a packet of symbolic bytes
lands in a 16 KB zeroed connection buffer, and the parser reads bytes and words of it at
offsets that depend on the packet. Both encodings run in this one process, alternating, so
machine noise hits them alike; paths must be equal. Prints wall and solver seconds per run
and the ratio of the medians (pinned / shipped: above 1 means the constant array is faster).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import symex  # noqa: E402
import symex.encodings as encodings  # noqa: E402
from symex.encodings import ArrayAssertEncoding, HybridEncoding  # noqa: E402

PROGRAM = r"""
#include <klee/klee.h>
#include <string.h>
static char buffer[16384];
int main(void) {
  unsigned char packet[24];
  klee_make_symbolic(packet, sizeof packet, "packet");
  memcpy(buffer + 100, packet, sizeof packet);
  /* offsets that depend on the packet, as a parser's token positions do */
  unsigned start = packet[0] % 16, end = packet[1] % 16;
  if (buffer[100 + start] == '\n')
    return 1;
  unsigned word;
  memcpy(&word, buffer + 100 + start, 4);
  if (word == 0x74656720u) /* " get" */
    return 2;
  if (buffer[100 + end] == buffer[100 + start] + 1)
    return 3;
  if (buffer[4000 + end] != 0) /* past the packet: a zero */
    return 4;
  return 0;
}
"""


def use_uniform_arrays(on: bool) -> None:
    """Register the shipped encodings (``on``) or the pinning ones, under the same names
    (hybrid without its few-writes reads, which would bypass both: benchmarks/few_writes.py)."""
    encodings.ENCODINGS["array-assert"] = ArrayAssertEncoding(uniform_arrays=on)
    encodings.ENCODINGS["hybrid"] = HybridEncoding(uniform_arrays=on, few_writes=0)


def alternate(program: symex.Program, config: str, use: Callable[[bool], None],
              repeat: int) -> tuple[dict[bool, list[float]], dict[bool, list[float]], dict[bool, int]]:
    """``repeat`` rounds of a run with ``use(True)`` then one with ``use(False)``, in this
    process: wall and solver seconds of each run, and paths, by setting."""
    times: dict[bool, list[float]] = {True: [], False: []}
    solver: dict[bool, list[float]] = {True: [], False: []}
    paths: dict[bool, int] = {}
    for _ in range(repeat):
        for on in (True, False):
            use(on)
            started = time.perf_counter()
            result = symex.explore(program, solver=config, seed=0)
            times[on].append(time.perf_counter() - started)
            solver[on].append(result.statistics.solver_time)
            paths[on] = result.paths.completed + result.paths.errors + result.paths.partial
    return times, solver, paths


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--config", action="append", help="solver configurations (default: z3, bitwuzla)")
    options = parser.parse_args()
    configs = options.config or ["z3", "bitwuzla"]
    with tempfile.TemporaryDirectory() as directory:
        source = Path(directory) / "reader.c"
        source.write_text(PROGRAM)
        program = symex.compile(source)
        for config in configs:
            times, solver, paths = alternate(program, config, use_uniform_arrays, options.repeat)
            encodings.ENCODINGS["array-assert"] = ArrayAssertEncoding()
            encodings.ENCODINGS["hybrid"] = HybridEncoding()
            if paths[True] != paths[False]:
                print(f"{config}: paths differ: {paths}")
                return 1
            shipped, pinned = statistics.median(times[True]), statistics.median(times[False])
            print(f"{config}: {paths[True]} paths; constant array {shipped:.2f} s (solver "
                  f"{statistics.median(solver[True]):.2f} s), pinned {pinned:.2f} s (solver "
                  f"{statistics.median(solver[False]):.2f} s); pinned / constant array = {pinned / shipped:.2f}x",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
