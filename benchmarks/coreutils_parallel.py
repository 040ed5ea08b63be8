"""Cloud9's experiment on real tools: coreutils with 2 workers against 1, for the same wall
time.

    python benchmarks/coreutils_parallel.py --time 60
    python benchmarks/coreutils_parallel.py --time 30 --tools cat,echo

coreutils 9.1 is built as benchmarks/coreutils.py builds it (symex cc on musl) and each tool
runs with KLEE's coreutils options, once with ``--workers 1`` and once with ``--workers 2``
(the same coordinator and worker processes, one after the other, so both see the same
machine), for ``--time`` seconds each. Reported per tool: paths, paths per second and line
coverage of the tool's own source file for each, and the ratios (Cloud9's target here: at
least 1.8x the paths per second on 2 cores). Not a test: figures go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from coreutils import SOURCES, add_coreutils_options, built_source, line_hits  # noqa: E402
from coreutils_memo import TOOLS, _run  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_coreutils_options(parser, tools_default=",".join(TOOLS), seconds=60.0,
                          seconds_help="seconds of each run", results="parallel-results")
    options = parser.parse_args()
    source, results = built_source(options, "parallel-results")
    rows = []
    for tool in options.tools.split(",") if options.tools else TOOLS:
        own = f"src/{SOURCES.get(tool, tool)}.c"
        row: dict[str, object] = {"tool": tool}
        for workers in (1, 2):
            out = results / f"{tool}-{workers}"
            shutil.rmtree(out, ignore_errors=True)  # a run's directory must be new
            run = _run(source / "src" / tool, out, options.time, ("--workers", str(workers)))
            run["paths_per_second"] = round(int(run.get("paths", 0)) / options.time, 1)  # type: ignore[call-overload]
            hits = line_hits(out, own)
            run["lines"] = f"{sum(c > 0 for c in hits.values())}/{len(hits)}"
            row[f"workers_{workers}"] = run
        one, two = row["workers_1"], row["workers_2"]
        assert isinstance(one, dict) and isinstance(two, dict)
        if one.get("paths"):
            row["paths_ratio"] = round(int(two.get("paths", 0)) / int(one["paths"]), 2)
        rows.append(row)
        print(json.dumps(row), flush=True)
    (results / "summary.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
