"""Turn the CSV files of ``replay.py --csv`` into the Markdown tables of docs/solver.md.

    python benchmarks/queries/summarize.py GROUP.csv [--base CONFIG]

One table per CSV: a row per configuration, a column per corpus. A cell is the
configuration's total time on the queries every configuration replayed (the first N of the
corpus), divided by the base configuration's (the first in the CSV unless ``--base``). Also
printed: a row for the virtual best of the single configurations, then for each real
portfolio (or choice) the share of the virtual best's speed-up over the fastest single
configuration, and its PAR-2 score (seconds, a time-out counted twice the cut-off) against
the virtual best's and the best single configuration's, per corpus and over all of them.
"""

from __future__ import annotations

import argparse
import csv
from collections import defaultdict
from pathlib import Path

SHORT = {
    "regexp.smt2.tar.xz": "regexp", "maze.smt2.tar.xz": "maze",
    "expr_parser.smt2.tar.xz": "expr_parser", "rle_adler.smt2.tar.xz": "rle_adler",
    "histogram.smt2.tar.xz": "histogram", "klee-querylogs": "KLEE logs",
    "exe-bench_ab": "EXE bench_ab", "pcresymperf-3.kquery": "PCRE kquery",
}


def main() -> None:
    """Print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", type=Path)
    parser.add_argument("--base", help="the configuration the others are divided by")
    parser.add_argument("--cutoff", type=float, default=10.0,
                        help="the replay's cut-off in seconds (PAR-2 charges a time-out twice it)")
    args = parser.parse_args()
    seconds: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    configs: list[str] = []
    corpora: list[str] = []
    with args.csv.open(newline="") as handle:
        for row in csv.DictReader(handle):
            if row["config"] not in configs:
                configs.append(row["config"])
            if row["corpus"] not in corpora:
                corpora.append(row["corpus"])
            charged = 2 * args.cutoff if row["status"] == "timeout" else float(row["seconds"])
            seconds[row["corpus"]][row["config"]].append(charged)
    base = args.base or configs[0]
    single = [c for c in configs if not c.startswith(("portfolio", "choose"))]
    header = ["configuration"] + [SHORT.get(c, c) for c in corpora]
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    common = {corpus: min(len(seconds[corpus][c]) for c in configs) for corpus in corpora}
    totals = {corpus: {c: sum(seconds[corpus][c][:common[corpus]]) for c in configs}
              for corpus in corpora}
    best_single = {corpus: min(totals[corpus][c] for c in single) for corpus in corpora}
    virtual = {corpus: sum(min(seconds[corpus][c][i] for c in single)
                           for i in range(common[corpus])) for corpus in corpora}
    for config in configs:
        cells = []
        for corpus in corpora:
            ratio = totals[corpus][config] / totals[corpus][base]
            text = f"{ratio:.2f}x"
            if config in single and totals[corpus][config] == best_single[corpus]:
                text = f"**{text}**"
            cells.append(text)
        print(f"| {config} | " + " | ".join(cells) + " |")
    print("| virtual best of the single configurations | " + " | ".join(
        f"{virtual[c] / totals[c][base]:.2f}x" for c in corpora) + " |")
    print("| queries compared | " + " | ".join(f"{common[c]:,}" for c in corpora) + " |")
    print("| base total | " + " | ".join(f"{totals[c][base]:.2f} s" for c in corpora) + " |")
    for config in configs:
        if config in single:
            continue
        print()
        print(f"`{config}`, speed-up over the fastest single configuration (real / virtual "
              "best = share):")
        print()
        print("| corpus | real | virtual best | share |")
        print("| --- | --- | --- | --- |")
        for corpus in corpora:
            real = best_single[corpus] / totals[corpus][config]
            bound = best_single[corpus] / virtual[corpus]
            print(f"| {SHORT.get(corpus, corpus)} | {real:.2f}x | {bound:.2f}x | "
                  f"{real / bound:.0%} |")
        print()
        print(f"`{config}`, PAR-2 (seconds) against the virtual best and the best single "
              "configuration:")
        print()
        print("| corpus | best single | virtual best | this | this / virtual best | "
              "this / best single |")
        print("| --- | --- | --- | --- | --- | --- |")
        sums = [0.0, 0.0, 0.0]
        for corpus in corpora:
            row = (best_single[corpus], virtual[corpus], totals[corpus][config])
            sums = [a + b for a, b in zip(sums, row)]
            print(f"| {SHORT.get(corpus, corpus)} | {row[0]:.2f} | {row[1]:.2f} | {row[2]:.2f} | "
                  f"{row[2] / row[1]:.2f}x | {row[2] / row[0]:.2f}x |")
        print(f"| all corpora | {sums[0]:.2f} | {sums[1]:.2f} | {sums[2]:.2f} | "
              f"{sums[2] / sums[1]:.2f}x | {sums[2] / sums[0]:.2f}x |")


if __name__ == "__main__":
    main()
