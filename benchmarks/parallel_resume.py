"""What a killed parallel run and its resumption cost, beside one uninterrupted run, all in
this run (issue: a resume re-ran unfinished jobs whole).

    python benchmarks/parallel_resume.py                 # regexp -DSIZE=8, 2 workers, kill at 2 s
    python benchmarks/parallel_resume.py --kill-at 3 --size 7 --repeat 2

1. One uninterrupted run: ``symex run --workers N`` to the end; its instructions (``info``).
2. The same run, SIGKILLed (the whole process group) as soon as its run.stats row at
   ``--kill-at`` seconds or later is written, so that row holds what it executed up to
   the kill (within a poll of 10 ms).
3. ``symex run --workers N --continue-with`` the killed directory, to the end.

Printed: the instructions of each, (killed + resumed) / uninterrupted (target: at most 1.2),
and whether the paths add up (the killed run's journal's and the resumed run's must be the
uninterrupted run's), with the
workers' checkpoints on, then off (``SYMEX_CHECKPOINT_SECONDS=inf``: unfinished jobs run
again whole, as before checkpoints) as the baseline. Run on an otherwise idle machine; each
figure is the median of ``--repeat`` rounds.
"""

from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REGEXP = ROOT / "tests" / "programs" / "regexp.c"


def _environment(checkpoints: bool) -> dict[str, str]:
    """The environment of a run with workers' checkpoints on (the default) or off."""
    env = dict(os.environ)
    if not checkpoints:
        env["SYMEX_CHECKPOINT_SECONDS"] = "inf"
    return env


def _run(args: list[str], cwd: Path, checkpoints: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "symex.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=3600, check=False,
                          env=_environment(checkpoints))


def _info(directory: Path) -> dict[str, str]:
    fields = {}
    for line in (directory / "info").read_text().splitlines():
        if line.startswith("symex: done: ") and " = " in line:
            key, value = line[len("symex: done: "):].split(" = ", 1)
            fields[key] = value
    return fields


def _last_row(stats: Path) -> tuple[float, int, int]:
    """(WallTime, Instructions, Tests) of a run.stats file's last row."""
    with sqlite3.connect(f"file:{stats}?mode=ro", uri=True) as db:
        row = db.execute("SELECT WallTime, Instructions, Tests FROM stats "
                         "ORDER BY Row DESC LIMIT 1").fetchone()
    return (row[0], int(row[1]), int(row[2])) if row else (0.0, 0, 0)


def _killed(args: list[str], cwd: Path, out: Path, kill_at: float,
            checkpoints: bool) -> tuple[float, int]:
    """Start a run of regexp.c with ``args`` into ``out``; SIGKILL it once a run.stats row at ``kill_at`` s is in.
    (its WallTime, Instructions) at the kill."""
    process = subprocess.Popen([sys.executable, "-m", "symex.cli", *args, "--output-dir",
                                str(out), str(REGEXP)], cwd=cwd, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True,
                               env=_environment(checkpoints))
    try:
        while process.poll() is None:
            stats = out / "run.stats"
            if stats.is_file():
                try:
                    wall, instructions, _ = _last_row(stats)
                except sqlite3.Error:
                    wall, instructions = 0.0, 0
                if wall >= kill_at:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
                    return wall, instructions
            time.sleep(0.01)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    raise SystemExit(f"the run ended before {kill_at} s: kill earlier (--kill-at)")


def one_round(work: Path, size: int, workers: int, kill_at: float,
              checkpoints: bool) -> dict[str, float]:
    options = ["-q", "--workers", str(workers), f"-DSIZE={size}"]
    started = time.monotonic()
    done = _run(["run", *options, "--output-dir", str(work / "whole"), str(REGEXP)], work)
    whole_seconds = time.monotonic() - started
    if done.returncode:
        raise SystemExit(done.stderr)
    whole = _info(work / "whole")
    killed_wall, killed_instructions = _killed(["run", *options], work, work / "killed",
                                               kill_at, checkpoints)
    killed_tests = len(list((work / "killed").glob("*.ktest")))
    started = time.monotonic()
    resumed_run = _run(["run", *options, "--continue-with", str(work / "killed"),
                        "--output-dir", str(work / "resumed"), str(REGEXP)], work,
                       checkpoints)
    resumed_seconds = time.monotonic() - started
    if resumed_run.returncode:
        raise SystemExit(resumed_run.stderr)
    resumed = _info(work / "resumed")
    said = (work / "resumed" / "messages.txt").read_text()
    journaled = int(said.split("open job(s), ")[1].split(" path(s)")[0])
    return {
        "whole_instructions": int(whole["total instructions"]),
        "whole_paths": int(whole["explored paths"]),
        "whole_seconds": whole_seconds,
        "killed_at": killed_wall,
        "killed_instructions": killed_instructions,
        "killed_tests": killed_tests,
        "journaled_paths": journaled,
        "resumed_instructions": int(resumed["total instructions"]),
        "resumed_paths": int(resumed["explored paths"]),
        "resumed_seconds": resumed_seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=8, help="regexp.c's pattern size (-DSIZE)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--kill-at", type=float, default=2.0, metavar="SECONDS",
                        help="kill at the first run.stats row at or after this (one every 2 s)")
    parser.add_argument("--repeat", type=int, default=1)
    options = parser.parse_args()
    for checkpoints in (True, False):
        rounds = []
        for _ in range(options.repeat):
            with tempfile.TemporaryDirectory(prefix="symex-resume-") as scratch:
                rounds.append(one_round(Path(scratch), options.size, options.workers,
                                        options.kill_at, checkpoints))
        report(rounds, options, checkpoints)


def report(rounds: list[dict[str, float]], options: argparse.Namespace,
           checkpoints: bool) -> None:
    """Print the medians of ``rounds``."""
    f = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
    ratio = (f["killed_instructions"] + f["resumed_instructions"]) / f["whole_instructions"]
    exact = all(r["journaled_paths"] + r["resumed_paths"] == r["whole_paths"] for r in rounds)
    print(f"regexp.c -DSIZE={options.size}, {options.workers} workers, checkpoints "
          f"{'on' if checkpoints else 'off (SYMEX_CHECKPOINT_SECONDS=inf)'}, killed at "
          f"{f['killed_at']:.1f} s (median of {options.repeat}):")
    print(f"  uninterrupted: {f['whole_instructions']:,.0f} instructions, "
          f"{f['whole_paths']:,.0f} paths, {f['whole_seconds']:.1f} s")
    print(f"  killed:        {f['killed_instructions']:,.0f} instructions, "
          f"{f['killed_tests']:,.0f} tests written")
    print(f"  resumed:       {f['resumed_instructions']:,.0f} instructions, "
          f"{f['resumed_paths']:,.0f} paths, {f['resumed_seconds']:.1f} s")
    print(f"  (killed + resumed) / uninterrupted instructions: {ratio:.2f} (target <= 1.2)")
    print(f"  paths the journal had + resumed paths = uninterrupted paths in every round: "
          f"{exact} (tests written after the journal's last commit are written again)")


if __name__ == "__main__":
    main()
