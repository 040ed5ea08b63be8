"""A job's process: the run its :class:`~symex.service.jobs.JobOrder` describes, then the
native replay of the crashes it found.

The scheduler starts it in the job's sandbox (:mod:`symex.service.sandboxing`).
``python -m symex.service.job_process ORDER`` compiles the order's program, runs its frozen
run description through the library (:func:`symex.run_exploration`) into its output
directory, written as ``symex run`` writes one (:class:`~symex.output.run_writer.RunWriter`;
a SIGINT from the scheduler stops the run with every file whole), and, in the same process
(whose Python start-up is already paid), builds the program natively and replays each crash
in a sandbox of its own (:class:`~symex.replay.NativeSandbox`: the program and a scratch
directory, time, memory, file size, no network), writing ``crashes.json`` into the output
directory. Exit status: 0, 2 for an error (said on stderr, which the scheduler keeps in the
job's log), 130 when interrupted before the run had a result.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

import attrs

from symex.engine import check_continuation, run_exploration
from symex.errors import ConfigError, SymexError, error_text
from symex.loading import compile, compiler_used
from symex.output.directory import OutputDirectory
from symex.output.ktest import KTestError, read_ktest
from symex.output.run_writer import DeferredInterrupt, RunWriter
from symex.replay import NativeSandbox, build_native, reproduces, run_test
from symex.sandbox import sandbox_problem
from symex.results import Result
from symex.service.job_files import JobRun
from symex.service.jobs import JobOrder, crashes, without_job_paths

__all__ = ["CRASHES_FILE", "REPLAY_SECONDS", "main", "replay_crashes", "run_job"]

#: where the run's crashes, with their native replay, are written (in the output directory)
CRASHES_FILE = "crashes.json"
#: the run's errors as a SARIF log (in the output directory, kept up to date as it runs)
SARIF_FILE = "results.sarif"
#: seconds one native replay of a crash may take
REPLAY_SECONDS = 10.0


def replay_crashes(out_dir: Path, program: Path, flags: Sequence[str],
                   sandbox: NativeSandbox, entry: str = "main") -> None:
    """Write ``out_dir/crashes.json``: the run's crashes, each with whether the native build
    of ``program`` failed the same way on its input, built and run in ``sandbox``; where
    there is no verdict, ``not_replayed`` says why (IR uploaded, no sandbox, the build
    failed)."""
    found = crashes(JobRun(out_dir.resolve().parent, out_dir.name))
    executable = None
    why = None
    if not found:
        pass
    elif program.suffix != ".c":
        why = "not replayed: the upload was LLVM IR, not C source"
    elif (problem := sandbox_problem()) is not None:
        why = f"not replayed: no sandbox ({problem})"
    else:
        try:
            executable = build_native(program, list(flags), sandbox=sandbox, entry=entry)
        except SymexError as exc:
            # the job's own files by their names: no server path leaves the job
            said = without_job_paths(str(exc).splitlines()[0], Path.cwd())
            why = f"not replayed: the native build failed ({said})"
    replayed = []
    for crash in found:
        verdict, note = None, why
        if executable is not None:
            try:
                path = out_dir / crash.test
                outcome = run_test(executable, path, read_ktest(path), timeout=REPLAY_SECONDS,
                                   sandbox=sandbox)
                verdict = reproduces(crash.kind, outcome)
            except (SymexError, KTestError, OSError) as exc:
                note = f"not replayed: {exc}"
        replayed.append(attrs.evolve(crash, replayed=verdict, not_replayed=note))
    (out_dir / CRASHES_FILE).write_text(json.dumps([c.as_json() for c in replayed]))


def run_job(order: JobOrder) -> int:
    """Run ``order`` into its output directory; the exit status (see the module docstring)."""
    description = order.description
    try:
        program = compile(order.program, list(order.flags))
        entry = description.inputs.entry
        if entry not in program.functions or program.functions[entry].is_declaration:
            raise ConfigError(f"the program defines no function '{entry}' to start from: "
                              f"send the job's entry field naming the function to start "
                              f"from (entry=NAME)")
        check_continuation(program, description, extends_copy=True)
        # reports quote source files of the job's own directory only: the program's debug
        # information may name any file (#line 1 "/etc/shadow", a .ll file's DIFile)
        out = OutputDirectory.create(
            order.out_dir, program_args=[order.program, *description.inputs.argv.words()],
            emit_all_errors=description.output.emit_all_errors, write_coverage=False,
            source_root=Path.cwd())
    except SymexError as exc:
        sys.stderr.write(error_text("symex", exc))
        return 2
    except KeyboardInterrupt:
        return 130
    out.write_assembly(program.ir_text)
    writer = RunWriter(out, ("symex-job", order.program, order.out_dir),
                       stats_interval=min(2.0, description.progress_interval),
                       compiler=compiler_used(order.program, program.ir_text),
                       # paths relative to the upload; the server's own directories unnamed
                       sarif=Path(order.out_dir) / SARIF_FILE,
                       sarif_root=Path(order.program).parent, sarif_private=True)
    interrupt = DeferredInterrupt()
    interrupt.install()
    result: Result | None = None
    try:
        try:
            result = run_exploration(program, description, hooks=writer.hooks(interrupt))
        except SymexError as exc:
            writer.stats.close()
            out.discard()  # a run that failed before its first test leaves nothing behind
            sys.stderr.write(error_text("symex", exc))
            return 2
        except KeyboardInterrupt:
            writer.interrupted()  # a second SIGINT while the open paths were ending
            return 130
        finally:
            interrupt.uninstall()
        # the run is over: a SIGINT now (the scheduler stopping a job slow to write its
        # outputs) would leave the job without its info; it stops the replay that follows
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            writer.finish(result)
        finally:
            signal.signal(signal.SIGINT, previous)
        sys.stdout.write(f"symex: {result.paths.total} paths, {out.tests} tests in "
                         f"{order.out_dir}\n")
        return 130 if result.halted == "interrupted" else 0
    finally:
        writer.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the job whose order file is the one argument; the exit status of its run."""
    words = list(sys.argv[1:] if argv is None else argv)
    if len(words) != 1:
        sys.stderr.write("usage: python -m symex.service.job_process ORDER\n")
        return 2
    try:
        order = JobOrder.read(Path(words[0]))
    except (OSError, SymexError) as exc:
        sys.stderr.write(f"symex: error: cannot read the job's order {words[0]}: {exc}\n")
        return 2
    code = 130
    try:
        code = run_job(order)
        out_dir = Path(order.out_dir)
        if (out_dir / "info").is_file():
            replay_crashes(out_dir, Path(order.program), order.flags, order.replay,
                           order.description.inputs.entry)
    except KeyboardInterrupt:
        # a SIGINT on the way in or out of the run (what was written is whole), or while
        # replaying (the crashes stay without a verdict)
        pass
    return _deaf_to_interrupts(code)


def _deaf_to_interrupts(code: int) -> int:
    """``code``, once SIGINT is ignored: the job is over, and a scheduler asking again (one
    SIGINT every few milliseconds on a loaded machine) must not turn its exit into a
    traceback. A SIGINT while this sets it up is simply caught, and ignoring set up again."""
    while True:
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            return code
        except KeyboardInterrupt:
            continue


if __name__ == "__main__":
    sys.exit(main())
