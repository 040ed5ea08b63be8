"""Every solver configuration (backend x encoding x session) against the shared corpus, random
queries with brute-forced answers, real KLEE queries, and configuration strings."""

from __future__ import annotations

import csv
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from solver_examples import EXAMPLES, PATH_STEPS, Example, c8, rd
from symex import expr as E
from symex.errors import ConfigError, SolverError, SolverUnknown
from symex.expr import Array, Assignment, Expr, UpdateList
from symex.solvers import Query, Solver, Validity, create_solver
from symex.solvers.backends import BACKENDS, make_backend
from symex.solvers.config import (
    PortfolioConfig,
    SessionKind,
    SolverConfig,
    parse_config,
)
from symex.solvers.configured import SessionSolver

# -- the configuration matrix ---------------------------------------------------------------

BACKEND_NAMES = [*BACKENDS, "pysmt-cvc5"]
ENCODING_NAMES = ["array-assert", "nested-write", "ite", "hybrid"]
# assumptions(3) makes the corpus cross the reset threshold many times
SESSION_NAMES = ["none", "pushpop", "assumptions", "assumptions(3)"]


def _unavailable(name: str) -> str | None:
    """Why the backend cannot be built here (package or module missing), else None."""
    try:
        make_backend(name).close()
    except SolverError as exc:
        return str(exc)
    return None


_BACKEND_PROBLEMS = {name: _unavailable(name) for name in BACKEND_NAMES}


def _encoding_problem(name: str) -> str | None:
    try:
        from symex.encodings import get_encoding

        get_encoding(name)
    except (ImportError, ConfigError) as exc:
        return f"encoding {name} not available: {exc}"
    return None


_ENCODING_PROBLEMS = {name: _encoding_problem(name) for name in ENCODING_NAMES}

CONFIGS = [f"{b}:{e}:{s}" for b in BACKEND_NAMES for e in ENCODING_NAMES for s in SESSION_NAMES]


def _solver(config: str, timeout: float | None = 30.0) -> SessionSolver:
    parsed = parse_config(config)
    assert isinstance(parsed, SolverConfig)
    problem = _BACKEND_PROBLEMS[parsed.backend] or _ENCODING_PROBLEMS[parsed.encoding]
    if problem is not None:
        pytest.skip(problem)
    return SessionSolver(parsed, timeout=timeout)


@pytest.fixture(params=CONFIGS)
def solver(request: pytest.FixtureRequest) -> Iterator[SessionSolver]:
    s = _solver(request.param)
    yield s
    s.close()


def _model_holds(ex_constraints: tuple[Expr, ...], arrays: tuple[Array, ...],
                 contents: list[bytes]) -> list[Expr]:
    """The constraints the model violates (evaluated by the expression layer)."""
    assignment = Assignment(dict(zip(arrays, contents)))
    return [c for c in ex_constraints if assignment.evaluate(c) != 1]


def _check_example(solver: Solver, ex: Example) -> None:
    q = Query(ex.constraints, ex.query)
    assert solver.may_be_true(q) is ex.satisfiable, ex.name
    assert solver.must_be_true(q) is ex.valid, ex.name
    everything = (*ex.constraints, ex.query)
    if ex.satisfiable:
        contents = solver.get_initial_values(everything, ex.arrays)
        assert [len(c) for c in contents] == [a.size for a in ex.arrays], ex.name
        for array, data in zip(ex.arrays, contents):
            if not array.is_symbolic:
                assert data == array.initial, ex.name
        assert _model_holds(everything, ex.arrays, contents) == [], ex.name
    else:
        with pytest.raises(SolverError) as info:
            solver.get_initial_values(everything, ex.arrays)
        assert type(info.value) is SolverError, ex.name  # unsat, not unknown


# -- corpus ------------------------------------------------------------------------------------


