"""A run's memory cap (KLEE's --max-memory): no forks near it, waiting states shed above it
(resumable), one clear line for a run that cannot fit, and workers sharing one cap."""

from __future__ import annotations

import csv
import re
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psutil
import pytest

import symex

from symex.description import RunDescription
from symex.errors import ConfigError
from symex.memory_cap import (HALT_SHARE, INHIBIT_SHARE, SHED_SECONDS, WORKER_MB, WORKERS_SHARE,
                              MemoryCap, default_max_memory_mb)

# -- the decisions ------------------------------------------------------------------------------


def test_far_from_the_cap_nothing_happens() -> None:
    cap = MemoryCap(1000)
    verdict = cap.check(0.0, 500, waiting=100)
    assert not verdict.inhibit_forks and verdict.shed == 0 and not verdict.halt


def test_near_the_cap_states_stop_splitting_until_memory_falls_well_below() -> None:
    cap = MemoryCap(1000)
    assert cap.check(0.0, 1000 * INHIBIT_SHARE + 1, waiting=100).inhibit_forks
    assert cap.check(1.0, 850, waiting=100).inhibit_forks       # between: it stays inhibited
    assert not cap.check(2.0, 700, waiting=100).inhibit_forks   # well below: forks again


def test_over_the_cap_waiting_states_are_shed_at_most_once_a_while() -> None:
    cap = MemoryCap(1000)
    first = cap.check(10.0, 1200, waiting=100)
    assert first.inhibit_forks and 1 <= first.shed <= 100 and not first.halt
    # the freed memory is not back with the system yet: no second shed at once
    assert cap.check(10.0 + SHED_SECONDS / 2, 1200, waiting=80).shed == 0
    assert cap.check(10.0 + SHED_SECONDS, 1200, waiting=80).shed >= 1
    # a little over: a few states; far over: many, never more than are waiting
    assert cap.check(100.0, 1010, waiting=3).shed >= 1
    assert cap.check(200.0, 100_000, waiting=7).shed == 7


def test_with_nothing_to_shed_the_run_halts_only_well_over_the_cap() -> None:
    cap = MemoryCap(1000)
    assert not cap.check(0.0, 1100, waiting=0).halt
    assert cap.check(1.0, 1000 * HALT_SHARE + 1, waiting=0).halt


# -- the options ----------------------------------------------------------------------------------


def test_the_default_cap_fits_the_machine_and_zero_lifts_it() -> None:
    default = RunDescription.build().limits.max_memory
    assert default == default_max_memory_mb()
    assert 256 <= default < psutil.virtual_memory().total >> 20
    assert RunDescription.build(max_memory=0).limits.max_memory is None
    assert RunDescription.build(max_memory=500).limits.max_memory == 500


def test_workers_share_one_cap() -> None:
    run = RunDescription.build(max_memory=4000, workers=4)
    shares = [run.for_worker(i).limits.max_memory for i in range(4)]
    assert shares == [4000 * WORKERS_SHARE / 4] * 4
    assert sum(shares) <= 4000


