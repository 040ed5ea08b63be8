"""Float nodes in the query files symex writes and reads (SMT-LIB 2 and KQuery).

A written SMT-LIB script states float nodes in the standard floating-point theory, which the
solvers read and answer as symex's own solver does, and names each node in a line symex's
reader rebuilds it from: writing then reading gives the same expressions back. KQuery prints
float nodes by name (``(FAdd w64 a b)``) and reads them back.
"""

from __future__ import annotations

import struct

import pytest

from symex import expr as E
from symex.expr import format_expr
from symex.expr import float_build as F
from symex.expr.kquery import KQuery, parse_kquery, write_kquery
from symex.expr.smtlib import parse_smtlib, write_smtlib
from symex.solvers import Query, create_solver

from solver_examples import word


def double(value: float) -> E.Expr:
    return F.float_constant(value, 64)


X = word(E.Array("x", 8), 64)
Y = word(E.Array("y", 4), 32)

#: every kind of float node, as conditions (each printed the way a path condition holds it)
CONDITIONS = [
    F.fcmp("olt", F.frem(X, double(3.0)), double(1.0)),
    E.eq(E.extract(F.fadd(X, double(1.0)), 0, 8), E.const(3, 8)),   # a result used as bits
    F.fcmp("ueq", F.fpconv(Y, 64), F.fsqrt(X)),
    E.eq(F.fptosi(X, 32), E.const(7, 32)),
    F.fcmp("oge", F.sitofp(E.extract(X, 0, 16), 32), Y),
    F.fcmp("one", F.fma(X, X, double(-2.0)), F.fround(X, 0)),
    F.fcmp("ole", F.fdiv(F.fmul(X, X), F.fsub(X, double(0.5))), F.uitofp(E.extract(X, 8, 8), 64)),
    E.eq(F.fptoui(F.fpconv(X, 32), 64), E.const(12, 64)),
]


def same(read: list[E.Expr] | tuple[E.Expr, ...], written: list[E.Expr]) -> bool:
    """The read-back expressions are the written ones (arrays are new objects, same names)."""
    return [format_expr(e) for e in read] == [format_expr(e) for e in written]


def test_smtlib_round_trip_gives_the_float_nodes_back() -> None:
    text = write_smtlib(CONDITIONS)
    assert text.startswith("(set-logic QF_ABVFP)")
    assert same(parse_smtlib(text).assertions, CONDITIONS)


@pytest.mark.parametrize("backend", ["z3", "bitwuzla", "cvc5"])
def test_solvers_read_the_written_script_and_agree_with_symex(backend: str) -> None:
    # x = 2.5 pinned by its bytes; the query then holds or not as the processor computes
    pinned = E.eq(X, double(2.5))
    for condition, holds in ((F.fcmp("oeq", F.fadd(X, double(0.25)), double(2.75)), True),
                             (F.fcmp("olt", F.fsqrt(X), double(1.5)), False),
                             (E.eq(F.fptosi(F.fmul(X, double(3.0)), 32), E.const(7, 32)), True)):
        text = write_smtlib([pinned], condition)
        answer = _check_text(backend, text)
        assert answer == ("sat" if holds else "unsat")
        solver = create_solver(backend)
        try:
            assert solver.may_be_true(Query((pinned,), condition)) is holds
        finally:
            solver.close()


def _check_text(backend: str, text: str) -> str:
    """The answer of ``backend``'s own SMT-LIB parser on ``text``."""
    if backend == "z3":
        z3 = pytest.importorskip("z3")
        solver = z3.Solver()
        solver.add(z3.parse_smt2_string(text))
        return str(solver.check())
    if backend == "bitwuzla":
        bitwuzla = pytest.importorskip("bitwuzla")
        manager = bitwuzla.TermManager()
        parser = bitwuzla.Parser(manager, bitwuzla.Options())
        parser.parse(text, True, False)
        return str(parser.bitwuzla().check_sat()).lower()
    cvc5 = pytest.importorskip("cvc5")
    solver = cvc5.Solver()
    symbols = cvc5.SymbolManager(solver)
    parser = cvc5.InputParser(solver, symbols)
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, text, "query")
    answers = []
    while True:
        command = parser.nextCommand()
        if command.isNull():
            break
        answers.append(command.invoke(solver, symbols))
    return [a for a in answers if a.strip()][-1].strip()


def test_kquery_round_trip_gives_the_float_nodes_back() -> None:
    query = KQuery(tuple(CONDITIONS[:-1]), CONDITIONS[-1])
    text = write_kquery([query])
    assert "(FAdd w64 " in text and "(FOLt " in text
    (back,) = parse_kquery(text)
    assert same([*back.constraints, back.query], CONDITIONS)


def test_kquery_float_node_errors_name_the_problem() -> None:
    text = "array x[8] : w32 -> w8 = symbolic\n(query [] (Eq (w64 0) (FAdd (ReadLSB w64 0 x) (ReadLSB w64 0 x))))"
    with pytest.raises(Exception, match="FAdd wN"):
        parse_kquery(text)


def test_constant_bits_of_a_double_in_the_written_script() -> None:
    # a float constant is its IEEE bits, written as a bit-vector literal
    text = write_smtlib([F.fcmp("olt", X, double(1.5))])
    bits = struct.unpack("<Q", struct.pack("<d", 1.5))[0]
    assert f"(_ bv{bits} 64)" in text
