"""explore(write_queries=DIR): every query that reaches the core solver is logged, replayable."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

import symex
from symex.errors import ConfigError, SolverError
from symex.expr import Assignment
from symex.expr.smtlib import parse_smtlib
from symex.solvers import create_solver

PROGRAMS = Path(__file__).parent / "programs"


@pytest.mark.parametrize("chain", [(), ("trivial", "independence", "cache", "cex")], ids=["no-chain", "chain"])
def test_every_core_query_is_logged_with_its_answer(tmp_path: Path, chain: tuple[str, ...]) -> None:
    log = tmp_path / "queries"
    result = symex.explore(symex.compile(PROGRAMS / "branches.c", ["-DN=4"]),
                           write_queries=log, solver_chain=chain)
    with (log / "index.csv").open() as f:
        rows = list(csv.DictReader(f))
    # behind a chain only the queries that reached z3 are logged
    assert len(rows) == result.statistics.solver_queries >= 1
    assert [int(r["number"]) for r in rows] == list(range(1, len(rows) + 1))
    solver = create_solver("z3")
    try:
        for row in rows:
            query = parse_smtlib((log / row["file"]).read_text())
            try:
                contents = solver.get_initial_values(query.assertions, query.arrays)
                replayed = "sat"
            except SolverError:
                replayed = "unsat"
            assert replayed == row["status"], row
            if replayed == "sat":
                assert Assignment(dict(zip(query.arrays, contents))).satisfies(query.assertions)
    finally:
        solver.close()


def test_the_log_directory_must_not_hold_another_log(tmp_path: Path) -> None:
    program = symex.compile(PROGRAMS / "branches.c", ["-DN=2"])
    symex.explore(program, write_queries=tmp_path)
    with pytest.raises(ConfigError, match="already holds a query log"):
        symex.explore(program, write_queries=tmp_path)
