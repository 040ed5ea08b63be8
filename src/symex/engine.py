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
from collections.abc import Collection, Mapping, Sequence

from symex.core.executor import DEFAULT_MAX_STACK_FRAMES
from symex.core.livelock import MAX_IDLE_TIME_OUTS
from symex.core.seeding import Seed
from symex.description import DEFAULT_CHAIN, RunDescription
from symex.errors import ConfigError
from symex.exploration import explore_alone
from symex.ir.program import Program
from symex.parallel import explore_in_parallel
from symex.results import Hooks, Result
from symex.solvers.base import Solver
from symex.symargs import ArgvItem, ArgvSpec

__all__ = ["explore", "run_exploration"]


def explore(program: Program, *, searcher: str | Sequence[str] = "dfs", seed: int = 0,
            max_time: float | None = None, max_instructions: int | None = None,
            max_depth: int | None = None, max_states: int | None = None,
            solver: str | Solver = "z3", solver_timeout: float | None = None,
            write_queries: str | os.PathLike[str] | None = None,
            solver_chain: Sequence[str] = DEFAULT_CHAIN,
            emit_all_errors: bool = False, max_stack_frames: int = DEFAULT_MAX_STACK_FRAMES,
            entry: str = "main", args: Sequence[str] | None = None,
            hooks: Hooks | None = None, max_forks: int | None = None,
            max_memory: float | None = None, exit_on_error: bool | Collection[str] = False,
            only_output_states_covering_new: bool = False, track_test_coverage: bool = False,
            progress_interval: float = 2.0,
            sym_args: ArgvSpec | Sequence[ArgvItem] | None = None,
            sym_files: tuple[int, int] | None = None, sym_stdin: int | None = None,
            stdin: bytes | str | None = None,
            host_files: Sequence[str | os.PathLike[str]] | None = None,
            record_tree: str | os.PathLike[str] | None = None,
            continue_with: str | os.PathLike[str] | None = None,
            restart_all_states: bool = False, stop_after_replay: bool = False,
            replay_searcher: str | Sequence[str] = "dfs", hash_constants: bool = True,
            workers: int = 1, parallel_backend: str | None = None,
            cluster: str | None = None, balance_ratio: float = 10.0,
            portfolio: str | Sequence[str] | None = None,
            journal: str | os.PathLike[str] | None = None,
            stop_at: str | Sequence[str] = (), schedule_forks: int = 0,
            sym_packets: tuple[int, int] | None = None,
            sym_fragments: int | None = None, environ: Sequence[str] | None = None,
            max_fail: int = 0, max_idle_time_outs: int = MAX_IDLE_TIME_OUTS,
            max_sym_array_size: int = 0,
            seeds: Sequence[Mapping[str, bytes | str] | Seed] = ()) -> Result:
    """Explore the paths of ``program`` from ``entry`` and return test cases and errors.

    ``searcher``: ``dfs``, ``bfs``, ``random-state``, ``random-path``, ``nurs:covnew``, or a
    list of them to interleave. Limits: ``max_time`` (seconds), ``max_instructions``,
    ``max_depth`` (symbolic branches on one path), ``max_states`` (live states; states past it
    end as partial). Paths stopped by a limit are reported as partial, with a test case each.
    ``solver``: a configuration string (see docs/usage.md) or a solver object (not closed here).
    ``write_queries``: a directory to log every query that reaches the solver (SMT-LIB2, one file
    per query, and ``index.csv`` with answers and times). ``solver_chain``: KLEE-style layers in
    front of the solver (``trivial``, ``independence``, ``cache``, ``cex``; all by default, ``()``
    for none).

    ``max_forks``: after that many forks no state splits any more; every later symbolic choice
    (branch, switch, error check, symbolic pointer) follows the side the state's current inputs
    satisfy, as KLEE's ``--max-forks``. ``max_memory``: MB of resident memory; above it,
    exploration halts (``halted="max-memory reached"``). ``exit_on_error``: True halts after
    the first path ending in an error, a collection of ``ErrorKind`` values (``"ptr"``,
    ``"div"``...) after the first error of one of those kinds
    (``halted="exit-on-error (KIND)"``). ``only_output_states_covering_new``: a path that did
    not end in an error yields a test only if it covered new code (``TestCase.covers_new``).
    ``track_test_coverage``: fill ``TestCase.covered_lines``. ``hooks.on_progress`` gets a
    :class:`ProgressSnapshot` every ``progress_interval`` seconds and once at the end.

    ``sym_args``: main's arguments after ``args``, as KLEE's ``--posix-runtime`` makes them:
    an :class:`~symex.symargs.ArgvSpec` or a sequence of concrete strings, ``SymArg(N)``
    (``--sym-arg N``: an object ``argNN`` of N+1 bytes, a string of at most N characters) and
    ``SymArgs(MIN, MAX, N)`` (``--sym-args``: an ``n_args`` object, MIN <= n_args <= MAX, and
    one state per count with that many ``argNN`` objects), in order; also ``SymFiles``,
    ``SymStdin`` (``--sym-files``/``--sym-stdin`` among the arguments, as KLEE's syntax).

    The program's files and standard streams (:mod:`symex.env.posix`): ``sym_files=(NUM,
    N)`` (``--sym-files NUM N``: files ``A``, ``B``... of N symbolic bytes, objects
    ``A-data``, ``A-data-stat``), ``sym_stdin=N`` (``--sym-stdin N``: objects ``stdin``,
    ``stdin-stat``), otherwise ``stdin``: concrete bytes standard input holds (default: none,
    end of file at once). ``host_files``: paths of host files the program may open for
    reading (read when exploration starts; nothing is ever written to the host). What a path
    writes to descriptors 1 and 2 is its test's ``stdout`` and ``stderr``. ``max_fail=N``
    (KLEE's ``--max-fail N``): up to N ``read``/``write``/``close`` calls per path fail with
    EIO, each where the objects ``read_fail``/``write_fail``/``close_fail`` say (a path per
    choice; native replay does not inject them). ``max_idle_time_outs=N``: a path whose
    threads have only woken from time-outs, N times in a row with no input or output, ends
    as partial, "idle" (0: never; default 256; a path whose whole state repeats ends as a
    ``hang`` either way: :mod:`symex.core.livelock`).

    Memoized exploration (:mod:`symex.memo`, docs/memo.md): ``record_tree=PATH`` records the
    execution tree into a new SQLite file as the run goes; ``continue_with=DIR_OR_FILE``
    replays a recorded tree without the solver, skips its fully explored subtrees, explores on
    from the paths it left open (cut by a limit, or still running when its run stopped), and
    extends it in place (with ``record_tree`` too: extends a copy at ``record_tree``).
    ``restart_all_states``: replay every recorded path, skipping none; ``stop_after_replay``:
    stop once the recorded paths are replayed; ``replay_searcher``: the order of the replay
    (the searchers' names; ``searcher`` orders what is new). ``hash_constants``: divergence
    detection compares constants too (for a new tree; a continued one keeps its setting).

    Parallel exploration (:mod:`symex.parallel`, docs/parallel.md): ``workers=N`` splits the
    tree over N workers, local processes by default (``parallel_backend="processes"``;
    ``"in-process"`` runs them one step at a time in this process, for tests and debugging).
    ``cluster``: run the workers as Ray actors (``pip install 'symex[ray]'``): ``"auto"``
    starts a local Ray instance for the run, ``"HOST:PORT"`` or ``"ray://HOST:10001"``
    connects to an existing cluster.
    Work moves by Cloud9's rule: when the most loaded worker has at least ``balance_ratio``
    times the live states of the least loaded one. The result is that of one run: the same
    paths, tests numbered as they arrive. ``max_time`` and ``max_instructions`` hold for the
    whole run; ``max_states``, ``max_forks`` and ``max_memory`` for each worker.
    ``portfolio``: search strategies the workers take in turn (``["dfs", "random-path",
    "nurs:covnew"]``, or one string with commas; at least one worker each) instead of
    ``searcher``; ``Result.statistics.parallel.per_strategy`` tells what each found.
    ``journal=PATH``: the coordinator keeps its open jobs and finished paths there (SQLite),
    and a run killed or halted is resumed with ``continue_with=PATH`` (or its directory) and
    workers: the open jobs run again, the finished paths are not reported twice
    (docs/parallel.md).

    ``max_sym_array_size=N`` (KLEE's ``--max-sym-array-size``): a symbolic offset into an
    object of more than N bytes is fixed to one value the path allows, after the bounds
    check, by fixing the input bytes it is computed from (a hash table read at
    ``hash(key)``: every later query would reason about the whole table, or, with the
    offset alone fixed, invert the hash); each such choice is counted in ``messages``.
    0 (default): never.

    ``seeds``: concrete inputs whose paths run first (KLEE's ``--seed-file``;
    :mod:`symex.core.seeding`): each a mapping of symbolic object name (``"packet-0"``,
    ``"arg00"``, ``"stdin"``: the names tests carry) to bytes, or a
    :class:`~symex.core.seeding.Seed`. Bytes a seed does not give read as zero. States that
    follow a seed run before any other; every branch a seed does not take is explored
    afterwards by ``searcher``, so seeds change the order, not what is explored. With
    ``workers``, each worker runs its own states that follow a seed first.
    """
    description = RunDescription.build(
        searcher=searcher, seed=seed, max_time=max_time, max_instructions=max_instructions,
        max_depth=max_depth, max_states=max_states,
        solver=solver if isinstance(solver, str) else "", solver_timeout=solver_timeout,
        write_queries=write_queries, solver_chain=solver_chain, emit_all_errors=emit_all_errors,
        max_stack_frames=max_stack_frames, entry=entry, args=args, max_forks=max_forks,
        max_memory=max_memory, exit_on_error=exit_on_error,
        only_output_states_covering_new=only_output_states_covering_new,
        track_test_coverage=track_test_coverage, progress_interval=progress_interval,
        sym_args=sym_args, sym_files=sym_files, sym_stdin=sym_stdin, stdin=stdin,
        host_files=host_files, record_tree=record_tree, continue_with=continue_with,
        restart_all_states=restart_all_states, stop_after_replay=stop_after_replay,
        replay_searcher=replay_searcher, hash_constants=hash_constants, workers=workers,
        stop_at=stop_at, schedule_forks=schedule_forks, sym_packets=sym_packets,
        sym_fragments=sym_fragments, environ=environ, max_fail=max_fail,
        max_idle_time_outs=max_idle_time_outs, max_sym_array_size=max_sym_array_size,
        seeds=seeds,
        parallel_backend=parallel_backend, cluster=cluster, balance_ratio=balance_ratio,
        portfolio=portfolio, journal=journal)
    return run_exploration(program, description, hooks=hooks,
                           solver=None if isinstance(solver, str) else solver)


def run_exploration(program: Program, description: RunDescription, *,
                    hooks: Hooks | None = None, solver: Solver | None = None) -> Result:
    """Explore ``program`` as ``description`` says (:mod:`symex.description`); what
    :func:`explore` does with its keyword arguments. ``solver``: a solver object to use
    instead of building ``description.solver.config`` (not closed here; not with workers)."""
    entry = description.inputs.entry
    if entry not in program.functions or program.functions[entry].is_declaration:
        raise ConfigError(f"the program has no function '{entry}' to start from; "
                          f"pass entry=NAME with a defined function")
    hooks = hooks or Hooks()
    if description.parallel_wanted:
        return explore_in_parallel(program, description, hooks=hooks, solver=solver)
    return explore_alone(program, description, hooks=hooks, solver=solver)
