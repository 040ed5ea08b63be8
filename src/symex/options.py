"""Every option of a run, written once: its name (:func:`symex.explore`'s keyword), its
default, what it does, and how ``symex run`` spells it.

    symex.explore(program, max_time=60, sym_stdin=8)       # the library
    symex run --max-time 60 --sym-stdin 8 prog.c            # the command line

:data:`OPTIONS` is the table (CrossHair's ``options.py`` is the model): the library checks a
call's keywords against it and fills in its defaults (:meth:`RunDescription.build
<symex.description.RunDescription.build>`), :func:`symex.explore`'s documentation is made
from it, and the command line declares its flags from it (``cli/run.py``), so an option is
added in one place. :class:`RunOptions` is the same list for the type checker
(``explore(program, **options: Unpack[RunOptions])``); a test keeps the two in step. A few
flags of ``symex run`` stand for no single option (``--sym-args`` in place among the
program's arguments, ``--seed-dir``, ``--stdin-file``, ``--environ FILE``,
``--exit-on-error-type``, ``--write-cov``, ``--record-tree`` into the output directory):
``cli/run.py`` turns those into options itself.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, TypedDict

import attrs

from symex.core.interpreter.executor import DEFAULT_MAX_STACK_FRAMES
from symex.core.memory.models import DEFAULT_MEMORY_MODEL, MEMORY_MODEL_NAMES
from symex.core.threads.livelock import MAX_IDLE_TIME_OUTS
from symex.core.search.searchers import REPLAY_SEARCHER_NAMES, SEARCHER_NAMES
from symex.core.search.seeding import Seed
from symex.env.fuzz_input import DEFAULT_MAX_INPUT, FUZZ_TARGET
from symex.errors import ConfigError
from symex.solvers.float_route import DEFAULT_FLOAT_SOLVER
from symex.symargs import ArgvItem, ArgvSpec

__all__ = ["DEFAULT_CHAIN", "ERRORS", "FLAG_GROUPS", "INPUTS", "MEMO", "OPTIONS", "OUTPUT", "PARALLEL",
           "SEARCH", "SOLVER", "ExploreOptions", "Flag", "Option", "RunOptions",
           "check_names", "count", "defaults", "describe", "layer_names", "seconds"]

#: the solver chain in front of the solver by default: all of KLEE's layers (with them, the
#: regexp benchmark sends 10 queries to z3 instead of 3,524; see docs/benchmarks.md)
DEFAULT_CHAIN = ("trivial", "independence", "cache", "cex")

_TIME_UNITS = {"ms": 0.001, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def seconds(text: str) -> float:
    """A duration on the command line: seconds (``90``, ``1.5``) or KLEE's form (``90s``,
    ``5min``, ``1h30min``)."""
    try:
        value = float(text)
    except ValueError:
        parts = re.findall(r"(\d+(?:\.\d*)?)\s*([a-z]+)", text.strip().lower())
        joined = "".join(f"{n}{u}" for n, u in parts)
        if not parts or joined != re.sub(r"\s+", "", text.strip().lower()) or \
                any(u not in _TIME_UNITS for _, u in parts):
            raise argparse.ArgumentTypeError(
                f"invalid time '{text}' (give seconds, or e.g. 90s, 5min, 1h30min)") from None
        value = sum(float(n) * _TIME_UNITS[u] for n, u in parts)
    if value < 0 or value != value:
        raise argparse.ArgumentTypeError(f"invalid time '{text}' (must not be negative)")
    return value


def layer_names(text: str) -> tuple[str, ...]:
    """A comma-separated list of solver chain layers on the command line ("" for none); the
    chain says which names it knows."""
    return tuple(name.strip() for name in text.split(",") if name.strip())


def count(text: str) -> int:
    """A whole number on the command line, not negative."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number '{text}' (give a whole number)") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"invalid number '{text}' (must not be negative)")
    return value


