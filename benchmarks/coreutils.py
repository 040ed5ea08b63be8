"""GNU coreutils 9.1 under symex, as in KLEE's OSDI'08 evaluation: build it whole with
`symex cc` on musl, run each tool for a fixed time with KLEE's arguments, and print a row
per tool: paths, errors, paths that ended on something unmodelled, and line coverage of the
tool's own source file (src/TOOL.c, from the run's coverage.info).

    python benchmarks/coreutils.py                         # every tool, 60 s each
    python benchmarks/coreutils.py --tools echo,wc --time 30
    python benchmarks/coreutils.py --source ~/coreutils-9.1 --jobs 2

The source comes from Debian (`apt-get source coreutils`, into --work), which needs a
deb-src line, e.g. in /etc/apt/sources.list.d/debian.sources add `deb-src` to `Types:`, or:

    echo 'deb-src http://deb.debian.org/debian bookworm main' > /etc/apt/sources.list.d/src.list
    apt-get update

It is configured with `SYMEX_LIBC=musl ./configure CC="symex cc" --disable-nls` (as root,
FORCE_UNSAFE_CONFIGURE=1) and built with make. Not a test: figures go to docs/benchmarks.md
with the command that made them.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

#: KLEE's arguments for coreutils (OSDI'08; MoKlee's guide uses the same)
KLEE_ARGUMENTS = ("--sym-args", "0", "1", "10", "--sym-args", "0", "2", "2", "--sym-files", "1", "8",
                  "--sym-stdin", "8", "--sym-stdout")

#: tools left out, as MoKlee's guide leaves them out: they change the system they run on
#: (natively, where their tests are replayed: permissions, owners, deletions, signals), run
#: another program, or are build helpers rather than utilities
LEFT_OUT = frozenset({
    "chcon", "chgrp", "chmod", "chown", "chroot", "kill", "rm", "rmdir", "shred", "truncate",
    "unlink", "runcon", "nice", "nohup", "stdbuf", "timeout", "sync", "stty",
    "make-prime-list", "getlimits",
})

#: tools built from a source file of another name
SOURCES = {"[": "test", "dir": "ls", "vdir": "ls", "ginstall": "install", "md5sum": "digest",
           "sha1sum": "digest", "sha224sum": "digest", "sha256sum": "digest", "sha384sum": "digest",
           "sha512sum": "digest", "b2sum": "digest", "base64": "basenc", "base32": "basenc"}

SYMEX = [sys.executable, "-m", "symex.cli"]


def fetch(work: Path) -> Path:
    """coreutils' source tree from `apt-get source` (once)."""
    existing = sorted(work.glob("coreutils-9.1*/configure"))
    if existing:
        return existing[0].parent
    work.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["apt-get", "source", "coreutils"], cwd=work, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"apt-get source coreutils failed: {proc.stderr.strip()}\n"
                 "add a deb-src line (see this script's docstring) and run apt-get update")
    return sorted(work.glob("coreutils-*/configure"))[0].parent


def build(source: Path, jobs: int) -> None:
    """Configure and make with symex cc on musl, unless src/echo is there already."""
    if (source / "src" / "echo").is_file():
        return
    env = {**os.environ, "SYMEX_LIBC": "musl", "FORCE_UNSAFE_CONFIGURE": "1"}
    cc = f"{sys.executable} -m symex.cli cc"
    started = time.monotonic()
    for command in (["./configure", f"CC={cc}", "--disable-nls"], ["make", f"-j{jobs}"]):
        print(f"coreutils: {' '.join(command)} ...", flush=True)
        run_or_exit(command, source, env)
    print(f"coreutils: built in {time.monotonic() - started:.0f} s", flush=True)


def tools(source: Path, only: list[str] | None) -> list[str]:
    """The tools built in src/ (executables naming their bitcode), less those left out."""
    names = sorted(path.name for path in (source / "src").iterdir()
                   if path.is_file() and os.access(path, os.X_OK) and not path.name.endswith(".so")
                   and _carries_bitcode(path))
    return choose(names, only, LEFT_OUT, "not built")


def choose(names: list[str], only: list[str] | None, left_out: frozenset[str], missing_is: str) -> list[str]:
    """``only`` (each must be among ``names``, else exit saying ``missing_is``), or ``names``
    less ``left_out``."""
    if only:
        missing = sorted(set(only) - set(names))
        if missing:
            sys.exit(f"{missing_is}: {', '.join(missing)}")
        return only
    return [name for name in names if name not in left_out]


