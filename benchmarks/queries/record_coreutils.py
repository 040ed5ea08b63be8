"""Record the queries GNU coreutils tools ask, run as the KLEE comparison runs them, for
``replay.py``: real programs' queries, held apart from the committed corpora.

    python benchmarks/queries/record_coreutils.py --source coreutils-9.1 --out /tmp/cuq \\
        --tools ptx,stat,expr,md5sum,tr,date,printf,seq,od,sort,join,cut --time 30
    python benchmarks/queries/replay.py /tmp/cuq/queries/ptx /tmp/cuq/queries/stat ... \\
        --limit 1000 --budget 60 --cutoff 10 --config z3 --config bitwuzla --csv OUT.csv
    python benchmarks/queries/summarize.py OUT.csv

Each tool runs for --time seconds with the comparison's search, query limit and symbolic
arguments (``coreutils_vs_klee.SYMEX_OPTIONS`` and ``coreutils.KLEE_ARGUMENTS``) and
``--write-queries``: the log holds the queries that reached the core solver, after the
default chain (independence, the caches), which is where a run spends its solver time.
--source is coreutils 9.1 built by benchmarks/coreutils.py. The recordings are a few MB to a
few hundred MB per tool (ptx's and expr's queries hold the regex and number buffers): they
stay under --out, never in the repository. Not a test: figures go to docs/solver.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from coreutils import KLEE_ARGUMENTS, SOURCES, run_tool, tools  # noqa: E402
from coreutils_vs_klee import SYMEX_OPTIONS  # noqa: E402


def main() -> int:
    """Record each tool's queries under ``--out/queries/TOOL``; print one line per tool."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, required=True,
                        help="coreutils 9.1 as benchmarks/coreutils.py builds it")
    parser.add_argument("--out", type=Path, required=True, help="a new or empty directory")
    parser.add_argument("--tools", help="comma-separated tools (default: every tool built)")
    parser.add_argument("--time", type=float, default=30.0, help="seconds per tool (default 30)")
    args = parser.parse_args()
    names = tools(args.source, args.tools.split(",") if args.tools else None)
    for tool in names:
        queries = args.out / "queries" / tool
        if queries.exists():
            print(f"{tool}: {queries} exists; remove it to record again", file=sys.stderr)
            return 2
        row = run_tool(args.source / "src" / tool, f"src/{SOURCES.get(tool, tool)}.c",
                       args.out / "runs", args.time, KLEE_ARGUMENTS, None, tool,
                       (*SYMEX_OPTIONS, "--write-queries", str(queries)))
        recorded = len(list(queries.glob("query-*.smt2")))
        print(f"{tool}: {recorded} queries, {row.get('paths', '?')} paths, "
              f"own lines {row.get('own_lines', '?')}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
