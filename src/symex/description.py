"""``RunDescription``: everything a run is asked to do, as one frozen, picklable value.

The command line, :func:`symex.explore`, parallel workers (in other processes, on Ray
nodes) and the testing service all describe a run the same way:

    description = RunDescription.build(max_time=60, sym_stdin=8, workers=4)
    result = symex.run_exploration(program, description)

``explore(program, **kwargs)`` is ``run_exploration(program, RunDescription.build(**kwargs))``.
:meth:`RunDescription.build` takes :func:`symex.explore`'s keyword arguments, checks them
(a :class:`~symex.errors.ConfigError` saying what to change) and groups them: the inputs, the
limits, the search, the solver, what paths yield, the recorded tree and the workers. The
program travels beside it (a :class:`~symex.ir.program.Program` here, its IR text to other
processes), and so do the hooks, which are callbacks of the caller's process.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

import attrs

from symex.core.interpreter.executor import DEFAULT_MAX_STACK_FRAMES
from symex.core.threads.livelock import MAX_IDLE_TIME_OUTS
from symex.core.memory.models import DEFAULT_MEMORY_MODEL, memory_model_name
from symex.core.search.searchers import SEARCHER_NAMES, searcher_names
from symex.core.search.seeding import Seed, seeds_from_mappings
from symex.core.outcome import ErrorKind
from symex.env.fuzz_input import DEFAULT_MAX_INPUT
from symex.env.world import PosixSetup
from symex.errors import ConfigError
from symex.memory_cap import check_fits, default_max_memory_mb, worker_cap
from symex.options import DEFAULT_BALANCE_RATIO, DEFAULT_CHAIN, RunOptions, defaults
from symex.solvers.float_route import DEFAULT_FLOAT_SOLVER, parse_float_solver
from symex.symargs import ArgvItem, ArgvSpec, MaxFail, SymFiles, SymFragments, SymPackets, SymStdin

if TYPE_CHECKING:
    from attrs import AttrsInstance

__all__ = [
    "DEFAULT_CHAIN",
    "Inputs",
    "Limits",
    "Parallelism",
    "PathOutput",
    "RunDescription",
    "Search",
    "SolverSpec",
    "TreeOptions",
    "error_kinds_to_exit_on",
    "portfolio_strategies",
]



@attrs.frozen
class Inputs:
    """Where the program starts and what it gets: the entry function, its command line
    (concrete and symbolic arguments, symbolic files and stdin) and the concrete world."""

    entry: str = "main"
    argv: ArgvSpec = ArgvSpec(())
    posix: PosixSetup = PosixSetup()
    environment: tuple[str, ...] = ()
    """The program's environment, ``NAME=VALUE`` strings (KLEE's ``-environ``): ``envp``,
    ``environ`` and what ``getenv`` finds."""
    fuzz_target: bool = False
    """The program is a libFuzzer fuzz target linked with symex's driver (env/fuzz_input.py)."""
    max_input: int = DEFAULT_MAX_INPUT
    """A fuzz target's longest input, in bytes."""


@attrs.frozen
class Limits:
    """When exploration stops, or a path does. With workers, ``max_time`` and
    ``max_instructions`` hold for the whole run, the others for each worker."""

    max_time: float | None = None
    max_instructions: int | None = None
    max_depth: int | None = None
    max_states: int | None = None
    max_forks: int | None = None
    max_memory: float | None = None
    max_stack_frames: int = DEFAULT_MAX_STACK_FRAMES
    stop_at: tuple[str, ...] = ()
    """Locations (``FUNCTION`` or ``FILE:LINE``) whose first reach stops the run."""
    max_idle_time_outs: int = MAX_IDLE_TIME_OUTS
    """Time-outs in a row with no other wake-up, input or output after which a path ends
    as idle (0: never; core.livelock)."""
    max_sym_array_size: int = 0
    """Symbolic offsets into objects of more bytes than this are fixed to one value (KLEE's
    ``--max-sym-array-size``; 0: never)."""
    concretize_printed: bool = True
    """Symbolic numbers musl's printf writes to a stream are fixed to one value instead of
    forked on digit by digit (env.printed_values)."""


