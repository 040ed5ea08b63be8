"""MoKlee's experiment on real tools: record coreutils runs, replay them in a new process,
resume them, and compare with one run of twice the time.

    python benchmarks/coreutils_memo.py --time 600            # MoKlee's 10-minute runs
    python benchmarks/coreutils_memo.py --time 30 --jobs 2    # the run in docs/benchmarks.md

coreutils 9.1 is built as benchmarks/coreutils.py builds it (symex cc on musl) and each tool
runs with KLEE's coreutils options (benchmarks/coreutils.py's KLEE_ARGUMENTS). For each tool,
four ``symex run`` processes:

1. **record**: ``--record-tree`` for ``--time`` seconds;
2. **replay**: ``--continue-with RECORD --restart-all-states --stop-after-replay`` in a new
   process: every recorded path again, without the solver. Reported: replay time against
   recording time (MoKlee: grep 61.4 s recorded, 3.4 s replayed, 18x), divergences (target
   0) and the tree's bytes per node;
3. **resume**: ``--record-tree --continue-with RECORD`` for ``--time`` seconds more;
4. **long**: one run of twice ``--time``.

Coverage is of the tool's own source file (lcov); record + resume counts a line covered by
either run. Not a test: figures go to docs/benchmarks.md with the command.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from coreutils import (KLEE_ARGUMENTS, SOURCES, add_coreutils_options, built_source,  # noqa: E402
                       line_hits, symex_run)

#: ten tools of different kinds (filters, formatters, generators), as MoKlee took ten
TOOLS = ("cat", "cut", "echo", "fold", "head", "nl", "od", "paste", "seq", "wc")

_TREE = re.compile(r"execution tree: (\d+) instructions replayed, (\d+) new, (\d+) queries saved, "
                   r"(\d+) states pruned, (\d+) diverged .*?; (\d+) nodes, (\d+) bytes")
_PATHS = re.compile(r"explored (\d+) paths?")


def _run(executable: Path, out: Path, seconds: float, options: tuple[str, ...]) -> dict[str, object]:
    """One ``symex run``: wall seconds, paths, and its execution-tree line's figures."""
    grace = seconds * 3 + 120
    proc, elapsed = symex_run(executable, out, seconds, KLEE_ARGUMENTS, options, grace)
    row: dict[str, object] = {"seconds": round(elapsed, 1)}
    if proc is None:
        row["failure"] = f"did not stop within {grace:g} s of a {seconds:g} s limit"
        return row
    paths = _PATHS.search(proc.stdout)
    if paths is None:
        row["failure"] = (proc.stderr.strip().splitlines() or ["no summary"])[-1]
        return row
    row["paths"] = int(paths[1])
    tree = _TREE.search(proc.stdout)
    if tree is not None:
        names = ("replayed", "new", "queries_saved", "pruned", "diverged", "nodes", "bytes")
        row.update(zip(names, map(int, tree.groups())))
    return row


def _covered(own: str, *outs: Path) -> set[int]:
    return {n for out in outs for n, count in line_hits(out, own).items() if count > 0}


def memo_rows(executable: Path, own: str, results: Path, seconds: float) -> dict[str, object]:
    """The four runs of one tool and its row."""
    tool = executable.name
    where = {k: results / f"{tool}-{k}" for k in ("record", "replay", "resume", "long")}
    for out in where.values():
        shutil.rmtree(out, ignore_errors=True)  # a run's directory must be new
    record = _run(executable, where["record"], seconds, ("--record-tree",))
    replay = _run(executable, where["replay"], seconds * 20,
                  ("--continue-with", str(where["record"]), "--restart-all-states", "--stop-after-replay"))
    resume = _run(executable, where["resume"], seconds,
                  ("--record-tree", "--continue-with", str(where["record"])))
    long = _run(executable, where["long"], 2 * seconds, ())
    total = len(line_hits(where["record"], own))
    row: dict[str, object] = {"tool": tool, "record": record, "replay": replay, "resume": resume, "long": long}
    if isinstance(record.get("seconds"), float) and isinstance(replay.get("seconds"), float) and replay["seconds"]:
        row["replay_speedup"] = round(float(record["seconds"]) / float(replay["seconds"]), 1)  # type: ignore[arg-type]
    if record.get("nodes"):
        row["bytes_per_node"] = round(int(record["bytes"]) / int(record["nodes"]), 1)  # type: ignore[call-overload]
    row["lines"] = total
    row["record_lines"] = len(_covered(own, where["record"]))
    row["record_resume_lines"] = len(_covered(own, where["record"], where["resume"]))
    row["long_lines"] = len(_covered(own, where["long"]))
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_coreutils_options(parser, tools_default=",".join(TOOLS), seconds=600.0,
                          seconds_help="seconds of each recording", results="memo-results")
    parser.add_argument("--jobs", type=int, default=1, help="tools run at once")
    options = parser.parse_args()
    source, results = built_source(options, "memo-results")
    chosen = options.tools.split(",") if options.tools else list(TOOLS)
    rows = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=options.jobs) as pool:
        runs = [(source / "src" / tool, f"src/{SOURCES.get(tool, tool)}.c") for tool in chosen]
        for row in pool.map(lambda r: memo_rows(r[0], r[1], results, options.time), runs):
            rows.append(row)
            print(json.dumps(row), flush=True)
    (results / "summary.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
