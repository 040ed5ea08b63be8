"""What the libc/POSIX layer costs on a concrete run, and how long the ``--sym-*`` inputs take
to reach full coverage of small programs (issue 6's performance targets).

    python benchmarks/posix_benchmarks.py             # the run behind docs/benchmarks.md
    python benchmarks/posix_benchmarks.py --quick     # one repeat, a smoke run

Overhead: the checksum of tests/programs/ordinary (CRC-32 and Adler-32) over the same 2 KB,
computed three ways in one process, alternating: the bytes read from standard input through
the POSIX model with ``getchar`` (one model call per byte) and with ``fread`` (512-byte
reads), and the bytes in a static array in the program (no libc or POSIX call before the
final ``printf``). The ratio of medians (and of minima) to the static run is printed; the
target is under 2x. All three print the same line, which is checked.

Coverage: each program is explored with dfs for at most ``--max-time`` seconds and
``Hooks.on_new_coverage`` records when each block was first reached; the last such moment is
when coverage reached its final value (the tokenizer's 8 symbolic bytes have millions of paths,
so its run always ends at the time limit, long after its coverage stopped growing).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import symex
from symex.results import Hooks
from symex.symargs import SymArg

TESTS = Path(__file__).resolve().parent.parent / "tests" / "programs"

# The checksum loop is the same text in the three programs; only where bytes come from differs.
CHECKSUM_CORE = r"""
#include <stdio.h>
static unsigned long crc_table[256];
static unsigned long crc = 0xffffffffUL, a = 1, b = 0, count = 0;
static void make_crc_table(void) {
  for (unsigned long n = 0; n < 256; n++) {
    unsigned long c = n;
    for (int k = 0; k < 8; k++)
      c = (c & 1) ? 0xedb88320UL ^ (c >> 1) : c >> 1;
    crc_table[n] = c;
  }
}
static void add(unsigned char byte) {
  crc = crc_table[(crc ^ byte) & 0xff] ^ (crc >> 8);
  a = (a + byte) % 65521;
  b = (b + a) % 65521;
  count++;
}
static void report(void) {
  printf("crc32 %08lx adler32 %08lx bytes %lu\n", (crc ^ 0xffffffffUL) & 0xffffffffUL,
         (b << 16) | a, count);
}
"""

GETCHAR_MAIN = r"""
int main(void) {
  make_crc_table();
  int c;
  while ((c = getchar()) != EOF)
    add((unsigned char)c);
  report();
  return 0;
}
"""

FREAD_MAIN = r"""
int main(void) {
  make_crc_table();
  unsigned char buffer[512];
  size_t got;
  while ((got = fread(buffer, 1, sizeof buffer, stdin)) > 0)
    for (size_t i = 0; i < got; i++)
      add(buffer[i]);
  report();
  return 0;
}
"""

STATIC_MAIN = r"""
static const unsigned char data[] = {%s};
int main(void) {
  make_crc_table();
  for (unsigned long i = 0; i < sizeof data; i++)
    add(data[i]);
  report();
  return 0;
}
"""

PASSWORD = r"""
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "hello") == 0) {
    puts("ok");
    return 1;
  }
  return 0;
}
"""


def _overhead(repeats: int, scratch: Path) -> None:
    data = random.Random(6).randbytes(2048)
    expected = (f"crc32 {zlib.crc32(data):08x} adler32 {zlib.adler32(data):08x} "
                f"bytes {len(data)}\n").encode()
    variants: dict[str, tuple[str, bytes | None]] = {
        "static array": (STATIC_MAIN % ",".join(str(byte) for byte in data), None),
        "stdin, getchar": (GETCHAR_MAIN, data),
        "stdin, fread": (FREAD_MAIN, data),
    }
    programs = {}
    for name, (main, _) in variants.items():
        source = scratch / (name.replace(", ", "_").replace(" ", "_") + ".c")
        source.write_text(CHECKSUM_CORE + main)
        programs[name] = symex.compile(source)
    times: dict[str, list[float]] = {name: [] for name in variants}
    instructions: dict[str, int] = {}
    for _ in range(repeats):
        for name, (_, stdin) in variants.items():
            start = time.perf_counter()
            result = symex.explore(programs[name], stdin=stdin)
            times[name].append(time.perf_counter() - start)
            assert len(result.tests) == 1 and result.tests[0].stdout == expected, name
            instructions[name] = result.statistics.instructions
    base_median = statistics.median(times["static array"])
    base_min = min(times["static array"])
    print(f"\nchecksum of 2048 bytes, {repeats} alternating runs each (median s, min s, "
          f"instructions, ratio of medians / of minima to the static array)")
    for name, samples in times.items():
        median, least = statistics.median(samples), min(samples)
        print(f"  {name:15} {median:7.3f} {least:7.3f} {instructions[name]:>9,} "
              f"{median / base_median:6.2f}x {least / base_min:6.2f}x")


def _coverage_time(name: str, program: Any, max_time: float, **inputs: Any) -> None:
    reached: list[float] = []
    start = time.perf_counter()
    result = symex.explore(program, searcher="dfs", seed=0, max_time=max_time,
                           hooks=Hooks(on_new_coverage=lambda f, line: reached.append(
                               time.perf_counter())), **inputs)
    total = time.perf_counter() - start
    coverage = result.coverage
    last = (reached[-1] - start) if reached else 0.0
    print(f"  {name:28} lines {len(coverage.covered_lines)}/{len(coverage.total_lines)} "
          f"({coverage.percent:.0f}%), branches {coverage.branch_percent:.0f}%; final coverage "
          f"at {last:6.2f} s, run {total:6.2f} s, {result.paths.total} paths"
          f"{' (stopped by max_time)' if result.halted else ''}")


def _coverage(scratch: Path, max_time: float) -> None:
    password = scratch / "password.c"
    password.write_text(PASSWORD)
    print("\ntime to final coverage, dfs (program compiled beforehand)")
    _coverage_time("password, --sym-arg 5", symex.compile(password), max_time, sym_args=[SymArg(5)])
    _coverage_time("tokens, --sym-stdin 8", symex.compile(TESTS / "posix" / "tokens.c"),
                   max_time, sym_stdin=8)
    _coverage_time("boom_file, --sym-files 1 16", symex.compile(TESTS / "posix" / "boom_file.c"),
                   max_time, sym_files=(1, 16))


def main() -> int:
    """Run both measurements and print them."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one repeat")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--max-time", type=float, default=60.0,
                        help="seconds per coverage run (tokens' 8 symbolic bytes never finish)")
    options = parser.parse_args()
    repeats = 1 if options.quick else options.repeats
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as scratch:
        _overhead(repeats, Path(scratch))
        _coverage(Path(scratch), 10.0 if options.quick else options.max_time)
    return 0


if __name__ == "__main__":
    sys.exit(main())
