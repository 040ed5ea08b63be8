"""Jobs: a node of the execution tree handed to a worker, and the replay that rebuilds it.

A job is the path from the root to one live state, as the sequence of *events* that decided
it: every answer the path took from the solver or from its inputs (which sides of a condition
were feasible, a value chosen, an option chosen; :class:`~symex.core.forks.DecisionTag`) and
every fork decision, in order, as LEB128 varints (``answer << 2 | tag``, ``decision << 2 |
3`` for a fork). Cloud9 sends only the branch decisions and lets the worker ask the solver
again for the rest; symex sends the answers too, so a worker rebuilds the state with no
solver call at all, and the state's inputs (its model) come along, so that the rebuilt state
goes on exactly as the state it was taken from would have.

:class:`JobReplay` is a worker's :class:`~symex.core.forks.DecisionMemo`: a state rebuilding a
job takes every answer from the job's events, and at each fork keeps only the child on the
job's path (the others belong to other workers: they are dropped without counting as paths).
Once the events are used up the state explores, and every state keeps the events of its own
path (a persistent list shared between forks), so any live state can be sent on as a job.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Iterator, Sequence

import attrs

from symex import expr as E
from symex.core.forks import DecisionTag, ForkKind, Site
from symex.core.outcome import PathStatus, PathTerminated
from symex.core.state import State
from symex.memo.format import decode_varints, encode_varints
from symex.memo.recorder import ROOT
from symex.parallel.tree import EndRow, Row, SegmentLog

__all__ = ["Job", "JobCursor", "JobReplay", "ROOT_JOB"]

#: the tag of a fork event (answers use DecisionTag's values, 0 to 2)
FORK_EVENT = 3


@attrs.frozen
class Job:
    """A node of the execution tree to explore below: the events of its path from the root
    (module docstring) and the inputs the state had when it was sent (array name -> bytes;
    None when unknown: the worker asks the solver when it needs them)."""

    events: bytes = b""
    depth: int = 0
    """Forks on the path (the cost of rebuilding the state grows with it)."""
    inputs: tuple[tuple[str, bytes], ...] | None = None
    hints: tuple[tuple[tuple[str, bytes], ...], ...] = ()
    """Models the sending worker's solver found recently (array name -> bytes each): the
    receiver tries them on its first queries below the job, as the sender's
    counter-example cache would have, instead of starting with a cold cache."""
    node: int = 0
    """The node of the run's recorded tree the state is in (0: none is recorded). In a
    worker's report, the worker's ref of it (:mod:`symex.parallel.tree`); the coordinator
    replaces it with the node's id."""

    def decisions(self) -> tuple[int, ...]:
        """The path's fork decisions, oldest first (Cloud9's encoding of a job)."""
        return tuple(e >> 2 for e in decode_varints(self.events) if e & 3 == FORK_EVENT)


#: the job of a whole exploration: the root, nothing to replay
ROOT_JOB = Job(node=ROOT)


class JobCursor:
    """A state's place in its job: the events of its path so far (``prefix``: a persistent
    list of the segments before its last fork, ``events``: those since), and while it
    rebuilds the job, the events still to replay."""

    __slots__ = ("job", "prefix", "events", "script", "position", "recorded", "dropped",
                 "inputs", "node", "digest", "start", "solver_time", "queries", "pending")

    # set by SegmentLog.begin, read only while ``node`` is not None
    digest: int
    start: int
    solver_time: float
    queries: int

    def __init__(self, job: int, prefix: tuple[Any, tuple[int, ...]] | None,
                 events: list[int], script: Sequence[int] = (), position: int = 0,
                 inputs: tuple[tuple[str, bytes], ...] | None = None) -> None:
        self.job = job
        self.prefix = prefix
        self.events = events
        self.script = script
        self.position = position
        #: True while the state replays its job's events (the engine orders such states
        #: first, by their own searcher), None once it explores
        self.recorded: bool | None = True if position < len(script) else None
        self.dropped = False
        self.inputs = inputs
        #: with a recorded tree: the ref of the segment the state is in (None: the state is
        #: rebuilding a job and has not reached its node yet, or nothing is recorded), and
        #: the segment's digest, first instruction and solver counters (SegmentLog.begin)
        self.node: int | None = None
        #: the row of a path that ended, waiting for its test inputs
        self.pending: EndRow | None = None

    def all_events(self) -> list[int]:
        """Every event of the path from the root, oldest first."""
        segments = [self.events]
        node = self.prefix
        while node is not None:
            segments.append(node[1])  # type: ignore[arg-type]
            node = node[0]
        out: list[int] = []
        for segment in reversed(segments):
            out.extend(segment)
        return out


