"""toybox's toys under symex: build the multicall binary whole with `symex cc` on musl, run
each toy (`toybox TOY ...`) for a fixed time with KLEE's coreutils arguments after the toy's
name, and print a row per toy (paths, errors, paths that ended on something unmodelled, line
coverage of the toy's own toys/*/TOY.c), as benchmarks/coreutils.py does for coreutils.

    apt-get source toybox      # or the orig tarball from Debian's pool
    python benchmarks/toybox.py --source toybox-0.8.9 --time 10
    python benchmarks/toybox.py --source toybox-0.8.9 --toys cat,wc --time 60

Built with `make defconfig` (gcc builds kconfig), CONFIG_TOYBOX_NORECURSE=y (see build) and
`SYMEX_LIBC=musl make CC=symex-cc` (toybox's make.sh wants a one-word compiler: a two-line
wrapper script in the tree) unless ./toybox is there. Not a test: figures go to docs/benchmarks.md with their command.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from coreutils import KLEE_ARGUMENTS, run_or_exit, run_tool, summarize

#: text and file utilities, the kind KLEE's and MoKlee's evaluations run (toybox's defconfig
#: also builds system administration, network and process toys, left out by coreutils.py's
#: rule: they change the system or talk to the network when replayed natively)
TOYS = ("basename", "cat", "cksum", "cmp", "comm", "cut", "dirname", "echo", "expand", "factor",
        "fmt", "fold", "head", "nl", "od", "paste", "printf", "rev", "sed", "seq", "sort", "split",
        "tac", "tail", "tee", "tr", "tsort", "uniq", "unix2dos", "wc", "base64", "base32", "strings",
        "grep", "xxd", "md5sum", "sha1sum")


def build(source: Path) -> Path:
    """The toybox binary, built whole with symex cc on musl."""
    binary = source / "toybox"
    if binary.is_file():
        return binary
    wrapper = source / "symex-cc"
    wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} -m symex.cli cc "$@"\n')
    wrapper.chmod(0o755)
    env = {**os.environ, "SYMEX_LIBC": "musl"}
    run_or_exit(["make", "defconfig", "HOSTCC=gcc"], source, env)
    # toybox measures its stack depth as the distance between locals of two frames
    # (main.c: labs(toys.stacktop - &which) > 6000) and runs no toy past that; under symex
    # every object has its own address range, so that distance is never small
    config = source / ".config"
    config.write_text(config.read_text().replace("# CONFIG_TOYBOX_NORECURSE is not set",
                                                 "CONFIG_TOYBOX_NORECURSE=y"))
    run_or_exit(["make", "oldconfig", "HOSTCC=gcc"], source, env)
    run_or_exit(["make", f"CC={wrapper}", "HOSTCC=gcc", "NOSTRIP=1"], source, env)
    return binary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, required=True, help="a toybox source tree")
    parser.add_argument("--toys", help=f"comma-separated toys (default: {len(TOYS)} text utilities)")
    parser.add_argument("--time", type=float, default=60.0, help="seconds per toy (60)")
    parser.add_argument("--results", type=Path, help="where the runs go (default: SOURCE/symex-results)")
    options = parser.parse_args()
    source = options.source.resolve()
    binary = build(source)
    chosen = options.toys.split(",") if options.toys else list(TOYS)
    results = options.results or source / "symex-results"
    results.mkdir(parents=True, exist_ok=True)
    print(f"toybox: {len(chosen)} toys, {options.time:g} s each", flush=True)
    rows = []
    for toy in chosen:
        own = sorted(source.glob(f"toys/*/{toy}.c"))
        row = run_tool(binary, f"/{own[0].relative_to(source)}" if own else f"/{toy}.c", results,
                       options.time, (toy, *KLEE_ARGUMENTS), name=toy)
        rows.append(row)
        print(row, flush=True)
    summarize("toybox", rows, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
