"""One recorded execution tree (``tree.db``) for a parallel run.

Workers record the segments they explore (:class:`SegmentLog`, part of a worker's
:class:`~symex.parallel.jobs.JobReplay`) and send them with each report as rows
(:class:`ForkRow`, :class:`EndRow`); the coordinator merges them into one file
(:class:`RunTree`), the same file a run in one process records with ``record_tree``: the
same segments, digests (:mod:`symex.memo.segments`), answer logs and test inputs, so a later
run, with workers or without, replays and continues it.

Node ids are the coordinator's. A worker names the nodes it creates with its own numbers
(*refs*, positive) and the node a job starts in by the global id the job carries (as a
negative ref); the coordinator gives a fork's children consecutive ids when the fork's row
arrives. A fork's row always arrives before its children's: the fork ended its segment
before the children existed, and a child moved to another worker was in a report first.

A segment's row is written when it ends (a fork or the path's end). A state handed over as a
job, or cut by a halt, writes no row: its node stays open and the tree says so (a missing
child). The part of a segment a state explored before it was handed over is explored again
by the worker that takes the job, which records the segment whole (its solver counters count
only that worker's calls). A job explored twice (a lost worker's jobs are re-issued) sends
rows for nodes that have one: they are the same rows, and are not written again.
"""

from __future__ import annotations

import time
from typing import Any
from collections.abc import Sequence

import attrs

from symex import expr as E
from symex.core.forks import ForkKind, Site
from symex.core.outcome import PathTerminated
from symex.core.state import State
from symex.expr.digest import StructureHasher
from symex.memo.format import (
    NodeStatus,
    decode_varints,
    default_decisions,
    encode_varints,
    pack_inputs,
    stored_decisions,
)
from symex.memo.recorder import ROOT, MemoStatistics
from symex.memo.segments import (
    answer_digest,
    end_details,
    end_digest,
    fork_digest,
    segment_start,
    signed,
    site_hash,
    status_of,
)
from symex.memo.store import TreeStore

__all__ = ["EndRow", "ForkRow", "RunTree", "SegmentLog"]


@attrs.frozen
class ForkRow:
    """A segment that ended in a fork, as a worker sends it."""

    ref: int
    kind: int
    site: Site | None
    instructions: int
    solver_us: int
    queries: int
    digest: int
    first_child: int
    """The ref of the first child; the others follow, one per decision."""
    decisions: tuple[int, ...]
    log: bytes | None


@attrs.frozen
class EndRow:
    """A segment whose path ended, as a worker sends it."""

    ref: int
    status: int
    kind: int | None
    """The error kind's code (ERROR)."""
    exit_code: int | None
    """COMPLETED: the exit code."""
    reason: str | None
    """PARTIAL, CUT: why the path stopped."""
    site: Site | None
    instructions: int
    solver_us: int
    queries: int
    digest: int
    log: bytes | None
    inputs: tuple[tuple[tuple[str, int], ...], bytes] | None = None
    """The test's symbolic objects (name, size) and their bytes, when it has a test."""


Row = ForkRow | EndRow


class SegmentLog:
    """A worker's recorder: the digest and counters of each state's segment kept on its
    :class:`~symex.parallel.jobs.JobCursor` (``node`` not None: the segment is recorded),
    rows collected until the next report."""

    def __init__(self, hash_constants: bool) -> None:
        self.hasher = StructureHasher(hash_constants)
        self.rows: list[Row] = []
        self._next_ref = 1

    def begin(self, cursor: Any, ref: int, decision: int, instructions: int) -> None:
        """``cursor``'s state enters the segment ``ref`` (following ``decision``)."""
        cursor.node = ref
        cursor.digest = segment_start(decision)
        cursor.start = instructions
        cursor.solver_time = 0.0
        cursor.queries = 0

    def answered(self, cursor: Any, tag: int, expr: E.Expr) -> None:
        """The segment got an answer about ``expr``."""
        cursor.digest = answer_digest(cursor.digest, tag, self.hasher.expr(expr))

    def forked(self, cursor: Any, kind: ForkKind, condition: E.Expr | None,
               states: Sequence[State], site: Site | None, live: int) -> int:
        """The segment ended in a fork into ``states``: its row; the ref of the first child
        (the others follow)."""
        digest = fork_digest(cursor.digest, kind, site_hash(site),
                             self.hasher.expr(condition) if condition is not None else 0,
                             live - cursor.start)
        first = self._next_ref
        self._next_ref += len(states)
        self.rows.append(ForkRow(
            cursor.node, int(kind), site, live - cursor.start, int(cursor.solver_time * 1e6),
            cursor.queries, signed(digest), first, tuple(s.last_decision() for s in states),
            _log(cursor)))
        return first

    def ended(self, cursor: Any, end: PathTerminated, site: Site | None,
              instructions: int) -> EndRow:
        """The row of a segment whose path ended (its inputs come with :meth:`written`)."""
        status = status_of(end)
        kind, exit_code, reason = end_details(end, status)
        digest = end_digest(cursor.digest, end, status, site_hash(site),
                            instructions - cursor.start)
        return EndRow(cursor.node, int(status), kind, exit_code, reason, site,
                      instructions - cursor.start, int(cursor.solver_time * 1e6),
                      cursor.queries, signed(digest), _log(cursor))

    def written(self, row: EndRow, state: State, objects: dict[str, bytes] | None) -> None:
        """Keep the row of an ended path, with its test's inputs (None: no test)."""
        symbolics = state.symbolics
        if objects is not None and symbolics:
            layout = tuple((s.name, s.array.size) for s in symbolics)
            data = b"".join(objects.get(s.name, bytes(s.array.size)) for s in symbolics)
            row = attrs.evolve(row, inputs=(layout, data))
        self.rows.append(row)

    def take(self) -> tuple[Row, ...]:
        """The rows recorded since the last call."""
        rows, self.rows = tuple(self.rows), []
        return rows


