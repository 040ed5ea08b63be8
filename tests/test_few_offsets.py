"""Reads at a symbolic offset that can take only a few values (core/memory/access.py with
expr/value_sets.py): the choice between those reads, with the paths and tests of reading a
symbolic array, and no memory array left in the solver's queries."""

from __future__ import annotations

from pathlib import Path

import pytest

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


DECIDED = """\
#include <klee/klee.h>
void peek(const char **cursor);
int main(void) {
  char in[2];
  klee_make_symbolic(in, sizeof in, "in");
  const char *words[3] = {"alpha", "beta", "gamma"};
  const char **cursor = words;
  if (SIDE)
    return 0;
  cursor += in[0] == '+';   /* the path has decided it: one value */
  peek(cursor);
  return 1;
}
"""


@pytest.mark.parametrize("side, word", [
    ("in[0] != '+'", b"beta"),                 # on: in[0] == '+'
    ("in[0] == '+'", b"alpha"),                # on: not so
    ("(unsigned char)in[0] <= 'z'", b"alpha"),  # on: above 'z', so not '+': the solver says
], ids=["an equality", "its negation", "an implication"])
def test_a_pointer_the_path_has_decided_is_read_as_one_value(side: str, word: bytes,
                                                             tmp_path: Path) -> None:
    """The cursor moved by a comparison the path has decided points at one word: reading
    through it gives that word's pointer as a number, not a choice between two (every later
    query would carry the choice: expr's cursor). The path's own conditions settle it by
    rewriting; one they only imply, by one question (KLEE's toUnique)."""
    from symex.core.interpreter.machine import StateView

    seen: list[object] = []

    def peek(view: StateView, args: list[object]) -> None:
        pointer = view.read_bytes(args[0], 8)
        seen.append(pointer)
        if all(type(b) is int for b in pointer):
            seen.append(view.read_c_string(int.from_bytes(bytes(pointer), "little")))  # type: ignore[arg-type]

    source = tmp_path / "decided.c"
    source.write_text(DECIDED.replace("SIDE", side))
    result = symex.explore(symex.compile(source), externals={"peek": peek})
    assert sorted(t.exit_code for t in result.tests) == [0, 1]
    assert len(seen) == 2 and all(type(b) is int for b in seen[0]), seen  # type: ignore[attr-defined]
    assert seen[1] == word