@attrs.frozen
class Search:
    """How the next state is chosen."""

    searcher: str | tuple[str, ...] = "dfs"
    batch_instructions: int = 0
    """Instructions the chosen state runs, forks included, before the searcher chooses
    again (0: it chooses at every fork; core/search/searchers.py, ``BatchingSearcher``)."""
    batch_time: float = 5.0
    """Seconds a batch lasts at most (KLEE's ``--batch-time``; 0: no limit, a run that
    repeats for its seed)."""
    seed: int = 0
    portfolio: tuple[str, ...] = ()
    """Strategies workers take in turn (worker i: ``portfolio[i % len]``); empty: none."""
    replay_searcher: str | tuple[str, ...] = "dfs"
    """The order states replaying a recorded tree are chosen in."""
    schedule_forks: int = 0
    """How many times a path may fork on which thread runs after a blocking call (0: the
    next runnable thread in order, no fork; see core/threads/scheduling.py)."""
    seeds: tuple[Seed, ...] = ()
    """Concrete inputs whose paths run first (core/search/seeding.py); empty: none."""

    def searcher_name(self) -> str:
        """The strategy as the command line names it (``random-path+nurs:covnew`` for
        several interleaved)."""
        return self.searcher if isinstance(self.searcher, str) else "+".join(self.searcher)


@attrs.frozen
class SolverSpec:
    """The solver a run builds: a configuration string (docs/usage.md), its timeout, the
    chain of KLEE's layers in front of it, and where to log the queries that reach it."""

    config: str = "z3"
    """Empty when the caller hands :func:`symex.run_exploration` a solver object instead."""
    timeout: float | None = None
    chain: tuple[str, ...] = DEFAULT_CHAIN
    write_queries: str | None = None
    float_config: str = DEFAULT_FLOAT_SOLVER
    """The configuration for queries with floating-point terms (``same``: ``config``'s)."""
    site_budgets: bool = True
    """A branch site whose query timed out gets less time for its next (core.site_budgets)."""


@attrs.frozen
class PathOutput:
    """What ended paths yield."""

    emit_all_errors: bool = False
    exit_on_error: frozenset[str] = frozenset()
    """Error kinds whose first occurrence halts the run (empty: none)."""
    only_output_states_covering_new: bool = False
    track_test_coverage: bool = False
    write_no_tests: bool = False
    """No tests at all (KLEE's --write-no-tests): errors are counted, nothing is solved for."""


@attrs.frozen
class TreeOptions:
    """Memoized exploration (docs/memo.md): the tree recorded, or continued."""

    record_tree: str | None = None
    continue_with: str | None = None
    restart_all_states: bool = False
    stop_after_replay: bool = False
    hash_constants: bool = True

    @property
    def used(self) -> bool:
        """Whether the run records or continues a tree."""
        return self.record_tree is not None or self.continue_with is not None


@attrs.frozen
class Parallelism:
    """Workers (docs/parallel.md)."""

    workers: int = 1
    backend: str | None = None
    """``processes`` (the default with workers), ``in-process`` or ``ray``."""
    cluster: str | None = None
    balance_ratio: float = DEFAULT_BALANCE_RATIO
    journal: str | None = None
    """Where the coordinator keeps its journal of open jobs and finished paths, so that a
    killed run can be resumed (``TreeOptions.continue_with`` names it then); None: nowhere."""

    @property
    def wanted(self) -> bool:
        """Whether the run has workers (even one: a backend or a cluster asks for them)."""
        return self.workers != 1 or self.backend is not None or self.cluster is not None


