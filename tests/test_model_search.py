"""The chain's model-search layer: a branch's other side from the path's model, changed on
the bytes the new condition reads. An answer must satisfy every constraint and the condition
(checked here by the evaluator and by z3), a side no change reaches goes on to the solver,
and an unsatisfiable one is still the solver's to refute."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import symex
from solver_examples import EXAMPLES, Example, c8, c32, rd, word32
from symex import expr as E
from symex.expr import Array, Assignment, Expr
from symex.expr.reads import read_elements
from symex.options import DEFAULT_CHAIN
from symex.solvers import Query, create_solver
from symex.solvers.chain import CHAIN_LAYERS, ChainSolver, ChainStatistics
from symex.solvers.chain_layers import CoreLayer
from symex.solvers.model_search import SPARSE_EVERY, WINDOW, SearchLayer, search_model

ARGV = Array("argv", 8)


def _holds(model: dict[Array, bytes], constraints: tuple[Expr, ...]) -> bool:
    check = Assignment(model)
    return all(check.evaluate(c) for c in constraints)


def _satisfiable(constraints: list[Expr]) -> bool:
    """z3's answer: can ``constraints`` hold together."""
    *rest, last = constraints
    return create_solver("z3").may_be_true(Query(tuple(rest), last))


def _z3_agrees(model: dict[Array, bytes], constraints: tuple[Expr, ...]) -> bool:
    """z3 finds the constraints satisfiable with every byte of ``model`` fixed."""
    fixed = [E.eq(rd(array, i), c8(data[i])) for array, data in model.items() for i in range(array.size)]
    return _satisfiable([*constraints, *fixed])


def test_a_byte_compared_with_a_constant_is_set_to_it_and_the_path_still_holds() -> None:
    constraints = (E.ne(rd(ARGV, 0), c8(0)), E.ult(rd(ARGV, 1), c8(0x30)))
    near = {ARGV: b"a\x00\x00\x00\x00\x00\x00\x00"}
    condition = E.eq(rd(ARGV, 3), c8(ord("-")))
    found = search_model(near, constraints, condition, read_elements(condition))
    assert found is not None and found[ARGV][3] == ord("-")
    assert _holds(found, (*constraints, condition)) and _z3_agrees(found, (*constraints, condition))
    # only the byte the condition reads changed
    assert found[ARGV][:3] == near[ARGV][:3] and found[ARGV][4:] == near[ARGV][4:]


def test_a_word_takes_the_constant_little_endian_and_a_bound_one_past_it() -> None:
    equal = E.eq(word32(ARGV, 2), c32(100_000))
    found = search_model({ARGV: bytes(8)}, (), equal, read_elements(equal))
    assert found is not None and int.from_bytes(found[ARGV][2:6], "little") == 100_000
    # n > 9 where n is 0: the constant plus one
    above = E.ult(c32(9), word32(ARGV, 0))
    found = search_model({ARGV: bytes(8)}, (), above, read_elements(above))
    assert found is not None and _holds(found, (above,))


def test_no_candidate_leaves_the_question_to_the_solver_which_answers_it() -> None:
    """a[0] + a[1] == 0x77 with a[1] == 0x33 already: setting either byte to a constant of
    the condition breaks one or the other, so the search gives up; the chain's core solver
    then finds a[0] == 0x44."""
    sum_ = E.eq(E.add(rd(ARGV, 0), rd(ARGV, 1)), c8(0x77))
    constraints = (E.eq(rd(ARGV, 1), c8(0x33)),)
    near = {ARGV: b"\x00\x33" + bytes(6)}
    assert search_model(near, constraints, sum_, read_elements(sum_)) is None
    chain = ChainSolver(create_solver("z3"), CHAIN_LAYERS)
    answer = chain.group_model((*constraints, sum_), near)
    assert answer is not None and answer[ARGV][0] == 0x44
    assert chain.statistics.layers["search"].hits == 0 and chain.statistics.core_queries == 1


def test_an_infeasible_side_is_refuted_by_the_solver_not_the_search() -> None:
    constraints = (E.eq(rd(ARGV, 0), c8(7)),)
    condition = E.eq(rd(ARGV, 0), c8(9))
    near = {ARGV: b"\x07" + bytes(7)}
    assert search_model(near, constraints, condition, read_elements(condition)) is None
    chain = ChainSolver(create_solver("z3"), CHAIN_LAYERS)
    assert chain.group_model((*constraints, condition), near) is None


def test_the_chain_answers_from_the_search_without_the_core_solver() -> None:
    chain = ChainSolver(create_solver("z3"), CHAIN_LAYERS)
    constraints = (E.ne(rd(ARGV, 0), c8(0)),)
    condition = E.eq(rd(ARGV, 2), c8(ord("x")))
    answer = chain.group_model((*constraints, condition), {ARGV: b"q" + bytes(7)})
    assert answer is not None and _holds(answer, (*constraints, condition))
    assert chain.statistics.layers["search"].hits == 1 and chain.statistics.core_queries == 0
    # without the path's model the layer has nothing to start from: the core solver answers
    other = E.eq(rd(ARGV, 4), c8(ord("y")))
    assert chain.group_model((*constraints, other)) is not None
    assert chain.statistics.core_queries == 1


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.constraints], ids=lambda e: e.name)
def test_every_answer_on_the_shared_corpus_satisfies_its_question(example: Example) -> None:
    """From z3's model of each example's constraints: whatever the search answers satisfies
    the constraints and the query (evaluator and z3 agree), and it answers only satisfiable
    examples."""
    arrays = [a for a in example.arrays if a.initial is None]
    if not _satisfiable(list(example.constraints)):
        pytest.skip("the example's constraints are unsatisfiable: no path has a model")
    near = dict(zip(arrays, create_solver("z3").get_initial_values(list(example.constraints), arrays)))
    for condition in (example.query, E.bool_not(example.query)):
        found = search_model(near, example.constraints, condition, read_elements(condition))
        if found is not None:
            question = (*example.constraints, condition)
            assert _holds(found, question) and _z3_agrees(found, question)
            assert example.satisfiable if condition is example.query else not example.valid


