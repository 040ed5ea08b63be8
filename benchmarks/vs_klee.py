"""symex beside KLEE on the same programs, in the same run: one core, dfs, z3; time,
instructions, paths, and the cost of an instruction and of a path on each side.

    KLEE_BIN=/path/to/klee python benchmarks/vs_klee.py     # both, on the same .bc files
    KLEE_BIN=... python benchmarks/vs_klee.py --only regexp,maze --repeat 5
    python benchmarks/vs_klee.py                            # symex alone (no KLEE here)

Each program is compiled once to bitcode by ``KLEE_CLANG`` (default ``clang-14``, the LLVM
KLEE 3.2 is built with; flags ``-O0 -g -Xclang -disable-O0-optnone``), and both tools run
that very file: ``klee --search=dfs --write-no-tests --solver-backend=z3`` (plus
``--libc=uclibc --posix-runtime`` for programs reading standard input, ``--libc=uclibc``
for the one whose C library does the branching) and symex's ``explore(searcher="dfs")`` on
``symex.load(file.bc)`` (``libc="musl"`` for that one: musl against klee-uclibc, the same
paths). KLEE's figures are never taken from another run: without ``KLEE_BIN`` the script
times symex alone, on its own compile of the sources, and says so.

Times are wall-clock seconds of the whole run (KLEE: the process; symex: ``explore``,
compiling excluded for both), best of ``--repeat`` runs, with both tools under the same
load, alternating. ``us/instr`` and ``us/path`` divide a run's time by its executed
instructions and completed paths: where the programs' libcs differ (``tokens``), the paths
and instructions are not the same work, and paths per second is the fairer figure.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import symex
from symex.ir.compile import include_dir
from symex.symargs import ArgvSpec

ROOT = Path(__file__).resolve().parent.parent


class Program(NamedTuple):
    """One program of the comparison."""

    name: str
    source: Path
    defines: tuple[str, ...]
    arguments: tuple[str, ...] = ()
    """The program's arguments in KLEE's syntax (``--sym-stdin 4``)."""
    posix: bool = False
    """KLEE needs its POSIX runtime (the program reads standard input)."""
    libc: bool = False
    """The C library does the branching: KLEE links klee-uclibc, symex musl."""


PROGRAMS = (
    Program("regexp", ROOT / "tests/programs/regexp.c",
            ("-DASSUME_TERMINATED", "-DEND_OF_PATTERN=0")),
    Program("branches", ROOT / "tests/programs/branches.c", ("-DN=12",)),
    Program("neighbours", ROOT / "benchmarks/programs/neighbours.c", ("-DN=10",)),
    Program("maze", ROOT / "benchmarks/queries/programs/maze.c", ()),
    Program("tokens", ROOT / "tests/programs/posix/tokens.c", (), ("--sym-stdin", "4"), True),
    Program("strings", ROOT / "benchmarks/programs/libc_strings.c", ("-DSIZE=12",), libc=True),
    Program("histogram", ROOT / "benchmarks/queries/programs/histogram.c", ()),
)


class Run(NamedTuple):
    seconds: float
    paths: int | None
    instructions: int | None


def compile_bitcode(program: Program, clang: str, directory: Path) -> Path:
    target = directory / f"{program.name}.bc"
    command = [clang, "-emit-llvm", "-c", "-O0", "-g", "-Xclang", "-disable-O0-optnone",
               "-fno-stack-protector", "-I", str(include_dir()), *program.defines,
               str(program.source), "-o", str(target)]
    subprocess.run(command, check=True)
    return target


def run_klee(klee: str, program: Program, bitcode: Path, directory: Path) -> Run:
    out = directory / f"klee-{program.name}-{time.monotonic_ns()}"
    command = [klee, "--search=dfs", "--write-no-tests", "--solver-backend=z3",
               f"--output-dir={out}"]
    if program.posix or program.libc:
        command += ["--libc=uclibc"]
    if program.posix:
        command += ["--posix-runtime"]
    command += [str(bitcode), *program.arguments]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"klee failed on {program.name}:\n{done.stderr[-2000:]}")

    def stat(label: str) -> int | None:
        found = re.search(rf"KLEE: done: {label} = (\d+)", done.stderr)
        return int(found.group(1)) if found else None
    shutil.rmtree(out, ignore_errors=True)
    return Run(seconds, stat("completed paths"), stat("total instructions"))


def run_symex(loaded: symex.Program, program: Program) -> Run:
    started = time.perf_counter()
    result = symex.explore(loaded, searcher="dfs", sym_args=ArgvSpec.parse(program.arguments))
    seconds = time.perf_counter() - started
    return Run(seconds, result.paths.completed, result.statistics.instructions)


def best(runs: list[Run]) -> Run:
    return min(runs, key=lambda r: r.seconds)


def number(value: int | None) -> str:
    return f"{value:,}" if value is not None else "-"


def micros(seconds: float, count: int | None) -> str:
    """Microseconds per item."""
    return f"{seconds / count * 1e6:.2f}" if count else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated program names")
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    chosen = [p for p in PROGRAMS if not options.only or p.name in options.only.split(",")]
    klee = os.environ.get("KLEE_BIN")
    clang = os.environ.get("KLEE_CLANG", "clang-14")
    if klee and shutil.which(clang) is None:
        raise SystemExit(f"KLEE_BIN is set but {clang} is not found: set KLEE_CLANG to the clang "
                         "of KLEE's LLVM")
    print(f"symex {symex.__version__}, Python {sys.version.split()[0]}; KLEE: "
          + (f"{klee} on {clang} bitcode" if klee else
             "not set (KLEE_BIN): symex alone, on its own compile, no comparison"))
    header = (f"{'program':11s} {'symex s':>8s} {'KLEE s':>7s} {'x KLEE':>7s} "
              f"{'symex paths':>11s} {'KLEE paths':>10s} {'symex instrs':>13s} {'KLEE instrs':>12s} "
              f"{'us/instr':>9s} {'KLEE':>6s} {'us/path':>9s} {'KLEE':>7s}")
    print(header)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        for program in chosen:
            libc = "musl" if program.libc else True
            ours_runs: list[Run] = []
            theirs: Run | None = None
            if klee:
                bitcode = compile_bitcode(program, clang, directory)
                loaded = symex.load(bitcode, libc=libc)
                theirs_runs = []
                for _ in range(options.repeat):  # alternating: both under the same load
                    theirs_runs.append(run_klee(klee, program, bitcode, directory))
                    ours_runs.append(run_symex(loaded, program))
                theirs = best(theirs_runs)
            else:
                loaded = symex.compile(program.source, flags=list(program.defines), libc=libc)
                ours_runs = [run_symex(loaded, program) for _ in range(options.repeat)]
            ours = best(ours_runs)
            ratio = f"{ours.seconds / theirs.seconds:7.2f}" if theirs else f"{'-':>7s}"
            print(f"{program.name:11s} {ours.seconds:8.2f} "
                  f"{theirs.seconds if theirs else float('nan'):7.2f} {ratio} "
                  f"{number(ours.paths):>11s} {number(theirs.paths if theirs else None):>10s} "
                  f"{number(ours.instructions):>13s} "
                  f"{number(theirs.instructions if theirs else None):>12s} "
                  f"{micros(ours.seconds, ours.instructions):>9s} "
                  f"{micros(theirs.seconds, theirs.instructions) if theirs else '-':>6s} "
                  f"{micros(ours.seconds, ours.paths):>9s} "
                  f"{micros(theirs.seconds, theirs.paths) if theirs else '-':>7s}", flush=True)


if __name__ == "__main__":
    main()