@attrs.frozen
class Flag:
    """How ``symex run`` spells an option (argparse's arguments)."""

    names: tuple[str, ...]
    """``("--max-time",)``."""
    group: str
    """The heading the flag is listed under in ``symex run --help``."""
    help: str = ""
    metavar: str | None = None
    parse: Callable[[str], Any] | None = None
    """argparse's ``type``."""
    action: str | type[argparse.Action] | None = None
    """argparse's ``action`` (``store_true``, ``append``, ...)."""
    default: Any = None
    """The command line's default where it differs from the library's (``--search`` appends
    to None, then the library's ``dfs`` applies)."""


@attrs.frozen
class Option:
    """One option of a run."""

    name: str
    """:func:`symex.explore`'s keyword (and :class:`RunOptions`' key)."""
    default: Any
    doc: str
    """What the option does, for :func:`symex.explore`'s documentation."""
    flag: Flag | None = None
    """Its ``symex run`` flag, None where the command line has none of its own."""


#: the headings of ``symex run --help``, in order, with their descriptions
INPUTS = "symbolic arguments (also accepted among the program's arguments, in place, as KLEE)"
SEARCH = "search and limits"
PARALLEL = "parallel exploration"
ERRORS = "errors"
OUTPUT = "output"
MEMO = "memoized exploration (the execution tree, MoKlee's workflow; docs/memo.md)"
SOLVER = "solver and compiler"
FLAG_GROUPS: tuple[tuple[str, str | None], ...] = (
    (INPUTS, None), (SEARCH, None),
    (PARALLEL, "split the execution tree over worker processes (docs/parallel.md)"),
    (ERRORS, None), (OUTPUT, None), (MEMO, None), (SOLVER, None))

#: Cloud9's load-balancing threshold x: work moves when the most loaded worker has at least
#: x times the live states of the least loaded (symex.parallel.balancing)
DEFAULT_BALANCE_RATIO = 10.0