def _log(cursor: Any) -> bytes | None:
    """The answers of a cursor's segment (its events after the fork that began it)."""
    answers = cursor.events[1:] if cursor.prefix is not None else cursor.events
    return encode_varints(answers) if answers else None


class RunTree:
    """The coordinator's side: worker rows merged into one ``tree.db`` (module docstring)."""

    def __init__(self, store: TreeStore) -> None:
        self.store = store
        #: per worker, its refs of nodes whose rows (or jobs) have not arrived yet
        self._refs: dict[int, dict[int, int]] = {}
        #: forks written: id -> first child id
        self._first_child: dict[int, int] = {}
        #: nodes made by a written fork whose own rows have not arrived: (parent, decision)
        self._origin: dict[int, tuple[int, int]] = {}
        has_row: set[int] = set()
        for row in store.node_rows():
            node_id, status, first, decisions = row[0], row[3], row[11], row[12]
            has_row.add(node_id)
            if status == NodeStatus.FORK and first is not None and row[4] is not None:
                self._first_child[node_id] = first
                taken = (default_decisions(ForkKind(row[4])) if decisions is None
                         else tuple(decode_varints(decisions)))
                for offset, decision in enumerate(taken):
                    self._origin[first + offset] = (node_id, decision)
        for node_id in has_row:
            self._origin.pop(node_id, None)
        self._next_id = max(store.max_id(), ROOT) + 1
        self._written_root = ROOT in has_row
        self.time = 0.0
        #: for the run's log (a tree continued from a changed program, say)
        self.messages: list[str] = []

    def node_of(self, worker: int, ref: int) -> int:
        """The id of the node a worker names ``ref`` (a ref is used once: by its row, or by
        the job the worker handed the node's state over as)."""
        if ref < 0:
            return -ref
        return self._refs[worker].pop(ref)

    def peek_node(self, worker: int, ref: int) -> int:
        """The id of the node a worker names ``ref``, the ref kept (a checkpoint names the
        node of a state the worker still explores); 0 when it is not known yet."""
        if ref < 0:
            return -ref
        return self._refs.get(worker, {}).get(ref, 0)

    def merge(self, worker: int, rows: Sequence[Row]) -> None:
        """Write a report's rows (queued: :meth:`commit` writes them)."""
        if not rows:
            return
        started = time.perf_counter()
        refs = self._refs.setdefault(worker, {})
        store = self.store
        for row in rows:
            node_id = self.node_of(worker, row.ref)
            if isinstance(row, ForkRow):
                first = self._first_child.get(node_id)
                fresh = first is None
                if first is None:
                    first = self._next_id
                    self._next_id += len(row.decisions)
                    self._first_child[node_id] = first
                    for offset, decision in enumerate(row.decisions):
                        self._origin[first + offset] = (node_id, decision)
                for offset in range(len(row.decisions)):
                    refs[row.first_child + offset] = first + offset
                if not fresh:
                    continue  # the same fork, explored again (a re-issued job)
            parent = self._place(node_id)
            if parent is None:
                continue  # a row written before
            location = None if row.site is None else store.location_id(*row.site)
            if isinstance(row, ForkRow):
                store.write_node((
                    node_id, parent[0], parent[1], int(NodeStatus.FORK), row.kind, None,
                    location, row.instructions, row.solver_us, row.queries, row.digest,
                    self._first_child[node_id],
                    stored_decisions(ForkKind(row.kind), row.decisions), row.log, None))
                continue
            detail = (row.exit_code if row.status == NodeStatus.COMPLETED
                      else store.reason_id(row.reason) if row.reason is not None else None)
            inputs = None
            if row.inputs is not None:
                layout, data = row.inputs
                inputs = pack_inputs(store.layout_id(layout), data)
            store.write_node((node_id, parent[0], parent[1], row.status, row.kind, detail,
                              location, row.instructions, row.solver_us, row.queries,
                              row.digest, None, None, row.log, inputs))
        self.time += time.perf_counter() - started

    def _place(self, node_id: int) -> tuple[int | None, int] | None:
        """(parent, decision) of a node whose row is to be written; None when it has one."""
        if node_id == ROOT:
            if self._written_root:
                return None
            self._written_root = True
            return None, 0
        return self._origin.pop(node_id, None)

    def forget(self, worker: int) -> None:
        """A worker is gone: its refs name nothing any more (its replacement starts anew;
        the jobs it held are re-issued with their global ids)."""
        self._refs.pop(worker, None)

    def commit(self, durable: bool) -> None:
        """Write the queued rows: now (``durable``: before the journal records the report,
        so that the tree holds every path the journal calls finished), or when they have
        waited long enough."""
        started = time.perf_counter()
        if durable:
            self.store.flush()
        else:
            self.store.maybe_flush()
        self.time += time.perf_counter() - started

    def statistics(self, final: bool = False) -> MemoStatistics:
        """The tree's size (and the coordinator's time keeping it)."""
        if final:
            self.store.checkpoint()
            nodes = self.store.node_count()
        else:
            nodes = self.store.rows_written
        return MemoStatistics(tree_time=self.time, tree_bytes=self.store.size_bytes(),
                              tree_nodes=nodes)

    def close(self) -> None:
        """Write everything and close the file."""
        self.store.close()

