"""Can a query's shape say which backend answers it faster? Fit one-threshold routing rules
to replay times and test them on corpora the fit did not see.

    python benchmarks/queries/route_rules.py OUT.csv CORPUS... [--first z3] [--second bitwuzla]

OUT.csv is ``replay.py --csv`` over the CORPUS arguments with (at least) the two
configurations. Each query gets counts read off its assertions (nodes by operation, reads
and writes at symbolic offsets, assertions, array sizes, divisions by constants, products
of two variables); a rule is "FEATURE <= T: one configuration, else the other". Printed:
per corpus, the two configurations' totals, the virtual best's (per query, the faster), and
a rule's total when it was fitted on every *other* corpus (leave-one-out), the rule named;
then the sum. A time-out is charged twice the cut-off (PAR-2). Ties and the first corpora
are read in the order given, so the output repeats. Not a test: figures go to docs/solver.md.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from replay import read_corpus  # noqa: E402

from symex.expr import Expr, Op, UpdateNode  # noqa: E402
from symex.expr.walk import postorder  # noqa: E402

DIVISIONS = (Op.UDIV, Op.SDIV, Op.UREM, Op.SREM)
#: thresholds tried per feature: at most this many of its distinct values (spread evenly)
THRESHOLDS = 60


def shape(assertions: tuple[Expr, ...]) -> Counter[str]:
    """What a rule may read off a query: counts of its nodes and their kinds."""
    order = postorder(assertions)
    counts: Counter[str] = Counter(nodes=len(order), assertions=len(assertions))
    writes: set[UpdateNode] = set()
    arrays = set()
    for e in order:
        counts[e.op.name] += 1
        if e.op is Op.READ:
            assert e.updates is not None
            arrays.add(e.updates.array)
            counts["read_at_symbolic"] += e.args[0].op is not Op.CONST
            node = e.updates.head
            while node is not None and node not in writes:
                writes.add(node)
                counts["writes"] += 1
                counts["write_at_symbolic"] += node.index.op is not Op.CONST
                node = node.next
        elif e.op is Op.MUL and all(a.op is not Op.CONST for a in e.args):
            counts["product_of_variables"] += 1
        elif e.op in DIVISIONS:
            counts["division_by_constant" if e.args[1].op is Op.CONST else "division_by_variable"] += 1
    counts["arrays"] = len(arrays)
    counts["largest_array"] = max((a.size for a in arrays), default=0)
    return counts


Row = tuple[str, Counter[str], dict[str, float]]


def fit(rows: list[Row], features: list[str], pair: tuple[str, str]) -> tuple[str, int, str, str]:
    """The rule with the least total time on ``rows``: (feature, threshold, at or below, above)."""
    best: tuple[float, tuple[str, int, str, str]] | None = None
    for feature in features:
        values = sorted({shape[feature] for _, shape, _ in rows})
        if len(values) > THRESHOLDS:
            values = [values[i * (len(values) - 1) // (THRESHOLDS - 1)] for i in range(THRESHOLDS)]
        for threshold in values:
            for low, high in (pair, pair[::-1]):
                total = sum(t[low if s[feature] <= threshold else high] for _, s, t in rows)
                if best is None or total < best[0]:
                    best = (total, (feature, threshold, low, high))
    assert best is not None
    return best[1]


def main() -> int:
    """Print the leave-one-out table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", type=Path)
    parser.add_argument("corpora", nargs="+", type=Path)
    parser.add_argument("--first", default="z3")
    parser.add_argument("--second", default="bitwuzla")
    parser.add_argument("--cutoff", type=float, default=10.0)
    args = parser.parse_args()
    pair = (args.first, args.second)
    times: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    with args.csv.open(newline="") as handle:
        for line in csv.DictReader(handle):
            charged = 2 * args.cutoff if line["status"] == "timeout" else float(line["seconds"])
            times[(line["corpus"], line["query"])][line["config"]] = charged
    rows: dict[str, list[Row]] = {}
    for corpus in args.corpora:
        rows[corpus.name] = [(corpus.name, shape(q.assertions), times[(corpus.name, q.name)])
                             for q in read_corpus(corpus)
                             if all(c in times[(corpus.name, q.name)] for c in pair)]
    features = sorted({f for corpus_rows in rows.values() for _, s, _ in corpus_rows for f in s})
    print(f"| corpus | queries | {pair[0]} | {pair[1]} | virtual best | rule fitted on the others | its total |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    sums = Counter[str]()
    for name, held_out in rows.items():
        others = [r for other, corpus_rows in rows.items() if other != name for r in corpus_rows]
        feature, threshold, low, high = fit(others, features, pair)
        cells = {"first": sum(t[pair[0]] for *_, t in held_out),
                 "second": sum(t[pair[1]] for *_, t in held_out),
                 "best": sum(min(t[c] for c in pair) for *_, t in held_out),
                 "rule": sum(t[low if s[feature] <= threshold else high] for _, s, t in held_out)}
        sums.update(cells)
        print(f"| {name} | {len(held_out)} | {cells['first']:.2f} | {cells['second']:.2f} | "
              f"{cells['best']:.2f} | {feature} <= {threshold}: {low}, else {high} | {cells['rule']:.2f} |")
    print(f"| **all** | | {sums['first']:.2f} | {sums['second']:.2f} | {sums['best']:.2f} | | "
          f"**{sums['rule']:.2f}** |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
