"""Record the execution tree while exploring; replay, prune and resume a recorded one.

:class:`TreeRecorder` is the executor's :class:`~symex.core.forks.DecisionMemo` and the
engine's partner at every path's start, slice and end. Each live state carries a
:class:`PathCursor`: the node (segment) it is in, and either the recorded node it replays or
nothing (it explores).

Replaying a segment, the state takes every answer from the node's ``log`` (which sides of a
condition are feasible, values chosen from its inputs) instead of the solver, and at the
segment's end (a fork, the path's end, or the instruction where a limit cut it) compares the
digest of what decided it with the recorded one: the kind and the structure of every condition
and value it was answered on, where it forked or ended, and its instruction count
(:mod:`symex.expr.digest`). Every constraint a path gains comes from one of those (a fork's
condition, an answered condition, a concretized value), so they are not hashed again. At a
replayed fork, children whose subtrees hold nothing left to explore are pruned; the others
replay their own segments, or explore where nothing was recorded. A state that reaches a cut
segment's last recorded instruction explores on from there, recording into the same node. A
mismatch is a divergence (the program or its environment changed): it is counted and reported,
the recorded subtree below is dropped, and the state explores afresh, once the solver confirms
that the path it followed is still feasible (the answers it took from the log are checked
together with its constraints).

Determinism makes this work: the same program and inputs give the same states, expressions
and array names in every process, and every choice that came from a model is in the log.
"""

from __future__ import annotations

import json
import time
from typing import Any
from collections.abc import Sequence

import attrs

from symex import expr as E
from symex.core.forks import SPLIT_BOTH, SPLIT_TRUE_ONLY, DecisionTag, ForkKind, Site
from symex.core.outcome import PathStatus, PathTerminated
from symex.core.state import State
from symex.memo.format import (
    NodeStatus,
    decode_varints,
    default_decisions,
    encode_varints,
    pack_inputs,
    split_inputs,
    stored_decisions,
    unpack_inputs,
)
from symex.expr.digest import StructureHasher
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

__all__ = ["MemoStatistics", "PathCursor", "RecordedNode", "TreeRecorder", "ROOT"]

#: the id of the root node (the path before its first fork)
ROOT = 1
#: divergences reported one by one in the run's messages; later ones are only counted
REPORTED_DIVERGENCES = 20


@attrs.frozen
class MemoStatistics:
    """MoKlee's counters of one run over a recorded tree."""

    replayed_instructions: int = 0
    """Irepl: instructions executed replaying recorded segments."""
    new_instructions: int = 0
    """Inew: instructions executed beyond the recorded tree."""
    lost_instructions: int = 0
    """Ilost: recorded instructions of subtrees dropped because they diverged."""
    diverged_states: int = 0
    """SDiv: states whose replay diverged from the recording."""
    pruned_states: int = 0
    """SPrepl: states not explored because their recorded subtree was fully explored."""
    replayed_queries: int = 0
    """Qrepl: solver calls the recording made in the segments this run replayed."""
    tree_time: float = 0.0
    """PTTime: seconds spent keeping the tree (hashing, replay bookkeeping, writing)."""
    tree_bytes: int = 0
    """Size of tree.db (with its write-ahead log)."""
    tree_nodes: int = 0
    """Node rows in tree.db."""

    @property
    def bytes_per_node(self) -> float:
        """tree_bytes / tree_nodes."""
        return self.tree_bytes / self.tree_nodes if self.tree_nodes else 0.0


class RecordedNode:
    """One node of the recorded tree, as loaded for replay (its inputs stay on disk)."""

    __slots__ = ("id", "parent", "decision", "status", "kind", "detail", "instructions",
                 "queries", "hash", "first_child", "decisions", "log", "open_leaves")

    def __init__(self, row: tuple[Any, ...]) -> None:
        (self.id, self.parent, self.decision, status, self.kind, self.detail, _location,
         self.instructions, _solver, self.queries, self.hash, self.first_child,
         decisions, self.log) = row
        self.status = NodeStatus(status)
        if self.status is NodeStatus.FORK:
            self.decisions = (tuple(decode_varints(decisions)) if decisions is not None
                              else default_decisions(ForkKind(self.kind)))
        else:
            self.decisions = ()
        #: leaves below (or at) this node that a continuing run explores on from
        self.open_leaves = 0

    def children(self) -> list[tuple[int, int]]:
        """(decision, child id) of a fork, in child order."""
        return [(d, self.first_child + i) for i, d in enumerate(self.decisions)]


