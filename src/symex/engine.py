"""``explore()``: the library's one entry to a run, in this process or over workers.

    program = symex.compile("get_sign.c")
    result = symex.explore(program, searcher="dfs", max_time=60.0, seed=0)

It sits above :mod:`symex.parallel`: a run with workers goes to
:func:`~symex.parallel.explore_in_parallel`, any other to
:func:`~symex.exploration.explore_alone` (the loop itself is
:class:`~symex.exploration.Exploration`; what a run returns, :mod:`symex.results`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Unpack

import attrs

from symex.core.interpreter.machine import ExternalHandler
from symex.core.search.searchers import SEARCHER_NAMES, Searcher
from symex.description import RunDescription
from symex.env.fuzz_input import check_fuzz_target
from symex.errors import ConfigError
from symex.exploration import explore_alone, tree_identity
from symex.ir.program import Program
from symex.memo.format import TREE_FILE
from symex.options import ExploreOptions, describe
from symex.results import Hooks, Result
from symex.solvers.base import Solver

__all__ = ["check_continuation", "explore", "run_exploration", "writing_into"]


def explore(program: Program, *, searcher: str | Sequence[str] | Searcher = "dfs",
            solver: str | Solver = "z3", hooks: Hooks | None = None,
            externals: Mapping[str, ExternalHandler] | None = None,
            **options: Unpack[ExploreOptions]) -> Result:
    """Explore the paths of ``program`` and return its test cases, errors, coverage and
    statistics (:class:`~symex.results.Result`).

    ``searcher``: a strategy's name, names to interleave, or a searcher object (anything with
    :class:`~symex.core.search.searchers.Searcher`'s ``select``, ``update`` and ``empty``; not with
    workers). ``solver``: a configuration string (docs/usage.md) or a solver object (not
    closed here). ``hooks``: callbacks as the run goes (:class:`~symex.results.Hooks`).
    ``externals``: your own handlers of external functions (C functions the program declares
    but does not define), by name, besides or instead of symex's environment: each is called
    as ``handler(view, arguments)`` and returns the call's value (an int, an expression, or
    None for void), working through the calling state's
    :class:`~symex.core.interpreter.machine.StateView` (read and write memory, a variable by
    its C name, the path's constraints and call stack, make symbolic values, fork on
    values); in this process only (not with workers).
    Paths stopped by a limit are reported as partial, with a test case each. Every other
    keyword is an option of :mod:`symex.options` (a :class:`~symex.errors.ConfigError` names
    an unknown one):

    """
    names = searcher if isinstance(searcher, (str, Sequence)) else "dfs"
    description = RunDescription.build(
        searcher=names, solver=solver if isinstance(solver, str) else "", **options)
    return run_exploration(program, description, hooks=hooks,
                           solver=None if isinstance(solver, str) else solver,
                           searcher=None if isinstance(searcher, (str, Sequence)) else searcher,
                           externals=externals)


explore.__doc__ = (explore.__doc__ or "") + describe().replace("\n", "\n    ") + "\n"


def run_exploration(program: Program, description: RunDescription, *,
                    hooks: Hooks | None = None, solver: Solver | None = None,
                    searcher: Searcher | None = None,
                    externals: Mapping[str, ExternalHandler] | None = None) -> Result:
    """Explore ``program`` as ``description`` says (:mod:`symex.description`); what
    :func:`explore` does with its keyword arguments. ``solver``: a solver object to use
    instead of building ``description.solver.config`` (not closed here); ``searcher``: a
    searcher object instead of ``description.search.searcher``'s names; ``externals``:
    handlers of external functions besides the environment's own (none of the three with
    workers: they run in other processes)."""
    entry = description.inputs.entry
    if entry not in program.functions or program.functions[entry].is_declaration:
        raise ConfigError(f"the program has no function '{entry}' to start from; "
                          f"pass entry=NAME with a defined function")
    if description.inputs.fuzz_target:
        check_fuzz_target(program)
    hooks = hooks or Hooks()
    if description.parallel_wanted:
        if searcher is not None:
            raise ConfigError(f"a searcher object runs in this process only; give workers a "
                              f"searcher's name ({', '.join(SEARCHER_NAMES)}) or run "
                              f"without workers")
        if externals:
            raise ConfigError("your own external functions run in this process only; run "
                              "without workers to use them")
        # workers' machinery (pools, multiprocessing, the coordinator) is imported by the
        # runs that have workers: 40 ms of every other run's start-up
        from symex.parallel import explore_in_parallel  # noqa: PLC0415
        return explore_in_parallel(program, description, hooks=hooks, solver=solver)
    return explore_alone(program, description, hooks=hooks, solver=solver, searcher=searcher,
                         externals=externals)


def check_continuation(program: Program, description: RunDescription, *,
                       extends_copy: bool = False) -> None:
    """Refuse a run's ``continue_with`` before it starts: a tree (with workers, a journal, and
    its tree too when ``extends_copy``: the run records a copy) that is missing, damaged,
    newer than this symex, or recorded for another program or other inputs
    (:class:`~symex.memo.store.TreeFileError`, :class:`~symex.parallel.journal.JournalError`,
    each saying what to do). Nothing to check without ``continue_with``."""
    where = description.tree.continue_with
    if where is None:
        return
    identity = tree_identity(program, description)
    if description.parallel_wanted:
        from symex.parallel.journal import RunJournal  # noqa: PLC0415 (as explore_in_parallel)
        RunJournal.check(where, identity)
        if not extends_copy:
            return
    from symex.memo.opening import check_identity, find_tree  # noqa: PLC0415 (a replayed run's)
    from symex.memo.store import TreeStore  # noqa: PLC0415 (as check_identity)
    store = TreeStore.open(find_tree(where), writable=False)
    try:
        check_identity(store, identity)
    finally:
        store.close()


def writing_into(description: RunDescription, directory: str | os.PathLike[str], *,
                 record_tree: bool = True) -> RunDescription:
    """``description`` for a run whose output directory is ``directory`` (``symex run``'s, a
    service job's): the execution tree recorded there when ``record_tree``, and, with
    workers, the coordinator's journal kept there (always: a killed run resumes from it)."""
    if record_tree:
        description = attrs.evolve(description, tree=attrs.evolve(
            description.tree, record_tree=os.path.join(directory, TREE_FILE)))
    if description.parallel_wanted:
        from symex.parallel.journal import JOURNAL_FILE  # noqa: PLC0415 (as explore_in_parallel)
        description = attrs.evolve(description, parallel=attrs.evolve(
            description.parallel, journal=os.path.join(directory, JOURNAL_FILE)))
    return description
