"""Real C projects built the way their users build them, with ``symex cc`` (issue 44).

``configure``: the time of a project's ``./configure`` with ``CC="symex cc"`` against the
same ``configure`` with the compiler beneath it (zig cc for musl, as symex cc's native
side), each on a fresh unpack, in paired runs (A, B, A, B, ...), and whether both wrote the
same config.h (what configure learnt about the C library). Sources come from Debian
(``apt-get source``, which needs a ``deb-src`` line) or ``--tarball``.

    python benchmarks/real_projects.py configure --package sed --repeat 3

Prints each run, the median of the paired ratios and their spread. Needs make and a shell;
nothing here is a test.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from symex.ir.compile import zig_executable
from symex.ir.musl import MUSL_TARGET


def debian_tarball(package: str, work: Path) -> Path:
    """The upstream tarball of Debian's source package ``package``, downloaded into ``work``."""
    subprocess.run(["apt-get", "source", "-q", "--download-only", package], cwd=work, check=True,
                   capture_output=True)
    found = [Path(p) for p in glob.glob(str(work / f"{package}_*.orig.tar.*"))]
    if not found:
        raise SystemExit(f"apt-get source {package} left no .orig tarball in {work}")
    return found[0]


def unpack(tarball: Path, into: Path) -> Path:
    into.mkdir(parents=True)
    with tarfile.open(tarball) as archive:
        archive.extractall(into, filter="data")
    (tree,) = [p for p in into.iterdir() if p.is_dir()]
    return tree


def configure(tree: Path, compiler: str) -> float:
    """Seconds ``./configure CC=compiler`` took in ``tree`` (it must succeed)."""
    start = time.perf_counter()
    proc = subprocess.run(["./configure", "-q", f"CC={compiler}"], cwd=tree, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"configure CC={compiler!r} failed in {tree}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return elapsed


def config_facts(tree: Path) -> list[str]:
    """config.h without its comments: what configure decided."""
    text = (tree / "config.h").read_text(errors="replace")
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    return [line.strip() for line in text.splitlines() if line.strip()]


def configure_speed(options: argparse.Namespace) -> None:
    zig = zig_executable()
    symex = Path(sys.executable).parent / "symex"
    if zig is None or not symex.is_file():
        raise SystemExit("needs the ziglang package and the symex script beside this Python")
    plain = f"{zig} cc -target {MUSL_TARGET}"
    with_symex = f"{symex} cc"
    work = Path(tempfile.mkdtemp(prefix="symex-configure-"))
    try:
        tarball = Path(options.tarball) if options.tarball else debian_tarball(options.package, work)
        # one warm-up of each: zig's cache of musl's start files, symex cc's recorded scripts
        for name, compiler in (("plain", plain), ("symex", with_symex)):
            configure(unpack(tarball, work / f"warm-{name}"), compiler)
        ratios, facts = [], {}
        for run in range(options.repeat):
            seconds = {}
            for name, compiler in (("plain", plain), ("symex", with_symex)):
                tree = unpack(tarball, work / f"{name}-{run}")
                seconds[name] = configure(tree, compiler)
                facts[name] = config_facts(tree)
            ratios.append(seconds["symex"] / seconds["plain"])
            print(f"run {run + 1}: zig cc {seconds['plain']:.1f} s, symex cc {seconds['symex']:.1f} s, "
                  f"ratio {ratios[-1]:.2f}", flush=True)
        same = facts["plain"] == facts["symex"]
        print(f"{tarball.name}: configure with symex cc / with zig cc (-target {MUSL_TARGET}): median "
              f"{statistics.median(ratios):.2f}x over {len(ratios)} paired runs "
              f"(from {min(ratios):.2f} to {max(ratios):.2f}); config.h "
              f"{'the same' if same else 'DIFFERS'} ({len(facts['plain'])} lines)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    speed = commands.add_parser("configure", help="configure's time with symex cc against zig cc")
    speed.add_argument("--package", default="sed", help="a Debian source package with a configure (sed)")
    speed.add_argument("--tarball", help="a source tarball instead of Debian's package")
    speed.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    os.environ.setdefault("MAKEFLAGS", "")
    configure_speed(options)


if __name__ == "__main__":
    main()
