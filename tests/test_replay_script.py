"""benchmarks/queries/replay.py on a five-query recording made by symex itself."""

from __future__ import annotations

import csv
import subprocess
import sys
import tarfile
from pathlib import Path

from symex.errors import SolverError
from symex.expr import Array, UpdateList, const, eq, read, ult
from symex.solvers.recording import QueryRecorder
from symex.solvers import create_core_solver

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "queries" / "replay.py"
CONFIGS = ["z3", "z3:ite:pushpop", "z3:array-assert:none"]


def _five_query_corpus(tmp_path: Path, *, lie_about_last: bool = False) -> Path:
    """Record five queries (three sat, two unsat) through a real solver and tar them."""
    a = Array("a", 4)
    x, y = read(UpdateList(a), const(0, 32)), read(UpdateList(a), const(1, 32))
    recorder = QueryRecorder(create_core_solver("z3"), tmp_path / "log")
    try:
        recorder.get_initial_values((eq(x, const(7, 8)),), [a])
        recorder.get_initial_values((ult(x, y),), [a])
        recorder.get_initial_values((ult(x, y), ult(y, const(3, 8))), [a])
        for unsat in [(ult(x, y), ult(y, x)), (eq(x, const(1, 8)), eq(x, const(2, 8)))]:
            try:
                recorder.get_initial_values(unsat, [a])
            except SolverError:
                pass  # recorded as unsat, which is what the replay must find too
    finally:
        recorder.close()
    assert recorder.count == 5
    if lie_about_last:
        index = tmp_path / "log" / "index.csv"
        lines = index.read_text().splitlines()
        lines[-1] = lines[-1].replace(",unsat,", ",sat,")
        index.write_text("\n".join(lines) + "\n")
    archive = tmp_path / "five.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        tar.add(tmp_path / "log", arcname="five")
    return archive


def test_replay_prints_each_config_and_writes_a_row_per_query_and_config(tmp_path: Path) -> None:
    archive = _five_query_corpus(tmp_path)
    out_csv = tmp_path / "out.csv"
    command = [sys.executable, str(SCRIPT), str(archive), "--csv", str(out_csv), "--cutoff", "10"]
    for config in CONFIGS:
        command += ["--config", config]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    table = done.stdout
    assert "5 queries" in table
    for config in CONFIGS:
        line = next(row for row in table.splitlines() if row.startswith(config + " "))
        assert "5/5" in line
    assert "virtual best" in table
    assert "MISMATCH" not in done.stderr
    with out_csv.open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 5 * len(CONFIGS)
    # each config gives the recorded answers: three models, then two contradictions
    for config in CONFIGS:
        statuses = [r["status"] for r in rows if r["config"] == config]
        assert statuses == ["sat", "sat", "sat", "unsat", "unsat"]


def test_an_answer_contradicting_the_recording_is_reported_loudly(tmp_path: Path) -> None:
    archive = _five_query_corpus(tmp_path, lie_about_last=True)
    done = subprocess.run([sys.executable, str(SCRIPT), str(archive), "--config", "z3"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "ANSWER MISMATCH" in done.stderr and "query-000005.smt2" in done.stderr


def test_help_works() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True,
                          text=True, timeout=30)
    assert done.returncode == 0
    assert "--config" in done.stdout and "--cutoff" in done.stdout


def test_queries_of_one_corpus_share_their_arrays_so_sessions_can_be_incremental(
        tmp_path: Path) -> None:
    # Every SMT-LIB file declares its arrays afresh; replayed as parsed, the second query
    # would share no constraint with the first, and a push/pop session would rebuild its
    # context for every query. The replay reads them over one array per declaration.
    import importlib.util

    spec = importlib.util.spec_from_file_location("replay_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    replay = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(replay)
    archive = _five_query_corpus(tmp_path)
    queries = list(replay.read_corpus(archive))
    assert len(queries) == 5
    assert {id(a) for q in queries for a in q.arrays} == {id(queries[0].arrays[0])}
    # query 3 extends query 2 by one constraint: the first constraint is the same object
    second, third = queries[1].assertions, queries[2].assertions
    assert second[0] is third[0]
