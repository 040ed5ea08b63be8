"""The index of a C library's IR files (which names each defines and refers to) is read from
a table beside them once written; it agrees with scanning their text, and a table that is
damaged or lacks a file is written again (symex.ir.link.indexed_library)."""

from __future__ import annotations

import json
from pathlib import Path

from symex.ir.compile import find_compiler
from symex.ir.link import LibraryFile, index_files, indexed_library, runtime_ir_files, runtime_library

ONE = """@counter = global i32 0
define i32 @next() {
  %1 = load i32, i32* @counter
  %2 = call i32 @helper(i32 %1)
  ret i32 %2
}
declare i32 @helper(i32)
"""
TWO = """define i32 @helper(i32 %x) {
  %1 = call i32 @abs(i32 %x)
  ret i32 %1
}
declare i32 @abs(i32)
"""


def _as_set(files: list[LibraryFile]) -> set[tuple[str, frozenset[str], frozenset[str]]]:
    return {(f.path.name, f.defines, f.references) for f in files}


def test_a_table_is_written_and_read_back_as_the_scan_found(tmp_path: Path) -> None:
    (tmp_path / "one.ll").write_text(ONE)
    (tmp_path / "two.ll").write_text(TWO)
    paths = [tmp_path / "one.ll", tmp_path / "two.ll"]
    table = tmp_path / "index.json"
    first = indexed_library(paths, table)
    assert _as_set(first) == {("one.ll", frozenset({"counter", "next"}), frozenset({"helper"})),
                              ("two.ll", frozenset({"helper"}), frozenset({"abs"}))}
    assert json.loads(table.read_text())["one.ll"] == [["counter", "next"], ["helper"]]
    # the table, not the text, answers now: a file's text no longer matters to it
    (tmp_path / "two.ll").write_text("")
    assert _as_set(indexed_library(paths, table)) == _as_set(first)


def test_a_damaged_or_short_table_is_written_again(tmp_path: Path) -> None:
    (tmp_path / "one.ll").write_text(ONE)
    (tmp_path / "two.ll").write_text(TWO)
    table = tmp_path / "index.json"
    table.write_text("{not json")
    assert _as_set(indexed_library([tmp_path / "one.ll"], table)) == \
        {("one.ll", frozenset({"counter", "next"}), frozenset({"helper"}))}
    assert set(json.loads(table.read_text())) == {"one.ll"}
    # a table without a file's entry is no answer for it
    both = indexed_library([tmp_path / "one.ll", tmp_path / "two.ll"], table)
    assert ("two.ll", frozenset({"helper"}), frozenset({"abs"})) in _as_set(both)
    assert set(json.loads(table.read_text())) == {"one.ll", "two.ll"}


def test_symex_s_own_library_indexed_from_its_table_as_from_its_text() -> None:
    compiler = find_compiler()
    paths = runtime_ir_files(compiler)
    from_table = runtime_library(compiler)
    assert [f.path for f in from_table] == paths
    assert _as_set(from_table) == _as_set(index_files(paths))
    assert any("strlen" in f.defines for f in from_table)
    assert list(paths[0].parent.glob("runtime-index-*.json"))
