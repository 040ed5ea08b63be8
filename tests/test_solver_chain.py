"""The solver chain (trivial, independence, cache, counter-example cache) in front of z3: the
same answers as the bare solver, models that satisfy every constraint, and layers that really
keep queries away from the core solver."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver_examples import EXAMPLES, PATH_STEPS, Example, c8, rd
from symex import expr as E
from symex.errors import ConfigError, SolverError
from symex.expr import Array, Assignment, Expr
from symex.solvers import Query, Validity, create_solver
from symex.solvers.chain import CHAIN_LAYERS, ChainSolver, build_chain
from symex.solvers.configured import SessionSolver

LAYER_SETS: list[tuple[str, ...]] = [
    (),
    ("trivial",),
    ("independence",),
    ("cache",),
    ("cex",),
    ("independence", "cex"),
    CHAIN_LAYERS,
]


class RecordingSolver(SessionSolver):
    """A real z3 session that logs every primitive call it receives."""

    def __init__(self) -> None:
        super().__init__("z3")
        self.checks: list[tuple[tuple[Expr, ...], Expr | None]] = []
        self.models: list[tuple[tuple[Expr, ...], tuple[Expr, ...], tuple[Array, ...]]] = []

    def _check(self, constraints: tuple[Expr, ...], extra: Expr | None) -> bool:
        self.checks.append((tuple(constraints), extra))
        return super()._check(constraints, extra)

    def _model(self, constraints: tuple[Expr, ...], exprs: Sequence[Expr],
               arrays: Sequence[Array]) -> tuple[list[int], list[bytes]] | None:
        self.models.append((tuple(constraints), tuple(exprs), tuple(arrays)))
        return super()._model(constraints, exprs, arrays)

    @property
    def calls(self) -> int:
        return len(self.checks) + len(self.models)

    def received(self) -> list[tuple[Expr, ...]]:
        """Every conjunction sent, as constraints plus the extra condition."""
        sent = [c + ((x,) if x is not None else ()) for c, x in self.checks]
        sent += [c for c, _, _ in self.models]
        return sent


def symbolic_arrays(exprs: Sequence[Expr]) -> list[Array]:
    return [a for a in E.arrays_in(exprs) if a.initial is None]


def assert_model_satisfies(constraints: Sequence[Expr], arrays: Sequence[Array],
                           contents: Sequence[bytes]) -> None:
    for a, data in zip(arrays, contents):
        assert len(data) == a.size
        if a.initial is not None:
            assert data == a.initial
    assignment = Assignment({a: d for a, d in zip(arrays, contents) if a.initial is None})
    for c in constraints:
        assert assignment.evaluate(c) == 1, E.format_expr(c)


# -- correctness on the shared corpus -------------------------------------------------------


@pytest.mark.parametrize("layers", LAYER_SETS, ids=lambda ls: "+".join(ls) or "none")
def test_corpus_answers_and_models(layers: tuple[str, ...]) -> None:
    # One chain for the whole corpus, so cached answers of earlier examples are in play.
    chain = ChainSolver(create_solver("z3"), layers)
    for ex in EXAMPLES:
        query = Query(ex.constraints, ex.query)
        assert chain.may_be_true(query) is ex.satisfiable, ex.name
        assert chain.must_be_true(query) is ex.valid, ex.name
        # A model over every array the constraints read, so ALL constraints can be checked.
        arrays = list(dict.fromkeys([*ex.arrays, *symbolic_arrays(ex.constraints)]))
        feasible = ex.satisfiable or not ex.valid  # vacuous validity only on infeasible paths
        if not feasible:
            with pytest.raises(SolverError):
                chain.get_initial_values(ex.constraints, arrays)
            continue
        contents = chain.get_initial_values(ex.constraints, arrays)
        assert_model_satisfies(ex.constraints, arrays, contents)
        if ex.satisfiable:
            both = (*ex.constraints, ex.query)
            contents = chain.get_initial_values(both, arrays)
            assert_model_satisfies(both, arrays, contents)
    chain.close()


def _feasible_path(ex: Example) -> bool:
    return ex.satisfiable or not ex.valid


@pytest.mark.parametrize("layers", [CHAIN_LAYERS, ("independence",)],
                         ids=["all", "independence"])
def test_corpus_values_are_possible(layers: tuple[str, ...]) -> None:
    bare = create_solver("z3")
    chain = ChainSolver(create_solver("z3"), layers)
    for ex in EXAMPLES:
        if not _feasible_path(ex):
            continue
        target = E.zext(ex.query, 8)
        value = chain.get_value(Query(ex.constraints, target))
        # The value must be one the query can take under the constraints (judged by z3 alone).
        assert bare.may_be_true(Query(ex.constraints, E.eq(target, E.const(value, 8)))), ex.name


def test_growing_path_answers() -> None:
    chain = ChainSolver(create_solver("z3"))
    for constraints, query, satisfiable in PATH_STEPS:
        assert chain.may_be_true(Query(constraints, query)) is satisfiable
    # The path repeatedly re-asks conditions implied by earlier models: the chain saves calls.
    assert chain.statistics.core_queries < chain.statistics.queries


# -- random path sequences ------------------------------------------------------------------

_A = Array("ra", 2)
_B = Array("rb", 2)
_C = Array("rc", 1)
_BYTES = [rd(_A, 0), rd(_A, 1), rd(_B, 0), rd(_B, 1), rd(_C, 0)]
_CMPS = [E.ult, E.ule, E.ugt, E.eq, E.ne, E.slt]

_condition = st.builds(
    lambda i, j, cmp, k, mix: cmp(E.add(_BYTES[i], _BYTES[j]) if mix else _BYTES[i], c8(k)),
    st.integers(0, len(_BYTES) - 1), st.integers(0, len(_BYTES) - 1),
    st.sampled_from(_CMPS), st.integers(0, 255), st.booleans(),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conditions=st.lists(st.tuples(_condition, st.booleans()), min_size=1, max_size=10),
       layers=st.sampled_from(LAYER_SETS[1:]))
def test_random_paths_match_bare_solver(conditions: list[tuple[Expr, bool]],
                                        layers: tuple[str, ...]) -> None:
    bare = create_solver("z3")
    chain = ChainSolver(create_solver("z3"), layers)
    path: tuple[Expr, ...] = ()
    arrays = [_A, _B, _C]
    for cond, take in conditions:
        query = Query(path, cond)
        expected = bare.evaluate(query)
        assert chain.evaluate(query) is expected
        # Follow a feasible branch, as the engine does; the chain assumes feasible paths.
        if expected is Validity.TRUE:
            path = (*path, cond)
        elif expected is Validity.FALSE:
            path = (*path, E.bool_not(cond))
        else:
            path = (*path, cond if take else E.bool_not(cond))
        contents = chain.get_initial_values(path, arrays)
        assert_model_satisfies(path, arrays, contents)
        # A model for one array only still satisfies the constraints over that array.
        only_a = chain.get_initial_values(path, [_A])
        slice_a = [c for c in path if set(symbolic_arrays([c])) <= {_A}]
        assert_model_satisfies(slice_a, [_A], only_a)
    bare.close()
    chain.close()


# -- what each layer does -------------------------------------------------------------------

_X = Array("ix", 1)
x = rd(_X, 0)
_Y = Array("iy", 1)
y = rd(_Y, 0)


def test_trivial_answers_constant_and_repeated_conditions() -> None:
    inner = RecordingSolver()
    chain = ChainSolver(inner, ("trivial",))
    path = (E.ugt(x, c8(5)),)
    assert chain.may_be_true(Query(path, E.TRUE)) is True
    assert chain.may_be_true(Query(path, E.FALSE)) is False
    # The condition is a constraint: sat; its negation contradicts one: unsat (valid).
    assert chain.may_be_true(Query(path, E.ugt(x, c8(5)))) is True
    assert chain.must_be_true(Query(path, E.ugt(x, c8(5)))) is True
    assert chain.may_be_true(Query((E.bool_not(E.eq(y, c8(1))),), E.eq(y, c8(1)))) is False
    assert inner.calls == 0
    # Constant conditions never reach the chain (SolverBase answers them); the other three
    # questions are the trivial layer's.
    assert chain.statistics.layers["trivial"].hits == 3
    # A constant false constraint refutes every query and every model.
    with pytest.raises(SolverError):
        chain.get_initial_values((E.FALSE, E.ugt(x, c8(5))), [])
    assert inner.calls == 0


def test_trivial_settles_a_printed_digit_by_its_range_without_the_solver() -> None:
    """stat's question: is ``'0' + x % 10`` the NUL byte? Never (39..57), on any path; is it
    not? Always. Neither question, nor a model of a path branching on it, reaches z3; a digit
    that may be '0' still does."""
    inner = RecordingSolver()
    chain = ChainSolver(inner, ("trivial",))
    digit = E.add(c8(48), E.srem(x, c8(10)))
    path = (E.ugt(y, c8(5)),)
    assert chain.may_be_true(Query(path, E.eq(c8(0), digit))) is False
    assert chain.must_be_true(Query(path, E.bool_not(E.eq(c8(0), digit)))) is True
    assert chain.group_model((*path, E.eq(c8(0), digit))) is None
    assert inner.calls == 0
    assert chain.statistics.layers["trivial"].hits == 3
    assert chain.may_be_true(Query(path, E.eq(c8(48), digit))) is True
    assert inner.calls == 1


def test_independence_sends_only_related_constraints() -> None:
    inner = RecordingSolver()
    chain = ChainSolver(inner, ("independence",))
    on_x = (E.ugt(x, c8(5)), E.ult(x, c8(100)))
    on_y = (E.eq(y, c8(7)),)
    path = (on_x[0], on_y[0], on_x[1])
    assert chain.may_be_true(Query(path, E.eq(x, c8(50)))) is True
    assert inner.received() == [(*on_x, E.eq(x, c8(50)))]
    assert chain.must_be_true(Query(path, E.eq(y, c8(7)))) is True
    assert set(inner.received()[-1]) == {*on_y, E.bool_not(E.eq(y, c8(7)))}
    assert chain.statistics.layers["independence"].hits == 2
    assert chain.statistics.core_queries == 2


def test_independence_links_arrays_transitively() -> None:
    inner = RecordingSolver()
    chain = ChainSolver(inner, ("independence",))
    z = rd(Array("iz", 1), 0)
    # x relates to y, y to z: a query on z needs all three; w is unrelated.
    w = rd(Array("iw", 1), 0)
    path = (E.eq(x, y), E.ult(y, z), E.eq(w, c8(3)))
    assert chain.must_be_true(Query(path, E.ugt(z, c8(0)))) is True
    assert set(inner.received()[-1]) == {path[0], path[1], E.bool_not(E.ugt(z, c8(0)))}


def test_independence_keeps_constraints_without_arrays() -> None:
    # Without the trivial layer, a constant false constraint reaches the core solver; dropping
    # it (it shares no array with the query) would wrongly make an infeasible path feasible.
    inner = RecordingSolver()
    chain = ChainSolver(inner, ("independence",))
    path = (E.FALSE, E.ugt(x, c8(5)))
    assert chain.may_be_true(Query(path, E.eq(y, c8(1)))) is False
    assert E.FALSE in inner.received()[-1]
    assert E.ugt(x, c8(5)) not in inner.received()[-1]
    with pytest.raises(SolverError):
        chain.get_initial_values(path, [_Y])


def test_independence_solves_groups_separately_and_merges() -> None:
    inner = RecordingSolver()
    chain = ChainSolver(inner, ("independence", "cache"))
    ax, ay = _X, _Y
    unused = Array("unused", 3)
    path = (E.ugt(x, c8(5)), E.eq(y, c8(7)))
    contents = chain.get_initial_values(path, [ax, ay, unused])
    assert_model_satisfies(path, [ax, ay, unused], contents)
    # One model per group; an array no constraint reads is all zeros.
    assert sorted(len(c) for c, _, _ in inner.models) == [1, 1]
    assert contents[2] == b"\0\0\0"
    # Growing the y group leaves the x group unchanged: only the y group reaches the solver.
    path2 = (*path, E.ne(y, c8(8)))
    contents = chain.get_initial_values(path2, [ax, ay])
    assert_model_satisfies(path2, [ax, ay], contents)
    assert inner.models[-1][0] == (E.eq(y, c8(7)), E.ne(y, c8(8)))
    assert len(inner.models) == 3
    assert chain.statistics.layers["cache"].hits == 1


def test_cache_answers_repeated_queries_in_any_order() -> None:
    inner = RecordingSolver()
    chain = ChainSolver(inner, ("cache",))
    c1, c2 = E.ugt(x, c8(5)), E.ult(x, c8(9))
    assert chain.may_be_true(Query((c1, c2), E.eq(x, c8(7)))) is True
    assert chain.may_be_true(Query((c2, c1), E.eq(x, c8(7)))) is True
    assert chain.may_be_true(Query((c1, c2), E.eq(x, c8(9)))) is False
    assert chain.may_be_true(Query((c2, c1), E.eq(x, c8(9)))) is False
    assert inner.calls == 2
    assert chain.statistics.core_queries == 2
    assert chain.statistics.layers["cache"].hits == 2
    assert chain.statistics.queries == 4
    assert (chain.statistics.sat, chain.statistics.unsat) == (2, 2)


def test_cex_model_answers_without_core_call() -> None:
    inner = RecordingSolver()
    chain = ChainSolver(inner, ("cex",))
    c1 = E.eq(x, c8(42))
    assert chain.may_be_true(Query((), c1)) is True
    assert inner.calls == 1
    # The remembered model has x = 42, which satisfies x > 10 and x != 3 as well.
    assert chain.may_be_true(Query((c1,), E.ugt(x, c8(10)))) is True
    assert chain.may_be_true(Query((E.ne(x, c8(3)),), E.ult(x, c8(50)))) is True
    assert inner.calls == 1
    assert chain.statistics.layers["cex"].hits == 2


def test_cex_unsat_subset_refutes_superset() -> None:
    inner = RecordingSolver()
    chain = ChainSolver(inner, ("cex",))
    c1, c2 = E.ugt(x, c8(200)), E.ult(x, c8(100))
    assert chain.may_be_true(Query((c1,), c2)) is False
    assert inner.calls == 1
    # Any superset of {x > 200, x < 100} is unsatisfiable without asking.
    assert chain.may_be_true(Query((c1, E.eq(y, c8(1)), c2), E.ne(x, c8(0)))) is False
    assert inner.calls == 1
    assert chain.statistics.layers["cex"].hits == 1


def test_all_layers_statistics_add_up() -> None:
    inner = RecordingSolver()
    chain = ChainSolver(inner)
    for constraints, query, _ in PATH_STEPS * 2:
        chain.may_be_true(Query(constraints, query))
    stats = chain.statistics
    assert stats.core_queries == inner.calls
    # Constant conditions are answered before the chain (by SolverBase) and are not counted.
    asked = sum(1 for _, query, _ in PATH_STEPS if query.op is not E.Op.CONST)
    assert stats.queries == 2 * asked
    assert stats.sat + stats.unsat == stats.queries
    assert set(stats.layers) == set(CHAIN_LAYERS)
    # The second round is answered entirely by the chain.
    assert stats.core_queries <= len(PATH_STEPS)
    summary = stats.as_dict()
    assert summary["core_queries"] == stats.core_queries
    assert summary["cache_hits"] == stats.layers["cache"].hits


def test_unknown_layer_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="choose from"):
        ChainSolver(create_solver("z3"), ("trivial", "magic"))


def test_build_chain_without_layers_is_the_solver() -> None:
    solver = create_solver("z3")
    assert build_chain(solver, ()) is solver
    chained = build_chain(solver, ("cache",))
    assert isinstance(chained, ChainSolver) and chained.layers == ("cache",)