class PathCursor:
    """Where a state is in the tree; see the module docstring."""

    __slots__ = ("node", "parent", "decision", "recorded", "log", "position", "answers",
                 "digest", "start_instructions", "solver_time", "queries", "assumptions",
                 "replay_from", "pending", "dropped", "at_frontier", "checking")

    def __init__(self, node: int, parent: int | None, decision: int,
                 start_instructions: int) -> None:
        self.node = node
        self.parent = parent
        self.decision = decision
        #: the recorded node being replayed (None: exploring)
        self.recorded: RecordedNode | None = None
        self.log: list[int] | tuple[()] = ()
        self.position = 0
        #: the answers of this segment, replayed and new (the node's log when written)
        self.answers: list[int] = []
        self.digest = segment_start(decision)
        self.start_instructions = start_instructions
        self.solver_time = 0.0
        self.queries = 0
        #: conditions of replayed one-sided answers (checked with the path if it diverges)
        self.assumptions: list[E.Expr] | tuple[()] = ()
        #: where the instructions not yet counted as replayed start
        self.replay_from = start_instructions
        #: the row of an ended path, waiting for its test inputs (leaf_written)
        self.pending: list[Any] | None = None
        #: the state is no path to explore: pruned, or diverged into infeasibility
        self.dropped = False
        #: the state replayed a cut segment to its last recorded instruction
        self.at_frontier = False
        #: the state replays a fully explored subtree only to check it (the program changed)
        self.checking = False


