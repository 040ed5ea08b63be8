"""A job's process: ``symex run``, then the native replay of the crashes it found.

``python -m symex.service.job_process [--native-flag FLAG]... --program P -- RUN_ARGS...`` runs
``symex run RUN_ARGS`` and, in the same process (whose Python start-up is already paid),
builds the program natively and replays each crash in a sandbox (time, memory, file size,
no network), writing ``crashes.json`` into the run's output directory. Doing it here keeps
the server's own process free of fork-and-exec with ``preexec_fn`` (unsafe beside threads),
and spares a second interpreter per job.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from collections.abc import Sequence

import attrs

from symex.errors import SymexError
from symex.output.ktest import KTestError, read_ktest
from symex.replay import NativeSandbox, build_native, reproduces, run_test
from symex.service.jobs import crashes

__all__ = ["CRASHES_FILE", "REPLAY_FILE_MB", "REPLAY_MEMORY_MB", "REPLAY_SECONDS", "main",
           "replay_crashes"]

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
    sandbox = NativeSandbox(REPLAY_MEMORY_MB, REPLAY_FILE_MB, no_network=True)
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the job; the exit status of its ``symex run``."""
    parser = argparse.ArgumentParser(prog="symex-job")
    parser.add_argument("--native-flag", action="append", default=[])
    parser.add_argument("--program", required=True,
                        help="the program to build natively (its own arguments may follow it)")
    parser.add_argument("run", nargs=argparse.REMAINDER)
    options = parser.parse_args(argv)
    run_args = options.run[1:] if options.run[:1] == ["--"] else options.run
    from symex.cli import main as symex_main
    try:
        code = symex_main(["run", *run_args])
    except SystemExit as exc:
        code = int(exc.code or 0) if not isinstance(exc.code, str) else 2
    out_dir = Path(run_args[run_args.index("--output-dir") + 1])
    if (out_dir / "info").is_file():
        try:
            replay_crashes(out_dir, Path(options.program), options.native_flag)
        except KeyboardInterrupt:
            pass  # cancelled while replaying: the crashes stay without a verdict
    return code


if __name__ == "__main__":
    sys.exit(main())
