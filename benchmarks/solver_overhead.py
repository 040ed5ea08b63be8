"""Per-query overhead of the solver layer on trivial queries, against a bare z3 call.

    python benchmarks/solver_overhead.py           # the run behind docs/benchmarks.md
    python benchmarks/solver_overhead.py --quick   # fewer queries, a smoke run

The workload is a path: query k asks whether ``input[k] == 7`` may hold under the path
condition ``input[0] < 200, ..., input[k-1] < 200`` (k = 0 .. N-1), so consecutive queries share
their constraint prefix the way an engine's branch queries do. Every query is satisfiable and
trivial for any SMT solver, so what is measured is the layer's own cost: translation, session
bookkeeping, racing, and (for worker processes) the wire format and the pipe.

The baseline, in the same run, is a bare z3 call: the same formulas built once as z3 terms,
then per query ``push; add(constraints, condition); check; pop`` on one ``SolverFor("QF_BV")``.
Each figure is the mean wall time per query and its ratio to that baseline.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import z3

import symex.expr as E
from symex.solvers.configured import SessionSolver
from symex.solvers.portfolio import PortfolioSolver
from symex.solvers.wire import QueryDecoder, QueryEncoder

INPUT = E.Array("input", 4096)


def workload(n: int) -> list[tuple[tuple[E.Expr, ...], E.Expr]]:
    """The ``n`` path queries described in the module docstring."""
    reads = [E.read(E.UpdateList(INPUT), E.const(i, 32)) for i in range(n)]
    path = [E.ult(r, E.const(200, 8)) for r in reads]
    return [(tuple(path[:k]), E.eq(reads[k], E.const(7, 8))) for k in range(n)]


def bare_z3(n: int) -> float:
    """Seconds per query of the bare z3 baseline (terms prebuilt, push/add/check/pop)."""
    xs = [z3.BitVec(f"b{i}", 8) for i in range(n)]
    path = [z3.ULT(x, 200) for x in xs]
    conditions = [x == 7 for x in xs]
    solver = z3.SolverFor("QF_BV")
    started = time.perf_counter()
    for k in range(n):
        solver.push()
        solver.add(*path[:k], conditions[k])
        assert solver.check() == z3.sat
        solver.pop()
    return (time.perf_counter() - started) / n


def per_query(solver: object, queries: list[tuple[tuple[E.Expr, ...], E.Expr]]) -> float:
    """Seconds per query of ``solver._check`` over the workload (all must be satisfiable)."""
    check: Callable[[tuple[E.Expr, ...], E.Expr], bool] = solver._check  # type: ignore[attr-defined]
    started = time.perf_counter()
    for constraints, condition in queries:
        assert check(constraints, condition)
    return (time.perf_counter() - started) / len(queries)


def wire_round_trip(queries: list[tuple[tuple[E.Expr, ...], E.Expr]]) -> float:
    """Seconds per query to encode and decode (in this process) the workload's queries."""
    encoder, decoder = QueryEncoder(), QueryDecoder()
    started = time.perf_counter()
    for constraints, condition in queries:
        decoder.decode(encoder.encode(constraints, (condition,), ()))
    return (time.perf_counter() - started) / len(queries)


def best_of(runs: int, measure: Callable[[], float]) -> float:
    """The least of ``runs`` measurements (the machine is shared; noise only adds time)."""
    return min(measure() for _ in range(runs))


def main() -> None:
    """Run every configuration and print a markdown table of per-query times and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer queries (a smoke run)")
    args = parser.parse_args()
    n = 60 if args.quick else 300
    runs = 1 if args.quick else 3
    queries = workload(n)

    baseline = best_of(runs, lambda: bare_z3(n))
    rows: list[tuple[str, float]] = [("bare z3 (prebuilt terms, push/check/pop)", baseline)]

    def session(config: str) -> float:
        solver = SessionSolver(config)
        try:
            return per_query(solver, queries)
        finally:
            solver.close()

    for config in ("z3:array-assert:none", "z3:array-assert:pushpop",
                   "z3:array-assert:assumptions(50)", "bitwuzla:array-assert:pushpop",
                   "cvc5:array-assert:pushpop"):
        rows.append((f"SessionSolver {config}", best_of(runs, lambda c=config: session(c))))

    def portfolio(members: list[str]) -> float:
        solver = PortfolioSolver(members)
        try:
            assert solver.wait_ready(120)
            return per_query(solver, queries)
        finally:
            solver.close()

    for members in (["z3:array-assert:pushpop"],
                    ["z3:array-assert:pushpop", "z3:array-assert:assumptions(50)"],
                    ["bitwuzla:array-assert:pushpop"],
                    ["cvc5:array-assert:pushpop"],
                    ["z3:array-assert:pushpop", "bitwuzla:array-assert:pushpop"]):
        # the first z3 member answers in this process, every other member in a worker process
        label = f"portfolio {', '.join(members)}"
        rows.append((label, best_of(runs, lambda m=members: portfolio(m))))

    rows.append(("wire encode+decode only (in process)", best_of(runs, lambda: wire_round_trip(queries))))

    restart = []
    for _ in range(runs):
        started = time.perf_counter()
        solver = PortfolioSolver(["bitwuzla"])
        assert solver.wait_ready(120)
        restart.append(time.perf_counter() - started)
        solver.close()

    print(f"{n} path queries (constraint prefix 0..{n - 1}); best of {runs}\n")
    print("| configuration | per query | vs bare z3 |")
    print("| --- | --- | --- |")
    for label, seconds in rows:
        print(f"| {label} | {seconds * 1e6:,.0f} µs | {seconds / baseline:.1f}× |")
    print(f"\nworker process start until ready (spawn, bitwuzla): "
          f"{statistics.median(restart) * 1e3:.0f} ms median of {runs}")


if __name__ == "__main__":
    main()
