"""Every option of a run is written once (symex/options.py): the type checker's list, the
library's keywords and defaults, and the command line's flags all come from OPTIONS."""

from __future__ import annotations

import argparse
import typing
from typing import Any
from pathlib import Path

import pytest

import symex
from symex.cli import run as cli_run
from symex.core.interpreter.machine import StateView
from symex.core.search.searchers import DFSSearcher
from symex.description import RunDescription
from symex.options import OPTIONS, ExploreOptions, RunOptions

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_the_type_checkers_list_is_the_table() -> None:
    names = [option.name for option in OPTIONS]
    assert len(set(names)) == len(names)
    assert set(typing.get_type_hints(RunOptions)) == set(names)
    # explore takes searcher and solver as objects too: its own parameters, the rest unpacked
    assert set(typing.get_type_hints(ExploreOptions)) == set(names) - {"searcher", "solver"}


def test_an_unknown_keyword_is_refused_with_the_nearest_names() -> None:
    program = symex.compile(EXAMPLES / "get_sign.c")
    with pytest.raises(symex.ConfigError, match="unknown option 'max_tme'; did you mean max_time"):
        symex.explore(program, max_tme=5)  # type: ignore[call-arg]


def test_defaults_come_from_the_table() -> None:
    built = RunDescription.build()
    table = {option.name: option.default for option in OPTIONS}
    assert built.limits.max_idle_time_outs == table["max_idle_time_outs"]
    assert built.limits.max_stack_frames == table["max_stack_frames"]
    assert built.solver.chain == table["solver_chain"]
    assert built.parallel.balance_ratio == table["balance_ratio"]
    assert built.search.searcher == table["searcher"] and built.solver.config == table["solver"]


def parsed(*words: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cli_run.add_parser(parser.add_subparsers())
    return parser.parse_args(["run", *words, "prog.c"])


def test_each_flag_of_the_table_reaches_its_option() -> None:
    given = cli_run._flag_options(parsed(
        "--max-time", "1min", "--workers", "3", "--search", "bfs", "--search", "dfs",
        "--max-solver-time", "2s", "--no-hash-constants", "--stop-at", "f", "--stop-at", "g:3",
        "--read-host-file", "/etc/hostname", "--emit-all-errors", "--balance-ratio", "4"))
    assert given["max_time"] == 60.0 and given["workers"] == 3
    assert given["searcher"] == ["bfs", "dfs"] and given["solver_timeout"] == 2.0
    assert given["hash_constants"] is False and given["stop_at"] == ["f", "g:3"]
    assert given["host_files"] == ["/etc/hostname"] and given["emit_all_errors"] is True
    assert given["balance_ratio"] == 4.0
    # what the command line is not given is left to the library's defaults: no flag's own
    # default differs from its option's
    assert RunDescription.build(**cli_run._flag_options(parsed())) == RunDescription.build()


def test_every_flag_of_the_table_is_listed_by_help() -> None:
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers()
    cli_run.add_parser(commands)
    text = commands.choices["run"].format_help()
    for option in OPTIONS:
        if option.flag is not None:
            assert all(name in text for name in option.flag.names), option.name


class CountingSearcher(DFSSearcher):
    """Depth-first, counting its selections."""

    def __init__(self) -> None:
        super().__init__()
        self.selections = 0

    def select(self):  # type: ignore[no-untyped-def]
        self.selections += 1
        return super().select()


def test_explore_takes_a_searcher_object() -> None:
    program = symex.compile(EXAMPLES / "get_sign.c")
    searcher = CountingSearcher()
    result = symex.explore(program, searcher=searcher)
    assert result.paths.completed == 3 and searcher.selections >= 3
    assert [t.path for t in result.tests] == [t.path for t in symex.explore(program).tests]
    with pytest.raises(symex.ConfigError, match="searcher object runs in this process only"):
        symex.explore(program, searcher=CountingSearcher(), workers=2)


SENSOR = r"""
#include <stdio.h>
int read_sensor(int channel);     /* declared, not defined: the harness models it */
void log_value(int value);
int main(void) {
  int a = read_sensor(1), b = read_sensor(2);
  log_value(a + b);
  if (a > 100 && b == 7) { printf("alarm\n"); return 1; }
  return 0;
}
"""


def test_explore_takes_handlers_of_external_functions(tmp_path: Path) -> None:
    from c_programs import write
    logged: list[object] = []

    def read_sensor(view: StateView, args: list[Any]) -> Any:
        # each reading a symbolic int of its own, named after its channel
        return view.fresh_value(4, f"sensor{args[0]}")

    def log_value(view: StateView, args: list[Any]) -> None:
        logged.append(args[0])
        return None

    program = symex.compile(write(tmp_path, "sensor.c", SENSOR))
    result = symex.explore(program, externals={"read_sensor": read_sensor, "log_value": log_value})
    # a > 100 or not, then b == 7 or not where a > 100: three paths, one alarm
    assert result.paths.completed == 3 and result.paths.partial == 0
    alarms = [t for t in result.tests if t.exit_code == 1]
    assert len(alarms) == 1 and alarms[0].stdout == b"alarm\n"
    a = int.from_bytes(alarms[0].objects["sensor1"], "little", signed=True)
    b = int.from_bytes(alarms[0].objects["sensor2"], "little", signed=True)
    assert a > 100 and b == 7
    assert len(logged) == 1  # called once, before the branches fork
    # without them the calls are unmodelled: the path ends there, as partial
    plain = symex.explore(program)
    assert plain.paths.partial == 1 and "read_sensor" in plain.tests[0].reason
    with pytest.raises(symex.ConfigError, match="run in this process only"):
        symex.explore(program, externals={"read_sensor": read_sensor}, workers=2)
