"""``symex run [options] PROGRAM [program args]``: explore a program, print what was found.

A thin layer: options to :func:`symex.explore`, then the summary. Bad input (unknown option,
missing file, compile error) prints one line and exits with status 2.
"""

from __future__ import annotations

import argparse
import sys

from symex.core.searchers import SEARCHER_NAMES
from symex.engine import Result, explore
from symex.errors import SymexError
from symex.loading import compile, load


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Declare ``symex run`` and its options."""
    run = commands.add_parser("run", help="explore a program's paths and generate tests",
                              description="Explore PROGRAM (.c, .ll or .bc) symbolically.")
    run.add_argument("program", help="a C source file, or LLVM IR (.ll) or bitcode (.bc)")
    run.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the program")
    run.add_argument("--search", action="append", metavar="NAME",
                     help=f"search strategy, repeatable to interleave: {', '.join(SEARCHER_NAMES)}")
    run.add_argument("--max-time", type=float, metavar="SECONDS")
    run.add_argument("--max-instructions", type=int, metavar="N")
    run.add_argument("--max-depth", type=int, metavar="N", help="symbolic branches per path")
    run.add_argument("--max-states", type=int, metavar="N", help="live states at once")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--solver", default="z3", metavar="CONFIG")
    run.add_argument("--write-queries", metavar="DIR",
                     help="log every solver query (SMT-LIB2 files and index.csv) into DIR")
    run.add_argument("--emit-all-errors", action="store_true",
                     help="report every error path, not one per error site")
    run.add_argument("-O", dest="optimize", metavar="LEVEL",
                     help="compiler optimisation level for C input (e.g. -O2)")
    run.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]")
    run.add_argument("-I", dest="includes", action="append", default=[], metavar="DIR")


def _print_summary(result: Result, out: object = None) -> None:
    write = sys.stdout.write
    p = result.paths
    s = result.statistics
    write(f"symex: explored {p.total} paths: {p.completed} completed, {p.errors} errors, "
          f"{p.partial} partial\n")
    write(f"symex: {s.instructions} instructions in {s.time:.2f} s; {s.solver_queries} solver "
          f"queries ({s.solver_time:.2f} s)\n")
    c = result.coverage
    write(f"symex: line coverage {c.percent:.1f}% ({len(c.covered_lines)} of {len(c.total_lines)} lines)\n")
    if result.halted:
        write(f"symex: stopped early: {result.halted}\n")
    for error in result.errors:
        where = f"{error.location[0]}:{error.location[1]}" if error.location else "unknown location"
        write(f"error [{error.kind.value}] {where}: {error.message}\n")
        for depth, (function, file, line) in enumerate(error.stack):
            at = f"{file}:{line}" if file and line else (file or "?")
            write(f"    #{depth} {function} at {at}\n")
    for number, test in enumerate(result.tests, 1):
        objects = " ".join(f"{name}={data.hex()}" for name, data in test.objects.items())
        status = test.error.kind.value if test.error else test.status.value
        extra = f" exit {test.exit_code}" if test.exit_code is not None else ""
        reason = f" ({test.reason})" if test.status.value == "partial" else ""
        write(f"test{number:06d}: {status}{extra}{reason} {objects}\n")


def main(options: argparse.Namespace) -> int:
    """Run ``symex run`` with parsed ``options``; the exit status."""
    flags = [f"-D{d}" for d in options.defines] + [f"-I{i}" for i in options.includes]
    if options.optimize:
        flags.append(f"-O{options.optimize}")
    try:
        if options.program.endswith((".ll", ".bc")):
            program = load(options.program)
        else:
            program = compile(options.program, flags)
        result = explore(program, searcher=options.search or "dfs", seed=options.seed,
                         max_time=options.max_time, max_instructions=options.max_instructions,
                         max_depth=options.max_depth, max_states=options.max_states,
                         solver=options.solver, emit_all_errors=options.emit_all_errors,
                         write_queries=options.write_queries,
                         args=options.args)
    except SymexError as exc:
        sys.stderr.write(f"symex: error: {exc}\n")
        return 2
    except KeyboardInterrupt:  # before exploration started (e.g. while compiling)
        sys.stderr.write("symex: interrupted\n")
        return 130
    try:
        _print_summary(result)
    except KeyboardInterrupt:  # Ctrl-C while printing: the results are complete anyway
        sys.stderr.write("symex: interrupted while printing the summary\n")
        return 130
    except BrokenPipeError:  # e.g. `symex run ... | head`
        return 0
    return 130 if result.halted == "interrupted" else 0

