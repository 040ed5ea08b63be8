"""Reads at a symbolic offset that can take only a few values (core/memory/access.py with
expr/value_sets.py): the choice between those reads, with the paths and tests of reading a
symbolic array, and no memory array left in the solver's queries."""

from __future__ import annotations

from pathlib import Path

import symex

CURSOR = Path(__file__).parent / "programs" / "cursor.c"
WORDS = ["alpha", "beta", "gamma", "delta"]


def test_a_pointer_moved_by_conditions_reads_one_of_its_targets(tmp_path: Path) -> None:
    result = symex.explore(symex.compile(CURSOR), write_queries=str(tmp_path / "queries"))
    # what the program does natively for each test's input
    for test in result.tests:
        first, second = test.objects["in"][:2]
        word = WORDS[(first == ord("+")) + (second == ord("+"))]
        assert test.exit_code == (3 if word == "gamma" else 2 if word == "beta" else 1)
    assert sorted(t.exit_code for t in result.tests) == [1, 2, 3]
    queries = [p.read_text() for p in (tmp_path / "queries").glob("*.smt2")]
    assert queries, "the branches were decided by the solver"
    # only the input is an array: the words' pointers and letters were chosen, not read
    # out of memory arrays at symbolic offsets
    assert not [q for q in queries if "declare-fun |mem" in q]
