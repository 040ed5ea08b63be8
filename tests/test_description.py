"""RunDescription: one frozen, picklable value describes a run, and explore(**kwargs) is
run_exploration(program, RunDescription.build(**kwargs))."""

from __future__ import annotations

import pickle
from pathlib import Path

import attrs
import pytest

import symex
from symex.description import RunDescription
from symex.errors import ConfigError
from symex.symargs import SymArg

PROGRAMS = Path(__file__).parent / "programs"


def test_a_description_survives_pickling_whole(tmp_path: Path) -> None:
    # what travels to worker processes and Ray actors, and what the service stores
    host = tmp_path / "motd"
    host.write_bytes(b"hello\n")
    description = RunDescription.build(
        max_time=5.0, max_depth=7, searcher=["random-path", "nurs:covnew"], seed=3,
        sym_args=[SymArg(4)], sym_stdin=2, host_files=[host], exit_on_error=["ptr"],
        solver="z3:array-assert:pushpop", solver_chain=("independence", "cex"), workers=2,
        record_tree=tmp_path / "tree.db")
    copy = pickle.loads(pickle.dumps(description))
    assert copy == description
    assert copy.inputs.posix.host_files == ((str(host), b"hello\n"),)  # read once, carried
    assert copy.search.searcher == ("random-path", "nurs:covnew")
    assert copy.output.exit_on_error == frozenset({"ptr"})
    assert copy.tree.record_tree == str(tmp_path / "tree.db")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        copy.limits.max_time = 10.0  # type: ignore[misc]


def test_explore_is_run_exploration_of_the_built_description() -> None:
    program = symex.compile(PROGRAMS / "regexp.c")
    arguments = dict(max_depth=6, searcher="bfs")
    by_keywords = symex.explore(program, **arguments)
    by_description = symex.run_exploration(program, RunDescription.build(**arguments))
    assert [(t.path, t.objects, t.status) for t in by_description.tests] == \
        [(t.path, t.objects, t.status) for t in by_keywords.tests]
    assert by_description.paths == by_keywords.paths
    assert by_description.paths.partial > 0  # the depth limit was part of the description


def test_a_worker_gets_its_strategy_and_no_run_wide_limit() -> None:
    description = RunDescription.build(max_time=9.0, max_instructions=10 ** 6, max_depth=4,
                                       workers=3, portfolio=["dfs", "random-path"])
    second, third = description.for_worker(1), description.for_worker(2)
    assert second.search.searcher == "random-path" and third.search.searcher == "dfs"
    # the coordinator keeps the run's clock and instruction count; per-path limits stay
    assert second.limits.max_time is None and second.limits.max_instructions is None
    assert second.limits.max_depth == 4


@pytest.mark.parametrize("arguments, message", [
    ({"args": "one string"}, "args must be a sequence of strings"),
    ({"stdin": b"x", "sym_stdin": 3}, "stdin and sym_stdin both give standard input"),
    ({"replay_searcher": "random-path"}, "searcher 'random-path' cannot order a replay"),
    ({"stop_after_replay": True}, "pass continue_with=DIR as well"),
    ({"exit_on_error": ["nonsense"]}, "unknown error kind 'nonsense'"),
    ({"host_files": ["/no/such/file"]}, "cannot read host file"),
])
def test_bad_descriptions_are_refused_with_what_to_change(arguments: dict[str, object],
                                                          message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        RunDescription.build(**arguments)  # type: ignore[arg-type]
