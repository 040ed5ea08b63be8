"""symex beside KLEE as a user measures them: whole processes started from the command line,
start-up included, on the same bitcode, in the same run.

    KLEE_BIN=/path/to/klee python benchmarks/vs_klee.py                 # every program
    KLEE_BIN=... python benchmarks/vs_klee.py --only regexp,branches --repeat 7
    KLEE_BIN=... python benchmarks/vs_klee.py --warm                    # + in-process figures
    python benchmarks/vs_klee.py                                        # symex alone

Each program is compiled once to bitcode by ``KLEE_CLANG`` (default ``clang-14``, the LLVM
KLEE 3.2 is built with; ``-O0 -g -Xclang -disable-O0-optnone``) and both tools run that very
file, one core, depth-first, z3:

    symex run --search dfs --solver z3 --output-dir D [--libc musl] PROG.bc ARGS
    klee --search=dfs --solver-backend=z3 --output-dir=D [--libc=uclibc [--posix-runtime]] PROG.bc ARGS

(``--libc=uclibc --posix-runtime`` for the program reading standard input, ``--libc=uclibc``
against symex's musl for the one whose C library does the branching). Two tables: **tests
written** on both sides (every path's ``.ktest``, as both do by default), and **no tests** on
either side (``--write-no-tests`` on both). Each row is the median of ``--repeat`` paired runs
(symex, KLEE, symex, KLEE, ...: both under the same load), with the median of the per-pair
ratios and its spread (lowest to highest pair). ``per test`` is what writing a test adds: (the
median with tests - the median without) / tests, on each side, where 2,000 tests or more
make it larger than the noise; ``ten_thousand`` is its yardstick (10,000 tests).
``us/instr`` and ``us/path`` divide the no-test time by the instructions and paths (where the
libcs differ, ``strings``, they are not the same work).

symex runs as a user's install runs it: its modules' bytecode is compiled first (pip does that
at install; ``PYTHONDONTWRITEBYTECODE``, set on some machines, would otherwise make every run
compile the whole package again). ``start-up`` runs ``get_sign.c`` (3 paths).

``--warm`` adds the in-process figures of earlier versions of this script, labelled as such:
``symex.explore()`` on the loaded program inside this Python process, best of the repeats,
against KLEE's whole process without tests. KLEE's figures are never taken from another run:
without ``KLEE_BIN`` the script times symex alone and says so.
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import shutil
import statistics
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
    Program("start-up", ROOT / "examples/get_sign.c", ()),
    Program("regexp", ROOT / "tests/programs/regexp.c",
            ("-DASSUME_TERMINATED", "-DEND_OF_PATTERN=0")),
    Program("branches", ROOT / "tests/programs/branches.c", ("-DN=12",)),
    Program("ten_thousand", ROOT / "benchmarks/programs/ten_thousand.c", ()),
    Program("neighbours", ROOT / "benchmarks/programs/neighbours.c", ("-DN=10",)),
    Program("maze", ROOT / "benchmarks/queries/programs/maze.c", ()),
    Program("tokens", ROOT / "tests/programs/posix/tokens.c", (), ("--sym-stdin", "4"), True),
    Program("strings", ROOT / "benchmarks/programs/libc_strings.c", ("-DSIZE=12",), libc=True),
    Program("histogram", ROOT / "benchmarks/queries/programs/histogram.c", ()),
)


class Run(NamedTuple):
    """One whole process: its wall-clock seconds and what it reported."""

    seconds: float
    paths: int | None
    instructions: int | None
    tests: int


def compile_bitcode(program: Program, clang: str, directory: Path) -> Path:
    target = directory / f"{program.name}.bc"
    command = [clang, "-emit-llvm", "-c", "-O0", "-g", "-Xclang", "-disable-O0-optnone",
               "-fno-stack-protector", "-I", str(include_dir()), *program.defines,
               str(program.source), "-o", str(target)]
    subprocess.run(command, check=True)
    return target


def _timed(command: list[str], name: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{command[0]} failed on {name}:\n{done.stderr[-2000:]}")
    return seconds, done


def _tests_in(directory: Path) -> int:
    return sum(1 for name in os.listdir(directory) if name.endswith(".ktest"))


def run_klee(klee: str, program: Program, bitcode: Path, out: Path, tests: bool) -> Run:
    command = [klee, "--search=dfs", "--solver-backend=z3", f"--output-dir={out}"]
    if not tests:
        command.append("--write-no-tests")
    if program.posix or program.libc:
        command.append("--libc=uclibc")
    if program.posix:
        command.append("--posix-runtime")
    command += [str(bitcode), *program.arguments]
    seconds, done = _timed(command, program.name)

    def stat(label: str) -> int | None:
        found = re.search(rf"KLEE: done: {label} = (\d+)", done.stderr)
        return int(found.group(1)) if found else None
    written = _tests_in(out)
    shutil.rmtree(out, ignore_errors=True)
    return Run(seconds, stat("completed paths"), stat("total instructions"), written)


def symex_command() -> list[str]:
    """``symex`` as installed beside this Python (the console script a user types), else
    ``python -m symex.cli``."""
    script = Path(sys.executable).with_name("symex")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "symex.cli"]


def run_symex(program: Program, bitcode: Path, out: Path, tests: bool) -> Run:
    command = [*symex_command(), "run", "--quiet", "--search", "dfs", "--solver", "z3",
               "--output-dir", str(out)]
    if not tests:
        command.append("--write-no-tests")
    if program.libc:
        command += ["--libc", "musl"]
    command += [str(bitcode), *program.arguments]
    seconds, _ = _timed(command, program.name)
    info = (out / "info").read_text()

    def field(label: str) -> int | None:
        found = re.search(rf"^symex: done: {label} = (\d+)", info, re.MULTILINE)
        return int(found.group(1)) if found else None
    written = _tests_in(out)
    shutil.rmtree(out, ignore_errors=True)
    return Run(seconds, field("explored paths"), field("total instructions"), written)


def run_warm(loaded: symex.Program, program: Program) -> float:
    started = time.perf_counter()
    symex.explore(loaded, searcher="dfs", solver="z3",
                  sym_args=ArgvSpec.parse(program.arguments))
    return time.perf_counter() - started


def compile_package_bytecode() -> None:
    """Compile symex's modules to bytecode, as a pip install does (see the docstring)."""
    package = Path(symex.__file__).resolve().parent
    saved = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        compileall.compile_dir(package, quiet=1)
    finally:
        sys.dont_write_bytecode = saved


