"""Replay query corpora through solver configurations and print the seed's table.

    python benchmarks/queries/replay.py CORPUS... --config z3 --config bitwuzla \\
        --config "portfolio(z3, bitwuzla)" [--cutoff 10] [--limit 500] [--budget 60] \\
        [--csv out.csv] [--plots DIR]

A CORPUS is one of:

- a ``.tar.xz`` of a recording by ``symex.explore(write_queries=DIR)`` (``index.csv`` and
  ``query-NNNNNN.smt2``);
- a directory of ``.smt2`` files (a recording, or e.g. KLEE's query logs);
- a ``.kquery`` file (each query is asked as KLEE does: the constraints and the query's negation).

Every query is answered by ``get_initial_values`` on one solver per configuration (the solver
is kept across the corpus, so incremental sessions see the sequence they were designed for).
A query that answers ``unknown`` or takes longer than the cut-off counts as a time-out and is
charged the cut-off, as the seed did. Configurations that disagree on sat/unsat (or contradict
the answer recorded in the corpus) are reported on stderr and make the exit status 2: that is
a bug in a backend or an encoding, never a matter of speed.

With ``--budget``, a configuration stops replaying a corpus once it has spent that many seconds
on it, as the seed stopped its slow configurations; the table then compares every
configuration on the queries all of them replayed (the first N), and says how many that is.
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import attrs

from symex.errors import SolverError, SolverUnknown, SymexError
from symex.expr import Array, Expr, bool_not
from symex.expr.kquery import parse_kquery
from symex.expr.smtlib import parse_smtlib
from symex.expr.walk import arrays_in
from symex.solvers import ChoiceConfig, Solver, SolverConfig, create_solver, parse_config
from symex.solvers.wire import QueryDecoder, QueryEncoder

SAT, UNSAT, TIMEOUT = "sat", "unsat", "timeout"


@attrs.frozen
class ReplayQuery:
    """One query of a corpus: the assertions to satisfy and the arrays to build a model of."""

    name: str
    assertions: tuple[Expr, ...]
    arrays: tuple[Array, ...]
    expected: str | None
    """The answer the corpus records (``sat``/``unsat``), when it records one."""


@attrs.frozen
class Answer:
    """How one configuration answered one query."""

    status: str
    seconds: float


# -- reading corpora ---------------------------------------------------------------------------

class _SharedArrays(QueryEncoder):
    """Gives one wire key to every array with the same name, size and contents, so that
    decoding maps the declarations of different files to one :class:`Array` object.

    Each SMT-LIB file declares its arrays afresh, and arrays are compared by identity; without
    this, two queries of one path would share no expression, and incremental sessions (which
    recognise the constraints they already hold by identity) could never reuse anything -- the
    replay would not be the sequence the executor asked.
    """

    __slots__ = ("_declared", "_decoder")

    def __init__(self) -> None:
        super().__init__()
        self._declared: dict[tuple[str, int, bytes | None], int] = {}
        self._decoder = QueryDecoder()

    def _key(self, array: Array) -> int:
        return self._declared.setdefault((array.name, array.size, array.initial),
                                         len(self._declared))

    def share(self, assertions: tuple[Expr, ...], arrays: tuple[Array, ...]
              ) -> tuple[tuple[Expr, ...], tuple[Array, ...]]:
        """The same query over the corpus-wide arrays."""
        shared, _, shared_arrays = self._decoder.decode(self.encode(assertions, (), arrays))
        return shared, shared_arrays


def _smt_query(name: str, text: str, recorded: str | None, arrays: _SharedArrays) -> ReplayQuery:
    parsed = parse_smtlib(text)
    expected = parsed.status if parsed.status in (SAT, UNSAT) else recorded
    assertions, shared = arrays.share(parsed.assertions, parsed.arrays)
    return ReplayQuery(name, assertions, shared, expected if expected in (SAT, UNSAT) else None)


def _recorded_statuses(index_text: str) -> dict[str, str]:
    """file name -> recorded status, from a symex ``index.csv`` or a KLEE query-log index."""
    statuses: dict[str, str] = {}
    for row in csv.DictReader(io.StringIO(index_text)):
        status = row.get("status") or row.get("expected_status")
        if row.get("file") and status:
            statuses[PurePosixPath(row["file"]).name] = status
    return statuses


def read_corpus(path: Path) -> Iterator[ReplayQuery]:
    """The queries of one corpus, in order (lazily: a corpus can be larger than memory).

    Arrays declared alike (name, size, contents) in several files of a corpus are one array."""
    arrays = _SharedArrays()
    if path.is_dir():
        index = path / "index.csv"
        recorded = _recorded_statuses(index.read_text()) if index.exists() else {}
        files = sorted(path.glob("*.smt2"))
        if not files:
            raise SymexError(f"{path} holds no .smt2 files; give a directory of SMT-LIB2 queries")
        for file in files:
            yield _smt_query(file.name, file.read_text(), recorded.get(file.name), arrays)
    elif path.name.endswith(".kquery"):
        for number, query in enumerate(parse_kquery(path.read_text()), 1):
            # KLEE asks whether the constraints imply the query: a model of its negation
            # is the counter-example, and "unsat" means the query is valid.
            assertions = (*query.constraints, bool_not(query.query))
            yield ReplayQuery(f"{path.name}#{number}", assertions,
                              tuple(arrays_in(assertions)), None)
    elif path.name.endswith((".tar.xz", ".tar.gz", ".tar")):
        with tarfile.open(path) as tar:
            members = sorted((m for m in tar.getmembers() if m.isfile()), key=lambda m: m.name)
            recorded: dict[str, str] = {}
            for member in members:
                if PurePosixPath(member.name).name == "index.csv":
                    recorded.update(_recorded_statuses(_member_text(tar, member)))
            smt = [m for m in members if m.name.endswith(".smt2")]
            if not smt:
                raise SymexError(f"{path} holds no .smt2 files; is it a symex query recording?")
            for member in smt:
                name = PurePosixPath(member.name).name
                yield _smt_query(name, _member_text(tar, member), recorded.get(name), arrays)
    else:
        raise SymexError(f"{path}: not a directory, .kquery or .tar.xz file; give one of those")


def _member_text(tar: tarfile.TarFile, member: tarfile.TarInfo) -> str:
    handle = tar.extractfile(member)
    assert handle is not None
    return handle.read().decode()


# -- answering ---------------------------------------------------------------------------------

def answer(solver: Solver, query: ReplayQuery, cutoff: float) -> Answer:
    """Ask ``solver`` for a model of ``query``, timed; slower than ``cutoff`` is a time-out."""
    start = time.perf_counter()
    try:
        solver.get_initial_values(query.assertions, query.arrays)
        status = SAT
    except SolverUnknown:
        status = TIMEOUT
    except SolverError:
        status = UNSAT
    seconds = time.perf_counter() - start
    if seconds > cutoff:
        status = TIMEOUT
    return Answer(status, min(seconds, cutoff) if status == TIMEOUT else seconds)


def replay(queries: list[ReplayQuery], configs: list[str], cutoff: float,
           budget: float | None = None) -> dict[str, list[Answer]]:
    """Every configuration's answers to the queries, in order; a configuration that has spent
    ``budget`` seconds stops early (its list is then shorter)."""
    answers: dict[str, list[Answer]] = {}
    for config in configs:
        solver = create_solver(config, timeout=cutoff)
        got: list[Answer] = []
        spent = 0.0
        try:
            wait_ready = getattr(solver, "wait_ready", None)
            if wait_ready is not None:
                wait_ready(60)  # worker start-up is not query time
            for q in queries:
                if budget is not None and spent >= budget:
                    break
                got.append(answer(solver, q, cutoff))
                spent += got[-1].seconds
        finally:
            solver.close()
        answers[config] = got
        if isinstance(parse_config(config), ChoiceConfig):
            print(f"  {config}: {solver.statistics.as_dict()}", file=sys.stderr)
        stopped = "" if len(got) == len(queries) else f" (budget spent after {len(got)} queries)"
        print(f"  {config}: done{stopped}", file=sys.stderr)
    return answers


def mismatches(queries: list[ReplayQuery], answers: dict[str, list[Answer]]) -> list[str]:
    """One line per query on which the configurations (or the recorded answer) disagree."""
    lines = []
    for i, query in enumerate(queries):
        said = {config: got[i].status for config, got in answers.items()
                if i < len(got) and got[i].status != TIMEOUT}
        if query.expected is not None:
            said["(recorded)"] = query.expected
        if len(set(said.values())) > 1:
            lines.append(f"{query.name}: " + ", ".join(f"{c}={s}" for c, s in said.items()))
    return lines


# -- reporting ---------------------------------------------------------------------------------

def _duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{int(seconds // 3600)}h{int(seconds % 3600 // 60):02d}m"
    if seconds >= 60:
        return f"{int(seconds // 60)}m{seconds % 60:04.1f}s"
    return f"{seconds:.3f}s"


def table(corpus: str, n: int, answers: dict[str, list[Answer]], cutoff: float) -> str:
    """The seed's table: solved, total time, slowdown against the fastest single config,
    the virtual-best bound over the single configs, and any real portfolio -- all over the
    queries every configuration replayed (the first ``common``)."""
    common = min((len(got) for got in answers.values()), default=0)
    single = [c for c in answers if isinstance(parse_config(c), SolverConfig)]
    totals = {c: sum(a.seconds for a in got[:common]) for c, got in answers.items()}
    rows: list[tuple[str, int, float]] = [
        (c, sum(a.status != TIMEOUT for a in got[:common]), totals[c])
        for c, got in answers.items()]
    if single:
        best = [min((answers[c][i] for c in single),
                    key=lambda a: (a.status == TIMEOUT, a.seconds)) for i in range(common)]
        rows.append(("virtual best of single configs", sum(a.status != TIMEOUT for a in best),
                     sum(a.seconds for a in best)))
    base = min((totals[c] for c in single), default=0.0)
    fastest = min(single, key=lambda c: totals[c]) if single else "-"
    width = max(len(r[0]) for r in rows)
    compared = f"{n} queries" if common == n else f"first {common} of {n} queries (budget)"
    out = [f"{corpus}: {compared}, cut-off {cutoff:g}s (time-outs charged the cut-off); "
           f"base = fastest single config ({fastest})",
           f"{'configuration':<{width}}  {'solved':>11}  {'total':>10}  {'vs base':>9}  "
           f"{'replayed':>8}"]
    for name, solved, total in rows:
        if base > 0 and total > 0:
            ratio = total / base
            relative = f"{ratio:.2f}x" if ratio >= 1 else f"{1 / ratio:.2f}x faster"
        else:
            relative = "-"
        replayed = len(answers[name]) if name in answers else common
        out.append(f"{name:<{width}}  {solved:>5}/{common:<5}  {_duration(total):>10}  "
                   f"{relative:>9}  {replayed:>8}")
    # The target: a real portfolio's speed-up over the fastest single configuration
    # as a share of the virtual best's.
    if single and base > 0:
        bound = base / max(rows[-1][2], 1e-12)
        for name in answers:
            if name in single or totals[name] <= 0:
                continue
            speedup = base / totals[name]
            out.append(f"{name}: {speedup:.2f}x the fastest single config; virtual best "
                       f"{bound:.2f}x; share of the virtual best's speed-up {speedup / bound:.0%}")
    return "\n".join(out)


def write_csv(out: Path, rows: list[tuple[str, str, str, str, float]]) -> None:
    """Per-query rows: corpus, query, config, status, seconds."""
    with out.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(("corpus", "query", "config", "status", "seconds"))
        writer.writerows((c, q, k, s, f"{t:.6f}") for c, q, k, s, t in rows)


def write_plots(directory: Path, corpus: str, answers: dict[str, list[Answer]],
                cutoff: float) -> list[Path]:
    """Log-log scatter PNGs of per-query seconds: the first config against each other one."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("--plots needs matplotlib: pip install matplotlib (or symex[bench])")
    directory.mkdir(parents=True, exist_ok=True)
    configs = list(answers)
    written = []
    floor = 1e-5  # log axes cannot show zero; sub-10µs answers sit on the floor
    for other in configs[1:]:
        both = min(len(answers[configs[0]]), len(answers[other]))  # --budget may cut either
        xs = [max(a.seconds, floor) for a in answers[configs[0]][:both]]
        ys = [max(a.seconds, floor) for a in answers[other][:both]]
        figure, axes = plt.subplots(figsize=(5, 5))
        axes.scatter(xs, ys, s=6, alpha=0.5)
        low, high = min(xs + ys + [cutoff]), max(xs + ys + [cutoff])
        axes.plot([low, high], [low, high], color="grey", linewidth=0.8)
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.set_xlabel(f"{configs[0]} (s)")
        axes.set_ylabel(f"{other} (s)")
        axes.set_title(f"{corpus}: {len(xs)} queries")
        slug = re.sub(r"[^A-Za-z0-9.]+", "_", f"{corpus}-{configs[0]}-vs-{other}").strip("_")
        path = directory / f"{slug}.png"
        figure.savefig(path, dpi=120, bbox_inches="tight")
        plt.close(figure)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    """Run the replay; the exit status is 2 when configurations disagree on an answer."""
    parser = argparse.ArgumentParser(
        description="Replay query corpora (.tar.xz recordings, directories of .smt2, .kquery "
                    "files) through solver configurations and print solved/time/slowdown.")
    parser.add_argument("corpora", nargs="+", type=Path, metavar="CORPUS")
    parser.add_argument("--config", action="append", required=True,
                        help='a solver configuration, e.g. z3, "z3:ite:pushpop", '
                             '"portfolio(z3, bitwuzla)"; repeat for each')
    parser.add_argument("--cutoff", type=float, default=10.0,
                        help="seconds after which a query counts as timed out (default 10)")
    parser.add_argument("--limit", type=int, help="replay only the first N queries of each corpus")
    parser.add_argument("--budget", type=float,
                        help="seconds a configuration may spend on one corpus before it stops "
                             "(the table then compares the queries every config replayed)")
    parser.add_argument("--csv", type=Path, help="write per-query rows to this CSV file")
    parser.add_argument("--plots", type=Path, help="write scatter plots (PNG) into this directory")
    args = parser.parse_args(argv)
    for config in args.config:
        parse_config(config)  # a typo should fail before minutes of replaying
    rows: list[tuple[str, str, str, str, float]] = []
    disagreements = 0
    for corpus in args.corpora:
        queries = []
        for query in read_corpus(corpus):
            if args.limit is not None and len(queries) >= args.limit:
                break
            queries.append(query)
        print(f"replaying {len(queries)} queries of {corpus.name}", file=sys.stderr)
        answers = replay(queries, args.config, args.cutoff, args.budget)
        print(table(corpus.name, len(queries), answers, args.cutoff))
        print()
        for line in mismatches(queries, answers):
            disagreements += 1
            print(f"ANSWER MISMATCH (a solver or encoding bug) in {corpus.name}: {line}",
                  file=sys.stderr)
        for config, got in answers.items():
            rows.extend((corpus.name, q.name, config, a.status, a.seconds)
                        for q, a in zip(queries, got))
        if args.plots is not None:
            for path in write_plots(args.plots, corpus.name, answers, args.cutoff):
                print(f"wrote {path}", file=sys.stderr)
    if args.csv is not None:
        write_csv(args.csv, rows)
    if disagreements:
        print(f"{disagreements} queries with contradicting answers: see ANSWER MISMATCH above",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SymexError as exc:
        sys.exit(f"replay: {exc}")