def test_where_the_search_rarely_answers_it_tries_one_question_in_sixteen() -> None:
    """Sums the search cannot reach: after half a window of misses it tries one question in
    SPARSE_EVERY (the core solver answers every one); then bytes it can reach: once it
    answers again it tries every question, and answers them without the core solver."""
    statistics = ChainStatistics()
    layer = SearchLayer(CoreLayer(create_solver("z3"), statistics))
    near = {ARGV: b"\x00\x33" + bytes(6)}
    unreachable = 64 + 16 * SPARSE_EVERY
    for k in range(unreachable):
        # a[0] + a[1] == target with a[1] == 0x33: no constant of the sum, nor one more or
        # one less, nor zero, placed on either byte satisfies both
        target = 0x40 + k % 64
        sum_ = E.eq(E.add(rd(ARGV, 0), rd(ARGV, 1)), c8(target))
        constraints = (E.eq(rd(ARGV, 1), c8(0x33)),)
        answer = layer.group_model((*constraints, sum_), near)
        assert answer is not None and _holds(answer, (*constraints, sum_))
    assert layer.counters.hits == 0 and statistics.core_queries == unreachable
    assert layer.searched == WINDOW // 2 + (unreachable - WINDOW // 2) // SPARSE_EVERY
    for k in range(8 * SPARSE_EVERY):
        condition = E.eq(rd(ARGV, 4 + k % 4), c8(0x61 + k % 26))
        answer = layer.group_model((E.eq(rd(ARGV, 1), c8(0x33)), condition), near)
        assert answer is not None and _holds(answer, (condition,))
    before = statistics.core_queries
    for k in range(20):
        condition = E.eq(rd(ARGV, 5), c8(0x30 + k))
        assert layer.group_model((condition,), near) is not None
    assert statistics.core_queries == before


MAZE = Path(__file__).resolve().parent.parent / "benchmarks" / "queries" / "programs" / "maze.c"
GRID = ["+-+---+---+", "| |     |#|", "| | --+ | |", "| |   | | |", "| +-- | | |", "|     |   |", "+-----+---+"]


def _wins(moves: bytes) -> bool:
    """Whether ``moves`` reach the maze's exit by its rules (walls, the row-2 gaps, no
    stepping on the trail): an independent check of a test's input."""
    grid = [list(row) for row in GRID]
    x = y = 1
    grid[y][x] = "X"
    for move in moves:
        step = {ord("w"): (0, -1), ord("s"): (0, 1), ord("a"): (-1, 0), ord("d"): (1, 0)}.get(move)
        if step is None:
            return False
        x, y = x + step[0], y + step[1]
        if grid[y][x] == "#":
            return True
        if grid[y][x] != " " and not (y == 2 and grid[y][x] == "|" and 0 < x < 11):
            return False
        grid[y][x] = "X"
    return False


def test_a_run_with_the_search_explores_the_same_paths_and_its_winning_inputs_win() -> None:
    """KLEE's maze with and without the layer: the same paths, lines and errors; the
    search answered questions the core solver answers otherwise; and every error's input,
    made from changed models, wins the maze when played by the rules here."""
    program = symex.compile(MAZE)
    plain = symex.explore(program, solver_chain=DEFAULT_CHAIN)
    searched = symex.explore(program, solver_chain=CHAIN_LAYERS)
    assert searched.paths == plain.paths and searched.coverage.covered_lines == plain.coverage.covered_lines
    assert searched.statistics.solver_layers["search_hits"] > 0
    assert searched.statistics.solver_layers["core_queries"] < plain.statistics.solver_layers["core_queries"]
    errors = [t for t in searched.tests if t.error is not None]
    assert len(errors) == len([t for t in plain.tests if t.error is not None]) > 0
    for test in errors:
        assert _wins(test.objects["program"]), test.objects["program"]


def test_symex_run_takes_the_layer_from_the_command_line(tmp_path: Path) -> None:
    """``--solver-chain``: with ``search`` the maze's four questions that reached z3 are
    answered by the layer; an unknown layer is an error that lists the known ones."""
    def run(*options: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "symex.cli", "run", "--quiet", *options, str(MAZE)],
                              capture_output=True, text=True, cwd=tmp_path, timeout=300)
    plain = run("--solver-chain", ",".join(DEFAULT_CHAIN))
    searched = run("--solver-chain", ",".join(CHAIN_LAYERS))
    assert "; 4 solver queries" in plain.stdout and "; 0 solver queries" in searched.stdout
    wrong = run("--solver-chain", "trivial,magic")
    assert wrong.returncode != 0 and "unknown solver chain layer(s) 'magic'; choose from" in wrong.stderr