OPTIONS: tuple[Option, ...] = (
    # -- where the program starts and what it gets ------------------------------------------
    Option("entry", "main", "The function exploration starts from."),
    Option("args", None, "Concrete arguments of ``main`` (a sequence of strings), before "
           "``sym_args``."),
    Option("sym_args", None,
           "main's arguments after ``args``, as KLEE's ``--posix-runtime`` makes them: an "
           ":class:`~symex.symargs.ArgvSpec` or a sequence of concrete strings, ``SymArg(N)`` "
           "(``--sym-arg N``: an object ``argNN`` of N+1 bytes, a string of at most N "
           "characters) and ``SymArgs(MIN, MAX, N)`` (``--sym-args``: an ``n_args`` object, "
           "MIN <= n_args <= MAX, and one state per count with that many ``argNN`` objects), in "
           "order; also ``SymFiles``, ``SymStdin`` and the other environment specs, as KLEE's "
           "syntax puts them among the arguments."),
    Option("sym_files", None,
           "``(NUM, N)`` (``--sym-files NUM N``): files ``A``, ``B``... of N symbolic bytes, "
           "objects ``A-data``, ``A-data-stat``."),
    Option("sym_stdin", None,
           "N (``--sym-stdin N``): standard input is N symbolic bytes (objects ``stdin``, "
           "``stdin-stat``)."),
    Option("stdin", None,
           "Concrete bytes standard input holds (default: none, end of file at once)."),
    Option("host_files", None,
           "Paths of host files the program may open for reading (read when exploration "
           "starts; nothing is ever written to the host).",
           Flag(("--read-host-file",), INPUTS, "let the program open this host file for "
                "reading (repeatable; never written)", "PATH", action="append", default=[])),
    Option("environ", None,
           "The program's environment: ``NAME=VALUE`` strings (``envp``, ``environ`` and what "
           "``getenv`` finds; KLEE's ``-environ``); default: empty."),
    Option("sym_packets", None,
           "``(NUM, SIZE)`` (Cloud9's ``--sym-packets``): a client outside the program connects "
           "to the first socket that accepts and sends NUM packets of SIZE symbolic bytes."),
    Option("sym_fragments", None,
           "K: up to K times per path, a ``recv`` may return part of what one ``send`` sent "
           "(one path per length)."),
    Option("fuzz_target", False,
           f"The program is a libFuzzer fuzz target (it defines ``{FUZZ_TARGET}``; compile it "
           "with ``symex.compile(..., fuzz_target=True)``, which links a driver as its main): "
           "each path calls the target once on an input of up to ``max_input`` symbolic "
           "bytes (object ``fuzz-data``) with a symbolic length (object ``fuzz-size``, made "
           "first); reading at or past the length is out of bounds. A program without the "
           "driver is refused.",
           Flag(("--fuzz-target",), INPUTS, f"PROGRAM is a libFuzzer fuzz target (defines "
                f"{FUZZ_TARGET}, no main): run it on a symbolic input of up to --max-input "
                f"bytes, as libFuzzer's driver does", action="store_true")),
    Option("max_input", DEFAULT_MAX_INPUT,
           "The longest input of a fuzz target, in bytes (libFuzzer's ``-max_len``).",
           Flag(("--max-input",), INPUTS, "with --fuzz-target: the longest input, in bytes "
                "(default %(default)s, as libFuzzer's -max_len)", "N", count)),
    Option("max_fail", 0,
           "N (KLEE's ``--max-fail N``): up to N ``read``/``write``/``close`` calls per path "
           "fail with EIO, each where the objects ``read_fail``/``write_fail``/``close_fail`` "
           "say (a path per choice; native replay does not inject them)."),
    # -- search and limits ------------------------------------------------------------------
    Option("searcher", "dfs",
           f"{', '.join(f'``{name}``' for name in SEARCHER_NAMES)}, or a list of them to "
           f"interleave (:func:`symex.explore` also takes a searcher object).",
           Flag(("--search",), SEARCH, f"search strategy, repeatable to interleave: "
                f"{', '.join(SEARCHER_NAMES)}", "NAME", action="append")),
    Option("batch_instructions", 0,
           "KLEE's ``--use-batching-search --batch-instructions N``: the chosen state runs on "
           "across its forks for N instructions before the searcher chooses again (0: it "
           "chooses at every fork).",
           Flag(("--batch-instructions",), SEARCH, "the chosen state runs N instructions, "
                "forks included, before the searcher chooses again (KLEE's batching search; "
                "default 0: choose at every fork)", "N", count)),
    Option("batch_time", 5.0,
           "KLEE's ``--batch-time``: a batch (``batch_instructions``) also ends after this "
           "many seconds, so that a path whose every step asks slow queries does not hold the "
           "run (0: no limit; a batch ended by its time depends on the machine's speed, so "
           "such a run does not repeat for its seed).",
           Flag(("--batch-time",), SEARCH, "a batch also ends after TIME (default "
                "%(default)ss, as KLEE; 0: never, so that runs repeat)", "TIME", seconds)),
    Option("seed", 0, "Seed of the random searchers.",
           Flag(("--seed",), SEARCH, "seed of the random searchers", parse=int)),
    Option("seeds", (),
           "Concrete inputs whose paths run first (KLEE's ``--seed-file``; "
           ":mod:`symex.core.search.seeding`): each a mapping of symbolic object name "
           "(``\"packet-0\"``, ``\"arg00\"``, ``\"stdin\"``: the names tests carry) to bytes, or "
           "a :class:`~symex.core.search.seeding.Seed`. Bytes a seed does not give read as zero. "
           "States that follow a seed run before any other; every branch a seed does not take "
           "is explored afterwards, so seeds change the order, not what is explored. With "
           "``workers``, each worker runs its own states that follow a seed first."),
    Option("max_time", None, "Seconds; the run stops then (open paths end as partial).",
           Flag(("--max-time",), SEARCH, "stop after TIME (seconds, or e.g. 90s, 5min, 1h)",
                "TIME", seconds)),
    Option("max_instructions", None, "Instructions executed, over all paths.",
           Flag(("--max-instructions",), SEARCH, metavar="N", parse=count)),
    Option("stop_at", (),
           "Locations (``FUNCTION`` or ``FILE:LINE``) whose first reach stops the run.",
           Flag(("--stop-at",), SEARCH, "stop the run when a path first reaches FUNCTION or "
                "FILE:LINE (repeatable)", "LOCATION", action="append", default=[])),
    Option("max_depth", None, "Symbolic branches on one path; a deeper path ends as partial.",
           Flag(("--max-depth",), SEARCH, "symbolic branches per path", "N", count)),
    Option("max_states", None, "Live states; states past it end as partial.",
           Flag(("--max-states",), SEARCH, "live states at once", "N", count)),
    Option("max_forks", None,
           "After that many forks no state splits any more; every later symbolic choice "
           "(branch, switch, error check, symbolic pointer) follows the side the state's "
           "current inputs satisfy, as KLEE's ``--max-forks``.",
           Flag(("--max-forks",), SEARCH, "after N forks, follow one feasible side of each "
                "branch", "N", count)),
    Option("schedule_forks", 0,
           "How many times a path may fork on which process or thread runs after a blocking "
           "call (0: the next runnable one in order, no fork).",
           Flag(("--schedule-forks",), SEARCH, "a path may fork N times on which process or "
                "thread runs after a blocking call (default 0: the next one in order)", "N",
                count)),
    Option("max_idle_time_outs", MAX_IDLE_TIME_OUTS,
           "A path whose threads have only woken from time-outs, N times in a row with no "
           "input or output, ends as partial, \"idle\" (0: never; a path whose whole state "
           "repeats ends as a ``hang`` either way: :mod:`symex.core.threads.livelock`).",
           Flag(("--max-idle-time-outs",), SEARCH, "end a path as idle after N time-outs in "
                "a row with no other wake-up, input or output (default %(default)s; 0: never)",
                "N", count)),
    Option("max_sym_array_size", 0,
           "KLEE's ``--max-sym-array-size``: a symbolic offset into an object of more than N "
           "bytes is fixed to one value the path allows, after the bounds check, by fixing the "
           "input bytes it is computed from (a hash table read at ``hash(key)``: every later "
           "query would reason about the whole table, or, with the offset alone fixed, invert "
           "the hash); each such choice is counted in ``messages``. 0: never.",
           Flag(("--max-sym-array-size",), SEARCH, "fix a symbolic offset into an object of "
                "more than N bytes to one value, by fixing the input bytes it is computed from "
                "(KLEE's option; default 0: never)", "N", count)),
    Option("memory_model", DEFAULT_MEMORY_MODEL,
           "What a symbolic pointer that may point into several objects does: "
           "``forking`` (one path per object, KLEE's) or ``merged`` (one path, the if-then-else "
           "of the objects' bytes; fewer paths, larger queries), or an installed plug-in's "
           "model (docs/usage.md, \"Memory models\").",
           Flag(("--memory-model",), SEARCH, "what a symbolic pointer into several objects "
                f"does: {' or '.join(MEMORY_MODEL_NAMES)} (default {DEFAULT_MEMORY_MODEL})",
                "NAME")),
    Option("concretize_printed", True,
           "A symbolic number computed from the inputs (a digest, a checksum) that musl's "
           "printf writes to a stream (not ``snprintf``'s memory) is fixed to the value the "
           "path's inputs give it, not forked on digit by digit (env/printed_values.py; a "
           "digest's ``%02x`` asks preimage questions); so is a symbolic time musl turns into "
           "a date (``__secs_to_tm``); ``False``: fork, as KLEE does.",
           Flag(("--concretize-printed",), SEARCH, "fix a computed symbolic number (a digest, "
                "a checksum) printf writes to a stream, and a symbolic time turned into a date, "
                "to one value instead of forking on its digits and fields (default: yes; "
                "--no-concretize-printed: fork, as KLEE does)",
                action=argparse.BooleanOptionalAction, default=True)),
    Option("max_memory", None,
           "The run's memory cap, MB of resident memory (KLEE's ``--max-memory``; default: "
           "three quarters of the machine's memory; 0: none): near it no state splits, above "
           "it waiting states end as partial (with a test, open in a recorded tree: "
           "``Statistics.shed_paths``), and only when nothing is left to end does the run "
           "halt (``halted=\"max-memory reached\"``); :mod:`symex.memory_cap`. Workers "
           "share it. Symbolic inputs or workers that cannot fit in it are refused at once.",
           Flag(("--max-memory",), SEARCH, "the run's memory cap in MB (default: three "
                "quarters of this machine's memory; 0: none): near it states stop forking, "
                "above it waiting states end (counted in the summary)", "MB", count)),
    Option("max_stack_frames", DEFAULT_MAX_STACK_FRAMES,
           "Nested calls a path may make; deeper is a stack overflow error."),
    # -- the solver ---------------------------------------------------------------------------
    Option("solver", "z3",
           "A configuration string (docs/usage.md; :func:`symex.explore` also takes a solver "
           "object, not closed there).",
           Flag(("--solver",), SOLVER, metavar="CONFIG")),
    Option("float_solver", DEFAULT_FLOAT_SOLVER,
           "The configuration that answers queries holding floating-point terms (bitwuzla's "
           "floating-point theory is 9-29x faster than z3's on them: docs/benchmarks.md); "
           "``same``: the ``solver`` answers them too. Not used where ``solver`` already runs "
           "that backend, nor with a solver object.",
           Flag(("--float-solver",), SOLVER, "answer queries with floating-point terms with "
                "CONFIG (default %(default)s; 'same': the --solver answers them too)",
                "CONFIG")),
    Option("solver_timeout", None,
           "Seconds a query may take (KLEE's ``--max-solver-time``): a branch side not decided "
           "in time is left unexplored, and the path goes on along the side its inputs take.",
           Flag(("--max-solver-time",), SOLVER, "give up on a solver query after TIME (KLEE's "
                "option; default: only the run's own limit): a branch side not decided in time "
                "is left unexplored, and the path goes on along the side its inputs take",
                "TIME", seconds)),
    Option("site_budgets", True,
           "With ``solver_timeout``, a branch site whose query timed out gets an eighth of that "
           "time for its next one, down to not being asked (the path follows its inputs' side; "
           "core/site_budgets.py); ``False``: every query gets ``solver_timeout``.",
           Flag(("--site-budgets",), SOLVER, "with --max-solver-time, a branch site whose "
                "query timed out gets an eighth of that time for its next one, down to not "
                "being asked (default: yes; --no-site-budgets: every query gets the limit)",
                action=argparse.BooleanOptionalAction, default=True)),
    Option("solver_chain", DEFAULT_CHAIN,
           "KLEE-style layers in front of the solver (``trivial``, ``independence``, "
           "``cache``, ``cex``, and ``search``: a branch's other side from the path's model "
           "changed on the bytes its condition reads; ``()`` for none).",
           Flag(("--solver-chain",), SOLVER, "the layers in front of the solver, comma-separated: "
                "trivial, independence, cache, cex (the default) and search (a branch's other side "
                "from the path's model, changed on the bytes its condition reads); '' for none",
                "LAYERS", parse=layer_names)),
    Option("write_queries", None,
           "A directory to log every query that reaches the solver (SMT-LIB2, one file per "
           "query, and ``index.csv`` with answers and times).",
           Flag(("--write-queries",), OUTPUT, "log every solver query (SMT-LIB2 files and "
                "index.csv) into DIR", "DIR")),
    # -- what ended paths yield -----------------------------------------------------------------
    Option("emit_all_errors", False, "Report every error path, not one per error site.",
           Flag(("--emit-all-errors",), ERRORS, "report every error path, not one per error "
                "site", action="store_true")),
    Option("exit_on_error", False,
           "True halts after the first path ending in an error, a collection of ``ErrorKind`` "
           "values (``\"ptr\"``, ``\"div\"``...) after the first error of one of those kinds "
           "(``halted=\"exit-on-error (KIND)\"``)."),
    Option("only_output_states_covering_new", False,
           "A path that did not end in an error yields a test only if it covered new code "
           "(``TestCase.covers_new``).",
           Flag(("--only-output-states-covering-new",), OUTPUT, "write tests only for paths "
                "that covered new code (and errors)", action="store_true")),
    Option("write_no_tests", False,
           "Paths yield no tests: no inputs are solved for at a path's end, ``Result.tests`` "
           "stays empty and ``symex run`` writes no ``.ktest`` or ``.err`` file; errors are "
           "still counted and reported (``Result.errors``). For runs after coverage or "
           "timing only, as KLEE's ``--write-no-tests``.",
           Flag(("--write-no-tests",), OUTPUT, "write no tests and no .err files (errors are "
                "still counted and listed in the summary; coverage and statistics as usual), "
                "as KLEE's --write-no-tests", action="store_true")),
    Option("track_test_coverage", False, "Fill ``TestCase.covered_lines``."),
    Option("progress_interval", 2.0,
           "``hooks.on_progress`` gets a :class:`~symex.results.ProgressSnapshot` every so "
           "many seconds, and once at the end."),
    # -- memoized exploration -------------------------------------------------------------------
    Option("record_tree", None,
           "Record the execution tree into a new SQLite file at this path as the run goes "
           "(:mod:`symex.memo`, docs/memo.md)."),
    Option("continue_with", None,
           "Replay a recorded tree (a file, or a run's directory) without the solver, skip its "
           "fully explored subtrees, explore on from the paths it left open, and extend it in "
           "place (with ``record_tree`` too: extend a copy at ``record_tree``); with "
           "``workers``, also a parallel run's journal to resume.",
           Flag(("--continue-with",), MEMO, "replay the tree recorded in DIR without the "
                "solver, skip its fully explored subtrees, explore on from where it stopped, "
                "and extend it in place", "DIR")),
    Option("restart_all_states", False, "Replay every recorded path, skipping none.",
           Flag(("--restart-all-states",), MEMO, "replay every recorded path (skip none)",
                action="store_true")),
    Option("stop_after_replay", False, "Stop once the recorded paths are replayed.",
           Flag(("--stop-after-replay",), MEMO, "stop when the recorded paths are replayed",
                action="store_true")),
    Option("replay_searcher", "dfs",
           "The order of the replay (the searchers' names but ``random-path``; ``searcher`` "
           "orders what is new).",
           Flag(("--replay-search",), MEMO, f"the order of the replay (default dfs): "
                f"{', '.join(REPLAY_SEARCHER_NAMES)}", "NAME",
                action="append")),
    Option("hash_constants", True,
           "Divergence detection compares constants too (for a new tree; a continued one keeps "
           "its setting).",
           Flag(("--hash-constants",), MEMO, "divergence detection compares constants in "
                "conditions too (default: yes; a continued tree keeps its own setting)",
                action=argparse.BooleanOptionalAction, default=True)),
    # -- workers ----------------------------------------------------------------------------------
    Option("workers", 1,
           "Split the tree over N workers (:mod:`symex.parallel`, docs/parallel.md), local "
           "processes by default. ``max_time`` and ``max_instructions`` hold for the whole run; "
           "``max_states``, ``max_forks`` and ``max_memory`` for each worker.",
           Flag(("--workers",), PARALLEL, "worker processes on this machine (default 1: no "
                "workers)", "N", count)),
    Option("parallel_backend", None,
           "``\"processes\"`` (the default with workers) or ``\"in-process\"`` (the workers "
           "one step at a time in this process, for tests and debugging)."),
    Option("cluster", None,
           "Run the workers as Ray actors (``pip install 'symex[ray]'``): ``\"auto\"`` starts "
           "a local Ray instance for the run, ``\"HOST:PORT\"`` or ``\"ray://HOST:10001\"`` "
           "connects to an existing cluster.",
           Flag(("--cluster",), PARALLEL, "run the workers as Ray actors: 'auto' (a local Ray "
                "instance), HOST:PORT or ray://HOST:10001 (an existing cluster); needs pip "
                "install 'symex[ray]'", "ADDRESS")),
    Option("balance_ratio", DEFAULT_BALANCE_RATIO,
           "Work moves (Cloud9's rule) when the most loaded worker has at least this many "
           "times the live states of the least loaded one.",
           Flag(("--balance-ratio",), PARALLEL, "move work when the most loaded worker has X "
                "times the live states of the least loaded (Cloud9's rule; default "
                f"{DEFAULT_BALANCE_RATIO:g})", "X",
                float)),
    Option("portfolio", None,
           "Search strategies the workers take in turn (``[\"dfs\", \"random-path\", "
           "\"nurs:covnew\"]``, or one string with commas; at least one worker each) instead of "
           "``searcher``; ``Result.statistics.parallel.per_strategy`` tells what each found.",
           Flag(("--portfolio",), PARALLEL, "search strategies the workers take in turn, "
                "comma-separated (dfs,random-path,nurs:covnew); each needs a worker", "LIST")),
    Option("journal", None,
           "The coordinator keeps its open jobs and finished paths here (SQLite), and a run "
           "killed or halted is resumed with ``continue_with=PATH`` (or its directory) and "
           "workers: the open jobs run again, the finished paths are not reported twice."),
)

