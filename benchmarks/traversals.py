"""The expression traversals beside a version of each written on the one fold
(``symex.expr.fold.DagFold``): which of them the fold serves as fast as their own loop.

    python benchmarks/traversals.py                 # every traversal, best of 5
    python benchmarks/traversals.py --only postorder,evaluate --repeat 9

The expressions are real ones: the queries of ``benchmarks/queries/`` (what symex asked its
solver exploring five programs; histogram's write symbolic indices into arrays, so its reads
carry update lists), read with ``parse_smtlib``, ``--per-program`` of each program
(default 600). For each traversal the script times symex's own (``loop``) and the fold
version below (``fold``) over every query, alternating, and prints the best CPU seconds of
each and ``fold / loop``; both versions' results are compared first, so a figure is never of
two different computations. The traversals symex writes on the fold (the structure hash,
the SMT-LIB writer) are timed alone (``fold`` only): run the script in the checkout before
a change and after it (``PYTHONPATH=OTHER/src python benchmarks/traversals.py --only
smtlib,digest``) to compare; ``--writer-from COMMIT`` also times the SMT-LIB writer of an
earlier commit in this process, beside today's (``smtlib-then``: its function's source, read
with ``git show`` and run among this checkout's names; the scripts are compared by reading
both back). Not a test: figures go to docs/benchmarks.md with the command.

Traversals that are not folds are not here: ``format_expr`` and the KQuery writer print a
tree (shared nodes again at every use, or labelled at their first use, in text order) and
stop at a length; ``node_count`` and ``OpFinder`` stop at the first node they look for; the
solvers' ``Translator`` lowers each read through the encoding, which needs the read's index
before the writes (the ite encoding compares it with every write's).
"""

from __future__ import annotations

import argparse
import io
import marshal
import random
import subprocess
import tarfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from immutables import Map

from symex.expr import FLOAT_OPS, Array, Expr, Op, arrays_in, postorder
from symex.expr import smtlib
from symex.expr.evaluate import Assignment, apply_node
from symex.expr.fold import DagFold
from symex.expr import reads
from symex.expr.reads import read_elements
from symex.expr.digest import StructureHasher
from symex.expr.smtlib import parse_smtlib, write_smtlib
from symex.solvers.wire import UPDATE, QueryDecoder, QueryEncoder

ROOT = Path(__file__).resolve().parent.parent
QUERIES = ROOT / "benchmarks" / "queries"
PROGRAMS = ("regexp", "maze", "expr_parser", "rle_adler", "histogram")

Query = tuple[Expr, ...]


def load(per_program: int) -> list[Query]:
    """The first ``per_program`` queries of each recorded program, as expressions."""
    queries: list[Query] = []
    for program in PROGRAMS:
        with tarfile.open(QUERIES / f"{program}.smt2.tar.xz") as packed:
            members = sorted((m for m in packed.getmembers() if m.name.endswith(".smt2")),
                             key=lambda m: m.name)[:per_program]
            for member in members:
                handle = packed.extractfile(member)
                assert handle is not None
                queries.append(parse_smtlib(io.TextIOWrapper(handle).read()).assertions)
    return queries


# -- postorder ---------------------------------------------------------------------------------


class FoldPostorder(DagFold[None]):
    """``postorder`` on the fold: each node appended when its value is made."""

    __slots__ = ("order",)

    def __init__(self) -> None:
        super().__init__()
        self.order: list[Expr] = []

    def node(self, e: Expr, args: Sequence[None]) -> None:
        self.order.append(e)

    def array(self, array: Array) -> None:
        return None

    def write(self, before: None, index: None, value: None) -> None:
        return None

    def read(self, e: Expr, updates: None, index: None) -> None:
        self.order.append(e)


def fold_postorder(roots: Sequence[Expr]) -> list[Expr]:
    walk = FoldPostorder()
    for root in roots:
        walk(root)
    return walk.order


# -- evaluate ------------------------------------------------------------------------------------


class FoldEvaluate(DagFold[Any]):
    """``Assignment.evaluate`` on the fold: an update list folds into a persistent map of the
    bytes written (each write one ``set``, shared by the reads of longer lists); both arms of
    an if-then-else are evaluated."""

    __slots__ = ("assignment",)

    def __init__(self, assignment: Assignment) -> None:
        super().__init__()
        self.assignment = assignment

    def node(self, e: Expr, args: Sequence[Any]) -> int:
        op = e.op
        if op is Op.CONST:
            return e.value
        if op is Op.SELECT:
            return args[1] if args[0] else args[2]
        return apply_node(e, list(args))

    def array(self, array: Array) -> Any:
        return Map()

    def write(self, before: Any, index: Any, value: Any) -> Any:
        return before.set(index, value)

    def read(self, e: Expr, updates: Any, index: Any) -> int:
        found = updates.get(index)
        if found is not None:
            return found
        return self.assignment._byte(e.updates.array, index)  # type: ignore[union-attr]


