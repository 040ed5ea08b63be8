"""``symex run [options] PROGRAM [program args]``: explore a program, write KLEE's outputs.

As with KLEE, symex's options come before PROGRAM and everything after it is the program's
command line (a ``--`` right after PROGRAM is dropped), where ``--sym-arg N`` and ``--sym-args
MIN MAX N`` stand for symbolic arguments among the concrete ones, in place
(:mod:`symex.symargs`). The same two options before PROGRAM put their arguments first.

Options to :func:`symex.explore` (KLEE's names where the meaning is the same), an output
directory ``symex-out-N`` filled while the run goes (:mod:`symex.output.directory`,
:mod:`symex.output.runstats`), a progress line (:mod:`symex.output.progress`), and a summary
at the end. Bad input (unknown option, missing file, bad value, compile error) prints one
line and exits with status 2; Ctrl-C ends the run cleanly with status 130, and everything
written so far stays valid.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

from symex.core.outcome import ErrorKind
from symex.core.search.searchers import searcher_names
from symex.core.search.seeding import Seed
from symex.description import RunDescription, portfolio_strategies
from symex.engine import check_continuation, run_exploration, writing_into
from symex.env.fuzz_input import FUZZ_TARGET
from symex.errors import ConfigError, SymexError, error_text
from symex.loading import LIBRARIES, compile, compiler_used
from symex.memo.format import TREE_FILE
from symex.options import ERRORS, FLAG_GROUPS, INPUTS, MEMO, OPTIONS, OUTPUT, SEARCH, SOLVER, seconds
from symex.output.corpus import read_corpus
from symex.output.directory import OutputDirectory
from symex.output.ktest import read_seeds
from symex.output.progress import ProgressDisplay, ProgressMode
from symex.output.rendering import counted, share, shown_objects
from symex.output.run_writer import DeferredInterrupt, RunWriter, default_command_line
from symex.results import Result
from symex.solvers.config import parse_config
from symex.symargs import ArgvSpec

#: KLEE's --exit-on-error-type names for the kinds symex reports under another name
_KLEE_ERROR_TYPES = {"reporterror": ErrorKind.USER, "readonly": ErrorKind.READONLY,
                     "reacherror": ErrorKind.REACH_ERROR}

def _error_kinds(text: str) -> list[ErrorKind]:
    kinds = []
    for name in (n.strip() for n in text.split(",")):
        key = name.lower().replace("-", "").replace("_", "")
        kind = _KLEE_ERROR_TYPES.get(key) or next(
            (k for k in ErrorKind if k.value.replace("_", "") == key), None)
        if kind is None:
            raise argparse.ArgumentTypeError(
                f"unknown error type '{name}' (choose from {', '.join(k.value for k in ErrorKind)})")
        kinds.append(kind)
    return kinds


class _SymArgSpec(argparse.Action):
    """``--sym-arg N`` / ``--sym-args MIN MAX N`` (and ``--sym-files``, ``--sym-stdin``,
    ``--sym-stdout``, ``--sym-packets``, ``--sym-fragments``, ``--max-fail``) before PROGRAM, kept in order
    in one list."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        specs = list(getattr(namespace, self.dest, None) or [])
        try:
            specs += ArgvSpec.parse([option_string or "--sym-arg", *values]).items
        except SymexError as exc:
            raise argparse.ArgumentError(self, str(exc)) from None
        setattr(namespace, self.dest, specs)


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Declare ``symex run`` and its options: every option of :data:`symex.options.OPTIONS`
    with a flag, and the flags that stand for no single option (declared here)."""
    run = commands.add_parser("run", help="explore a program's paths and generate tests",
                              description="Explore PROGRAM (.c, .ll or .bc) symbolically; tests, "
                                          "errors and statistics go to an output directory.")
    run.add_argument("program", help="a C source file, LLVM IR (.ll) or bitcode (.bc), or a "
                     "program built with CC='symex cc'; more .c/.ll/.bc/.o/.a files right after "
                     "it are linked with it ('--' ends them)")
    run.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the program")
    groups = {name: run.add_argument_group(name, description)
              for name, description in FLAG_GROUPS}
    environment = groups[INPUTS]
    for spelled, arity, metavar, text in _SYM_SPECS:
        environment.add_argument(spelled, dest="sym_specs", action=_SymArgSpec, nargs=arity,
                                 metavar=metavar, help=text)
    for option in OPTIONS:
        flag = option.flag
        if flag is None:
            continue
        settings: dict[str, Any] = {"dest": option.name, "help": flag.help or None,
                                    "default": flag.default}
        if flag.action is not None:
            settings["action"] = flag.action
        if flag.metavar is not None:
            settings["metavar"] = flag.metavar
        if flag.parse is not None:
            settings["type"] = flag.parse
        if flag.default is None and option.default is not None and flag.action != "append":
            settings["default"] = option.default  # shown by %(default)s
        groups[flag.group].add_argument(*flag.names, **settings)
    environment.add_argument("--environ", "-environ", metavar="FILE",
                             help="the program's environment: a file of NAME=VALUE lines (KLEE's "
                                  "-environ); without it the environment is empty")
    environment.add_argument("--stdin-file", metavar="PATH",
                             help="concrete standard input: the bytes of this host file")
    search = groups[SEARCH]
    search.add_argument("--seed-file", action="append", default=[], metavar="KTEST",
                        help="run the path of this test's inputs first, then explore around it "
                        "(KLEE's --seed-file; objects matched by name, missing bytes zero; "
                        "repeatable)")
    search.add_argument("--seed-dir", action="append", default=[], metavar="DIR",
                        help="every .ktest file in DIR is a seed (e.g. an earlier run's output)")
    search.add_argument("--seed-corpus", action="append", default=[], metavar="DIR",
                        help="with --fuzz-target: every file in DIR (a fuzzer's corpus, one raw "
                        "input a file) is a seed")
    errors = groups[ERRORS]
    errors.add_argument("--exit-on-error", action="store_true", help="stop at the first error")
    errors.add_argument("--exit-on-error-type", type=_error_kinds, action="append", default=[],
                        metavar="KIND[,KIND]",
                        help=f"stop at the first error of these kinds: "
                             f"{', '.join(k.value for k in ErrorKind)}")
    output = groups[OUTPUT]
    output.add_argument("--output-dir", metavar="DIR",
                        help="write outputs into DIR (new or empty) instead of ./symex-out-N")
    output.add_argument("--write-cov", action="store_true",
                        help="write testNNNNNN.cov with the source lines each test covers")
    output.add_argument("--corpus-out", metavar="DIR",
                        help="with --fuzz-target: also write each test's input into DIR as a "
                        "raw file named by its SHA-1, as fuzzers keep a corpus (crash-SHA1 for "
                        "an input that fails)")
    output.add_argument("--sarif", metavar="FILE",
                        help="also write the errors as a SARIF 2.1.0 log (one result per "
                        "distinct error, with its stack and test), for CI systems such as "
                        "GitHub code scanning; kept up to date as the run goes")
    output.add_argument("--sarif-root", metavar="DIR", default=".",
                        help="the project root the SARIF log's paths are relative to "
                        "(default: the working directory)")
    output.add_argument("--test-format", choices=("ktest", "testcomp"), default="ktest",
                        help="testcomp: also write a Test-Comp suite into OUTDIR/test-suite")
    output.add_argument("-q", "--quiet", action="store_true",
                        help="no progress output; at the end, the summary only (no error "
                        "stacks, no test lines)")
    output.add_argument("-v", "--verbose", action="store_true",
                        help="say what compiled the program (also in OUTDIR/info) and the "
                        "run's memory cap before it starts")
    output.add_argument("--progress-interval", type=seconds, default=10.0, metavar="TIME",
                        help="seconds between progress lines when stderr is not a terminal "
                             "(default 10); below 2 s, run.stats gets a row that often too")
    groups[MEMO].add_argument(
        "--record-tree", action="store_true",
        help=f"record the execution tree into OUTDIR/{TREE_FILE} as the run goes (with "
             f"--continue-with: extend a copy there, not the original)")
    solving = groups[SOLVER]
    solving.add_argument("-O", dest="optimize", metavar="LEVEL",
                         help="compiler optimisation level for C input (e.g. -O2)")
    solving.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]")
    solving.add_argument("-I", dest="includes", action="append", default=[], metavar="DIR")
    solving.add_argument("--libc", choices=LIBRARIES, default=None,
                         help="the C library linked with the program: auto (the default: "
                              "symex's own when it defines every function the program calls, "
                              "musl otherwise; the run says which and why), symex, musl (a real "
                              "one, shipped with symex; the environment is modelled at its "
                              "system calls), or none")
    solving.add_argument("--program", dest="exec_programs", action="append", default=[],
                         type=_exec_program, metavar="NAME=PATH",
                         help="execve of NAME runs the program PATH (a C file or a symex cc "
                              "build, built like PROGRAM) in the same path; NAME is a command "
                              "(diff: any directory) or a path (/usr/bin/diff). Repeatable; "
                              "other programs fail with ENOENT, counted")
    # symex's own flags (not the input ones, which may stand among the program's arguments),
    # to warn when one follows PROGRAM and so goes to the program
    inputs = {spelled for spelled, *_ in _SYM_SPECS}
    run.set_defaults(symex_flags=frozenset(
        name for name in run._option_string_actions if name.startswith("--") and name not in inputs))


def _exec_program(text: str) -> tuple[str, str]:
    """``--program NAME=PATH``."""
    name, equals, path = text.partition("=")
    if not equals or not name or not path:
        raise argparse.ArgumentTypeError(f"{text!r}: write NAME=PATH (diff=build/diff.c)")
    return name, path


#: KLEE's input options before PROGRAM (also accepted in place among the program's arguments)
_SYM_SPECS: tuple[tuple[str, int, str | tuple[str, ...] | None, str], ...] = (
    ("--sym-arg", 1, "N", "one symbolic argument of at most N characters"),
    ("--sym-args", 3, ("MIN", "MAX", "N"),
     "MIN to MAX symbolic arguments of at most N characters each"),
    ("--sym-files", 2, ("NUM", "N"), "NUM symbolic files named A, B, ... of N bytes each"),
    ("--sym-dir", 1, "DIR", "the symbolic files are DIR/A, DIR/B, ... (DIR and the directories "
     "above it exist): files under a directory tree"),
    ("--sym-stdin", 1, "N", "standard input is N symbolic bytes"),
    ("--sym-stdout", 0, None, "accepted for KLEE compatibility (output stays per path)"),
    ("--sym-packets", 2, ("NUM", "SIZE"), "a client outside the program connects to the first "
     "socket that accepts and sends NUM packets of SIZE symbolic bytes"),
    ("--sym-fragments", 1, "K", "up to K times per path, a recv may return part of what one "
     "send sent (one path per length)"),
    ("--max-fail", 1, "N", "up to N read/write/close calls per path fail with EIO (KLEE's "
     "--max-fail; objects read_fail, write_fail, close_fail)"),
)


def _flag_options(options: argparse.Namespace) -> dict[str, Any]:
    """The options ``symex run``'s table flags gave (:data:`symex.options.OPTIONS`), those
    the command line left alone omitted (the library's defaults apply)."""
    given: dict[str, Any] = {}
    for option in OPTIONS:
        if option.flag is None:
            continue
        value = getattr(options, option.name)
        if value is not None:
            given[option.name] = value
    return given


def _print_summary(result: Result, directory: str, *, quiet: bool = False) -> None:
    """The end of a run on stdout: counts, coverage, the output directory; then (unless
    ``quiet``) each error with its stack and a line per test."""
    write = sys.stdout.write
    p = result.paths
    s = result.statistics
    write(f"symex: explored {counted(p.total, 'path')}: {p.completed} completed, "
          f"{counted(p.errors, 'error')}, {p.partial} partial\n")
    floats = int(s.solver_layers.get("route[floats].queries", 0))
    routed = (f", {floats} of them with floating point, by the float solver "
              f"({s.solver_layers.get('route[floats].time', 0.0):.2f} s)") if floats else ""
    write(f"symex: {counted(s.instructions, 'instruction')} in {s.time:.2f} s; "
          f"{counted(s.solver_queries, 'solver query', 'solver queries')} "
          f"({s.solver_time:.2f} s){routed}\n")
    answered = {key[len("core.answered["):-1]: int(value) for key, value in s.solver_layers.items()
                if key.startswith("core.answered[")}
    if answered:
        # a choose(...) solver: which member the run's queries went to, most first
        shares = ", ".join(f"{name} {count}" for name, count in
                           sorted(answered.items(), key=lambda item: -item[1]))
        probes = int(s.solver_layers.get("core.probes", 0))
        switches = int(s.solver_layers.get("core.switches", 0))
        write(f"symex: solver choice: answers by {shares} ({counted(probes, 'probe')}, "
              f"{counted(switches, 'switch', 'switches')})\n")
    # (a run a limit stopped at once, --max-time 0, made nothing symbolic yet either)
    if p.total == 1 and p.completed + p.errors == 1 and result.halted is None and \
            not any(test.objects for test in result.tests):
        write("symex: hint: nothing in this run was symbolic, so it followed the one path its "
              "concrete inputs take; mark inputs with klee_make_symbolic() (#include "
              "<klee/klee.h>) or __VERIFIER_nondet_int(), or give --sym-arg, --sym-args, "
              "--sym-stdin or --sym-files\n")
    c = result.coverage
    write(f"symex: line coverage {share(len(c.covered_lines), len(c.total_lines), 'line')}; "
          f"branch coverage "
          f"{share(len(c.covered_branches), len(c.total_branches), 'branch')}\n")
    m = s.memo
    if m is not None:
        write(f"symex: execution tree: {m.replayed_instructions} instructions replayed, "
              f"{m.new_instructions} new, {m.replayed_queries} queries saved, {m.pruned_states} "
              f"states pruned, {m.diverged_states} diverged ({m.lost_instructions} instructions "
              f"lost); {m.tree_nodes} nodes, {m.tree_bytes} bytes "
              f"({m.bytes_per_node:.0f} per node)\n")
    w = s.parallel
    if w is not None:
        write(f"symex: {w.workers} workers ({w.backend}): {w.jobs} jobs, {w.balancing_moves} "
              f"balancing moves ({w.jobs_moved} jobs moved), {w.replayed_events} decisions "
              f"replayed, {w.shared_cache_hits} queries answered by other workers' "
              f"solutions" + (f"; {w.lost_workers} workers lost, {w.reissued_jobs} jobs "
                              f"re-issued" if w.lost_workers else "")
              + (f"; {counted(w.duplicate_paths, 'path')} explored again and dropped"
                 if w.duplicate_paths else "") + "\n")
        if len(w.per_strategy) > 1:
            for row in w.per_strategy:
                workers = f"{row.workers} worker" + ("s" if row.workers != 1 else "")
                write(f"symex:   {row.searcher} ({workers}): {row.completed} "
                      f"completed, {row.errors} errors, {row.partial} partial, "
                      f"{row.covered_lines} lines reached first, {row.instructions} "
                      f"instructions\n")
    if s.shed_paths:
        write(f"symex: memory cap: {counted(s.shed_paths, 'waiting path')} ended as partial "
              f"(reason 'memory cap') to keep within --max-memory; a run that records its "
              f"tree (--record-tree) explores them later with --continue-with\n")
    if result.halted:
        cut = ""
        if s.halted_paths:
            cut = f"; {counted(s.halted_paths, 'open path')} ended as partial"
            if s.untested_paths:
                cut += (f", {s.untested_paths} of them without a test (no time was left to "
                        f"solve their inputs or make their tests)")
        write(f"symex: stopped early: {result.halted}{cut}\n")
    write(f"symex: output directory: {directory}\n")
    if quiet:
        return
    for error in result.errors:
        where = f"{error.location[0]}:{error.location[1]}" if error.location else "unknown location"
        write(f"error [{error.kind.value}] {where}: {error.message}\n")
        for depth, (function, file, line) in enumerate(error.stack):
            at = f"{file}:{line}" if file and line else (file or "?")
            write(f"    #{depth} {function} at {at}\n")
    shown = result.tests[:MAX_TEST_LINES]
    for number, test in enumerate(shown, 1):
        objects = " ".join(f"{name}={value}" for name, value in shown_objects(test.objects).items())
        status = test.error.kind.value if test.error else test.status.value
        extra = f" exit {test.exit_code}" if test.exit_code is not None else ""
        reason = f" ({test.reason})" if test.status.value == "partial" else ""
        write(f"test{number:06d}: {status}{extra}{reason} {objects}".rstrip() + "\n")
    if len(result.tests) > len(shown):
        write(f"... and {len(result.tests) - len(shown)} more tests in {directory} "
              f"(symex ktest {directory}/testNNNNNN.ktest shows one whole)\n")


#: test lines printed at the end of a run; the rest are only in the output directory
MAX_TEST_LINES = 50
#: the run's warnings printed at its end; the rest are only in messages.txt
MAX_WARNING_LINES = 10
def _validate(options: argparse.Namespace) -> None:
    """Reject bad option values before anything is compiled or created."""
    if (options.seed_corpus or options.corpus_out) and not options.fuzz_target:
        raise ConfigError("--seed-corpus and --corpus-out hold a fuzz target's inputs: add "
                          "--fuzz-target (the program defines LLVMFuzzerTestOneInput)")
    if options.searcher:
        searcher_names(options.searcher)
    if options.replay_searcher:
        searcher_names(options.replay_searcher, replay=True)
    if (options.restart_all_states or options.stop_after_replay or options.replay_searcher) \
            and not options.continue_with:
        raise ConfigError("--restart-all-states, --stop-after-replay and --replay-search replay "
                          "a recorded tree; add --continue-with DIR")
    if options.workers < 1:
        raise ConfigError(f"--workers {options.workers}: give at least 1 worker")
    portfolio_strategies(options.portfolio, options.workers, options.searcher or "dfs")
    if not options.balance_ratio >= 1.0:
        raise ConfigError(f"--balance-ratio {options.balance_ratio}: give a ratio of at least 1")
    if options.cluster is not None and importlib.util.find_spec("ray") is None:
        raise ConfigError("--cluster runs workers on Ray, which is not installed; install it "
                          "with: pip install 'symex[ray]'")
    if _parallel(options) and (options.write_queries or options.restart_all_states
                               or options.stop_after_replay or options.replay_searcher):
        raise ConfigError("--write-queries, --restart-all-states, --stop-after-replay and "
                          "--replay-search are not available with --workers yet; run with one "
                          "worker to use them")
    if options.continue_with and not _parallel(options):
        # imported here: the package of workers is not loaded by a run without them
        from symex.parallel.journal import JOURNAL_FILE  # noqa: PLC0415
        where = Path(options.continue_with)
        if (where / JOURNAL_FILE).is_file() and not (where / TREE_FILE).is_file():
            raise ConfigError(f"{options.continue_with} is the output of a run with workers "
                              f"(it has {JOURNAL_FILE}, no {TREE_FILE}); continue it with "
                              f"--workers N")
    parse_config(options.solver)
    for program in options.programs:
        if not os.path.exists(program):
            raise ConfigError(f"{program}: no such file; give a .c, .ll or .bc file, or a "
                              f"program built with CC='symex cc'")


#: Files after PROGRAM with these suffixes are more of the program, not its arguments.
PROGRAM_SUFFIXES: tuple[str, ...] = (".c", ".ll", ".bc", ".o", ".a")


def _split_program_files(options: argparse.Namespace) -> None:
    """Move the files that follow PROGRAM and are part of it (``a.c b.c lib.a``) from
    ``options.args`` to ``options.programs``; ``--`` ends them explicitly, so a program may
    still be given a file named ``x.c`` as an argument."""
    programs = [options.program]
    args = list(options.args)
    # argparse has taken the `--` out: how many arguments came before it
    line = list(getattr(options, "command_line", None) or [])
    before = len(args)
    if options.program in line and "--" in line[line.index(options.program):]:
        start = line.index(options.program)
        before = line.index("--", start) - start - 1
    while len(programs) <= before and args and args[0].endswith(PROGRAM_SUFFIXES) and os.path.isfile(args[0]):
        programs.append(args.pop(0))
    options.programs = programs
    options.args = args


def fuzz_target_arguments(arguments: list[str], options: argparse.Namespace) -> list[str]:
    """``symex run``'s command line with the options that follow a fuzz target's files
    (PROGRAM and the files after it) moved before them."""
    start = arguments.index(options.program, 1)
    rest = arguments[start + 1:]
    files = 0
    while files < len(rest) and rest[files].endswith(PROGRAM_SUFFIXES) and os.path.isfile(rest[files]):
        files += 1
    return [*arguments[:start], *rest[files:], options.program, *rest[:files]]


def _warn_of_flags_after_the_program(options: argparse.Namespace) -> None:
    """Say so when one of symex's flags follows PROGRAM: KLEE's syntax gives it to the
    program, which is seldom what was meant (``symex run p.c --max-time 60``)."""
    known: frozenset[str] = getattr(options, "symex_flags", frozenset())
    misplaced = [arg for arg in options.args if arg.split("=", 1)[0] in known]
    if misplaced:
        sys.stderr.write(f"symex: warning: {', '.join(misplaced)} after the program "
                         f"{'is' if len(misplaced) == 1 else 'are'} passed to the program, as "
                         "its arguments; put symex's options before PROGRAM\n")


def _environment(options: argparse.Namespace) -> tuple[str, ...]:
    """The variables of ``--environ FILE`` (KLEE's ``-environ``: one NAME=VALUE a line;
    blank lines and ``#`` comments skipped)."""
    if options.environ is None:
        return ()
    try:
        with open(options.environ, encoding="utf-8", errors="surrogateescape") as handle:
            lines = handle.read().splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read --environ {options.environ}: {exc.strerror}; give a file "
                          f"of NAME=VALUE lines") from None
    # RunDescription.build checks each is NAME=VALUE
    return tuple(line for line in lines if line.strip() and not line.lstrip().startswith("#"))