def test_corpus(solver: SessionSolver) -> None:
    # Forwards then backwards: incremental sessions meet every example with different history.
    history = EXAMPLES if solver.config.session is SessionKind.NONE else \
        [*EXAMPLES, *reversed(EXAMPLES)]
    for ex in history:
        _check_example(solver, ex)
    stats = solver.statistics
    assert stats.unknown == 0
    assert stats.queries == stats.sat + stats.unsat
    if solver.config.session is SessionKind.ASSUMPTIONS and solver.config.threshold == 3:
        assert stats.resets > 10  # the threshold was crossed again and again


def test_path_growing_and_branching(solver: SessionSolver) -> None:
    for constraints, query, satisfiable in PATH_STEPS:
        assert solver.may_be_true(Query(constraints, query)) is satisfiable
    # x >= 112 on the longest path: the least value is 112, the greatest 255.
    longest = PATH_STEPS[-1][0]
    x = PATH_STEPS[-1][1].args[1] if PATH_STEPS[-1][1].args[0].op is E.Op.CONST else \
        PATH_STEPS[-1][1].args[0]
    assert solver.get_range(Query(longest, x)) == (112, 255)
    session = solver.config.session
    if session is SessionKind.PUSHPOP or (session is SessionKind.ASSUMPTIONS
                                          and solver.config.threshold == 50):
        # the shared prefixes were not translated again
        assert solver.statistics.cache_hits > len(PATH_STEPS)


def test_values_and_evaluate(solver: SessionSolver) -> None:
    a = Array("v", 2)
    x, y = rd(a, 0), rd(a, 1)
    pc = (E.ugt(x, c8(5)), E.eq(y, E.add(x, c8(1))))
    # x = 255 wraps y to 0, so y > 6 is not implied until x < 255 is added
    assert solver.evaluate(Query(pc, E.ugt(y, c8(6)))) is Validity.UNKNOWN
    assert solver.evaluate(Query((*pc, E.ult(x, c8(255))), E.ugt(y, c8(6)))) is Validity.TRUE
    assert solver.evaluate(Query(pc, E.eq(y, c8(3)))) is Validity.FALSE
    assert solver.evaluate(Query(pc, E.eq(y, c8(30)))) is Validity.UNKNOWN
    # y = x + 1 with x in 6..255: y in 7..255 or y = 0 (x = 255 wraps)
    assert solver.get_range(Query(pc, y)) == (0, 255)
    assert solver.get_range(Query((*pc, E.ult(x, c8(255))), y)) == (7, 255)
    value = solver.get_value(Query(pc, E.zext(y, 32)))
    assert value == 0 or 7 <= value <= 255
    with pytest.raises(SolverError):
        solver.get_value(Query((*pc, E.eq(x, c8(2))), y))


# -- random queries: every configuration agrees with brute force ------------------------------

_IN = Array("in", 1)
_TABLE = Array("tbl", 4, bytes([0x11, 0x80, 0x00, 0xFE]))
_X = rd(_IN, 0)


def _index(e: Expr) -> Expr:
    """An in-bounds (0..3) 32-bit index made of a byte expression."""
    return E.zext(E.and_(e, c8(3)), 32)