def run_or_exit(command: list[str], source: Path, env: dict[str, str] | None = None) -> None:
    """Run a build step in ``source``; exit with its output's end if it fails."""
    proc = subprocess.run(command, cwd=source, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")


def _carries_bitcode(path: Path) -> bool:
    from symex.errors import LoadError
    from symex.ir.whole_program import bitcode_paths, is_native_build

    try:
        return is_native_build(path) and bool(bitcode_paths(path))
    except (LoadError, OSError):
        return False


def file_line_hits(out: Path, wanted: Callable[[str], bool]) -> dict[tuple[str, int], int]:
    """(source file, line) -> times run, for the files ``wanted`` accepts, in the run's lcov
    file (empty without one)."""
    hits: dict[tuple[str, int], int] = {}
    current = None
    info = out / "coverage.info"
    if not info.is_file():
        return hits
    for line in info.read_text().splitlines():
        if line.startswith("SF:"):
            current = line[3:] if wanted(line[3:]) else None
        elif line.startswith("DA:") and current is not None:
            number, count = line[3:].split(",")[:2]
            hits[current, int(number)] = int(count)
    return hits


def line_hits(out: Path, own: str) -> dict[int, int]:
    """Line -> times run, of a source file (a path ending in ``own``, e.g. src/wc.c) in the
    run's lcov file (empty without one)."""
    return {number: count for (_, number), count in file_line_hits(out, lambda path: path.endswith(own)).items()}


def own_coverage(out: Path, own: str) -> tuple[int, int]:
    """(covered, total) lines of the tool's own source file in the run's lcov file."""
    hits = line_hits(out, own)
    return sum(count > 0 for count in hits.values()), len(hits)


def symex_run(executable: Path, out: Path, seconds: float, arguments: tuple[str, ...],
              options: tuple[str, ...], grace: float) -> tuple[subprocess.CompletedProcess[str] | None, float]:
    """One ``symex run -q`` of ``executable`` for ``seconds`` into the new directory ``out``:
    the finished process and its wall seconds. None for the process when it did not stop
    within ``grace`` seconds: a run that does not stop near its time limit is an engine
    failure, reported, not waited on."""
    command = [*SYMEX, "run", "-q", "--max-time", f"{seconds:g}", "--output-dir", str(out), *options,
               str(executable), *arguments]
    started = time.monotonic()
    try:
        proc = subprocess.run(command, capture_output=True, text=True, errors="replace", timeout=grace)
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - started
    return proc, time.monotonic() - started


def run_tool(executable: Path, own: str, results: Path, seconds: float,
             arguments: tuple[str, ...] = KLEE_ARGUMENTS, asan: Path | None = None,
             name: str | None = None, options: tuple[str, ...] = ()) -> dict[str, object]:
    """One tool's run (``own``: its source file, for coverage of its own code; ``options``:
    more of symex's own, e.g. the search): its row.
    Reported errors are replayed on the build itself and, given ``asan``, on a build of the
    same tool with gcc's AddressSanitizer (zig's builds have none, so an overflow that does
    not crash natively only shows there)."""
    tool = name or executable.name
    out = results / tool
    grace = seconds * 2 + 60
    proc, elapsed = symex_run(executable, out, seconds, arguments, options, grace)
    if proc is None:
        return {"tool": tool, "status": None, "seconds": round(elapsed, 1),
                "failure": f"did not stop within {grace:g} s of a {seconds:g} s limit"}
    row: dict[str, object] = {"tool": tool, "status": proc.returncode, "seconds": round(elapsed, 1)}
    summary = re.search(r"explored (\d+) paths?: (\d+) completed, (\d+) errors?, (\d+) partial", proc.stdout)
    if summary is None:
        row["failure"] = (proc.stderr.strip().splitlines() or ["no summary"])[-1]
        return row
    row.update(paths=int(summary[1]), completed=int(summary[2]), errors=int(summary[3]), partial=int(summary[4]))
    reasons = partial_reasons(out)
    unsupported = {reason: count for reason, count in reasons.items() if reason.startswith("unsupported")}
    row["unmodelled"] = sum(unsupported.values())
    row["unmodelled_reasons"] = dict(list(unsupported.items())[:3])
    row["partial_reasons"] = reasons
    covered, total = own_coverage(out, own)
    row["own_lines"] = f"{covered}/{total}"
    row["own_coverage"] = round(100 * covered / total, 1) if total else None
    if row["errors"]:
        # every reported error must fail the same way natively (symex replay runs the build)
        replay = subprocess.run([*SYMEX, "replay", str(executable), str(out)],
                                capture_output=True, text=True, errors="replace", timeout=3600)
        row["reproduced"] = _reproduced(replay.stdout)
        if asan is not None and asan.is_file():
            replay = subprocess.run([*SYMEX, "replay", str(asan), str(out)],
                                    capture_output=True, text=True, errors="replace", timeout=3600)
            row["reproduced_asan"] = _reproduced(replay.stdout)
    return row


def partial_reasons(out: Path) -> dict[str, int]:
    """Why the run's paths ended partial, by reason (without its place in the program), the
    most frequent first."""
    reasons: dict[str, int] = {}
    index = out / "tests.csv"
    if index.is_file():
        with open(index, newline="") as handle:
            for entry in csv.DictReader(handle):
                if entry["status"] == "partial":
                    key = entry["reason"].split(" (")[0]
                    reasons[key] = reasons.get(key, 0) + 1
    return dict(sorted(reasons.items(), key=lambda kv: -kv[1]))


def _reproduced(replay_output: str) -> str:
    found = re.search(r"(\d+) of (\d+) errors? reproduced", replay_output)
    return f"{found[1]}/{found[2]}" if found else replay_output.strip()[-200:]


def add_coreutils_options(parser: argparse.ArgumentParser, *, tools_default: str,
                          seconds: float, seconds_help: str, results: str) -> None:
    """The options every coreutils script takes: --work, --source, --tools, --time and
    --results (default WORK/``results``)."""
    parser.add_argument("--work", type=Path, default=Path.home() / ".cache" / "symex" / "bench" / "coreutils")
    parser.add_argument("--source", type=Path, help="a coreutils 9.1 tree (default: apt-get source into --work)")
    parser.add_argument("--tools", help=f"comma-separated tools (default: {tools_default})")
    parser.add_argument("--time", type=float, default=seconds, help=f"{seconds_help} ({seconds:g})")
    parser.add_argument("--results", type=Path, help=f"where the runs go (default: WORK/{results})")


def built_source(options: argparse.Namespace, results: str) -> tuple[Path, Path]:
    """The coreutils tree of ``--source`` (else fetched into ``--work``), built, and the
    results directory, made."""
    source = options.source or fetch(options.work)
    build(source, os.cpu_count() or 2)
    where = options.results or options.work / results
    where.mkdir(parents=True, exist_ok=True)
    return source, where


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_coreutils_options(parser, tools_default="all but the destructive ones", seconds=60.0,
                          seconds_help="seconds per tool", results="results")
    parser.add_argument("--jobs", type=int, default=1, help="tools run at once (each is one process)")
    options = parser.parse_args()
    source, results = built_source(options, "results")
    chosen = tools(source, options.tools.split(",") if options.tools else None)
    print(f"coreutils: {len(chosen)} tools, {options.time:g} s each", flush=True)
    rows = run_all([(source / "src" / tool, f"src/{SOURCES.get(tool, tool)}.c", None) for tool in chosen],
                   results, options.time, options.jobs)
    summarize("coreutils", rows, results)
    return 0


def run_all(programs: list[tuple[Path, str, Path | None]], results: Path, seconds: float, jobs: int,
            arguments: tuple[str, ...] = KLEE_ARGUMENTS) -> list[dict[str, object]]:
    """Run each (executable, own source, ASan build or None) for ``seconds``, ``jobs`` at
    once; print each row."""
    rows = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for row in pool.map(lambda p: run_tool(p[0], p[1], results, seconds, arguments, p[2]), programs):
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def summarize(name: str, rows: list[dict[str, object]], results: Path) -> None:
    """Print the totals and write the rows to RESULTS/summary.json."""
    ran = [r for r in rows if "paths" in r]
    paths = sum(int(r["paths"]) for r in ran)  # type: ignore[call-overload]
    unmodelled = sum(int(r["unmodelled"]) for r in ran)  # type: ignore[call-overload]
    coverages = sorted(float(r["own_coverage"]) for r in ran if r.get("own_coverage") is not None)  # type: ignore[arg-type]
    median = coverages[len(coverages) // 2] if coverages else 0.0
    errors = sum(int(r["errors"]) for r in ran)  # type: ignore[call-overload]
    print(f"{name}: {len(ran)} of {len(rows)} tools ran to their end; {paths} paths, {errors} errors, "
          f"{unmodelled} ({100 * unmodelled / max(paths, 1):.2f}%) ended on something unmodelled; "
          f"median own-code line coverage {median:.1f}%")
    (results / "summary.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    sys.exit(main())
