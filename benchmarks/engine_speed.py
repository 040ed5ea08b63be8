"""Engine speed benchmark: concrete and symbolic throughput, memory per state, KLEE's programs.

    python benchmarks/engine_speed.py            # the full run behind docs/benchmarks.md
    python benchmarks/engine_speed.py --quick    # small sizes, a smoke run of a few seconds
    python benchmarks/engine_speed.py --profile  # also cProfile the regexp run (top costs)

Sections:

1. Concrete speed: LLVM instructions per second on ``programs/sort.c`` (insertion sort of 400
   ints, no symbolic input), beside LLVM 14's ``lli`` (interpreter and JIT) on the *same* ``.ll``
   file. That file is made by ``clang-14`` with opaque pointers so both lli-14 and symex
   (llvmlite, LLVM 22, which reads older IR) parse it; symex's own frontend (zig cc) emits
   LLVM 21-style IR that lli-14 rejects. Needs ``/usr/bin/lli`` and ``clang-14``
   (``apt-get install llvm-14 clang-14``); without them the lli lines are skipped and symex is
   timed on the IR of :func:`symex.compile`.
2. Symbolic speed: paths per second exhausting ``tests/programs/branches.c`` with N=12.
3. Memory: Python heap per state for 10,000 waiting (parked) states forked from one parent, each having
   stored one 4-byte word into a shared object (engine objects, measured with tracemalloc).
4. KLEE's programs: regexp (7-byte pattern, last byte NUL), 2^12 branches, 2^10 neighbour
   comparisons: symex's paths, instructions, queries and times. Beside KLEE itself, in the
   same run: ``benchmarks/vs_klee.py`` (a figure recorded elsewhere is no comparison).

Times are wall-clock; concrete-speed figures are the best of several runs, because this
benchmark usually runs on a shared two-core machine where other work inflates single runs.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import os
import platform
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from collections.abc import Sequence

import attrs

import symex
from symex.core.interpreter import compiled_runs
from symex.core.memory.objects import ObjectKind
from symex.description import RunDescription
from symex.exploration import Exploration
from symex.results import Hooks
from symex.ir.compile import find_compiler
from symex.ir.program import SEGMENT_SHIFT, Access, Program, ValueKind
from symex.solvers.base import Solver

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
TESTS = HERE.parent / "tests" / "programs"

#: flags that make clang-14 emit IR both lli-14 and symex read: symex's default -O0 flags, and
#: opaque pointers (clang-14 writes typed pointers unless told; ``-Xclang -opaque-pointers`` is
#: accepted by clang-14 but does not change its output, ``-mllvm -opaque-pointers`` does)
CLANG14_FLAGS: tuple[str, ...] = (
    "-O0", "-g", "-Xclang", "-disable-O0-optnone", "-mllvm", "-opaque-pointers",
    "-fno-stack-protector", "-S", "-emit-llvm",
)


@attrs.frozen
class Size:
    """Problem sizes of one run (full or ``--quick``)."""

    sort_count: int
    repeats: int
    lli_interpreter_rounds: int
    lli_jit_rounds: int
    branches: int
    neighbours: int
    states: int
    regexp_max_time: float | None


FULL = Size(sort_count=400, repeats=3, lli_interpreter_rounds=20, lli_jit_rounds=3000,
            branches=12, neighbours=10, states=10_000, regexp_max_time=None)
QUICK = Size(sort_count=100, repeats=1, lli_interpreter_rounds=120, lli_jit_rounds=20_000,
             branches=6, neighbours=5, states=1_000, regexp_max_time=1.0)

#: issue 14's targets for the heap of one waiting state, by the size of the written object
MEMORY_TARGETS = {64: 1024, 4096: 1536}
#: allocation sites listed per object size (a snapshot comparison, indicative only)
SITES = 8


def header(title: str) -> None:
    """Print a section title."""
    print(f"\n== {title}")


def best_explore(program: Program, args: Sequence[str], repeats: int) -> symex.Result:
    """The fastest of ``repeats`` explorations (least disturbed by other work on the machine)."""
    best: symex.Result | None = None
    for _ in range(repeats):
        result = symex.explore(program, searcher="dfs", seed=0, args=list(args))
        if best is None or result.statistics.time < best.statistics.time:
            best = result
    assert best is not None
    return best


def exit_code(result: symex.Result) -> int | None:
    """The exit code of a single-path (concrete) run."""
    return result.tests[0].exit_code if result.tests else None


def time_command(command: Sequence[str], repeats: int) -> tuple[float, int]:
    """Best wall time of ``repeats`` runs of ``command``, and its exit code."""
    best = float("inf")
    code = 0
    for _ in range(repeats):
        start = time.perf_counter()
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        best = min(best, time.perf_counter() - start)
        code = done.returncode
        if code < 0 or b"error" in done.stderr.lower():
            raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.decode(errors='replace')[:500]}")
    return best, code


def concrete_speed(size: Size, workdir: Path) -> None:
    """Section 1: instructions per second on the concrete sort, and the ratio to lli-14."""
    header(f"1. Concrete speed: insertion sort of {size.sort_count} ints (programs/sort.c)")
    source = PROGRAMS / "sort.c"
    lli = shutil.which("lli")
    clang14 = shutil.which("clang-14")
    if lli is not None and clang14 is not None:
        ll = workdir / "sort.ll"
        subprocess.run([clang14, *CLANG14_FLAGS, f"-DCOUNT={size.sort_count}", str(source), "-o", str(ll)],
                       check=True)
        program = symex.load(ll)
        print(f"IR: {ll.name} from clang-14 with opaque pointers; symex and lli run this same file")
    else:
        missing = " and ".join(n for n, p in (("lli", lli), ("clang-14", clang14)) if p is None)
        print(f"lli comparison skipped: {missing} not found (apt-get install llvm-14 clang-14); "
              f"symex timed on the IR of symex.compile ({find_compiler().version})")
        program = symex.compile(source, [f"-DCOUNT={size.sort_count}"])
        ll = None

    # The instruction count is linear in the rounds (every round sorts the same numbers), so
    # three symex runs give it exactly for any round count lli is asked to run.
    zero = symex.explore(program, args=["0"])
    one = symex.explore(program, args=["1"])
    timed = best_explore(program, ["2"], size.repeats)
    base = zero.statistics.instructions
    per_round = one.statistics.instructions - base
    assert timed.statistics.instructions == base + 2 * per_round, "instruction count not linear in rounds"
    rate = timed.statistics.instructions / timed.statistics.time
    print(f"symex: {timed.statistics.instructions:,} instructions (2 rounds) in "
          f"{timed.statistics.time:.3f} s = {rate / 1e6:.2f} M instr/s "
          f"(target >= 10.00 M; best of {size.repeats})")
    # the same without compiled runs (core/interpreter/compiled_runs.py), alternating, in this process
    times = {"0": [], "1": []}
    for _ in range(size.repeats):
        for enabled in ("0", "1"):
            os.environ[compiled_runs.ENABLE_VARIABLE] = enabled
            times[enabled].append(symex.explore(program, args=["2"]).statistics.time)
    os.environ.pop(compiled_runs.ENABLE_VARIABLE)
    plain, runs = min(times["0"]), min(times["1"])
    print(f"compiled runs: {timed.statistics.instructions / runs / 1e6:.2f} M instr/s with, "
          f"{timed.statistics.instructions / plain / 1e6:.2f} M instr/s without: "
          f"{plain / runs:.2f}x (best of {size.repeats} each, alternating)")
    if ll is None:
        return
    for label, flags, rounds in (
        # lli-14 defaults to the lazy ORC JIT and ignores -force-interpreter there; only the
        # MCJIT path honours it, so the interpreter line must name the JIT kind too.
        ("lli -force-interpreter", ["-jit-kind=mcjit", "-force-interpreter"], size.lli_interpreter_rounds),
        ("lli (default JIT)", [], size.lli_jit_rounds),
    ):
        command = [lli, "-opaque-pointers", *flags, str(ll)]
        startup, _ = time_command([*command, "0"], size.repeats)
        elapsed, code = time_command([*command, str(rounds)], size.repeats)
        instructions = base + rounds * per_round
        if elapsed < 2 * startup:
            print(f"{label}: {rounds} rounds took {elapsed:.3f} s against {startup:.3f} s of "
                  f"startup, too short to measure; raise the round count")
            continue
        lli_rate = instructions / (elapsed - startup)
        print(f"{label}: {instructions:,} instructions ({rounds} rounds) in {elapsed:.3f} s "
              f"- {startup:.3f} s startup (0 rounds) = {lli_rate / 1e6:,.1f} M instr/s; "
              f"symex/lli = {rate / lli_rate:.4f} (lli {lli_rate / rate:,.0f}x faster)")
    print(f"exit codes agree: symex 2 rounds -> {exit_code(timed)}, "
          f"lli 2 rounds -> {time_command([lli, '-opaque-pointers', str(ll), '2'], 1)[1]}")


def symbolic_speed(size: Size) -> symex.Result:
    """Section 2: paths per second exhausting branches.c (also KLEE's second program)."""
    n = size.branches
    header(f"2. Symbolic speed: tests/programs/branches.c, N={n} ({2 ** n} paths)")
    program = symex.compile(TESTS / "branches.c", [f"-DN={n}"])
    result = symex.explore(program, searcher="dfs", seed=0)
    s = result.statistics
    print(f"{result.paths.total:,} paths ({result.paths.completed:,} completed) in {s.time:.3f} s = "
          f"{result.paths.total / s.time:,.0f} paths/s; {s.instructions:,} instructions, "
          f"{s.solver_queries:,} solver queries ({s.solver_time:.3f} s in the solver)")
    return result


def memory_per_state(size: Size) -> None:
    """Section 3: Python heap per live state, each differing from its parent by one word."""
    count = size.states
    header(f"3. Memory: {count:,} live states, each with one 4-byte word stored into a shared object")
    program = symex.compile(PROGRAMS / "sort.c")
    solver = symex.solver("z3")
    try:
        for object_size in (64, 4096):
            per_state, sites = _heap_per_state(program, solver, count, object_size)
            target = MEMORY_TARGETS[object_size]
            verdict = "meets" if per_state < target else "misses"
            print(f"shared object of {object_size:,} bytes: {per_state:,.0f} bytes/state "
                  f"({verdict} the {target:,}-byte target); largest allocation sites per state:")
            for where, size_diff in sites:
                print(f"    {size_diff / count:>7,.0f} B  {where}")
    finally:
        solver.close()


def _heap_per_state(program: Program, solver: Solver, count: int,
                    object_size: int) -> tuple[float, list[tuple[str, int]]]:
    """Heap growth per child over forking ``count`` children of one state, each writing one
    word into a shared ``object_size``-byte object through the executor's write path."""
    run = Exploration(program, solver, RunDescription.build(max_stack_frames=1024), hooks=Hooks())
    executor = run.executor
    parent = executor.initial_state(program.functions["main"], [0, 0])
    run.tree.add_root(parent)
    shared = parent.allocate(object_size, ObjectKind.HEAP, "shared").obj.address
    word = Access(ValueKind.INT, 4, 32)
    words = object_size // 4
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    first = tracemalloc.take_snapshot()
    children = []
    for i in range(count):
        child = executor.fork(parent)  # also records the fork in the execution tree, as explore does
        executor.write(child, shared + 4 * (i % words), word, i + 1)
        executor.park(child)  # as explore does with a state going to wait in the searcher
        children.append(child)
    executor.new_states = []  # the engine hands these to the searcher; `children` keeps them alive
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    last = tracemalloc.take_snapshot()
    tracemalloc.stop()
    assert all(c.objects.get(shared >> SEGMENT_SHIFT).owner is c.cow for c in children)
    # snapshots themselves allocate; the per-site view is indicative, the total is the figure
    sites = [(f"{Path(d.traceback[0].filename).name}:{d.traceback[0].lineno}", d.size_diff)
             for d in last.compare_to(first, "lineno")[:SITES] if d.size_diff > 0]
    return (after - before) / count, sites


def klee_programs(size: Size, branches: symex.Result, profile: bool) -> None:
    """Section 4: the three programs of issue 2 (KLEE beside them: benchmarks/vs_klee.py)."""
    header("4. KLEE's programs (dfs, z3; KLEE beside them in the same run: vs_klee.py)")
    rows: list[tuple[str, symex.Result]] = []

    regexp = symex.compile(TESTS / "regexp.c", ["-DASSUME_TERMINATED"])
    result = symex.explore(regexp, searcher="dfs", seed=0, max_time=size.regexp_max_time)
    rows.append(("regexp, 7-byte pattern, last byte NUL", result))
    rows.append((f"2^{size.branches} independent branches", branches))

    n = size.neighbours
    neighbours = symex.compile(PROGRAMS / "neighbours.c", [f"-DN={n}"])
    rows.append((f"2^{n} neighbour comparisons b[i] > b[i+1]",
                 symex.explore(neighbours, searcher="dfs", seed=0)))

    print(f"{'program':<44} {'paths':>7} {'instructions':>13} {'queries':>8} "
          f"{'solver s':>9} {'symex s':>9}")
    for name, r in rows:
        s = r.statistics
        note = f"  (stopped: {r.halted})" if r.halted else ""
        print(f"{name:<44} {r.paths.total:>7,} {s.instructions:>13,} {s.solver_queries:>8,} "
              f"{s.solver_time:>9.2f} {s.time:>9.2f}{note}")

    if profile:
        # a separate run: cProfile roughly doubles the time, which must not reach the table
        profiler = cProfile.Profile()
        profiler.enable()
        profiled = symex.explore(regexp, searcher="dfs", seed=0, max_time=size.regexp_max_time)
        profiler.disable()
        header(f"cProfile of the regexp run ({profiled.statistics.time:.2f} s under the profiler; "
               f"top 20 by own time)")
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(20)
        print(out.getvalue())
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(25)
        header("cProfile of the regexp run (top 25 by cumulative time)")
        print(out.getvalue())


def main(argv: Sequence[str] | None = None) -> int:
    """Run every section and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes for a smoke run")
    parser.add_argument("--profile", action="store_true", help="cProfile the regexp run")
    options = parser.parse_args(argv)
    size = QUICK if options.quick else FULL
    load = os.getloadavg()
    print(f"symex {symex.__version__}, Python {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"load average {load[0]:.2f} at start; C frontend: {find_compiler().version}")
    with tempfile.TemporaryDirectory(prefix="symex-bench-") as workdir:
        concrete_speed(size, Path(workdir))
    branches = symbolic_speed(size)
    memory_per_state(size)
    klee_programs(size, branches, options.profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
