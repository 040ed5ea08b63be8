"""A path's constraints in independent groups (core/independence.py), and branches that ask
the solver only about the groups their condition reads (``Executor.solve_beside``)."""

from __future__ import annotations

import pytest

import symex
from symex import expr as E
from symex.core.independence import ENABLE_VARIABLE, ConstraintGroups
from symex.expr.reads import read_elements
from c_programs import write

A = E.Array("a", 4)
B = E.Array("b", 2)


def byte(array: E.Array, index: int) -> E.Expr:
    return E.read(E.UpdateList(array), E.const(index, 32))


def grown(*constraints: E.Expr) -> ConstraintGroups:
    groups = ConstraintGroups.EMPTY
    for c in constraints:
        groups = groups.add(c, read_elements(c))
    return groups


def test_a_question_takes_the_constraints_sharing_bytes_with_it_transitively() -> None:
    a0_big = E.ugt(byte(A, 0), E.const(10, 8))
    a1_is_a0 = E.eq(byte(A, 1), byte(A, 0))
    b0_small = E.ult(byte(B, 0), E.const(3, 8))
    a2_odd = E.eq(E.and_(byte(A, 2), E.const(1, 8)), E.const(1, 8))
    groups = grown(a0_big, b0_small, a1_is_a0, a2_odd)
    # a[1] is tied to a[0], and through it to a[0] > 10; in path order
    asked = groups.slice(read_elements(E.eq(byte(A, 1), E.const(7, 8))))
    assert asked is not None
    assert asked.constraints == (a0_big, a1_is_a0)
    assert asked.elements == {(A, 0), (A, 1)}
    # a question on two groups takes both, still in path order
    both = groups.slice(read_elements(E.ult(byte(A, 2), byte(B, 0))))
    assert both is not None and both.constraints == (b0_small, a2_odd)
    # a byte no constraint reads: the question is asked alone
    alone = groups.slice(read_elements(E.eq(byte(A, 3), E.const(0, 8))))
    assert alone is not None and alone.constraints == () and alone.elements == frozenset()


def test_a_read_at_a_symbolic_index_makes_every_question_take_every_constraint() -> None:
    groups = grown(E.ugt(byte(A, 0), E.const(10, 8)))
    # a question reading at a symbolic index may touch any byte
    assert groups.slice(read_elements(E.eq(E.read(E.UpdateList(A), E.zext(byte(B, 0), 32)),
                                           E.const(1, 8)))) is None
    inexact = groups.add(E.eq(E.read(E.UpdateList(A), E.zext(byte(B, 0), 32)), E.const(1, 8)),
                         read_elements(E.eq(E.read(E.UpdateList(A), E.zext(byte(B, 0), 32)),
                                            E.const(1, 8))))
    assert not inexact.exact and inexact.slice(read_elements(byte(A, 3))) is None
    # the partition it grew from is unchanged: forks share it
    assert groups.exact and groups.slice(read_elements(byte(A, 0))) is not None


def test_a_rewrite_is_shared_by_the_paths_holding_the_same_constraints_on_its_bytes() -> None:
    """A condition is rewritten under the equalities its bytes' constraints imply; paths
    that hold the same group of constraints (forks, until one adds to it) share the rewrite,
    and a path with another constraint on those bytes has its own."""
    a0_is_5 = E.eq(byte(A, 0), E.const(5, 8))
    b0_small = E.ult(byte(B, 0), E.const(3, 8))
    parent = grown(a0_is_5)
    condition = read_elements(E.ult(byte(A, 0), byte(A, 1)))
    shared = parent.rewrites_of(condition)
    assert shared is not None
    # a fork that learns about other bytes keeps the group of a[0], and so the rewrites
    sibling = parent.add(b0_small, read_elements(b0_small))
    assert sibling.rewrites_of(condition) is shared
    # a path with another constraint on a[0] rewrites afresh
    a0_big = E.ugt(byte(A, 0), E.const(1, 8))
    other = parent.add(a0_big, read_elements(a0_big))
    assert other.rewrites_of(condition) is not None and other.rewrites_of(condition) is not shared
    # a condition over two groups, or at a symbolic index, is not remembered
    assert sibling.rewrites_of(read_elements(E.ult(byte(A, 0), byte(B, 0)))) is None
    assert parent.rewrites_of(read_elements(
        E.eq(E.read(E.UpdateList(A), E.zext(byte(B, 1), 32)), E.const(1, 8)))) is None


INDEPENDENT = r"""
#include <klee/klee.h>
int main(void) {
  unsigned char in[6];
  klee_make_symbolic(in, sizeof in, "in");
  int score = 0;
  if (in[0] > 100) score += 1;                /* each alone */
  if (in[1] < 7) score += 2;
  if (in[2] == in[1] + 3) score += 4;         /* ties in[2] to in[1] */
  if (in[2] > 8) score += 8;                  /* implied or not by the tie: asks in[1]'s too */
  if ((in[3] ^ in[4]) == 0x5a) score += 16;
  if (in[5] == 'q' && in[3] == 'r') score += 32;
  return score;
}
"""


def outcome(test: symex.TestCase) -> int:
    """What main returns on the test's inputs, computed here as the program does."""
    i = test.objects["in"]
    score = (i[0] > 100) + 2 * (i[1] < 7) + 4 * (i[2] == (i[1] + 3)) + 8 * (i[2] > 8)
    score += 16 * ((i[3] ^ i[4]) == 0x5A) + 32 * (i[5] == ord("q") and i[3] == ord("r"))
    return score


@pytest.mark.parametrize("enabled", ["1", "0"])
def test_each_test_takes_its_path_and_every_score_is_found(enabled: str, tmp_path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENABLE_VARIABLE, enabled)
    result = symex.explore(symex.compile(write(tmp_path, "independent.c", INDEPENDENT)))
    # in[1] < 7: in[2] == in[1] + 3 or not, then in[2] > 8 or not (in[1] = 6, in[2] = 9):
    # 4 ways; in[1] >= 7: in[2] == in[1] + 3 forces in[2] > 8, so 1 + 2 ways. Times in[0]'s
    # 2, the xor's 2 and 3 for in[5] == 'q' && in[3] == 'r' (false, first true only, true)
    assert result.paths.completed == 2 * (4 + 3) * 2 * 3 == len(result.tests)
    # the inputs the merged models give reach the exit code the path stands for
    assert all(t.exit_code == outcome(t) for t in result.tests)
    assert len({t.path for t in result.tests}) == len(result.tests)


def test_a_wrapper_reads_what_its_operand_reads_in_the_same_order() -> None:
    # the order of a walk from scratch (nothing remembered about these arrays' reads)...
    def value(array: E.Array) -> E.Expr:
        mixed = E.add(E.zext(byte(array, 3), 32), E.mul(E.zext(byte(array, 1), 32), E.zext(byte(array, 2), 32)))
        return E.zext(E.extract(mixed, 0, 8), 64)

    fresh = E.Array("fresh", 4)
    walked = read_elements(E.eq(E.const(9, 64), value(fresh)))
    assert sorted(i for _, i in walked) == [1, 2, 3]
    # ...is what an equality over a value already walked gets from the value's memo
    other = E.Array("other", 4)
    before = read_elements(value(other))
    after = read_elements(E.eq(E.const(9, 64), value(other)))
    assert after == before
    assert [i for _, i in after] == [i for _, i in walked]
