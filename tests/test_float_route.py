"""Queries holding floating-point terms go to the float solver (bitwuzla by default), the
others to the run's solver (z3 by default): ``float_solver``, :mod:`symex.solvers.float_route`.

The route must find a float operation wherever a query holds one (in a constraint, in the
branch condition, in a value a model is asked for, behind a write of an update list), never
start the float solver for a query without one, and answer exactly as the solver it picks.
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest

import symex
from symex import expr as E
from symex.errors import ConfigError
from symex.expr import float_build as F
from symex.expr.walk import OpFinder
from symex.solvers import Query, create_core_solver, parse_config
from symex.solvers.assembly import assemble_solver
from symex.solvers.float_route import FloatRoute, parse_float_solver, route_floats_to

from solver_examples import c8, c32, rd, word

PROGRAMS = Path(__file__).parent / "programs" / "floats"


def one_f32() -> E.Expr:
    return F.float_constant(1.0, 32)


def test_the_finder_sees_float_operations_anywhere_and_only_there() -> None:
    a, index = E.Array("a", 4), E.Array("i", 4)
    x = word(a, 32)
    plain = E.eq(x, c32(7))
    finder = OpFinder(E.FLOAT_OPS)
    assert not finder.found_in([plain, E.ult(x, c32(9))])
    assert finder.found_in([plain, F.fcmp("olt", x, one_f32())])
    # a float result stored byte by byte and read back at a symbolic index: the float
    # operation sits in the update list, not in the read's arguments
    total = F.fadd(x, one_f32())
    memory = E.UpdateList(E.Array("m", 4))
    for k in range(4):
        memory = memory.write(c32(k), E.extract(total, 8 * k, 8))
    read_back = rd(memory, word(index, 32))
    assert read_back.op is E.Op.READ
    assert not OpFinder(E.FLOAT_OPS).found_in([E.eq(rd(E.UpdateList(E.Array("n", 4)), x), c8(1))])
    assert finder.found_in([plain, E.eq(read_back, c8(1))])
    # a bit pattern of a float, untouched by float arithmetic, is plain bits
    assert not finder.found_in([E.eq(x, c32(struct.unpack("<I", struct.pack("<f", 2.5))[0]))])


def test_the_finder_walks_a_deep_expression_without_recursion() -> None:
    a = E.Array("deep", 8)
    x, y = word(a, 32), word(a, 32, 4)
    deep = x
    for _ in range(50_000):
        deep = E.binary(E.Op.XOR, E.add(deep, y), x)
    finder = OpFinder(E.FLOAT_OPS)
    assert not finder.found_in([E.eq(deep, c32(0))])
    assert finder.found_in([E.eq(deep, c32(0)), F.fcmp("oeq", deep, one_f32())])


def test_the_finder_forgets_past_its_limit_and_still_answers() -> None:
    a = E.Array("lim", 4)
    x = word(a, 32)
    finder = OpFinder(E.FLOAT_OPS, limit=8)
    for k in range(50):
        assert not finder.found_in([E.eq(E.add(x, c32(k)), c32(3))])
    assert finder.found_in([F.fcmp("ogt", E.add(x, c32(1)), one_f32())])


@pytest.mark.parametrize(("config", "floats", "routed"), [
    ("z3", "bitwuzla", "bitwuzla:hybrid:pushpop"),
    ("cvc5", "bitwuzla:ite", "bitwuzla:ite:pushpop"),
    ("z3", "same", None),
    ("z3", "SAME ", None),
    ("z3", "", None),
    ("bitwuzla:array-assert", "bitwuzla", None),   # the run's solver is already bitwuzla
    ("portfolio(z3, bitwuzla)", "bitwuzla", None),  # the race has it
    ("portfolio(z3, cvc5)", "bitwuzla", "bitwuzla:hybrid:pushpop"),
])
def test_which_runs_route_float_queries(config: str, floats: str, routed: str | None) -> None:
    target = route_floats_to(config, floats)
    assert (None if target is None else str(target)) == routed


def write(tmp_path: Path, name: str, text: str) -> Path:
    source = tmp_path / name
    source.write_text(text)
    return source


def test_a_bad_float_solver_says_what_is_accepted(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="float_solver.*unknown backend 'nope'.*'same'"):
        parse_float_solver("nope")
    program = symex.compile(write(tmp_path, "zero.c", "int main(void) { return 0; }"))
    with pytest.raises(ConfigError, match="float_solver"):
        symex.explore(program, float_solver="z4")


def test_plain_queries_stay_on_the_solver_and_float_ones_go_to_the_float_solver() -> None:
    a = E.Array("x", 4)
    x = word(a, 32)
    route = FloatRoute(create_core_solver("z3"), parse_config("bitwuzla"),
                       lambda: create_core_solver("bitwuzla"))
    try:
        assert route.may_be_true(Query((E.ult(x, c32(10)),), E.eq(x, c32(5))))
        assert route.floats is None  # no float query yet: bitwuzla never started
        plain = route.statistics.solvers["solver"].queries
        assert plain >= 1
        # x * 2.0f == 3.0f has one solution, x = 1.5f: doubling is exact short of overflow
        # (x + 1.0f == 3.0f would not do: 2 - 2^-23 + 1 rounds to 3 as well, a tie to even)
        two, three = F.float_constant(2.0, 32), F.float_constant(3.0, 32)
        condition = F.fcmp("oeq", F.fmul(x, two), three)
        assert route.must_be_true(Query((condition,), F.fcmp("oeq", x, F.float_constant(1.5, 32))))
        values = route.get_initial_values((condition,), [a])
        assert values == [struct.pack("<f", 1.5)]
        assert route.floats is not None
        floats = route.statistics.solvers["floats"]
        assert floats.queries >= 2 and route.statistics.solvers["solver"].queries == plain
        assert route.statistics.queries == plain + floats.queries
        counters = route.statistics.as_dict()
        assert counters["route[floats].queries"] == floats.queries
        # a float query's path constraint keeps the rest of that path on the float solver
        assert not route.may_be_true(Query((condition,), E.eq(x, c32(5))))
        assert route.statistics.solvers["solver"].queries == plain
    finally:
        route.close()


def test_the_assembled_default_routes_and_a_brought_solver_is_left_alone() -> None:
    stack = assemble_solver("z3", chain=("independence",), float_config="bitwuzla")
    try:
        assert isinstance(stack.core, FloatRoute)
        a = E.Array("y", 4)
        y = word(a, 32)
        assert stack.solver.may_be_true(Query((), F.fcmp("olt", y, one_f32())))
        assert stack.solver.statistics.as_dict()["route[floats].queries"] == 1
    finally:
        stack.close()
    mine = create_core_solver("z3")
    try:
        stack = assemble_solver("", core=mine, float_config="bitwuzla")
        assert stack.core is mine
    finally:
        mine.close()
    stack = assemble_solver("bitwuzla", float_config="bitwuzla")
    assert not isinstance(stack.core, FloatRoute)
    stack.close()


needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="native enumeration needs gcc")


@needs_gcc
def test_the_default_configuration_explores_floats_on_bitwuzla(tmp_path: Path) -> None:
    """The defaults (z3, float queries on bitwuzla) reach every outcome of classes.c a
    native enumeration of all its inputs reaches; with ``float_solver="same"`` z3 answers
    everything and no query is routed."""
    from test_float_programs import assert_replays_natively, native_outcomes, outputs

    program = symex.compile(PROGRAMS / "classes.c")
    result = symex.explore(program, searcher="dfs", seed=0, max_time=120.0)
    assert_replays_natively("classes.c", result, tmp_path)
    assert sorted(outputs(result)) == sorted(native_outcomes([], tmp_path))
    layers = result.statistics.solver_layers
    assert layers["route[floats].queries"] > 0
    assert layers["route[floats].queries"] + layers["route[solver].queries"] \
        == layers["core_queries"]
    alone = symex.explore(symex.compile(write(tmp_path, "int.c", """
        #include <symex.h>
        int main(void) { int x = klee_int("x"); return x > 3; }""")), max_time=60.0)
    assert "route[floats].queries" not in alone.statistics.solver_layers  # never started


@needs_gcc
def test_workers_route_float_queries_too(tmp_path: Path) -> None:
    """Each worker assembles its own solver, route included: two workers with the default
    configuration reach exactly the outcomes of the native enumeration."""
    from test_float_programs import native_outcomes, outputs

    program = symex.compile(PROGRAMS / "classes.c", ["-DWIDE"])
    result = symex.explore(program, workers=2, max_time=120.0)
    assert result.halted is None
    assert sorted(outputs(result)) == sorted(native_outcomes(["-DWIDE"], tmp_path))


def test_the_command_line_says_how_many_queries_went_to_the_float_solver(tmp_path: Path) -> None:
    import subprocess
    import sys

    source = write(tmp_path, "half.c", """
        extern float __VERIFIER_nondet_float(void);
        int main(void) {
            float f = __VERIFIER_nondet_float();
            if (f * 2.0f > 3.0f)
                return 1;
            return 0;
        }""")
    proc = subprocess.run([sys.executable, "-m", "symex.cli", "run", "--output-dir",
                           str(tmp_path / "out"), str(source)], capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "of them with floating point, by the float solver" in proc.stdout
    same = subprocess.run([sys.executable, "-m", "symex.cli", "run", "--float-solver", "same",
                           "--output-dir", str(tmp_path / "same"), str(source)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert same.returncode == 0, same.stderr
    assert "floating point" not in same.stdout