def _stdin_bytes(options: argparse.Namespace) -> bytes | None:
    """The bytes of ``--stdin-file``, or None."""
    if options.stdin_file is None:
        return None
    try:
        with open(options.stdin_file, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise ConfigError(f"cannot read --stdin-file {options.stdin_file}: {exc.strerror}; "
                          f"give a readable file") from None


def _seeds(options: argparse.Namespace) -> list[Seed]:
    """The seeds of ``--seed-file``, ``--seed-dir`` and ``--seed-corpus``, in the order
    given (a directory's files in name order)."""
    corpus = [seed for directory in options.seed_corpus
              for seed in read_corpus(directory, options.max_input)]
    return read_seeds(options.seed_file, options.seed_dir) + corpus


def _command_line(options: argparse.Namespace) -> ArgvSpec:
    """The program's arguments: specs given before PROGRAM, then those after it, in place."""
    return ArgvSpec(tuple(options.sym_specs or ()) + ArgvSpec.parse(options.args).items)


def _snapshot_interval(mode: ProgressMode, progress_interval: float) -> float:
    """Seconds between the engine's progress snapshots: a live line is redrawn every second;
    otherwise a run.stats row every 2 s, sooner if --progress-interval asks (plain lines, or
    with --quiet the rows alone: the service asks for a row a second)."""
    if mode is ProgressMode.LIVE:
        return 1.0
    return min(2.0, max(progress_interval, 0.1))


def _exit_on_error(options: argparse.Namespace) -> bool | frozenset[str]:
    if options.exit_on_error:
        return True
    kinds = [k.value for group in options.exit_on_error_type for k in group]
    return frozenset(kinds) if kinds else False


def main(options: argparse.Namespace) -> int:
    """Run ``symex run`` with parsed ``options``; the exit status."""
    flags = [f"-D{d}" for d in options.defines] + [f"-I{i}" for i in options.includes]
    if options.optimize:
        flags.append(f"-O{options.optimize}")
    mode = ProgressMode.for_stream(sys.stderr, options.quiet)
    try:
        _split_program_files(options)
        _warn_of_flags_after_the_program(options)
        _validate(options)
        argv = _command_line(options)
        # the run's options are checked before the program is compiled (seconds, for a big one)
        description = RunDescription.build(
            **_flag_options(options), exit_on_error=_exit_on_error(options),
            track_test_coverage=options.write_cov, sym_args=argv,
            progress_interval=_snapshot_interval(mode, options.progress_interval),
            stdin=_stdin_bytes(options), environ=_environment(options), seeds=_seeds(options))
        program = compile(options.programs, flags, libc=options.libc or True,
                          programs=dict(options.exec_programs), fuzz_target=options.fuzz_target)
        entry = program.functions.get("main")
        if entry is None or entry.is_declaration:
            target = program.functions.get(FUZZ_TARGET)
            hint = (f" (it defines {FUZZ_TARGET}: add --fuzz-target to run it as a libFuzzer "
                    f"fuzz target)" if target is not None and not target.is_declaration else "")
            raise ConfigError(f"{options.program} has no main function to start from; "
                              f"symex runs a whole program from its main{hint}")
        # every check before the output directory exists: bad input leaves nothing behind
        check_continuation(program, description, extends_copy=options.record_tree)
        # the .ktest args field: the command line in KLEE's syntax, as KLEE writes it
        out = OutputDirectory.create(options.output_dir, program_args=[options.program, *argv.words()],
                                     emit_all_errors=options.emit_all_errors,
                                     write_coverage=options.write_cov)
    except SymexError as exc:
        sys.stderr.write(error_text("symex", exc))
        return 2
    except KeyboardInterrupt:  # before exploration started (e.g. while compiling)
        sys.stderr.write("symex: interrupted\n")
        return 130
    return _explore_into(options, program, out, writing_into(description, out.path, record_tree=options.record_tree),
                         mode)


def _cap(max_memory: float | None) -> str:
    """A memory cap as --verbose says it."""
    return "none (--max-memory 0)" if max_memory is None else f"{max_memory:,.0f} MB"


def _parallel(options: argparse.Namespace) -> bool:
    """Whether the run has workers."""
    return bool(options.workers > 1 or options.cluster or options.portfolio)


def _explore_into(options: argparse.Namespace, program: Any, out: OutputDirectory,
                  description: RunDescription, mode: ProgressMode) -> int:
    out.write_assembly(program.ir_text)
    # a row every 2 s, or as often as --progress-interval asks (the service asks for 1 s)
    compiler = compiler_used(options.programs, program.ir_text)
    library = f"{program.library} ({program.library_reason})" if program.library_reason else program.library
    if options.verbose or (program.library == "musl" and not options.libc and not options.quiet):
        # auto's choice of musl changes what the run means (and costs): say it unasked
        sys.stderr.write(f"symex: C library: {library}\n")
    if options.verbose:
        limits = description.limits
        sys.stderr.write(f"symex: compiled by {compiler}\n"
                         f"symex: memory cap {_cap(limits.max_memory)}\n")
    writer = RunWriter(out, default_command_line(),
                       stats_interval=min(2.0, max(options.progress_interval, 0.1)),
                       test_comp=options.test_format == "testcomp", program_name=options.program,
                       compiler=compiler, library=library, corpus_out=options.corpus_out,
                       sarif=options.sarif, sarif_root=options.sarif_root)
    display = ProgressDisplay(mode, plain_interval=max(options.progress_interval, 0.1))
    interrupt = DeferredInterrupt()
    hooks = writer.hooks(interrupt, display)
    interrupt.install()
    result: Result | None = None
    try:
        try:
            result = run_exploration(program, description, hooks=hooks)
        except SymexError as exc:
            display.close()
            writer.stats.close()
            out.discard()  # a run that failed before its first test leaves nothing behind
            sys.stderr.write(error_text("symex", exc))
            return 2
        except KeyboardInterrupt:
            # a second Ctrl-C while the engine was ending the open paths: no Result, but every
            # file written so far is complete; the info file says what the last snapshot saw
            display.close()
            writer.interrupted()
            sys.stderr.write(f"symex: interrupted; {out.tests} tests and the statistics so far "
                             f"are in {os.fspath(out.path)}\n")
            return 130
        finally:
            interrupt.uninstall()
            display.close()
        try:
            writer.finish(result)
        except OSError as exc:
            # not even info fitted: what was written stays whole, and this says the rest
            writer.failed = writer.failed or f"cut short: {exc.strerror or exc}"
            writer.warnings.append(f"symex: warning: info not written: {exc.strerror or exc}")
        except KeyboardInterrupt:
            sys.stderr.write(f"symex: interrupted while writing the final files; {out.tests} "
                             f"tests are in {os.fspath(out.path)}\n")
            return 130
        if writer.failed is not None:
            # one line: the files that did not fit after it are its consequences
            sys.stderr.write(f"symex: error: the run was {writer.failed}; the {out.tests} tests "
                             f"written are whole, and info says how far it got\n")
            return 1
        return _report(options, out, result, writer.warnings)
    finally:
        writer.close()


def _report(options: argparse.Namespace, out: OutputDirectory, result: Result,
            warnings: list[str]) -> int:
    """Print the warnings and the summary; the exit status."""
    for warning in warnings:
        sys.stderr.write(warning + "\n")
    # what the run decided for the user (symbolic sizes it fixed, ...): also in messages.txt
    decided = [m for m in result.messages if m.startswith("symex: warning:")]
    decided += [shortfall.describe() for shortfall in result.shortfalls]
    for message in decided[:MAX_WARNING_LINES]:
        sys.stderr.write(message + "\n")
    if len(decided) > MAX_WARNING_LINES:
        sys.stderr.write(f"symex: ... and {len(decided) - MAX_WARNING_LINES} more warnings in "
                         f"{os.fspath(out.path / 'messages.txt')}\n")
    if result.statistics.memo is not None:
        # the tree's own news: a changed program, divergences (also in messages.txt)
        for message in result.messages:
            if "recorded" in message or "tree" in message:
                sys.stderr.write(message + "\n")
    try:
        _print_summary(result, os.fspath(out.path), quiet=options.quiet)
    except BrokenPipeError:  # e.g. `symex run ... | head`
        return 0
    if result.halted == "interrupted":
        sys.stderr.write(f"symex: interrupted; {out.tests} tests and the statistics so far are "
                         f"in {os.fspath(out.path)}\n")
        return 130
    return 0
