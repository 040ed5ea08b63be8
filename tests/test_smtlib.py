"""SMT-LIB reader and writer: hand-checked terms, every corpus file against its known status."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

import symex.expr as E
from symex.errors import QueryFormatError, SolverError
from symex.expr import Assignment, Op
from symex.expr.smtlib import parse_smtlib
from symex.solvers import create_solver

_CORPUS = Path("/work/shared/corpora/queries")


def _eval(decls: str, term: str, values: dict[str, bytes]) -> bool:
    q = parse_smtlib(decls + f"\n(assert {term})\n(check-sat)\n")
    by_name = {a.name: a for a in q.arrays}
    return Assignment({by_name[n]: v for n, v in values.items()}).satisfies(q.assertions)


_A = "(declare-fun a () (Array (_ BitVec 32) (_ BitVec 8)))"


def test_status_arrays_and_sizes() -> None:
    q = parse_smtlib(
        "(set-info :status unsat)\n(set-logic QF_ABV)\n" + _A + "\n"
        "(declare-fun i () (_ BitVec 32))\n(declare-fun b () Bool)\n"
        "(assert (= (select a (_ bv5 32)) #x07))\n(assert b)\n(check-sat)\n(exit)\n"
    )
    assert q.status == "unsat"
    assert [a.name for a in q.arrays] == ["a", "i", "b"]
    # a is read at index 5 only, so 6 bytes cover it; i is 4 bytes, b one byte
    assert [a.size for a in q.arrays] == [6, 4, 1]
    assert len(q.assertions) == 2
    a = q.arrays[0]
    assert q.assertions[0] is E.eq(E.read(E.UpdateList(a), E.const(5, 32)), E.const(7, 8))


def test_bitvector_variable_is_little_endian_bytes() -> None:
    decls = "(declare-fun x () (_ BitVec 16))"
    # bytes 0x34, 0x12 in order make x = 0x1234
    assert _eval(decls, "(= x #x1234)", {"x": b"\x34\x12"})
    assert not _eval(decls, "(= x #x3412)", {"x": b"\x34\x12"})


@pytest.mark.parametrize(
    ("term", "a_bytes", "expected"),
    [
        ("(= (bvadd (select a (_ bv0 32)) #xff) #x04)", b"\x05", True),  # 5 + 255 = 4 mod 256
        ("(= (bvsub #x00 #x01) #xff)", b"", True),
        ("(= (bvmul #x10 #x10) #x00)", b"", True),
        ("(= (bvudiv #x07 #x00) #xff)", b"", True),  # division by zero is all ones
        ("(= (bvurem #x07 #x00) #x07)", b"", True),
        ("(= (bvsdiv #xf9 #x02) #xfd)", b"", True),  # -7 / 2 = -3
        ("(= (bvsrem #xf9 #x02) #xff)", b"", True),  # -7 rem 2 = -1
        ("(= (bvsmod #xf9 #x02) #x01)", b"", True),  # -7 mod 2 = 1 (sign of divisor)
        ("(= (bvsmod #x07 #xfe) #xff)", b"", True),  # 7 mod -2 = -1
        ("(= (bvshl #x01 #x03) #x08)", b"", True),
        ("(= (bvlshr #x80 #x07) #x01)", b"", True),
        ("(= (bvashr #x80 #x07) #xff)", b"", True),
        ("(= (bvnot #x0f) #xf0)", b"", True),
        ("(= (bvneg #x01) #xff)", b"", True),
        ("(= (bvand #x0c #x0a) #x08)", b"", True),
        ("(= (bvor #x0c #x0a) #x0e)", b"", True),
        ("(= (bvxor #x0c #x0a) #x06)", b"", True),
        ("(= (concat #x12 #x34) #x1234)", b"", True),
        ("(= ((_ extract 11 4) #x1234) #x23)", b"", True),
        ("(= ((_ zero_extend 8) #x80) #x0080)", b"", True),
        ("(= ((_ sign_extend 8) #x80) #xff80)", b"", True),
        ("(= (_ bv300 16) #x012c)", b"", True),
        ("(= #b101 (_ bv5 3))", b"", True),
        ("(bvult #x01 #x02)", b"", True),
        ("(bvslt #x01 #xff)", b"", False),  # 1 < -1 is false
        ("(bvsge #x01 #xff)", b"", True),
        ("(bvugt #xff #x01)", b"", True),
        ("(bvule #x02 #x02)", b"", True),
        ("(bvsgt #x80 #x7f)", b"", False),
        ("(bvsle #x80 #x7f)", b"", True),
        ("(bvuge #x01 #x02)", b"", False),
        ("(distinct #x01 #x02 #x01)", b"", False),
        ("(distinct #x01 #x02 #x03)", b"", True),
        ("(= (ite (= (select a (_ bv0 32)) #x00) #x0a #x0b) #x0b)", b"\x01", True),
        ("(=> false false)", b"", True),
        ("(=> true false)", b"", False),
        ("(xor true false)", b"", True),
        ("(and true (or false true) (not false))", b"", True),
        ("(let ((?x (select a (_ bv0 32)))) (let ((?y (bvadd ?x ?x))) (= ?y #x0a)))", b"\x05", True),
        # the inner let shadows ?x only inside its body
        ("(let ((?x #x01)) (and (let ((?x #x02)) (= ?x #x02)) (= ?x #x01)))", b"", True),
        ("(= (select (store (store a (_ bv0 32) #x07) (_ bv1 32) #x08) (_ bv0 32)) #x07)", b"\x00\x00", True),
        ("(= (select (store a (_ bv0 32) #x07) (_ bv1 32)) #x09)", b"\x00\x09", True),
    ],
)
def test_terms_evaluate_as_smtlib_defines(term: str, a_bytes: bytes, expected: bool) -> None:
    assert _eval(_A, term, {"a": a_bytes}) is expected


def test_store_chain_is_an_update_list_over_the_declared_array() -> None:
    q = parse_smtlib(_A + "\n(declare-fun i () (_ BitVec 32))\n"
                     "(assert (= (select (store a i #x01) (_ bv2 32)) #x05))")
    (c,) = q.assertions
    read = c.args[0] if c.args[0].op is Op.READ else c.args[1]
    assert read.op is Op.READ
    assert read.updates.array is q.arrays[0] and len(read.updates) == 1


def test_define_fun_and_deep_let_nesting_do_not_recurse() -> None:
    depth = 20000
    body = "(select a (_ bv0 32))"
    term = body
    for _ in range(depth):
        term = f"(bvadd #x01 {term})"
    # a deep term and a deep let, both well past Python's recursion limit
    lets = "".join(f"(let ((?v{k} (bvadd ?v{k - 1} #x01))) " for k in range(1, depth))
    let_term = f"(let ((?v0 {body})) {lets}(= ?v{depth - 1} #x00){')' * (depth - 1)})"
    q = parse_smtlib(_A + f"\n(define-fun t () (_ BitVec 8) {term})\n(assert (= t #x20))\n"
                     f"(assert {let_term})")
    a = q.arrays[0]
    # 20000 = 0x4e20: 0x20 + x = 0x20 (mod 256) for the first, 0x20 + x = 0 for the second
    assert Assignment({a: b"\x00"}).satisfies(q.assertions[:1])
    assert Assignment({a: b"\xe1"}).satisfies(q.assertions[1:])


@pytest.mark.parametrize(
    "text",
    [
        "(assert (= x #x00))",  # undeclared
        "(declare-fun f ((_ BitVec 8)) (_ BitVec 8))",  # uninterpreted function
        "(declare-fun r () Real)",
        "(push 1)",
        "(assert #x01)",  # not Bool
        "(assert (= #x01 #x0001))",  # widths differ
        "(assert (= a a)",  # unbalanced
        _A + "\n(assert (= a a))",  # array equality
    ],
)
def test_unsupported_input_raises_load_error(text: str) -> None:
    with pytest.raises(QueryFormatError):
        parse_smtlib(text)


# -- the corpus -------------------------------------------------------------------------------


def _corpus() -> list[tuple[Path, str]]:
    rows: list[tuple[Path, str]] = []
    for folder in ("klee-querylogs", "exe-bench_ab"):
        index = _CORPUS / folder / "index.csv"
        if not index.exists():
            continue
        with open(index, newline="") as f:
            for row in csv.DictReader(f):
                rows.append((_CORPUS / folder / row["file"], row["expected_status"]))
    return rows


_ROWS = _corpus()


def _unbounded_reads(assertions: tuple[E.Expr, ...]) -> bool:
    """Whether some array is read at a symbolic index past its size (only assertions bound it)."""
    for e in E.postorder(assertions):
        if e.op is Op.READ and e.args[0].op is not Op.CONST:
            if e.updates.array.size < 1 << 8:
                return True
    return False


def test_corpus_every_file_parses_and_solves_to_its_status() -> None:
    if not _ROWS:
        pytest.skip("query corpus not present")
    assert len(_ROWS) == 566 + 119
    solver = create_solver("z3")
    wrong: list[str] = []
    try:
        for path, expected in _ROWS:
            text = path.read_text()
            q = parse_smtlib(text)
            assert q.status == expected, path.name  # the file's own status agrees with the index
            assert all(c.width == 1 for c in q.assertions)
            try:
                contents = solver.get_initial_values(q.assertions, q.arrays)
            except SolverError:
                if expected != "unsat":
                    wrong.append(f"{path.name}: unsat, expected {expected}")
                continue
            if expected != "sat":
                wrong.append(f"{path.name}: sat, expected {expected}")
                continue
            if not Assignment(dict(zip(q.arrays, contents))).satisfies(q.assertions):
                if not _unbounded_reads(q.assertions):
                    wrong.append(f"{path.name}: model violates an assertion")
                    continue
                # A 32-bit index bounded only by the assertions may lie past the inferred
                # size; with room for it the model must hold.
                q = parse_smtlib(text, min_array_size=256)
                contents = solver.get_initial_values(q.assertions, q.arrays)
                if not Assignment(dict(zip(q.arrays, contents))).satisfies(q.assertions):
                    wrong.append(f"{path.name}: model violates an assertion (256-byte arrays)")
    finally:
        solver.close()
    assert wrong == []


# -- writer and round trip --------------------------------------------------------------------

from hypothesis import given, settings, strategies as st  # noqa: E402

from symex.expr import format_expr  # noqa: E402
from symex.expr.smtlib import write_smtlib  # noqa: E402

_ARR = E.Array("in", 4)
_U = E.UpdateList(_ARR)


def _byte(i: int) -> E.Expr:
    return E.read(_U, E.const(i, 32))


_LEAVES = st.one_of(
    st.integers(0, 3).map(_byte),
    st.integers(0, 255).map(lambda v: E.const(v, 8)),
)


def _extend(children: st.SearchStrategy[E.Expr]) -> st.SearchStrategy[E.Expr]:
    ops = [E.add, E.sub, E.mul, E.udiv, E.sdiv, E.urem, E.srem, E.and_, E.or_, E.xor,
           E.shl, E.lshr, E.ashr]
    return st.one_of(
        st.tuples(st.sampled_from(ops), children, children).map(lambda t: t[0](t[1], t[2])),
        children.map(E.not_),
        st.tuples(children, children, children).map(
            lambda t: E.ite(E.ult(t[0], t[1]), t[2], t[0])),
        st.tuples(children, children).map(lambda t: E.extract(E.concat(t[0], t[1]), 4, 8)),
        st.tuples(children, children).map(
            lambda t: E.read(_U.write(E.zext(t[0], 32), t[1]), E.zext(t[1], 32))),
    )


_BYTES = st.recursive(_LEAVES, _extend, max_leaves=8)
_CONDS = st.tuples(st.sampled_from([E.eq, E.ult, E.ule, E.slt, E.sle]), _BYTES, _BYTES).map(
    lambda t: t[0](t[1], t[2]))
_BOOLS = st.one_of(
    _CONDS,
    st.tuples(_CONDS, _CONDS).map(lambda t: E.bool_or(t[0], E.bool_not(t[1]))),
    st.tuples(_CONDS, _CONDS).map(lambda t: E.xor(t[0], t[1])),
    st.tuples(_CONDS, _BYTES).map(lambda t: E.eq(E.extract(t[1], 2, 1), t[0])),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_BOOLS, min_size=0, max_size=3), st.one_of(st.none(), _BOOLS))
def test_round_trip_reads_back_the_same_expressions(constraints: list[E.Expr], query: E.Expr | None) -> None:
    text = write_smtlib(constraints, query)
    q = parse_smtlib(text)
    expected = [*constraints, *([query] if query is not None else [])]
    # The read-back arrays are new objects with the same names and sizes; the text names them.
    assert [format_expr(e) for e in q.assertions] == [format_expr(e) for e in expected]
    assert [(a.name, a.size) for a in q.arrays] == [(a.name, a.size) for a in E.arrays_in(expected)]


def test_written_script_is_accepted_by_z3_with_the_same_answer() -> None:
    z3 = pytest.importorskip("z3")
    x = E.concat(_byte(1), _byte(0))
    sat_cs = [E.ult(x, E.const(300, 16)), E.eq(E.extract(_byte(0), 0, 1), E.const(1, 1))]
    unsat_q = E.eq(x, E.const(0, 16))  # x odd (bit 0 set), so x = 0 is impossible
    for query, answer in [(None, z3.sat), (unsat_q, z3.unsat)]:
        s = z3.Solver()
        s.add(z3.parse_smt2_string(write_smtlib(sat_cs, query)))
        assert s.check() == answer


def test_constant_array_contents_are_asserted() -> None:
    table = E.Array("table", 3, b"\x05\x06\x07")
    i = E.zext(_byte(0), 32)
    c = E.eq(E.read(E.UpdateList(table), i), E.const(7, 8))
    q = parse_smtlib(write_smtlib([c]))
    by_name = {a.name: a for a in q.arrays}
    # table[in[0]] = 7 holds for in[0] = 2 only once table's bytes are asserted
    good = Assignment({by_name["in"]: b"\x02", by_name["table"]: b"\x05\x06\x07"})
    assert good.satisfies(q.assertions)
    wrong_table = Assignment({by_name["in"]: b"\x02", by_name["table"]: b"\x05\x06\x08"})
    assert not wrong_table.satisfies(q.assertions)
