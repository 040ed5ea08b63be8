"""stop_at / --stop-at: a run that stops when a path first reaches a function or a line."""

from __future__ import annotations

from pathlib import Path

import pytest

import symex
from symex.errors import ConfigError

REGEXP = Path(__file__).parent / "programs" / "regexp.c"


@pytest.fixture(scope="module")
def regexp() -> symex.Program:
    return symex.compile(REGEXP)


def test_reaching_a_function_stops_the_run(regexp: symex.Program) -> None:
    whole = symex.explore(regexp)
    # matchstar runs only for a pattern with '*' at its second byte: not on the first path
    stopped = symex.explore(regexp, stop_at="matchstar")
    assert whole.halted is None and stopped.halted == "reached matchstar"
    assert stopped.paths.partial > 0
    assert stopped.paths.completed + stopped.paths.errors < \
        whole.paths.completed + whole.paths.errors
    assert _covers(stopped, 9)        # matchstar's first line: it was reached


def test_reaching_a_line_stops_the_run_with_workers_too(regexp: symex.Program) -> None:
    # line 11 ("return 1" in matchstar) is reached only when a star matches
    for workers in (1, 2):
        result = symex.explore(regexp, stop_at=["regexp.c:11"], workers=workers,
                               parallel_backend="in-process")
        assert result.halted == "reached regexp.c:11", workers
        assert _covers(result, 11) and result.paths.partial > 0, workers


def _covers(result: symex.Result, line: int) -> bool:
    return any(number == line and file.endswith("regexp.c")
               for file, number in result.coverage.covered_lines)


def test_unknown_locations_are_refused(regexp: symex.Program) -> None:
    with pytest.raises(ConfigError, match="no function of the program"):
        symex.explore(regexp, stop_at="nowhere")
    with pytest.raises(ConfigError, match="no line with code"):
        symex.explore(regexp, stop_at="regexp.c:2")       # a comment
    with pytest.raises(ConfigError, match="FUNCTION or FILE:LINE"):
        symex.explore(regexp, stop_at=[""])
