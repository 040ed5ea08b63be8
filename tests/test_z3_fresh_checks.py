"""z3's incremental core gives a hard query up after a work budget and a fresh solver answers
it (solvers/backends/z3_backend.py, ``FRESH_AFTER_WORK``): the answers and models stay right,
only the solver that finds them changes."""

from __future__ import annotations

import itertools
import struct
from pathlib import Path

import pytest

import symex
from symex.expr import Op
from symex.solvers.backend import CheckResult
from symex.solvers.backends import z3_backend
from symex.solvers.backends.z3_backend import FRESH_AFTER_VARIABLE, Z3Backend

PROGRAMS = Path(__file__).parent / "programs"


def _pigeons(backend: Z3Backend, pigeons: int, holes: int) -> list[object]:
    """``pigeons`` distinct 8-bit values below ``holes``, asserted in one pushed level."""
    backend.set_logic("QF_BV")
    backend.push()
    values = [backend.bv_var(f"p{i}", 8) for i in range(pigeons)]
    for v in values:
        backend.assert_(backend.compare(Op.ULT, v, backend.bv_const(holes, 8)))
    for a, b in itertools.combinations(values, 2):
        backend.assert_(backend.bool_op(Op.NOT, (backend.compare(Op.EQ, a, b),)))
    return values


@pytest.mark.parametrize("holes, expected", [(6, CheckResult.UNSAT), (7, CheckResult.SAT)])
def test_a_check_past_its_work_budget_is_answered_by_a_fresh_solver(
        monkeypatch: pytest.MonkeyPatch, holes: int, expected: CheckResult) -> None:
    monkeypatch.setenv(FRESH_AFTER_VARIABLE, "1")
    backend = Z3Backend()
    values = _pigeons(backend, 7, holes)
    assert backend.check() is expected
    assert backend.fresh_checks == 1, "the incremental core was not given up on"
    if expected is CheckResult.SAT:
        found = [backend.bv_value(v) for v in values]  # the fresh solver's model
        assert len(set(found)) == 7 and max(found) < holes
    backend.close()


def test_without_a_budget_or_outside_incremental_mode_no_fresh_solver_is_asked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FRESH_AFTER_VARIABLE, "0")
    backend = Z3Backend()
    _pigeons(backend, 7, 6)
    assert backend.check() is CheckResult.UNSAT and backend.fresh_checks == 0
    monkeypatch.setenv(FRESH_AFTER_VARIABLE, "1")
    fresh_context = Z3Backend()  # no push: z3 answers with its non-incremental solver already
    fresh_context.set_logic("QF_BV")
    x = fresh_context.bv_var("x", 8)
    fresh_context.assert_(fresh_context.compare(Op.ULT, x, fresh_context.bv_const(3, 8)))
    assert fresh_context.check() is CheckResult.SAT and fresh_context.fresh_checks == 0
    assert z3_backend.fresh_after_work() == 1
    backend.close()
    fresh_context.close()


def _all_interval(notes: list[int]) -> bool:
    steps = [abs(b - a) for a, b in zip(notes, notes[1:])]
    return sorted(notes) == list(range(len(notes))) and len(set(steps)) == len(steps)


@pytest.mark.parametrize("budget", ["0", "1"])
def test_every_check_answered_fresh_explores_the_same_paths_with_right_inputs(
        monkeypatch: pytest.MonkeyPatch, budget: str) -> None:
    """With a budget of 1 unit every incremental check is given up on at once and asked
    afresh: the same feasible rise-and-fall patterns are found, and every completed path's
    notes are an all-interval series (checked here, not by the solver)."""
    monkeypatch.setenv(FRESH_AFTER_VARIABLE, budget)
    n = 6
    program = symex.compile(PROGRAMS / "all_interval.c", [f"-DN={n}"])
    result = symex.explore(program)
    completed = [t for t in result.tests if t.status.name == "COMPLETED"]
    patterns = set()
    for test in completed:
        notes = list(struct.unpack(f"<{n}i", test.objects["note"]))
        assert _all_interval(notes), notes
        patterns.add(tuple(b > a for a, b in zip(notes, notes[1:])))
        assert test.exit_code == sum(b > a for a, b in zip(notes, notes[1:]))
    # every pattern of rises and falls that some all-interval series of 6 follows
    series = [s for s in itertools.permutations(range(n)) if _all_interval(list(s))]
    assert patterns == {tuple(b > a for a, b in zip(s, s[1:])) for s in series}
    # the run's counters say how many checks went to a fresh solver (run.stats has them)
    fresh = result.statistics.solver_layers["route[solver].fresh_checks"]
    assert (fresh > 0) if budget == "1" else (fresh == 0), result.statistics.solver_layers