@attrs.frozen
class RunDescription:
    """One run, besides its program and hooks (module docstring)."""

    inputs: Inputs = Inputs()
    limits: Limits = Limits()
    search: Search = Search()
    solver: SolverSpec = SolverSpec()
    output: PathOutput = PathOutput()
    tree: TreeOptions = TreeOptions()
    parallel: Parallelism = Parallelism()
    progress_interval: float = 2.0
    """Seconds between two progress snapshots (``Hooks.on_progress``)."""
    memory_model: str = DEFAULT_MEMORY_MODEL
    """What a symbolic pointer into several objects does (core.memory.model)."""

    @classmethod
    def build(cls, **options: Unpack[RunOptions]) -> RunDescription:
        """A description from :func:`symex.explore`'s keyword arguments (:mod:`symex.options`
        lists them), checked; host files are read now. ``solver`` is a configuration string
        ("" when the caller brings a solver object)."""
        o = defaults(options)
        searcher, args, sym_args = o["searcher"], o["args"], o["sym_args"]
        sym_files, sym_stdin, stdin = o["sym_files"], o["sym_stdin"], o["stdin"]
        sym_packets, sym_fragments, max_fail = o["sym_packets"], o["sym_fragments"], o["max_fail"]
        schedule_forks, max_sym_array_size = o["schedule_forks"], o["max_sym_array_size"]
        max_idle_time_outs, replay_searcher = o["max_idle_time_outs"], o["replay_searcher"]
        restart_all_states, stop_after_replay = o["restart_all_states"], o["stop_after_replay"]
        continue_with, environ, workers = o["continue_with"], o["environ"], o["workers"]
        if isinstance(args, str):
            raise ConfigError("args must be a sequence of strings, not one string; pass [ARG]")
        extra = sym_args.items if isinstance(sym_args, ArgvSpec) else tuple(sym_args or ())
        concrete = tuple(a.decode("utf-8", "surrogateescape") if isinstance(a, bytes) else a
                         for a in (args or ()))
        environment: tuple[ArgvItem, ...] = ()
        if sym_files is not None:
            environment += (SymFiles(*sym_files),)
        if sym_stdin is not None:
            environment += (SymStdin(sym_stdin),)
        if sym_packets is not None:
            environment += (SymPackets(*sym_packets),)
        if sym_fragments is not None:
            environment += (SymFragments(sym_fragments),)
        if max_fail:
            environment += (MaxFail(max_fail),)
        if o["max_input"] < 1:
            raise ConfigError(f"max_input must be at least 1 byte, not {o['max_input']}")
        if o["batch_instructions"] < 0 or o["batch_time"] < 0:
            raise ConfigError("batch_instructions and batch_time must be 0 (none) or more, not "
                              f"{o['batch_instructions']} and {o['batch_time']}")
        if schedule_forks < 0:
            raise ConfigError(f"schedule_forks must be 0 or more, not {schedule_forks}")
        if max_sym_array_size < 0:
            raise ConfigError(f"max_sym_array_size must be 0 (never) or more, not {max_sym_array_size}")
        if max_idle_time_outs < 0:
            raise ConfigError(f"max_idle_time_outs must be 0 (never) or more, not {max_idle_time_outs}")
        if stdin is not None and (sym_stdin is not None
                                  or any(isinstance(i, SymStdin) for i in extra)):
            raise ConfigError("stdin and sym_stdin both give standard input; pass one of them")
        searcher_names(replay_searcher, replay=True)
        if (restart_all_states or stop_after_replay) and continue_with is None:
            raise ConfigError("restart_all_states and stop_after_replay replay a recorded "
                              "tree; pass continue_with=DIR as well")
        if isinstance(environ, str):
            raise ConfigError("environ must be a sequence of NAME=VALUE strings, not one string")
        variables = tuple(environ or ())
        bad = [v for v in variables if "=" not in v or v.startswith("=") or "\0" in v]
        if bad:
            raise ConfigError(f"environment entry {bad[0]!r} is not NAME=VALUE")
        exit_kinds = error_kinds_to_exit_on(o["exit_on_error"])
        parse_float_solver(o["float_solver"])
        seed_values = seeds_from_mappings(o["seeds"])
        argv = ArgvSpec(concrete + tuple(extra) + environment)
        # the cap by default fits the machine; 0 lifts it
        max_memory = o["max_memory"]
        if max_memory is None:
            max_memory = default_max_memory_mb()
        elif not max_memory or max_memory == float("inf"):
            max_memory = None
        check_fits(max_memory, argv.input_bytes, workers)
        return cls(
            inputs=_group(Inputs, o, argv=argv, posix=PosixSetup.make(stdin, o["host_files"]),
                          environment=variables, fuzz_target=bool(o["fuzz_target"])),
            limits=_group(Limits, o, max_time=_finite(o["max_time"]), max_memory=max_memory,
                          stop_at=_locations(o["stop_at"]),
                          concretize_printed=bool(o["concretize_printed"])),
            search=_group(Search, o, searcher=_names(searcher),
                          batch_time=_finite(float(o["batch_time"])) or 0.0,
                          portfolio=portfolio_strategies(o["portfolio"], workers, searcher),
                          replay_searcher=_names(replay_searcher), seeds=seed_values),
            solver=_group(SolverSpec, o, config=o["solver"], timeout=_finite(o["solver_timeout"]),
                          chain=tuple(o["solver_chain"]), write_queries=_path(o["write_queries"]),
                          float_config=o["float_solver"], site_budgets=bool(o["site_budgets"])),
            output=_group(PathOutput, o, exit_on_error=frozenset(k.value for k in exit_kinds or ()),
                          write_no_tests=bool(o["write_no_tests"])),
            tree=_group(TreeOptions, o, record_tree=_path(o["record_tree"]),
                        continue_with=_path(continue_with)),
            parallel=_group(Parallelism, o, backend=o["parallel_backend"],
                            journal=_path(o["journal"])),
            progress_interval=o["progress_interval"],
            memory_model=memory_model_name(o["memory_model"]))

    @property
    def parallel_wanted(self) -> bool:
        """Whether the run has workers: asked for, or implied by a portfolio."""
        return self.parallel.wanted or bool(self.search.portfolio)

    def for_worker(self, index: int) -> RunDescription:
        """What parallel worker ``index`` runs: its portfolio strategy, and no run-wide limit
        (the coordinator keeps time, instructions and stop-at locations for the whole
        run)."""
        search = self.search
        if search.portfolio:
            search = attrs.evolve(search,
                                  searcher=search.portfolio[index % len(search.portfolio)])
        workers = max(self.parallel.workers, len(search.portfolio))
        return attrs.evolve(self, search=search,
                            limits=attrs.evolve(self.limits, max_time=None,
                                                max_instructions=None, stop_at=(),
                                                max_memory=worker_cap(self.limits.max_memory,
                                                                      workers)))