class Row(NamedTuple):
    """A program's paired runs in one table."""

    ours: list[Run]
    theirs: list[Run]

    def median(self, side: list[Run]) -> float:
        return statistics.median(r.seconds for r in side)

    def ratios(self) -> list[float]:
        return sorted(a.seconds / b.seconds for a, b in zip(self.ours, self.theirs))


def number(value: int | None) -> str:
    return f"{value:,}" if value is not None else "-"


def micros(seconds: float, count: int | None) -> str:
    """Microseconds per item."""
    return f"{seconds / count * 1e6:.2f}" if count else "-"


def print_table(title: str, rows: dict[str, Row], klee: bool) -> None:
    print(f"\n{title}")
    print(f"{'program':13s} {'symex s':>8s} {'KLEE s':>7s} {'x KLEE':>7s} {'spread':>12s} "
          f"{'paths':>8s} {'KLEE':>7s} {'tests':>7s} {'KLEE':>7s}")
    for name, row in rows.items():
        ours = row.median(row.ours)
        last = row.ours[-1]
        if klee:
            ratios = row.ratios()
            theirs = row.median(row.theirs)
            versus = (f"{theirs:7.2f} {statistics.median(ratios):7.2f} "
                      f"{ratios[0]:5.2f}-{ratios[-1]:<6.2f}")
            them = f"{number(row.theirs[-1].paths):>7s} {row.theirs[-1].tests:>7,}"
        else:
            versus, them = f"{'-':>7s} {'-':>7s} {'-':>12s}", f"{'-':>7s} {'-':>7s}"
        print(f"{name:13s} {ours:8.2f} {versus} {number(last.paths):>8s} "
              f"{them.split()[0]:>7s} {last.tests:>7,} {them.split()[1]:>7s}", flush=True)


def _per_test(tested: list[Run], untested: list[Run]) -> str:
    """What writing a test adds, in us: the median difference over the tests written; "-"
    below 2,000 tests, where the difference is within the runs' noise (it came out negative)."""
    count = tested[-1].tests
    if count < 2000:
        return "-"
    median = statistics.median
    return f"{(median(r.seconds for r in tested) - median(r.seconds for r in untested)) / count * 1e6:.0f}"