def _bytes_strategy() -> st.SearchStrategy[Expr]:
    leaves = st.one_of(st.just(_X), st.integers(0, 255).map(c8))

    def extend(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
        binops = st.sampled_from([E.add, E.sub, E.mul, E.udiv, E.sdiv, E.urem, E.srem, E.and_,
                                  E.or_, E.xor, E.shl, E.lshr, E.ashr])
        compare = st.sampled_from([E.eq, E.ult, E.ule, E.slt, E.sle])
        return st.one_of(
            st.builds(lambda f, a, b: f(a, b), binops, children, children),
            st.builds(E.not_, children),
            st.builds(lambda c, a, b, t, e: E.ite(c(a, b), t, e), compare, children, children,
                      children, children),
            # table lookup at a symbolic index
            st.builds(lambda i: rd(_TABLE, _index(i)), children),
            # lookup after a write at a symbolic index
            st.builds(lambda wi, wv, i: rd(UpdateList(_TABLE).write(_index(wi), wv), _index(i)),
                      children, children, children),
            # through 16 bits and back
            st.builds(lambda a, b: E.extract(E.mul(E.concat(a, b), E.sext(b, 16)), 4, 8),
                      children, children),
        )

    return st.recursive(leaves, extend, max_leaves=6)


def _conditions() -> st.SearchStrategy[Expr]:
    compare = st.sampled_from([E.eq, E.ne, E.ult, E.ule, E.slt, E.sle, E.ugt, E.sge])
    return st.builds(lambda f, a, b: f(a, b), compare, _bytes_strategy(), _bytes_strategy())


_RANDOM_CONFIGS = [c for c in CONFIGS if c.endswith(":none") or c.endswith(":assumptions(3)")
                   or c.endswith(":pushpop")]


@pytest.fixture(scope="module")
def all_solvers() -> Iterator[dict[str, SessionSolver]]:
    solvers: dict[str, SessionSolver] = {}
    for config in _RANDOM_CONFIGS:
        parsed = parse_config(config)
        assert isinstance(parsed, SolverConfig)
        if _BACKEND_PROBLEMS[parsed.backend] or _ENCODING_PROBLEMS[parsed.encoding]:
            continue
        solvers[config] = SessionSolver(parsed, timeout=30.0)
    yield solvers
    for s in solvers.values():
        s.close()


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(constraints=st.lists(_conditions(), min_size=0, max_size=3), query=_conditions())
def test_random_queries_agree_with_brute_force(
    all_solvers: dict[str, SessionSolver], constraints: list[Expr], query: Expr
) -> None:
    assert all_solvers, "no configuration could be built"
    pc = tuple(constraints)
    # ground truth: the only symbolic byte takes all 256 values
    truth_sat = truth_valid = False
    truth_valid = True
    for v in range(256):
        assignment = Assignment({_IN: bytes([v])})
        if all(assignment.evaluate(c) == 1 for c in pc):
            if assignment.evaluate(query) == 1:
                truth_sat = True
            else:
                truth_valid = False
    # validity questions presuppose a satisfiable path condition (the engine only asks about
    # feasible paths; constant questions are answered without the backend on that premise)
    feasible = any(all(Assignment({_IN: bytes([v])}).evaluate(c) == 1 for c in pc) for v in range(256))
    assume(feasible)
    for config, solver in all_solvers.items():
        q = Query(pc, query)
        assert solver.may_be_true(q) is truth_sat, config
        assert solver.must_be_true(q) is truth_valid, config
        if truth_sat:
            contents = solver.get_initial_values((*pc, query), [_IN, _TABLE])
            assert contents[1] == _TABLE.initial, config
            assert _model_holds((*pc, query), (_IN, _TABLE), contents) == [], config


# -- real KLEE queries -------------------------------------------------------------------------

_KLEE = Path("/work/shared/corpora/queries/klee-querylogs")
_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def _read_klee_query(path: Path) -> tuple[tuple[Expr, ...], list[Array]]:
    """The assertions and arrays of one KLEE query log file. Handles exactly the forms those
    files use: declare-fun of 32->8 arrays, assert, let with ?names (unique per file), and/or,
    =, select, concat, bvslt, (_ bvN W), true/false. Array sizes come from the get-value
    lines. Parsing and evaluation use explicit stacks (nesting can be deep)."""
    text = path.read_text()
    sizes: dict[str, int] = {}
    for name, index in re.findall(r"\(get-value \( \(select (\S+) \(_ bv(\d+) 32\)", text):
        sizes[name] = max(sizes.get(name, 0), int(index) + 1)
    arrays = {name: Array(name, sizes.get(name, 1))
              for name in re.findall(r"\(declare-fun (\S+) \(\)", text)}
    roots: list[Expr] = []
    for match in re.finditer(r"\(assert ", text):
        # the assertion as nested lists
        stack: list[list[object]] = [[]]
        for tok in _TOKEN.finditer(text, match.start()):
            t = tok.group()
            if t == "(":
                stack.append([])
            elif t == ")":
                done = stack.pop()
                stack[-1].append(done)
                if len(stack) == 1:
                    break
            else:
                stack[-1].append(t)
        tree = stack[0][0]
        roots.append(_evaluate_smt(tree, arrays, path.name))
    return tuple(roots), list(arrays.values())


def _evaluate_smt(tree: object, arrays: dict[str, Array], where: str) -> Expr:
    env: dict[str, Expr] = {}
    values: dict[int, object] = {}

    def operand(item: object) -> object:
        if isinstance(item, list):
            return values[id(item)]
        if item == "true":
            return E.TRUE
        if item == "false":
            return E.FALSE
        if isinstance(item, str) and item.startswith("?"):
            return env[item]
        return item  # an array name or a keyword

    work: list[tuple[object, bool]] = [(tree, False)]
    while work:
        node, expanded = work.pop()
        if not isinstance(node, list):
            continue
        if not expanded:
            work.append((node, True))
            # children left to right: let bindings are evaluated before the let's body
            for child in reversed(node):
                work.append((child, False))
            continue
        head = node[0] if node else None
        args = [operand(x) for x in node[1:]]
        value: object = None
        if head == "_":
            value = E.const(int(str(node[1])[2:]), int(str(node[2])))
        elif head == "select":
            value = rd(arrays[str(node[1])], args[1])
        elif head == "concat":
            value = E.concat(args[0], args[1])
        elif head == "=":
            value = E.eq(args[0], args[1])
        elif head == "and":
            value = E.bool_and(args[0], args[1])
        elif head == "or":
            value = E.bool_or(args[0], args[1])
        elif head == "bvslt":
            value = E.slt(args[0], args[1])
        elif head == "let":
            value = args[1]
        elif head == "assert":
            value = args[0]
        elif isinstance(head, str) and head.startswith("?"):
            env[head] = args[0]  # a binding (?B e)
        elif isinstance(head, list) or head is None:
            pass  # the binding list of a let
        else:
            raise ValueError(f"{where}: unsupported form {head!r}")
        values[id(node)] = value
    result = values[id(tree)]
    assert isinstance(result, Expr)
    return result


def _klee_rows() -> list[dict[str, str]]:
    if not (_KLEE / "index.csv").exists():
        return []
    with open(_KLEE / "index.csv", newline="") as f:
        return list(csv.DictReader(f))


_ROWS = _klee_rows()
# every unsat query plus every 12th sat one: small, and both answers represented
_SUBSET = [r for i, r in enumerate(_ROWS) if r["expected_status"] == "unsat" or i % 12 == 0]


def test_klee_reader_reads_every_file() -> None:
    if not _ROWS:
        pytest.skip("KLEE query corpus not present")
    for row in _ROWS:
        roots, arrays = _read_klee_query(_KLEE / row["file"])
        assert len(roots) == 1 and all(r.width == 1 for r in roots), row["file"]


@pytest.mark.parametrize("config", [f"{b}:{e}:{s}" for b in BACKEND_NAMES for e in ENCODING_NAMES
                                    for s in ("none", "pushpop", "assumptions")])
def test_klee_queries(config: str) -> None:
    if not _SUBSET:
        pytest.skip("KLEE query corpus not present")
    solver = _solver(config)
    try:
        for row in _SUBSET:
            roots, arrays = _read_klee_query(_KLEE / row["file"])
            expected = row["expected_status"] == "sat"
            if not expected:
                with pytest.raises(SolverError) as info:
                    solver.get_initial_values(roots, arrays)
                assert type(info.value) is SolverError, row["file"]
                continue
            contents = solver.get_initial_values(roots, arrays)
            assert _model_holds(roots, tuple(arrays), contents) == [], row["file"]
    finally:
        solver.close()


# -- configuration strings -----------------------------------------------------------------------


def test_parse_defaults_and_canonical_strings() -> None:
    assert parse_config("z3") == SolverConfig("z3", "hybrid", SessionKind.PUSHPOP, 50)
    assert parse_config("bitwuzla:ite") == SolverConfig("bitwuzla", "ite", SessionKind.PUSHPOP)
    assert parse_config(" Z3 : nested-write : PushPop ") == SolverConfig(
        "z3", "nested-write", SessionKind.PUSHPOP)
    assert parse_config("z3:array-assert:assumptions") == SolverConfig(
        "z3", "array-assert", SessionKind.ASSUMPTIONS, 50)
    assert parse_config("cvc5:ite:assumptions(7)").threshold == 7
    assert parse_config("pysmt-cvc5").backend == "pysmt-cvc5"
    for text in ["z3", "cvc5:ite:assumptions(7)", "pysmt:nested-write:pushpop",
                 "portfolio(z3, bitwuzla:ite, z3:array-assert:assumptions(50))"]:
        parsed = parse_config(text)
        assert parse_config(str(parsed)) == parsed
    assert str(parse_config("z3")) == "z3:hybrid:pushpop"


def test_parse_portfolio() -> None:
    p = parse_config("portfolio(z3:array-assert:none, z3:array-assert:assumptions(50), bitwuzla:ite)")
    assert p == PortfolioConfig((
        SolverConfig("z3", "array-assert", session=SessionKind.NONE),
        SolverConfig("z3", "array-assert", session=SessionKind.ASSUMPTIONS, threshold=50),
        SolverConfig("bitwuzla", "ite"),
    ))
    assert parse_config("portfolio(z3)") == PortfolioConfig((SolverConfig("z3"),))
    staggered = parse_config("portfolio(z3, bitwuzla, stagger=0.25)")
    assert isinstance(staggered, PortfolioConfig) and staggered.stagger == 0.25
    assert staggered.members == (SolverConfig("z3"), SolverConfig("bitwuzla"))
    assert parse_config(str(staggered)) == staggered
    assert parse_config("portfolio(z3, stagger=0)").stagger == 0


@pytest.mark.parametrize("text", [
    "", "boolector", "z3:quantum", "z3:ite:sometimes", "z3:ite:none:extra", "z3:ite:assumptions(0)",
    "z3:ite:assumptions(x)", "z3, cvc5", "portfolio()", "portfolio(z3,)", "portfolio(portfolio(z3))",
    "portfolio(z3", "cvc5-z3", "z3-cvc5", "portfolio(z3, stagger=-1)", "portfolio(z3, stagger=x)",
    "portfolio(stagger=1)", "portfolio(z3, staggering=1)",
])
def test_bad_configurations_quote_the_grammar(text: str) -> None:
    with pytest.raises(ConfigError, match=r"BACKEND\[:ENCODING\[:SESSION\]\]"):
        parse_config(text)
    with pytest.raises(ConfigError):
        create_solver(text)


def test_create_solver_default_is_z3_hybrid_pushpop() -> None:
    s = create_solver()
    try:
        assert isinstance(s, SessionSolver) and isinstance(s, Solver)
        assert str(s.config) == "z3:hybrid:pushpop"
        a = Array("x", 1)
        assert s.must_be_true(Query((E.ugt(rd(a, 0), c8(5)),), E.ugt(rd(a, 0), c8(3))))
    finally:
        s.close()
    with pytest.raises(SolverError, match="closed"):
        s.may_be_true(Query((), E.eq(rd(Array("x", 1), 0), c8(1))))


def test_bad_timeout_is_refused() -> None:
    with pytest.raises(SolverError, match="positive"):
        create_solver("z3", timeout=0)


def test_statistics_count_queries_resets_and_cache_hits() -> None:
    a = Array("x", 1)
    x = rd(a, 0)
    pc = (E.ugt(x, c8(5)), E.ult(x, c8(200)))
    for config, incremental in [("z3:array-assert:none", False), ("z3:array-assert:pushpop", True),
                                ("z3:array-assert:assumptions", True)]:
        s = _solver(config)
        try:
            for bound in (10, 20, 30):
                assert s.may_be_true(Query(pc, E.ugt(x, c8(bound))))
            assert not s.may_be_true(Query(pc, E.ugt(x, c8(250))))
            stats = s.statistics.as_dict()
            assert (stats["queries"], stats["sat"], stats["unsat"], stats["unknown"]) == (4, 3, 1, 0)
            assert stats["time"] > 0
            if incremental:
                # one context for the four queries; the two constraints were reused 3 times each
                assert stats["resets"] == 1 and stats["cache_hits"] >= 6
            else:
                assert stats["resets"] == 4
        finally:
            s.close()


# -- unknown answers ---------------------------------------------------------------------------


def _hard_factoring() -> tuple[tuple[Expr, ...], Expr]:
    """x * y = a 127-bit semiprime of two 64-bit primes: factoring it by bit-blasting takes
    far beyond 0.05 s on any machine (a 64-bit product of 32-bit primes was once answered
    within 0.05 s)."""
    f = Array("factors", 16)

    def word(first: int) -> Expr:
        value = rd(f, first)
        for i in range(first + 1, first + 8):
            value = E.concat(rd(f, i), value)
        return E.concat(E.const(0, 64), value)

    x, y = word(0), word(8)
    n = (2**64 - 59) * (2**63 - 25)  # both prime
    pc = (E.ugt(x, E.const(1, 128)), E.ugt(y, E.const(1, 128)))
    return pc, E.eq(E.mul(x, y), E.const(n, 128))


@pytest.mark.parametrize("session", ["none", "pushpop", "assumptions"])
def test_timeout_raises_unknown_and_solver_stays_usable(session: str) -> None:
    s = _solver(f"z3:array-assert:{session}", timeout=0.05)
    try:
        pc, hard = _hard_factoring()
        with pytest.raises(SolverUnknown) as info:
            s.may_be_true(Query(pc, hard))
        assert info.value.reason
        assert s.statistics.unknown == 1
        # usable afterwards: the easy questions get time enough on a loaded machine (the
        # session may still hold the multiplier's circuit, which 0.05 s did not always fit)
        s.timeout = 30.0
        a = Array("x", 1)
        assert s.must_be_true(Query((E.ugt(rd(a, 0), c8(5)),), E.ugt(rd(a, 0), c8(3))))
        # the same path again, now with an easy question
        assert s.may_be_true(Query(pc, E.eq(rd(Array("factors", 16), 0), c8(3))))
    finally:
        s.close()


def test_interrupt_from_another_thread_gives_unknown() -> None:
    s = _solver("z3:array-assert:pushpop", timeout=None)
    try:
        assert s.can_interrupt
        pc, hard = _hard_factoring()
        timer = threading.Timer(0.2, s.interrupt)
        timer.start()
        with pytest.raises(SolverUnknown):
            s.may_be_true(Query(pc, hard))
        timer.join()
        a = Array("x", 1)
        assert s.may_be_true(Query((E.ugt(rd(a, 0), c8(5)),), E.eq(rd(a, 0), c8(6))))
    finally:
        s.close()


def test_check_answers_validity_like_evaluate() -> None:
    x = E.read(UpdateList(Array("x", 1)), E.const(0, 32))
    solver = create_solver("z3")
    try:
        constraints = [E.ugt(x, E.const(5, 8))]
        assert solver.check(constraints, E.ugt(x, E.const(3, 8))) is Validity.TRUE
        assert solver.check(constraints, E.ugt(x, E.const(10, 8))) is Validity.UNKNOWN
        assert solver.check(constraints, E.ult(x, E.const(2, 8))) is Validity.FALSE
    finally:
        solver.close()


def test_missing_solver_package_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_cvc5(name: str, *args: object, **kwargs: object) -> object:
        if name == "cvc5" or name.startswith("cvc5."):
            raise ImportError("No module named 'cvc5'")
        return real_import(name, *args, **kwargs)

    import sys
    monkeypatch.delitem(sys.modules, "symex.solvers.backends.cvc5_backend", raising=False)
    monkeypatch.delitem(sys.modules, "cvc5", raising=False)
    monkeypatch.setattr(builtins, "__import__", no_cvc5)
    with pytest.raises(SolverError, match=r"cvc5 backend needs the 'cvc5' package.*pip install cvc5"):
        create_solver("cvc5")