def test_inputs_or_workers_that_cannot_fit_are_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="memory cap"):
        RunDescription.build(sym_stdin=99_999_999_999, max_memory=4000)
    with pytest.raises(ConfigError, match="workers"):
        RunDescription.build(workers=100_000, max_memory=4000)
    assert RunDescription.build(workers=int(4000 * WORKERS_SHARE // WORKER_MB), max_memory=4000)
    program = tmp_path / "p.c"
    program.write_text("int main(void) { return 0; }\n")
    for flags in (["--sym-stdin", "99999999999"], ["--workers", "100000"]):
        ran = subprocess.run([sys.executable, "-m", "symex.cli", "run", *flags, str(program)],
                             capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert ran.returncode == 2, ran.stderr
        assert len(ran.stderr.strip().splitlines()) == 1 and "Traceback" not in ran.stderr, ran.stderr
        assert "--max-memory" in ran.stderr
        assert not list(tmp_path.glob("symex-out-*"))   # nothing was started


# -- a real run against its cap ----------------------------------------------------------------------

#: 2^11 paths, each allocating and filling 11 blocks of 1 MiB as it goes: breadth-first,
#: the waiting states' memory grows past any modest cap
HUNGRY = textwrap.dedent("""\
    #include <klee/klee.h>
    #include <stdlib.h>
    #include <string.h>
    int main(void) {
      unsigned char in[11];
      klee_make_symbolic(in, sizeof in, "in");
      int count = 0;
      for (int i = 0; i < 11; i++) {
        char *block = malloc(1 << 20);
        memset(block, i + 1, 1 << 20);
        if (in[i] > 'm')
          count++;
      }
      return count;
    }
    """)


def _run_watching_memory(command: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run ``command``; its result and the most resident memory it held (MB), sampled."""
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    peak = [0.0]

    def watch() -> None:
        watched = psutil.Process(process.pid)
        while process.poll() is None:
            try:
                peak[0] = max(peak[0], watched.memory_info().rss / 2 ** 20)
            except psutil.Error:
                return
            time.sleep(0.005)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    out, err = process.communicate(timeout=600)
    watcher.join()
    return subprocess.CompletedProcess(command, process.returncode, out, err), peak[0]


def _baseline_mb(tmp_path: Path) -> float:
    """What a run of a trivial program holds here (Python, the solver, LLVM): the cap is set
    above it, so that only the program's own growth meets the cap."""
    program = tmp_path / "trivial.c"
    program.write_text("#include <klee/klee.h>\nint main(void) { int x; "
                       "klee_make_symbolic(&x, sizeof x, \"x\"); return x > 3; }\n")
    ran, peak = _run_watching_memory([sys.executable, "-m", "symex.cli", "run", "--output-dir",
                                      str(tmp_path / "trivial-out"), str(program)], tmp_path)
    assert ran.returncode == 0, ran.stderr
    return peak


def test_a_hungry_run_keeps_within_its_cap_and_resumes_what_it_shed(tmp_path: Path) -> None:
    cap = round(_baseline_mb(tmp_path) + 120)
    program = tmp_path / "hungry.c"
    program.write_text(HUNGRY)
    out = tmp_path / "capped"
    ran, peak = _run_watching_memory(
        [sys.executable, "-m", "symex.cli", "run", "--search", "bfs", "--max-memory", str(cap),
         "--record-tree", "--output-dir", str(out), str(program)], tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "stopped early" not in ran.stdout, ran.stdout      # kept within, not halted
    assert peak <= cap * HALT_SHARE, (peak, cap)
    # how much is shed depends on how far the run got between two looks at its memory (a
    # loaded machine gets less far): most runs shed some, a slow one may not need to
    said = re.search(r"memory cap: (\d+) waiting path", ran.stdout)
    shed = int(said.group(1)) if said else 0
    if not shed:
        return
    with open(out / "tests.csv", newline="") as handle:
        reasons = [row["reason"] for row in csv.DictReader(handle)]
    assert reasons.count("memory cap") == shed
    with sqlite3.connect(out / "run.stats") as db:
        assert db.execute("SELECT MAX(ShedPaths) FROM stats").fetchone()[0] == shed
    assert f"paths ended by the memory cap = {shed}" in (out / "info").read_text()
    # the shed paths are open in the recorded tree: a later run with room explores them
    again = subprocess.run([sys.executable, "-m", "symex.cli", "run", "--search", "bfs",
                            "--max-memory", "0", "--continue-with", str(out), "--output-dir",
                            str(tmp_path / "resumed"), str(program)],
                           capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    resumed = int(re.search(r"explored (\d+) paths", again.stdout).group(1))
    assert resumed >= shed, again.stdout


WIDE = textwrap.dedent("""\
    #include <klee/klee.h>
    int main(void) {
      unsigned char in[10];
      klee_make_symbolic(in, sizeof in, "in");
      int count = 0;
      for (int i = 0; i < 10; i++)
        if (in[i] > 'm')
          count++;
      return count;
    }
    """)


def test_shed_states_end_with_tests_and_are_explored_on_from_the_tree(tmp_path: Path) -> None:
    """What the cap does to the states it sheds, without waiting for memory to run short:
    a real run's waiting states shed, then the run resumed from its recorded tree."""
    from symex.exploration import Exploration, tree_identity
    from symex.memo.opening import open_recorder
    from symex.memory_cap import MEMORY_CAP_REASON
    from symex.results import Hooks
    from symex.solvers import create_solver

    source = tmp_path / "wide.c"
    source.write_text(WIDE)
    program = symex.compile(str(source))
    tree = tmp_path / "tree.db"
    solver = create_solver("z3")
    description = RunDescription.build(searcher="bfs", record_tree=tree)
    recorder, _ = open_recorder(tree_identity(program, description), record_tree=tree,
                                continue_with=None)
    try:
        run = Exploration(program, solver, description, hooks=Hooks(), memo=recorder)
        run.begin()
        run.start_paths()
        assert run.advance(live=200) is None
        waiting = run.live
        run._shed(50)
        assert run.live == waiting - 50
        result = run.conclude(run.advance())
    finally:
        recorder.close()
        solver.close()
    assert result.halted is None and result.statistics.shed_paths == 50
    shed = [t for t in result.tests if t.reason == MEMORY_CAP_REASON]
    assert len(shed) == 50 and all(t.status.value == "partial" for t in shed)
    assert result.paths.completed < 1024
    again = symex.explore(program, searcher="bfs", continue_with=tree)
    # the paths below the shed states are explored now, and nothing else is new: together
    # the two runs complete the program's 1,024 paths
    assert again.paths.completed > 0
    assert result.paths.completed + again.paths.completed == 1024

