"""The memory models' conformance suite (core.memory.model): every model runs the same
programs, whose symbolic pointers may point into several objects (a table of pointers, a
store through a chosen array, a linked list the input links, a literal among the targets).

Each model must find every error the program's source marks (``/* error: KIND */`` on the
line) and no other, and every test it writes must behave natively as it said: an error
test fails the same way in the gcc build with sanitizers, any other exits with the same
status. The paths may differ (the merged model's point is to fork less); the last tests
say where and that a recorded tree keeps the model it was recorded with.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import symex
from symex.core.memory.models import MEMORY_MODEL_NAMES
from symex.errors import ConfigError
from symex.memo.store import TreeFileError
from symex.output.ktest import KTest, KTestObject
from symex.replay import build_native, reproduces, run_native

PROGRAMS = sorted((Path(__file__).parent / "programs" / "memory_models").glob("*.c"))


def _marked_errors(source: Path) -> set[tuple[str, int]]:
    """The (kind, line) of each ``/* error: KIND */`` mark in ``source``."""
    marked = set()
    for number, line in enumerate(source.read_text().splitlines(), start=1):
        for kind in re.findall(r"/\* error: (\w+) \*/", line):
            marked.add((kind, number))
    return marked


@pytest.fixture(scope="module")
def compiled() -> dict[str, symex.Program]:
    return {source.name: symex.compile(source) for source in PROGRAMS}


@pytest.fixture(scope="module")
def runs(compiled: dict[str, symex.Program]) -> dict[tuple[str, str], symex.Result]:
    """Each program under each model, every error reported (not only a site's first)."""
    return {(name, model): symex.explore(program, memory_model=model, emit_all_errors=True)
            for name, program in compiled.items() for model in MEMORY_MODEL_NAMES}


def test_the_suite_has_programs_with_marked_errors() -> None:
    assert len(PROGRAMS) >= 4
    assert {kind for source in PROGRAMS for kind, _ in _marked_errors(source)} >= {
        "ptr", "assert", "readonly"}


@pytest.mark.parametrize("model", MEMORY_MODEL_NAMES)
@pytest.mark.parametrize("source", PROGRAMS, ids=lambda p: p.stem)
def test_every_model_finds_exactly_the_marked_errors(runs: dict[tuple[str, str], symex.Result],
                                                     source: Path, model: str) -> None:
    result = runs[source.name, model]
    found = {(t.error.kind.value, t.error.location[1]) for t in result.tests
             if t.error is not None and t.error.location is not None}
    assert found == _marked_errors(source)
    assert all(t.status is not symex.PathStatus.PARTIAL for t in result.tests), \
        [t.reason for t in result.tests]


@pytest.mark.skipif(shutil.which("gcc") is None, reason="native replay needs gcc")
@pytest.mark.parametrize("model", MEMORY_MODEL_NAMES)
@pytest.mark.parametrize("source", PROGRAMS, ids=lambda p: p.stem)
def test_every_test_behaves_natively_as_reported(runs: dict[tuple[str, str], symex.Result],
                                                 source: Path, model: str) -> None:
    executable = build_native(source)
    result = runs[source.name, model]
    assert result.tests
    for test in result.tests:
        ktest = KTest(args=(), objects=tuple(KTestObject(n, d) for n, d in test.objects.items()))
        outcome = run_native(executable, ktest)
        if test.error is not None:
            assert reproduces(test.error.kind.value, outcome), (test.error, outcome)
        else:
            assert outcome.kind is None and outcome.exit_code == test.exit_code, (test, outcome)


def test_the_merged_model_forks_less_where_a_pointer_chooses_objects(
        runs: dict[tuple[str, str], symex.Result]) -> None:
    # three steps through a list the input links: the forking model follows each link to
    # each of four nodes; the merged one keeps one path until the sums are compared
    forking, merged = runs["list_walk.c", "forking"], runs["list_walk.c", "merged"]
    assert len(merged.tests) * 3 <= len(forking.tests)
    for source in PROGRAMS:
        assert len(runs[source.name, "merged"].tests) <= len(runs[source.name, "forking"].tests)


def test_workers_replaying_jobs_keep_the_merged_model(compiled: dict[str, symex.Program],
                                                      runs: dict[tuple[str, str], symex.Result]) -> None:
    # a worker rebuilds each job's state from its recorded answers, the merged model's
    # object candidates among them
    parallel = symex.explore(compiled["list_walk.c"], memory_model="merged", workers=2,
                             parallel_backend="in-process", emit_all_errors=True)
    alone = runs["list_walk.c", "merged"]
    assert sorted(t.path for t in parallel.tests) == sorted(t.path for t in alone.tests)


def test_a_recorded_tree_is_continued_with_its_own_model(compiled: dict[str, symex.Program],
                                                         runs: dict[tuple[str, str], symex.Result],
                                                         tmp_path: Path) -> None:
    program = compiled["list_walk.c"]
    tree = tmp_path / "tree.db"
    first = symex.explore(program, memory_model="merged", record_tree=tree, emit_all_errors=True,
                          max_instructions=300)
    assert first.halted is not None
    with pytest.raises(TreeFileError, match="memory model merged"):
        symex.explore(program, continue_with=tree)
    rest = symex.explore(program, memory_model="merged", continue_with=tree, emit_all_errors=True)
    # the paths the limit cut end as partial tests; the continuation explores them again
    before = {t.path for t in first.tests if t.status is not symex.PathStatus.PARTIAL}
    after = {t.path for t in rest.tests}
    assert 0 < len(before) < len(runs["list_walk.c", "merged"].tests)
    assert not before & after  # the recorded answers (object candidates too) replayed
    assert before | after == {t.path for t in runs["list_walk.c", "merged"].tests}


def test_an_unknown_model_is_refused_with_the_names_to_choose_from(
        compiled: dict[str, symex.Program]) -> None:
    with pytest.raises(ConfigError, match="unknown memory model 'flat'; choose from forking, merged"):
        symex.explore(compiled["pointer_table.c"], memory_model="flat")