_BY_NAME = {option.name: option for option in OPTIONS}


class ExploreOptions(TypedDict, total=False):
    """:data:`OPTIONS` for the type checker, but ``solver`` and ``searcher``, which
    :func:`symex.explore` also takes as objects (its own parameters)."""

    entry: str
    args: Sequence[str | bytes] | None
    sym_args: ArgvSpec | Sequence[ArgvItem] | None
    sym_files: tuple[int, int] | None
    sym_stdin: int | None
    stdin: bytes | str | None
    host_files: Sequence[str | os.PathLike[str]] | None
    environ: Sequence[str] | None
    sym_packets: tuple[int, int] | None
    sym_fragments: int | None
    fuzz_target: bool
    max_input: int
    max_fail: int
    batch_instructions: int
    batch_time: float
    seed: int
    seeds: Sequence[Mapping[str, bytes | str] | Seed]
    max_time: float | None
    max_instructions: int | None
    stop_at: str | Sequence[str]
    max_depth: int | None
    max_states: int | None
    max_forks: int | None
    schedule_forks: int
    max_idle_time_outs: int
    max_sym_array_size: int
    memory_model: str
    concretize_printed: bool
    max_memory: float | None
    max_stack_frames: int
    float_solver: str
    solver_timeout: float | None
    site_budgets: bool
    solver_chain: Sequence[str]
    write_queries: str | os.PathLike[str] | None
    emit_all_errors: bool
    exit_on_error: bool | str | Collection[str]
    only_output_states_covering_new: bool
    write_no_tests: bool
    track_test_coverage: bool
    progress_interval: float
    record_tree: str | os.PathLike[str] | None
    continue_with: str | os.PathLike[str] | None
    restart_all_states: bool
    stop_after_replay: bool
    replay_searcher: str | Sequence[str]
    hash_constants: bool
    workers: int
    parallel_backend: str | None
    cluster: str | None
    balance_ratio: float
    portfolio: str | Sequence[str] | None
    journal: str | os.PathLike[str] | None


