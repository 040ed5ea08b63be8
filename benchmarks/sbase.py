"""suckless sbase under symex: build it whole with `symex cc` on musl, run each tool for a
fixed time with KLEE's coreutils arguments, and print a row per tool (paths, errors, paths
that ended on something unmodelled, line coverage of the tool's own TOOL.c), as
benchmarks/coreutils.py does for GNU coreutils.

    git clone https://git.suckless.org/sbase ~/sbase
    python benchmarks/sbase.py --source ~/sbase --time 10
    python benchmarks/sbase.py --source ~/sbase --tools wc,od --time 60

sbase is not packaged by Debian: --source names a checkout (the search tool's
github:michaelforney/sbase mirror works too). It is built with
`SYMEX_LIBC=musl make CC="symex cc"` unless the tools are there already, and a copy
(SOURCE/symex-asan) with gcc and AddressSanitizer, where reported errors are replayed as well
(zig's musl builds have no sanitizer: a small overflow does not crash them). Not a test:
figures go to docs/benchmarks.md with the command that made them.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from coreutils import choose, run_all, run_or_exit, summarize

#: tools left out, by coreutils.py's rule (MoKlee's): they change the system they run on
#: when their tests are replayed natively (owners, permissions, deletions, signals,
#: priorities), run another program, serve the network or wait for time to pass
LEFT_OUT = frozenset({
    "chgrp", "chmod", "chown", "chroot", "kill", "rm", "rmdir", "unlink", "renice", "nice",
    "nohup", "sync", "env", "xargs", "time", "setsid", "flock", "logger", "cron", "tftp",
    "sleep", "sponge", "xinstall",
})


def build(source: Path) -> None:
    """make with symex cc on musl, unless the tools are built."""
    if (source / "wc").is_file():
        return
    run_or_exit(["make", f"-j{os.cpu_count() or 2}", f"CC={sys.executable} -m symex.cli cc"], source,
                {**os.environ, "SYMEX_LIBC": "musl"})


def build_asan(source: Path) -> Path | None:
    """A copy of the tree built with gcc and AddressSanitizer (SOURCE/symex-asan), where
    reported errors are replayed too; None without gcc."""
    if shutil.which("gcc") is None:
        return None
    copy = source / "symex-asan"
    if not (copy / "wc").is_file():
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(source, copy, ignore=shutil.ignore_patterns("symex-*", ".git"))
        subprocess.run(["make", "clean"], cwd=copy, capture_output=True)
        run_or_exit(["make", f"-j{os.cpu_count() or 2}", "CC=gcc -fsanitize=address -g",
                     "LDFLAGS=-fsanitize=address"], copy)
    return copy


def tools(source: Path, only: list[str] | None) -> list[str]:
    """The Makefile's BIN list, less those left out."""
    makefile = (source / "Makefile").read_text()
    found = re.search(r"^BIN =((?:\\\n|[^\n])*)", makefile, re.MULTILINE)
    if found is None:
        sys.exit(f"{source}/Makefile has no BIN list: is this an sbase checkout?")
    return choose(found[1].replace("\\\n", " ").split(), only, LEFT_OUT, "not sbase tools")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, required=True, help="an sbase checkout")
    parser.add_argument("--tools", help="comma-separated tools (default: all but those left out)")
    parser.add_argument("--time", type=float, default=60.0, help="seconds per tool (60)")
    parser.add_argument("--jobs", type=int, default=1, help="tools run at once (each is one process)")
    parser.add_argument("--results", type=Path, help="where the runs go (default: SOURCE/symex-results)")
    options = parser.parse_args()
    source = options.source.resolve()
    build(source)
    chosen = tools(source, options.tools.split(",") if options.tools else None)
    results = options.results or source / "symex-results"
    results.mkdir(parents=True, exist_ok=True)
    print(f"sbase: {len(chosen)} tools, {options.time:g} s each", flush=True)
    asan = build_asan(source)
    rows = run_all([(source / tool, f"/{tool}.c", asan / tool if asan else None) for tool in chosen],
                   results, options.time, options.jobs)
    summarize("sbase", rows, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
