"""SV-COMP float tasks (``c/float-benchs``, ``c/floats-*``) through symex, one solver against
another, in the same run.

    python benchmarks/svcomp_floats.py TASKS_DIR [--solver z3 --solver bitwuzla
        --solver default] [--time 60] [--csv out.csv]

TASKS_DIR holds SV-COMP task definitions (``NAME.yml``, format 2.0) beside their sources, as
in a checkout of sosy-lab/sv-benchmarks (copy the tasks you want; the sample measured is
listed in docs/benchmarks.md). Only the ``unreach-call`` property counts. Each task runs in a
process of its own, ``--time`` seconds of exploration (the run's ``max_time``), for each
solver in turn: a named solver answers every query (``float_solver="same"``), ``default`` is
symex's default configuration (z3, with the queries on floats routed to bitwuzla):

- **found**: a path reached ``reach_error``/``__VERIFIER_error``, and its input reaches it
  natively too (the program built by gcc, replayed): the task's verdict is ``false``;
- **proved**: every path ended (no limit, nothing unsupported) and none reached it: ``true``;
- otherwise **unknown** (the time ran out, or a path ended unsupported).

A found error on a task whose expected verdict is ``true``, or one that does not reproduce
natively, is a **false alarm**, a bug in symex; the script says so and exits with status 2.
SV-COMP runs these tasks as ILP32 (32-bit ``long``); symex compiles for x86-64, which none of
the sampled tasks' float arithmetic depends on.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import attrs

#: the --solver value that runs symex's default configuration (z3, float queries on bitwuzla)
DEFAULT = "default"
_VERDICT = re.compile(r"unreach-call\.prp\s*\n\s*expected_verdict:\s*(true|false)")
_INPUT = re.compile(r"input_files:\s*'?([^'\n]+)'?")


@attrs.frozen
class Task:
    """One task: its source and the expected verdict of ``unreach-call``."""

    name: str
    source: Path
    verdict: bool


def tasks_in(directory: Path) -> list[Task]:
    """The tasks of ``directory`` with an ``unreach-call`` verdict, by name."""
    found = []
    for definition in sorted(directory.glob("*.yml")):
        text = definition.read_text()
        verdict = _VERDICT.search(text)
        source = _INPUT.search(text)
        if verdict is None or source is None:
            continue
        found.append(Task(definition.stem, directory / source.group(1).strip(),
                          verdict.group(1) == "true"))
    return found


def run_one(source: Path, solver: str, seconds: float) -> dict[str, object]:
    """Explore one task in this process; what it found, as JSON-ready values."""
    import symex  # noqa: PLC0415  (the worker process only)
    from symex.output.ktest import KTest, KTestObject  # noqa: PLC0415
    from symex.replay import build_native, reproduces, run_native  # noqa: PLC0415

    started = time.perf_counter()
    program = symex.compile(source)
    # a named solver answers every query; "default" is symex's defaults (z3, float queries
    # routed to bitwuzla)
    options = {} if solver == DEFAULT else {"solver": solver, "float_solver": "same"}
    result = symex.explore(program, max_time=seconds, searcher="dfs", seed=0, **options)
    elapsed = time.perf_counter() - started
    reached = [t for t in result.tests
               if t.error is not None and t.error.kind is symex.ErrorKind.REACH_ERROR]
    reproduced = 0
    if reached:
        executable = build_native(source, out_dir=source.parent / ".native")
        for test in reached:
            case = KTest(args=("prog",), objects=tuple(KTestObject(k, v)
                                                      for k, v in test.objects.items()))
            native = run_native(executable, case)
            # reach_error() often calls __assert_fail natively: an assertion shows it
            reproduced += reproduces("reach_error", native)
    return {"seconds": round(elapsed, 2), "paths": result.paths.total,
            "partial": result.paths.partial, "halted": result.halted, "reached": len(reached),
            "reproduced": reproduced, "queries": result.statistics.solver_queries,
            "solver_seconds": round(result.statistics.solver_time, 2)}


def outcome(found: dict[str, object]) -> str:
    """``found``, ``proved`` or ``unknown``."""
    if found.get("reached"):
        return "found"
    if not found.get("partial") and found.get("halted") is None and "error" not in found:
        return "proved"
    return "unknown"


def main() -> int:
    """Run every task with every solver; print the table; 2 on a false alarm."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks", type=Path, nargs="?")
    parser.add_argument("--solver", action="append", default=None)
    parser.add_argument("--time", type=float, default=60.0)
    parser.add_argument("--csv", type=Path)
    parser.add_argument("--one", nargs=3, metavar=("SOURCE", "SOLVER", "SECONDS"),
                        help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.one:
        source, solver, seconds = options.one
        print(json.dumps(run_one(Path(source), solver, float(seconds))))
        return 0
    if options.tasks is None:
        parser.error("give the directory of tasks")
    solvers = options.solver or ["z3", "bitwuzla"]
    tasks = tasks_in(options.tasks)
    rows = []
    false_alarms = 0
    for task in tasks:
        for solver in solvers:
            command = [sys.executable, __file__, "--one", str(task.source), solver,
                       str(options.time)]
            try:
                proc = subprocess.run(command, capture_output=True, text=True,
                                      timeout=options.time * 2 + 60, check=False)
                lines = proc.stdout.strip().splitlines()
                found: dict[str, object] = json.loads(lines[-1]) if proc.returncode == 0 \
                    and lines else {"error": proc.stderr.strip().splitlines()[-1:]}
            except subprocess.TimeoutExpired:
                found = {"error": "the run overran its time limit"}
            kind = outcome(found)
            alarm = kind == "found" and (task.verdict or found["reproduced"] != found["reached"])
            false_alarms += alarm
            rows.append({"task": task.name, "expected": "true" if task.verdict else "false",
                         "solver": solver, "outcome": kind, "false_alarm": alarm, **found})
            print(f"{task.name:24} {'true ' if task.verdict else 'false'} {solver:9} "
                  f"{kind:8} {found.get('seconds', '-')!s:>7}s "
                  f"{'FALSE ALARM' if alarm else ''}", flush=True)
    print()
    print(f"{len(tasks)} tasks ({sum(t.verdict for t in tasks)} true, "
          f"{sum(not t.verdict for t in tasks)} false), {options.time:g} s each")
    print(f"{'solver':10} {'errors found':>14} {'proved':>10} {'unknown':>8} "
          f"{'false alarms':>13} {'seconds':>9}")
    for solver in solvers:
        mine = [r for r in rows if r["solver"] == solver]
        falses = [r for r in mine if r["expected"] == "false"]
        trues = [r for r in mine if r["expected"] == "true"]
        found_count = sum(r["outcome"] == "found" for r in falses)
        proved = sum(r["outcome"] == "proved" for r in trues)
        unknown = sum(r["outcome"] == "unknown" for r in mine)
        seconds = sum(float(r.get("seconds", options.time)) for r in mine)  # type: ignore[arg-type]
        print(f"{solver:10} {found_count:>8}/{len(falses):<5} {proved:>6}/{len(trues):<3} "
              f"{unknown:>8} {sum(bool(r['false_alarm']) for r in mine):>13} {seconds:>9.1f}")
    if options.csv:
        with options.csv.open("w", newline="") as out:
            writer = csv.DictWriter(out, fieldnames=sorted({k for r in rows for k in r}))
            writer.writeheader()
            writer.writerows(rows)
    if false_alarms:
        print(f"{false_alarms} FALSE ALARMS: a bug in symex", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