def fold_evaluate(values: dict[Array, bytes], query: Query) -> list[int]:
    evaluate = FoldEvaluate(Assignment(values))
    return [evaluate(e) for e in query]


# -- read elements ---------------------------------------------------------------------------


class FoldReadElements(DagFold[tuple]):
    """``read_elements`` on the fold: each node's elements, its operands' merged in order."""

    def node(self, e: Expr, args: Sequence[tuple]) -> tuple:
        if not args:
            return ()
        if len(args) == 1:
            return args[0]
        merged = dict.fromkeys(args[0])
        for arg in args[1:]:
            merged.update(dict.fromkeys(arg))
        return tuple(merged)

    def array(self, array: Array) -> tuple:
        return ()

    def write(self, before: tuple, index: tuple, value: tuple) -> tuple:
        return tuple(dict.fromkeys((*before, *index, *value)))

    def read(self, e: Expr, updates: tuple, index: tuple) -> tuple:
        array = e.updates.array  # type: ignore[union-attr]
        own = () if array.initial is not None else (
            (array, e.args[0].value if e.args[0].op is Op.CONST else None),)
        return tuple(dict.fromkeys((*own, *index, *updates)))


def loop_read_elements(queries: list[Query]) -> list[list[tuple]]:
    """symex's ``read_elements`` with its memo emptied first (it keeps every expression's)."""
    reads._memo.clear()
    return [[read_elements(e) for e in q] for q in queries]


# -- the wire encoder ------------------------------------------------------------------------


class FoldWireTable(DagFold[int]):
    """The node table of ``QueryEncoder.encode`` on the fold: each node's value is its index
    in the table, each write's its index among the writes."""

    __slots__ = ("records", "writes", "encoder", "array_index", "array_table", "count")

    def __init__(self, encoder: QueryEncoder) -> None:
        super().__init__()
        self.records: list[int] = []
        self.writes = 0
        self.count = 0
        self.encoder = encoder
        self.array_index: dict[Array, int] = {}
        self.array_table: list[tuple[int, str, int, bytes | None]] = []

    def slot(self, array: Array) -> int:
        slot = self.array_index.get(array)
        if slot is None:
            slot = len(self.array_table)
            self.array_index[array] = slot
            self.array_table.append((self.encoder._key(array), array.name, array.size,
                                     array.initial))
        return slot

    def node(self, e: Expr, args: Sequence[int]) -> int:
        op = e.op
        extend = self.records.extend
        if op is Op.CONST:
            extend((Op.CONST.value, e.width, e.value))
        elif op is Op.EXTRACT:
            extend((Op.EXTRACT.value, e.width, e.value, args[0]))
        elif op is Op.ZEXT or op is Op.SEXT:
            extend((op.value, e.width, args[0]))
        elif op in FLOAT_OPS:
            extend((op.value, e.width, *args))
        else:
            extend((op.value, *args))
        self.count += 1
        return self.count - 1

    def array(self, array: Array) -> int:
        return -1

    def write(self, before: int, index: int, value: int) -> int:
        self.records.extend((UPDATE, index, value, before))
        self.writes += 1
        return self.writes - 1

    def read(self, e: Expr, updates: int, index: int) -> int:
        self.records.extend((Op.READ.value, self.slot(e.updates.array), updates, index))  # type: ignore[union-attr]
        self.count += 1
        return self.count - 1


def same_queries(a: list[bytes], b: list[bytes]) -> bool:
    """Whether two lists of wire queries decode to the same expressions (the tables may list
    nodes in other orders)."""
    arrays: dict[tuple[str, int, bytes | None], Array] = {}

    def array_of(name: str, size: int, initial: bytes | None) -> Array:
        return arrays.setdefault((name, size, initial), Array(name, size, initial))

    # one decoder: it gives a write the same node each time it meets it (reads are equal
    # only through the same update nodes)
    decoder = QueryDecoder(array_of)
    return all(decoder.decode(x) == decoder.decode(y) for x, y in zip(a, b, strict=True))


def fold_encode(encoder: QueryEncoder, constraints: Sequence[Expr], exprs: Sequence[Expr],
                arrays: Sequence[Array]) -> bytes:
    table = FoldWireTable(encoder)
    for e in (*constraints, *exprs):
        table(e)
    wanted = [table.slot(a) for a in arrays]
    return marshal.dumps((table.array_table, table.records, [table.memo[c] for c in constraints],
                          [table.memo[x] for x in exprs], wanted))


