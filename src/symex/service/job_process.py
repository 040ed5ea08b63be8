"""A job's process: the run its :class:`~symex.service.jobs.JobOrder` describes, then the
native replay of the crashes it found.

``python -m symex.service.job_process ORDER`` compiles the order's program, runs its frozen
run description through the library (:func:`symex.run_exploration`) into its output
directory, written as ``symex run`` writes one (:class:`~symex.output.run_writer.RunWriter`;
a SIGINT from the scheduler stops the run with every file whole), and, in the same process
(whose Python start-up is already paid), builds the program natively and replays each crash
in a sandbox (time, memory, file size, no network), writing ``crashes.json`` into the output
directory. Doing it here keeps the server's own process free of fork-and-exec with
``preexec_fn`` (unsafe beside threads), and spares a second interpreter per job. Exit status:
0, 2 for an error (said on stderr, which the scheduler keeps in the job's log), 130 when
interrupted before the run had a result.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import attrs

from symex.engine import check_continuation, run_exploration
from symex.errors import SymexError, error_text
from symex.loading import compile
from symex.output.directory import OutputDirectory
from symex.output.ktest import KTestError, read_ktest
from symex.output.run_writer import DeferredInterrupt, RunWriter
from symex.replay import NativeSandbox, build_native, reproduces, run_test
from symex.results import Result
from symex.service.jobs import JobOrder, crashes

__all__ = ["CRASHES_FILE", "REPLAY_FILE_MB", "REPLAY_MEMORY_MB", "REPLAY_SECONDS", "main",
           "replay_crashes", "run_job"]

#: where the run's crashes, with their native replay, are written (in the output directory)
CRASHES_FILE = "crashes.json"
#: limits of one native replay of a crash: seconds, resident memory, largest file written
REPLAY_SECONDS = 10.0
REPLAY_MEMORY_MB = 1024
REPLAY_FILE_MB = 64


def replay_crashes(out_dir: Path, program: Path, flags: Sequence[str]) -> None:
    """Write ``out_dir/crashes.json``: the run's crashes, each with whether the native build
    of ``program`` failed the same way on its input (None where it could not be built or
    run, or the sandbox could not be made)."""
    found = crashes(out_dir)
    executable = None
    if found and program.suffix == ".c":
        try:
            executable = build_native(program, list(flags))
        except SymexError:
            executable = None
    sandbox = NativeSandbox(REPLAY_MEMORY_MB, REPLAY_FILE_MB)
    replayed = []
    for crash in found:
        verdict = None
        if executable is not None:
            try:
                path = out_dir / crash.test
                outcome = run_test(executable, path, read_ktest(path), timeout=REPLAY_SECONDS,
                                   sandbox=sandbox)
                verdict = reproduces(crash.kind, outcome)
            except (SymexError, KTestError, OSError):
                verdict = None
        replayed.append(attrs.evolve(crash, replayed=verdict))
    (out_dir / CRASHES_FILE).write_text(json.dumps([c.as_json() for c in replayed]))


def run_job(order: JobOrder) -> int:
    """Run ``order`` into its output directory; the exit status (see the module docstring)."""
    description = order.description
    try:
        program = compile(order.program, list(order.flags))
        check_continuation(program, description, extends_copy=True)
        out = OutputDirectory.create(
            order.out_dir, program_args=[order.program, *description.inputs.argv.words()],
            emit_all_errors=description.output.emit_all_errors, write_coverage=False)
    except SymexError as exc:
        sys.stderr.write(error_text("symex", exc))
        return 2
    except KeyboardInterrupt:
        return 130
    out.write_assembly(program.ir_text)
    writer = RunWriter(out, ("symex-job", order.program, order.out_dir),
                       stats_interval=min(2.0, description.progress_interval))
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
        writer.finish(result)
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
    code = run_job(order)
    out_dir = Path(order.out_dir)
    if (out_dir / "info").is_file():
        try:
            replay_crashes(out_dir, Path(order.program), order.flags)
        except KeyboardInterrupt:
            pass  # cancelled while replaying: the crashes stay without a verdict
    return code


if __name__ == "__main__":
    sys.exit(main())