class RunOptions(ExploreOptions, total=False):
    """:data:`OPTIONS` for the type checker: each option's name and the types it takes
    (``RunDescription.build(**options: Unpack[RunOptions])``)."""

    searcher: str | Sequence[str]
    solver: str


def check_names(given: Mapping[str, Any]) -> None:
    """ConfigError for a keyword that is no option, naming the nearest ones."""
    unknown = [name for name in given if name not in _BY_NAME]
    if unknown:
        import difflib  # noqa: PLC0415  (only for the message)
        name = unknown[0]
        near = difflib.get_close_matches(name, _BY_NAME, n=3)
        hint = f"; did you mean {', '.join(near)}?" if near else \
            f"; the options are: {', '.join(_BY_NAME)}"
        raise ConfigError(f"unknown option {name!r}{hint}")


def defaults(given: Mapping[str, Any]) -> dict[str, Any]:
    """Every option, ``given``'s value where it has one, else the default."""
    check_names(given)
    return {option.name: given.get(option.name, option.default) for option in OPTIONS}


def describe() -> str:
    """The options as a reStructuredText list (for :func:`symex.explore`'s documentation),
    an item a line: built as the engine is imported, where wrapping them cost 3 ms of every
    run's start."""
    lines = []
    for option in OPTIONS:
        default = "" if option.default in (None, (), False) else f" Default: ``{option.default!r}``."
        lines.append(f"- ``{option.name}``: {option.doc}{default}")
    return "\n".join(lines)