def print_costs(with_tests: dict[str, Row], without: dict[str, Row], klee: bool) -> None:
    print("\nper test (what writing a test adds) and per instruction / path (no tests), us")
    print(f"{'program':13s} {'per test':>9s} {'KLEE':>7s} {'us/instr':>9s} {'KLEE':>7s} "
          f"{'us/path':>9s} {'KLEE':>8s}")
    for name, row in without.items():
        tested = with_tests[name]
        ours, last = row.median(row.ours), row.ours[-1]
        line = (f"{name:13s} {_per_test(tested.ours, row.ours):>9s} "
                f"{_per_test(tested.theirs, row.theirs) if klee else '-':>7s} "
                f"{micros(ours, last.instructions):>9s} ")
        if klee:
            theirs, them = row.median(row.theirs), row.theirs[-1]
            line += (f"{micros(theirs, them.instructions):>7s} {micros(ours, last.paths):>9s} "
                     f"{micros(theirs, them.paths):>8s}")
        else:
            line += f"{'-':>7s} {micros(ours, last.paths):>9s} {'-':>8s}"
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated program names")
    parser.add_argument("--repeat", type=int, default=5, help="paired runs per row (default 5)")
    parser.add_argument("--warm", action="store_true",
                        help="also symex.explore() inside this process (labelled)")
    options = parser.parse_args()
    chosen = [p for p in PROGRAMS if not options.only or p.name in options.only.split(",")]
    klee = os.environ.get("KLEE_BIN")
    clang = os.environ.get("KLEE_CLANG", "clang-14")
    if klee and shutil.which(clang) is None:
        raise SystemExit(f"KLEE_BIN is set but {clang} is not found: set KLEE_CLANG to the clang "
                         "of KLEE's LLVM")
    if not klee and shutil.which(clang) is None:
        clang = ""
    compile_package_bytecode()
    print(f"symex {symex.__version__} ({' '.join(symex_command())}), Python "
          f"{sys.version.split()[0]}; KLEE: "
          + (f"{klee} on {clang} bitcode" if klee else
             "not set (KLEE_BIN): symex alone, no comparison"))
    print(f"whole processes, median of {options.repeat} paired runs; dfs, z3, one core")
    tables: dict[bool, dict[str, Row]] = {True: {}, False: {}}
    warm: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        for program in chosen:
            if clang:
                bitcode = compile_bitcode(program, clang, directory)
            else:  # symex alone, without clang-14: its own compile's IR
                bitcode = directory / f"{program.name}.ll"
                shutil.copyfile(_own_ir(program), bitcode)
            for tests in (True, False):
                row = Row([], [])
                for index in range(options.repeat):
                    row.ours.append(run_symex(program, bitcode, directory / f"s{index}", tests))
                    if klee:
                        row.theirs.append(run_klee(klee, program, bitcode,
                                                   directory / f"k{index}", tests))
                tables[tests][program.name] = row
            if options.warm:
                loaded = symex.load(bitcode, libc="musl" if program.libc else True)
                warm[program.name] = min(run_warm(loaded, program) for _ in range(options.repeat))
            print(f"  {program.name}: done", file=sys.stderr, flush=True)
    print_table("tests written on both sides", tables[True], bool(klee))
    print_table("no tests on either side (--write-no-tests)", tables[False], bool(klee))
    print_costs(tables[True], tables[False], bool(klee))
    if warm:
        print("\nwarm, in-process (not what a user measures): symex.explore() on the loaded "
              "program, best of the repeats, against KLEE's whole process without tests")
        for name, seconds in warm.items():
            theirs = tables[False][name]
            ratio = (f"{seconds / theirs.median(theirs.theirs):.2f}x KLEE"
                     if klee else "")
            print(f"{name:13s} {seconds:8.2f} s  {ratio}")


def _own_ir(program: Program) -> Path:
    """symex's own compile of the program (``.ll``), for runs without clang-14."""
    from symex.ir.compile import compile_c  # noqa: PLC0415 (only without KLEE's clang)
    return compile_c(program.source, list(program.defines))


if __name__ == "__main__":
    main()
