"""A big constant buffer read at symbolic offsets through a few writes: each read spelled out
as an if-then-else over the writes (hybrid, as shipped) against a select from the stores
over a constant array (hybrid with ``few_writes=0``, as before).

    python benchmarks/few_writes.py [--repeat N] [--config CONFIG ...]

Two parsers in miniature, on memcached's 16 KB zeroed connection buffer: the text one of
benchmarks/uniform_arrays.py (offsets up to 15 into a 24-byte packet), and a binary one in
the shape of memcached's proto_bin.c, where the next header starts at ``24 + keylen`` with a
16-bit key length read big-endian from the packet (the queries that took z3 4-15 s each in a
memcached run). Both encodings run in this one process, alternating; paths must be equal.
Prints wall and solver seconds and the ratio of the medians (before / shipped: above 1
means the if-then-else reads are faster).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

import symex  # noqa: E402
import symex.encodings as encodings  # noqa: E402
from symex.encodings import HybridEncoding  # noqa: E402
from uniform_arrays import PROGRAM as TEXT_PARSER, alternate  # noqa: E402

BINARY_PARSER = r"""
#include <klee/klee.h>
#include <string.h>
static unsigned char buffer[16384];
int main(void) {
  unsigned char packet[128];
  klee_make_symbolic(packet, sizeof packet, "packet");
  memcpy(buffer, packet, sizeof packet);
  if (buffer[0] != 0x80)
    return 1;
  unsigned keylen = (buffer[2] << 8) | buffer[3], extlen = buffer[4];
  if (extlen > 20 || 24 + keylen + extlen > 128)
    return 2;
  unsigned next = 24 + keylen + extlen;   /* the next request's header */
  if (buffer[next] != 0x80)
    return 3;
  unsigned body = (buffer[next + 8] << 24) | (buffer[next + 9] << 16) | (buffer[next + 10] << 8) | buffer[next + 11];
  if (body < (unsigned)((buffer[next + 2] << 8) | buffer[next + 3]))
    return 4;
  if (buffer[next + 1] == 0x11)
    return 5;
  return 0;
}
"""

PROGRAMS = {"text parser": TEXT_PARSER, "binary parser": BINARY_PARSER}


def use_few_writes(on: bool) -> None:
    """Register hybrid as shipped (``on``) or without its few-writes reads."""
    encodings.ENCODINGS["hybrid"] = HybridEncoding() if on else HybridEncoding(few_writes=0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--config", action="append", help="solver configurations (default: z3, bitwuzla)")
    options = parser.parse_args()
    configs = options.config or ["z3", "bitwuzla"]
    with tempfile.TemporaryDirectory() as directory:
        for name, text in PROGRAMS.items():
            source = Path(directory) / f"{name.replace(' ', '_')}.c"
            source.write_text(text)
            program = symex.compile(source)
            for config in configs:
                times, solver, paths = alternate(program, config, use_few_writes, options.repeat)
                encodings.ENCODINGS["hybrid"] = HybridEncoding()
                if paths[True] != paths[False]:
                    print(f"{name}, {config}: paths differ: {paths}")
                    return 1
                shipped, before = statistics.median(times[True]), statistics.median(times[False])
                print(f"{name}, {config}: {paths[True]} paths; if-then-else reads {shipped:.2f} s (solver "
                      f"{statistics.median(solver[True]):.2f} s), array reads {before:.2f} s (solver "
                      f"{statistics.median(solver[False]):.2f} s); before / shipped = {before / shipped:.2f}x",
                      flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