def _names(searcher: str | Sequence[str]) -> str | tuple[str, ...]:
    return searcher if isinstance(searcher, str) else tuple(searcher)


def _path(path: str | os.PathLike[str] | None) -> str | None:
    return None if path is None else os.fspath(path)


_Group = TypeVar("_Group", bound="AttrsInstance")

def _group(group: type[_Group], o: Mapping[str, Any], **given: Any) -> _Group:
    """One of a description's groups (``Limits``, ``Search``, ...) filled by field name: each
    field from ``given`` (a value converted or checked above, or an option named otherwise),
    else from the option of the same name in the options table's values ``o``."""
    return group(**{f.name: given[f.name] if f.name in given else o[f.name]
                    for f in attrs.fields(group)})


def _finite(seconds: float | None) -> float | None:
    """A time limit, with an infinite one (``--max-time inf``) as none."""
    return None if seconds is None or seconds == float("inf") else seconds


def error_kinds_to_exit_on(exit_on_error: bool | str | Collection[str] | None
                           ) -> frozenset[ErrorKind] | None:
    """The error kinds that halt exploration (None: none do), from ``explore(exit_on_error=)``."""
    if exit_on_error is True:
        return frozenset(ErrorKind)
    if exit_on_error is False or exit_on_error is None:
        return None
    names = [exit_on_error] if isinstance(exit_on_error, str) else list(exit_on_error)
    kinds = set()
    for name in names:
        try:
            kinds.add(ErrorKind(name))
        except ValueError:
            valid = ", ".join(k.value for k in ErrorKind)
            raise ConfigError(f"unknown error kind {name!r} in exit_on_error; "
                              f"use True or some of: {valid}") from None
    return frozenset(kinds) if kinds else None


def portfolio_strategies(portfolio: str | Sequence[str] | None, workers: int,
                         searcher: str | Sequence[str]) -> tuple[str, ...]:
    """``explore(portfolio=)`` as a tuple of strategy names (empty: no portfolio), checked
    against ``workers`` and ``searcher``; ConfigError says what to change."""
    if portfolio is None:
        return ()
    items = [portfolio] if isinstance(portfolio, str) else list(portfolio)
    names = tuple(n.strip() for item in items for n in str(item).split(",") if n.strip())
    if not names:
        raise ConfigError(f"portfolio names no search strategy; give some of: "
                          f"{', '.join(SEARCHER_NAMES)}")
    if searcher != "dfs":
        raise ConfigError("pass searcher or portfolio, not both: a portfolio gives every "
                          "worker its strategy")
    if not isinstance(workers, bool) and isinstance(workers, int) and workers < len(names):
        raise ConfigError(f"a portfolio of {len(names)} strategies needs at least "
                          f"{len(names)} workers, not {workers}; ask for {len(names)} or "
                          f"more (symex run --workers {len(names)}; explore(workers="
                          f"{len(names)}))")
    return names


def _locations(stop_at: str | Sequence[str]) -> tuple[str, ...]:
    """``stop_at`` as a tuple of non-empty location strings."""
    locations = (stop_at,) if isinstance(stop_at, str) else tuple(stop_at)
    for location in locations:
        if not isinstance(location, str) or not location.strip():
            raise ConfigError(f"stop_at takes FUNCTION or FILE:LINE strings, got {location!r}")
    return tuple(location.strip() for location in locations)