class JobReplay:
    """The decision memo of a parallel worker (module docstring). The engine calls it the
    way it calls a tree recorder: ``start`` for each initial state, ``take_pruned`` for the
    states that are not this worker's, ``path_ended`` for each path's end."""

    def __init__(self, segments: SegmentLog | None = None) -> None:
        #: the recorder of the run's tree (None: the run records none)
        self.segments = segments
        #: jobs being rebuilt whose node is recorded: where their last fork is in their
        #: events (-1: none) and their node
        self._job_nodes: dict[int, tuple[int, int]] = {}
        self.executor: Any = None
        self.messages: list[str] = []
        self.stop_after_replay = False
        #: the job the next initial state rebuilds (set by the worker before it starts one)
        self.next_job: tuple[int, Job] = (0, ROOT_JOB)
        self._pruned: list[State] = []
        #: live states per job; a job whose count drops to zero is finished
        self.live: dict[int, int] = {}
        self.finished: list[int] = []
        self.replayed_events = 0
        self.diverged = 0

    # -- what the engine asks ---------------------------------------------------------------

    def attach(self, executor: Any) -> None:
        """Replay into ``executor`` (it calls back through ``executor.memo``)."""
        self.executor = executor
        executor.memo = self

    def start(self, state: State) -> bool:
        """Give an initial state the cursor of the job it rebuilds (:attr:`next_job`)."""
        job_id, job = self.next_job
        script = decode_varints(job.events) if job.events else ()
        cursor = JobCursor(job_id, None, [], script, 0, job.inputs)
        state.memo = cursor
        self.live[job_id] = self.live.get(job_id, 0) + 1
        if self.segments is not None and job.node:
            last_fork = max((i for i, e in enumerate(script) if e & 3 == FORK_EVENT),
                            default=-1)
            if last_fork < 0:
                self.segments.begin(cursor, -job.node, 0, state.instructions)
            else:
                self._job_nodes[job_id] = (last_fork, job.node)
        if not script:
            self._replayed(state, cursor)
        return True

    def tick(self) -> None:
        """Between time slices: nothing to write."""

    def replay_budget(self, state: State) -> int | None:
        """A job is replayed to its end whatever the instruction count: no limit."""
        return None

    def reach_frontier(self, state: State) -> PathTerminated | None:
        """Never reached: :meth:`replay_budget` sets no limit."""
        return None

    def take_pruned(self) -> list[State]:
        """States made by replayed forks that are not on this worker's job paths."""
        pruned, self._pruned = self._pruned, []
        return pruned

    def counts(self, state: State) -> bool:
        """Whether ``state``'s end counts as a path."""
        return not state.memo.dropped

    def path_ended(self, state: State, end: PathTerminated) -> dict[str, bytes] | None:
        """A path of this worker ended: one state fewer in its job (and its segment's row,
        when the tree is recorded and the state got as far as its node)."""
        cursor = state.memo
        if not cursor.dropped:
            self._release(cursor.job)
            if cursor.node is not None and cursor.recorded is None and self.segments:
                cursor.pending = self.segments.ended(cursor, end, self.executor.site_of(state),
                                                     state.instructions)
        return None

    def leaf_written(self, state: State, objects: dict[str, bytes] | None) -> None:
        """Record the ended path's row with its test inputs (with a recorded tree)."""
        cursor = state.memo
        if cursor.pending is not None and self.segments is not None:
            self.segments.written(cursor.pending, state, objects)
            cursor.pending = None

    def statistics(self, instructions: int, *, final: bool = False) -> None:
        """No tree statistics (the run's tree, if any, is the coordinator's)."""
        return None

    def run_completed(self) -> None:
        """Nothing to mark."""

    def close(self) -> None:
        """Nothing to close."""

    # -- what the worker asks ---------------------------------------------------------------

    def job_of(self, state: State) -> Job:
        """``state`` as a job another worker can rebuild; it is no longer this worker's."""
        job = self.describe(state)
        self._release(state.memo.job)
        return job

    def describe(self, state: State) -> Job:
        """``state`` as a job (a checkpoint's piece); it stays this worker's."""
        cursor: JobCursor = state.memo
        model = state.model
        inputs = None
        if model is not None:
            inputs = tuple((s.array.name, bytes(model.get(s.array, bytes(s.array.size))))
                           for s in state.symbolics)
        return Job(encode_varints(cursor.all_events()), state.depth, inputs,
                   node=cursor.node or 0)

    def take_rows(self) -> tuple[Row, ...]:
        """The tree rows recorded since the last call (none when no tree is recorded)."""
        return self.segments.take() if self.segments is not None else ()

    def take_finished(self) -> list[int]:
        """Jobs whose states have all ended (or moved on) since the last call."""
        finished, self.finished = self.finished, []
        return finished

    def _release(self, job: int) -> None:
        left = self.live[job] - 1
        if left:
            self.live[job] = left
        else:
            del self.live[job]
            self.finished.append(job)

    # -- DecisionMemo: what the executor tells and asks ------------------------------------

    def replayed_answer(self, state: State, tag: DecisionTag, expr: E.Expr) -> int | None:
        """The job's answer while ``state`` rebuilds it, else None."""
        cursor: JobCursor = state.memo
        if cursor.recorded is None:
            return None
        event = cursor.script[cursor.position]
        if event & 3 != tag:
            self._diverged(state, cursor, f"the job holds a {_event_name(event)} here, the "
                                          f"replay asked for a {tag.name}")
        cursor.position += 1
        cursor.events.append(event)
        self.replayed_events += 1
        if cursor.node is not None:
            self.segments.answered(cursor, tag, expr)  # type: ignore[union-attr]
        if cursor.position == len(cursor.script):
            self._replayed(state, cursor)
        return event >> 2

    def note_answer(self, state: State, tag: DecisionTag, expr: E.Expr, answer: int) -> None:
        """Keep an answer in the state's events."""
        cursor: JobCursor = state.memo
        cursor.events.append(answer << 2 | tag)
        if cursor.node is not None:
            self.segments.answered(cursor, tag, expr)  # type: ignore[union-attr]

    def solver_used(self, state: State, seconds: float) -> None:
        """Count a solver call in the state's segment (with a recorded tree)."""
        cursor: JobCursor = state.memo
        if cursor.node is not None:
            cursor.solver_time += seconds
            cursor.queries += 1

    def forked(self, kind: ForkKind, condition: E.Expr | None, states: Sequence[State],
               site: Site | None) -> None:
        """Record a fork in each state's events; while rebuilding a job, keep only the
        state that took the job's decision."""
        cursor: JobCursor = states[0].memo
        if cursor.dropped:
            for state in states[1:]:
                self._drop(state, JobCursor(cursor.job, None, []))
            return
        prefix = (cursor.prefix, tuple(cursor.events))
        if cursor.recorded is None:
            self.live[cursor.job] += len(states) - 1
            first = -1
            if cursor.node is not None:
                live = self.executor.live_instructions(states[0])
                first = self.segments.forked(  # type: ignore[union-attr]
                    cursor, kind, condition, states, site, live)
            for offset, state in enumerate(states):
                decision = state.last_decision()
                state.memo = child = JobCursor(cursor.job, prefix, [decision << 2 | FORK_EVENT])
                if first >= 0:
                    self.segments.begin(child, first + offset, decision,  # type: ignore[union-attr]
                                        live)
            return
        event = cursor.script[cursor.position]
        if event & 3 != FORK_EVENT or not any(s.last_decision() == event >> 2 for s in states):
            self._report_divergence(f"the job holds a {_event_name(event)} here, the replay "
                                    f"forked ({kind.name.lower()})")
            self._release(cursor.job)
            for state in states:
                self._drop(state, JobCursor(cursor.job, None, []))
            return
        self.replayed_events += 1
        for state in states:
            if state.last_decision() != event >> 2:
                self._drop(state, JobCursor(cursor.job, None, []))
                continue
            kept = JobCursor(cursor.job, prefix, [event], cursor.script, cursor.position + 1,
                             cursor.inputs)
            state.memo = kept
            node = self._job_nodes.get(cursor.job)
            if node is not None and node[0] == cursor.position:
                # the job's last fork: the state is in the job's node from here on
                self.segments.begin(kept, -node[1], event >> 2,  # type: ignore[union-attr]
                                    self.executor.live_instructions(states[0]))
            if kept.recorded is None:
                self._replayed(state, kept)

    # -- inside ------------------------------------------------------------------------------

    def _replayed(self, state: State, cursor: JobCursor) -> None:
        """``state`` has rebuilt its job: it explores on, with the inputs the job brought."""
        cursor.recorded = None
        cursor.script = ()
        self._job_nodes.pop(cursor.job, None)
        inputs = cursor.inputs
        cursor.inputs = None
        if inputs is not None:
            by_name = dict(inputs)
            if all(s.array.name in by_name for s in state.symbolics):
                state.model = {s.array: by_name[s.array.name] for s in state.symbolics}

    def _report_divergence(self, why: str) -> None:
        self.diverged += 1
        self.messages.append(f"symex: a job's replay diverged ({why}); its subtree is not "
                             f"explored (please report this as a bug)")

    def _drop(self, state: State, cursor: JobCursor) -> None:
        cursor.dropped = True
        cursor.recorded = None
        state.memo = cursor
        self._pruned.append(state)

    def _diverged(self, state: State, cursor: JobCursor, why: str) -> None:
        """A rebuilt path went otherwise than the path it was sent as: symex lost
        determinism (a bug). The path ends, reported, rather than explore a wrong state."""
        self._report_divergence(why)
        raise PathTerminated(PathStatus.PARTIAL, f"job replay diverged: {why}",
                             emit_test=False)


def _event_name(event: int) -> str:
    tag = event & 3
    return "fork" if tag == FORK_EVENT else DecisionTag(tag).name


def iter_events(job: Job) -> Iterator[tuple[str, int]]:
    """The events of ``job`` as (kind, value) pairs: ``fork`` and the answer tags' names."""
    for event in decode_varints(job.events):
        yield _event_name(event), event >> 2