def writer_from(commit: str) -> Callable[[Query], str]:
    """``write_smtlib`` as ``commit`` wrote it, run among this checkout's module names."""
    source = subprocess.run(["git", "show", f"{commit}:src/symex/expr/smtlib.py"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    start = source.index("def write_smtlib(")
    end = source.find("\n\n\n", start)
    names = {**vars(smtlib), "postorder": postorder, "arrays_in": arrays_in}
    exec(source[start:end if end > 0 else None], names)  # noqa: S102 (our own history)
    return names["write_smtlib"]  # type: ignore[no-any-return]


def same_scripts(a: list[str], b: list[str]) -> bool:
    """Whether two lists of SMT-LIB scripts read back to the same assertions (their
    definitions may come in other orders, under other names)."""
    hasher = StructureHasher()
    for x, y in zip(a, b, strict=True):
        first, second = parse_smtlib(x), parse_smtlib(y)
        if ([hasher(e) for e in first.assertions] != [hasher(e) for e in second.assertions]
                or [(r.name, r.size) for r in first.arrays] != [(r.name, r.size) for r in second.arrays]):
            return False
    return True


def digest_all(query: Query) -> list[int]:
    """Every constraint's structure hash, one hasher per query (as a recorded tree's run)."""
    hasher = StructureHasher()
    return [hasher(e) for e in query]


# -- the timing ------------------------------------------------------------------------------


def best(run: Callable[[], object], repeat: int) -> float:
    """The least CPU seconds of ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        started = time.process_time()
        run()
        times.append(time.process_time() - started)
    return min(times)


def compare(name: str, loop: Callable[[], object], fold: Callable[[], object],
            repeat: int, same: Callable[[object, object], bool] = lambda a, b: a == b) -> None:
    """Time ``loop`` and ``fold``, alternating, after checking they compute the same."""
    if not same(loop(), fold()):
        raise SystemExit(f"{name}: the fold version computes something else")
    loop_times, fold_times = [], []
    for _ in range(repeat):
        loop_times.append(best(loop, 1))
        fold_times.append(best(fold, 1))
    a, b = min(loop_times), min(fold_times)
    print(f"{name:<16} loop {a:8.3f} s   fold {b:8.3f} s   fold / loop {b / a:5.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated traversal names")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--per-program", type=int, default=600)
    parser.add_argument("--writer-from", metavar="COMMIT",
                        help="also time the SMT-LIB writer of COMMIT beside this one's")
    options = parser.parse_args()
    queries = load(options.per_program)
    nodes = sum(len(postorder(q)) for q in queries)
    print(f"{len(queries)} queries, {nodes} nodes (each query's distinct nodes, summed)")
    rng = random.Random(0)
    values = {}
    for query in queries:
        for e in postorder(query):
            if e.op is Op.READ:
                array = e.updates.array  # type: ignore[union-attr]
                if array.initial is None and array not in values:
                    values[array] = bytes(rng.randrange(256) for _ in range(array.size))

    encoder = QueryEncoder()
    traversals: dict[str, tuple[Callable[[], object], Callable[[], object]]] = {
        "postorder": (lambda: [postorder(q) for q in queries],
                      lambda: [fold_postorder(q) for q in queries]),
        "evaluate": (lambda: [Assignment(values).evaluate_all(q) for q in queries],
                     lambda: [fold_evaluate(values, q) for q in queries]),
        "wire": (lambda: [encoder.encode(q, (), ()) for q in queries],
                 lambda: [fold_encode(encoder, q, (), ()) for q in queries]),
        "read_elements": (lambda: loop_read_elements(queries),
                          lambda: [[set(FoldReadElements()(e)) for e in q] for q in queries]),
    }
    alone: dict[str, Callable[[], object]] = {
        "smtlib": lambda: [write_smtlib(q) for q in queries],
        "digest": lambda: [digest_all(q) for q in queries],
    }
    if options.writer_from:
        then = writer_from(options.writer_from)
        traversals["smtlib-then"] = (lambda: [then(q) for q in queries],
                                     lambda: [write_smtlib(q) for q in queries])
    chosen = options.only.split(",") if options.only else [*traversals, *alone]
    for name in chosen:
        if name in alone:
            seconds = min(best(alone[name], 1) for _ in range(options.repeat))
            print(f"{name:<16} fold {seconds:8.3f} s   (symex's own; compare checkouts)")
            continue
        loop, fold = traversals[name]
        same = {"read_elements": lambda a, b: [[set(x) for x in q] for q in a] == b,
                "wire": same_queries, "smtlib-then": same_scripts}.get(name, lambda a, b: a == b)
        compare(name, loop, fold, options.repeat, same)


if __name__ == "__main__":
    main()