class TreeRecorder:
    """Records the exploration into ``store``, replaying what it holds (module docstring)."""

    def __init__(self, store: TreeStore, *, restart_all_states: bool = False,
                 stop_after_replay: bool = False, check_explored: bool = False) -> None:
        self.store = store
        #: replay fully explored subtrees to check them instead of pruning them unseen (the
        #: program changed since the recording: no recorded subtree can be trusted unchecked);
        #: a checked path that matches is not explored again, one that diverges is
        self.check_explored = check_explored
        #: written to the tree's meta (the new program's hash and compiler) when a run ends
        #: having checked the whole tree
        self.meta_when_checked: dict[str, str] | None = None
        self._checked_all = False
        self.hasher = StructureHasher(store.meta.get("hash_constants", "1") == "1")
        self.restart_all_states = restart_all_states
        self.stop_after_replay = stop_after_replay
        self.executor: Any = None
        self.messages: list[str] = []
        self.recorded: dict[int, RecordedNode] = {}
        for row in store.node_rows():
            node = RecordedNode(row)
            self.recorded[node.id] = node
        self._next_id = max(store.max_id(), ROOT) + 1
        self._count_open_leaves()
        self._reason_texts = {rid: text for rid, (text,) in store.table("reason").items()}
        self._sites: dict[tuple[str, int, int], tuple[int, int | None]] = {}
        self._layout_of: dict[tuple[Any, ...], int] = {}
        self._layouts: dict[int, list[tuple[str, int]]] = {}
        self._pruned: list[State] = []
        self.replayed_instructions = 0
        self.lost_instructions = 0
        self.diverged = 0
        self.pruned = 0
        self.replayed_queries = 0
        self.time = 0.0

    # -- set-up ----------------------------------------------------------------------------

    def attach(self, executor: Any) -> None:
        """Record what ``executor`` runs (it calls back through ``executor.memo``)."""
        self.executor = executor
        executor.memo = self

    def _count_open_leaves(self) -> None:
        """Per node, the resumable leaves in its subtree (a missing child counts one)."""
        recorded = self.recorded
        for node_id in sorted(recorded, reverse=True):  # children have larger ids than parents
            node = recorded[node_id]
            if node.status is NodeStatus.FORK:
                node.open_leaves = sum(recorded[c].open_leaves if c in recorded else 1
                                       for _, c in node.children())
            else:
                node.open_leaves = 1 if node.status.resumable else 0

    @property
    def has_recording(self) -> bool:
        """Whether the tree holds anything to replay."""
        return ROOT in self.recorded

    @property
    def fully_explored(self) -> bool:
        """Whether the recorded tree has nothing left to explore."""
        root = self.recorded.get(ROOT)
        return root is not None and root.open_leaves == 0

    def start(self, state: State) -> bool:
        """Give the initial state its cursor at the root; False when the recorded tree is
        fully explored and there is nothing to replay (the run has nothing to do)."""
        cursor = PathCursor(ROOT, None, 0, state.instructions)
        state.memo = cursor
        root = self.recorded.get(ROOT)
        if root is None:
            return True
        if root.open_leaves == 0 and not self.restart_all_states:
            if not self.check_explored:
                return False
            cursor.checking = True
        self._begin_replay(cursor, root)
        return True

    def _begin_replay(self, cursor: PathCursor, node: RecordedNode) -> None:
        cursor.recorded = node
        cursor.log = decode_varints(node.log) if node.log else ()
        cursor.position = 0

    # -- what the engine asks ---------------------------------------------------------------

    def tick(self) -> None:
        """Called between time slices: write the recorded rows when they have waited long
        enough (so a killed run loses at most the last moment's rows)."""
        started = time.perf_counter()
        self.store.maybe_flush()
        self.time += time.perf_counter() - started

    def is_replaying(self, state: State) -> bool:
        """Whether ``state`` follows a recorded segment."""
        return state.memo.recorded is not None

    def replay_budget(self, state: State) -> int | None:
        """Instructions ``state`` may still run before it reaches the last recorded instruction
        of a cut (resumable) segment it replays; None when no such limit applies."""
        cursor = state.memo
        node = cursor.recorded
        if node is None or not node.status.resumable:
            return None
        return max(0, cursor.start_instructions + node.instructions - state.instructions)

    def take_pruned(self) -> list[State]:
        """States that are no paths to explore: made by replayed forks whose subtrees are
        fully explored, or found infeasible after a divergence. The engine drops them
        without counting them as paths."""
        pruned, self._pruned = self._pruned, []
        return pruned

    def counts(self, state: State) -> bool:
        """Whether ``state``'s end counts as a path (see :meth:`take_pruned`)."""
        return not state.memo.dropped

    def reach_frontier(self, state: State) -> PathTerminated | None:
        """``state`` replayed a cut segment up to where the recording stopped it: check the
        replay and explore on from here (or, with ``stop_after_replay``, end it the way the
        recording did: the returned end, which the engine finishes)."""
        started = time.perf_counter()
        try:
            if not self._frontier(state, state.instructions):
                if state.memo.dropped:
                    return PathTerminated(PathStatus.PARTIAL, "diverged into an infeasible path",
                                          emit_test=False)
                return None
            cursor = state.memo
            node = cursor.recorded
            if self.stop_after_replay and node.status is NodeStatus.CUT:
                cursor.at_frontier = True
                return PathTerminated(PathStatus.PARTIAL,
                                      self._reason_texts.get(node.detail, "cut"), limit=True)
            self._resume(state, node, state.instructions)
            return None
        finally:
            self.time += time.perf_counter() - started

    def _frontier(self, state: State, live: int) -> bool:
        """Check a replay that reached the last recorded instruction of a cut segment; True
        when it matches (the state still replays), else the divergence is handled."""
        cursor = state.memo
        node = cursor.recorded
        if cursor.position != len(cursor.log) or signed(cursor.digest) != node.hash:
            self._diverge(state, "the path was decided otherwise before the point where the "
                                 "recording stopped it")
            return False
        self.replayed_instructions += live - cursor.replay_from
        self.replayed_queries += node.queries
        cursor.replay_from = live
        return True

    # -- DecisionMemo: what the executor tells and asks ------------------------------------

    def replayed_answer(self, state: State, tag: DecisionTag, expr: E.Expr) -> int | None:
        """The recorded answer while ``state`` replays (see DecisionMemo)."""
        cursor = state.memo
        if cursor is None or cursor.recorded is None:
            return None
        started = time.perf_counter()
        try:
            if cursor.position < len(cursor.log):
                entry = cursor.log[cursor.position]
                if entry & 3 != tag:
                    self._diverge(state, f"the recording answered a {_tag_name(entry & 3)} "
                                         f"here, the replay asked for a {tag.name}")
                    self._end_if_dropped(cursor)
                    return None
                answer = entry >> 2
                cursor.position += 1
                cursor.answers.append(entry)
                cursor.digest = answer_digest(cursor.digest, tag, self.hasher.expr(expr))
                if tag is DecisionTag.SPLIT and answer != SPLIT_BOTH:
                    if not cursor.assumptions:
                        cursor.assumptions = []
                    cursor.assumptions.append(expr if answer == SPLIT_TRUE_ONLY
                                              else E.bool_not(expr))
                return answer
            node = cursor.recorded
            live = self.executor.live_instructions(state)
            if node.status.resumable and live >= cursor.start_instructions + node.instructions:
                if self._frontier(state, live):
                    self._resume(state, node, live)
            else:
                self._diverge(state, "the replay reached a decision the recording did not make")
            self._end_if_dropped(cursor)
            return None
        finally:
            self.time += time.perf_counter() - started

    @staticmethod
    def _end_if_dropped(cursor: PathCursor) -> None:
        """A path that diverged into infeasibility ends at once (it is no path)."""
        if cursor.dropped:
            raise PathTerminated(PathStatus.PARTIAL, "diverged into an infeasible path",
                                 emit_test=False)

    def note_answer(self, state: State, tag: DecisionTag, expr: E.Expr, answer: int) -> None:
        """Record an answer of the solver or the state's inputs (see DecisionMemo)."""
        cursor = state.memo
        if cursor is None:
            return
        # not timed: timing would cost about what recording an answer does
        cursor.answers.append(answer << 2 | tag)
        cursor.digest = answer_digest(cursor.digest, tag, self.hasher.expr(expr))

    def solver_used(self, state: State, seconds: float) -> None:
        """Count a solver call made for ``state`` (see DecisionMemo)."""
        cursor = state.memo
        if cursor is not None:
            cursor.solver_time += seconds
            cursor.queries += 1

    def forked(self, kind: ForkKind, condition: E.Expr | None, states: Sequence[State],
               site: Site | None) -> None:
        """Record or replay a fork (see DecisionMemo)."""
        started = time.perf_counter()
        try:
            self._forked(kind, condition, states, site)
        finally:
            self.time += time.perf_counter() - started

    def _forked(self, kind: ForkKind, condition: E.Expr | None, states: Sequence[State],
                site: Site | None) -> None:
        parent = states[0]
        cursor: PathCursor = parent.memo
        if cursor.dropped:  # an infeasible path that runs on until its time slice ends
            for state in states[1:]:
                self._drop(state, PathCursor(0, None, 0, state.instructions))
            return
        live = self.executor.live_instructions(parent)
        point, location = self._site(site)
        digest = fork_digest(cursor.digest, kind, point,
                             self.hasher.expr(condition) if condition is not None else 0,
                             live - cursor.start_instructions)
        node = cursor.recorded
        if node is not None:
            if (cursor.position == len(cursor.log) and node.status is NodeStatus.FORK
                    and node.kind == kind and node.hash == signed(digest)
                    and all(s.last_decision() in node.decisions for s in states)):
                self.replayed_instructions += live - cursor.replay_from
                self.replayed_queries += node.queries
                self._follow_recorded_children(node, states, live)
                return
            states = self._diverge(parent, f"the replay forked ({kind.name.lower()}) where the "
                                           f"recording {_describe(node.status)}", states)
            if not states:
                return
        taken = tuple(s.last_decision() for s in states)
        first = self._next_id
        self._next_id = first + len(states)
        answers = cursor.answers
        self.store.write_node((
            cursor.node, cursor.parent, cursor.decision, _FORK_STATUS, int(kind), None, location,
            live - cursor.start_instructions, int(cursor.solver_time * 1e6), cursor.queries,
            signed(digest), first,
            stored_decisions(kind, taken),
            encode_varints(answers) if answers else None, None))
        node_id = cursor.node
        for offset, state in enumerate(states):
            state.memo = PathCursor(first + offset, node_id, taken[offset], live)

    def _follow_recorded_children(self, node: RecordedNode, states: Sequence[State],
                                  live: int) -> None:
        by_decision = {d: child for d, child in node.children()}
        for state in states:
            decision = state.last_decision()
            cursor = PathCursor(by_decision[decision], node.id, decision, live)
            state.memo = cursor
            child = self.recorded.get(cursor.node)
            if child is None:
                continue  # never recorded: the state explores from here
            if child.open_leaves == 0 and not self.restart_all_states:
                if not self.check_explored:
                    self.pruned += 1
                    self._drop(state, cursor)
                    continue
                cursor.checking = True
            self._begin_replay(cursor, child)

    def _drop(self, state: State, cursor: PathCursor) -> None:
        cursor.dropped = True
        state.memo = cursor
        self._pruned.append(state)

    # -- path ends -------------------------------------------------------------------------

    def path_ended(self, state: State, end: PathTerminated) -> dict[str, bytes] | None:
        """Record (or check the replay of) the end of ``state``'s path; the recorded test
        inputs when the path replayed a recorded end that has them. Unless the path does not
        count (:meth:`counts`), the engine then calls :meth:`leaf_written`."""
        started = time.perf_counter()
        try:
            return self._path_ended(state, end)
        finally:
            self.time += time.perf_counter() - started

    def _path_ended(self, state: State, end: PathTerminated) -> dict[str, bytes] | None:
        cursor: PathCursor = state.memo
        if cursor.dropped:
            return None
        status = status_of(end)
        point, location = self._site(self.executor.site_of(state))
        live = state.instructions
        node = cursor.recorded
        digest = end_digest(cursor.digest, end, status, point, live - cursor.start_instructions)
        if status is NodeStatus.CUT:
            if node is not None:
                # a limit stopped the replay: the recording stays as it is
                self.replayed_instructions += live - cursor.replay_from
                cursor.replay_from = live
                return self._recorded_inputs(state, node) if cursor.at_frontier else None
        elif node is not None:
            if (cursor.position == len(cursor.log) and node.status is status
                    and node.hash == signed(digest)):
                self.replayed_instructions += live - cursor.replay_from
                self.replayed_queries += node.queries
                if cursor.checking:
                    # explored before and unchanged: not a path of this run
                    self.pruned += 1
                    cursor.dropped = True
                    return None
                return self._recorded_inputs(state, node)
            if not self._diverge(state, f"the replayed path ended ({status.name.lower()}) "
                                        f"where the recording {_describe(node.status)}"):
                return None
        kind, detail, reason = end_details(end, status)
        if reason is not None:
            detail = self._reason_id(reason)
        cursor.pending = [
            cursor.node, cursor.parent, cursor.decision, int(status), kind, detail,
            location, live - cursor.start_instructions,
            int(cursor.solver_time * 1e6), cursor.queries, signed(digest), None, None,
            encode_varints(cursor.answers) if cursor.answers else None, None]
        return None

    def leaf_written(self, state: State, objects: dict[str, bytes] | None) -> None:
        """Write the row of a path that ended (:meth:`path_ended`), with its test inputs
        (``objects``; None when no test was made)."""
        cursor: PathCursor = state.memo
        row, cursor.pending = cursor.pending, None
        if row is None:
            return
        started = time.perf_counter()
        symbolics = state.symbolics
        if objects is not None and symbolics:
            key = tuple(symbolics)  # the same objects (by identity) have the same layout
            layout = self._layout_of.get(key)
            if layout is None:
                layout = self.store.layout_id([(s.name, s.array.size) for s in symbolics])
                self._layout_of[key] = layout
            row[14] = pack_inputs(layout, b"".join(objects.get(s.name, bytes(s.array.size))
                                                   for s in symbolics))
        self.store.write_node(row)
        self.time += time.perf_counter() - started

    def _recorded_inputs(self, state: State, node: RecordedNode) -> dict[str, bytes] | None:
        """The test inputs recorded with ``node``, if they fit the state's symbolic objects."""
        blob = self.store.inputs(node.id)
        if blob is None:
            return None
        try:
            layout, data = unpack_inputs(blob)
            objects = self._layouts.get(layout)
            if objects is None:
                objects = [(name, size) for name, size in
                           json.loads(self.store.table("layout")[layout][0])]
                self._layouts[layout] = objects
        except (ValueError, KeyError, TypeError):
            return None
        if objects != [(s.name, s.array.size) for s in state.symbolics]:
            return None
        try:
            return split_inputs(objects, data)
        except ValueError:
            return None

    # -- divergence ------------------------------------------------------------------------

    def _diverge(self, state: State, why: str, states: Sequence[State] = ()) -> list[State]:
        """The replay of ``state``'s segment does not match the recording: report it, drop the
        recorded subtree, and let the state (and ``states``, just forked from it) explore on
        where its path is still feasible with the answers it took from the log; the states
        that go on (an infeasible one is no path: it is dropped)."""
        cursor: PathCursor = state.memo
        node = cursor.recorded
        assert node is not None, "only a replaying state diverges"
        self.diverged += 1
        lost = self._drop_subtree(node)
        self.lost_instructions += lost
        if self.diverged <= REPORTED_DIVERGENCES:
            site = self.executor.site_of(state)
            where = (f"{site.file}:{site.line}" if site is not None and site.line is not None
                     else site.function if site is not None else "the end of main")
            self.messages.append(f"symex: diverged from the recorded tree at node {node.id} "
                                 f"({where}): {why}; explored again ({lost} recorded "
                                 f"instructions lost)")
        elif self.diverged == REPORTED_DIVERGENCES + 1:
            self.messages.append("symex: more divergences from the recorded tree (counted in "
                                 "the statistics as SDiv)")
        live = self.executor.live_instructions(state)
        self.replayed_instructions += live - cursor.replay_from
        assumptions = tuple(cursor.assumptions)
        self._explore_from_here(cursor, live)
        cursor.checking = False
        survivors = []
        for s in states or (state,):
            # the replay took these answers from the log, not from the solver: the path holds
            # only if they still hold, and from now on they are part of it
            model = self.executor.solve(s, assumptions)
            if model is None:
                if s is state:
                    cursor.dropped = True
                    if states:  # forked: the engine drops it after its time slice
                        self._pruned.append(s)
                else:
                    self._drop(s, PathCursor(0, None, 0, s.instructions))
                continue
            for condition in assumptions:
                s.add_constraint(condition)
            s.model = model
            survivors.append(s)
        return survivors

    def _drop_subtree(self, node: RecordedNode | None) -> int:
        """Forget ``node`` and its recorded descendants (in memory; the descendants' rows on
        disk too: the node's row is written again when its segment ends); the instructions
        recorded in them."""
        if node is None:
            return 0
        lost = node.instructions
        stack = [c for _, c in node.children()]
        gone: list[int] = []
        while stack:
            child = self.recorded.pop(stack.pop(), None)
            if child is None:
                continue
            gone.append(child.id)
            lost += child.instructions
            stack.extend(c for _, c in child.children())
        if gone:
            self.store.delete_nodes(gone)
        self.recorded.pop(node.id, None)
        return lost

    def _resume(self, state: State, node: RecordedNode, live: int) -> None:
        """``state`` reached the point where the recording stopped its path: explore on. The
        test inputs recorded there satisfy the path as it is (the same constraints), so they
        are its model again: no query, and the values it concretizes next are the ones an
        uninterrupted run would have chosen from the same model."""
        if node.status is NodeStatus.CUT:
            inputs = self._recorded_inputs(state, node)
            if inputs is not None:
                state.model = {s.array: inputs[s.name] for s in state.symbolics}
        self._explore_from_here(state.memo, live)

    @staticmethod
    def _explore_from_here(cursor: PathCursor, live: int) -> None:
        cursor.recorded = None
        cursor.log = ()
        cursor.assumptions = ()
        cursor.replay_from = live

    # -- helpers ---------------------------------------------------------------------------

    def _site(self, site: Site | None) -> tuple[int, int | None]:
        """The hash of a site (for digests) and its location id (for rows)."""
        if site is None:
            return 0, None
        key = (site.function, site.block, site.instruction)
        known = self._sites.get(key)
        if known is None:
            known = (site_hash(site),
                     self.store.location_id(site.function, site.block, site.instruction, site.file,
                                            site.line))
            self._sites[key] = known
        return known

    def _reason_id(self, text: str) -> int:
        rid = self.store.reason_id(text)
        self._reason_texts[rid] = text
        return rid

    # -- the end ---------------------------------------------------------------------------

    def statistics(self, instructions: int, *, final: bool = False) -> MemoStatistics:
        """The counters so far; ``instructions``: all the run executed (Inew is the rest).
        ``final``: count the tree's rows exactly (a query over the whole table)."""
        if final:
            self.store.checkpoint()
            nodes = self.store.node_count()
        else:
            nodes = self.store.rows_written + len(self.recorded)
        return MemoStatistics(
            replayed_instructions=self.replayed_instructions,
            new_instructions=max(0, instructions - self.replayed_instructions),
            lost_instructions=self.lost_instructions, diverged_states=self.diverged,
            pruned_states=self.pruned, replayed_queries=self.replayed_queries,
            tree_time=self.time, tree_bytes=self.store.size_bytes(), tree_nodes=nodes)

    def run_completed(self) -> None:
        """The run explored everything it could (no limit stopped it): every recorded path
        was replayed or checked."""
        self._checked_all = True

    def close(self) -> None:
        """Write everything and close the file."""
        try:
            if self._checked_all and self.meta_when_checked is not None:
                self.store.set_meta(self.meta_when_checked)
        finally:
            self.store.close()


_FORK_STATUS = int(NodeStatus.FORK)


def _tag_name(tag: int) -> str:
    try:
        return DecisionTag(tag).name
    except ValueError:
        return f"tag {tag}"


def _describe(status: NodeStatus) -> str:
    if status is NodeStatus.FORK:
        return "forked otherwise"
    if status.resumable:
        return "had not got that far"
    return f"ended it otherwise ({status.name.lower()})"
