"""Read a recorded execution tree: its nodes, their children, how each path ended.

    with RecordedTree.open("symex-out-0") as tree:       # a directory or its tree.db
        tree.program, tree.inputs
        for leaf in tree.leaves():
            leaf.status, leaf.path, leaf.error_kind, leaf.exit_code, leaf.reason
            tree.inputs_of(leaf)                           # {"stdin": b"..."} or None

Read-only: a tree being recorded by a running symex can be read at the same time (it sees
what was written up to the last batch). See docs/memo.md for the format itself.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import attrs

from symex.core.forks import DecisionTag, ForkKind, Site
from symex.core.outcome import ErrorKind
from symex.memo.format import (
    NodeStatus,
    decode_varints,
    default_decisions,
    error_kind,
    split_inputs,
    unpack_inputs,
)
from symex.memo.opening import find_tree
from symex.memo.store import TreeFileError, TreeStore

__all__ = ["RecordedTree", "RecordedNode"]


@attrs.frozen
class RecordedNode:
    """One node: a segment of a path from its parent's fork to its own fork or end. A node
    with status ``OPEN`` was never recorded (its path was still running when its run
    stopped): only its id, parent and decision are known."""

    id: int
    parent: int | None
    decision: int
    """The outcome of the parent's fork this node follows (see ``ForkKind``)."""
    status: NodeStatus
    fork_kind: ForkKind | None = None
    error_kind: ErrorKind | None = None
    exit_code: int | None = None
    reason: str | None = None
    """Why a ``PARTIAL`` or ``CUT`` path stopped."""
    site: Site | None = None
    """Where the node forked or ended (None: main returned, or not recorded)."""
    instructions: int = 0
    """Instructions executed in the segment."""
    solver_time: float = 0.0
    """Seconds in the solver during the segment."""
    queries: int = 0
    """Solver calls during the segment."""
    hash: int = 0
    children: tuple[tuple[int, int], ...] = ()
    """(decision, child id) of a fork, in child order."""
    path: tuple[int, ...] = ()
    """The decisions from the root to this node (a test's ``TestCase.path`` for a leaf)."""

    @property
    def is_leaf(self) -> bool:
        """Whether the path ended or stopped here (or was never recorded further)."""
        return self.status is not NodeStatus.FORK


class RecordedTree:
    """A recorded tree (see the module docstring)."""

    def __init__(self, store: TreeStore) -> None:
        self._store = store
        meta = store.meta
        self.program: str = meta.get("program", "")
        """The program's file name."""
        self.program_hash: str = meta.get("program_hash", "")
        self.inputs: str = meta.get("inputs", "")
        """The inputs spec the tree was recorded for."""
        self.hash_constants = meta.get("hash_constants", "1") == "1"
        locations = store.table("location")
        reasons = {rid: text for rid, (text,) in store.table("reason").items()}
        self._layouts = {lid: [(n, s) for n, s in json.loads(objects)]
                         for lid, (objects,) in store.table("layout").items()}
        self._nodes: dict[int, RecordedNode] = {}
        parents: dict[int, tuple[int | None, int]] = {}
        rows = list(store.node_rows())
        for row in rows:
            (node_id, parent, decision, status, kind, detail, location, instructions,
             solver_us, queries, digest, first_child, decisions, _log) = row
            status = NodeStatus(status)
            children: tuple[tuple[int, int], ...] = ()
            fork_kind = None
            if status is NodeStatus.FORK and kind is not None and first_child is not None:
                fork_kind = ForkKind(kind)
                taken = (decode_varints(decisions) if decisions is not None
                         else default_decisions(fork_kind))
                children = tuple((d, first_child + i) for i, d in enumerate(taken))
                for d, child in children:
                    parents[child] = (node_id, d)
            site = None
            if location is not None and location in locations:
                site = Site(*locations[location])
            self._nodes[node_id] = RecordedNode(
                id=node_id, parent=parent, decision=decision, status=status,
                fork_kind=fork_kind,
                error_kind=error_kind(kind) if status is NodeStatus.ERROR and kind else None,
                exit_code=detail if status is NodeStatus.COMPLETED else None,
                reason=(reasons.get(detail) if detail is not None
                        and status in (NodeStatus.PARTIAL, NodeStatus.CUT) else None),
                site=site, instructions=instructions, solver_time=solver_us / 1e6,
                queries=queries, hash=digest, children=children)
        for child, (parent, decision) in parents.items():
            if child not in self._nodes:
                self._nodes[child] = RecordedNode(id=child, parent=parent, decision=decision,
                                              status=NodeStatus.OPEN)
        self._with_paths()

    def _with_paths(self) -> None:
        """Fill every node's path (iteratively, from the root down)."""
        root = self._nodes.get(1)
        if root is None:
            return
        stack: list[tuple[RecordedNode, tuple[int, ...]]] = [(root, ())]
        while stack:
            node, path = stack.pop()
            self._nodes[node.id] = attrs.evolve(node, path=path)
            for decision, child in node.children:
                if child in self._nodes:
                    stack.append((self._nodes[child], (*path, decision)))

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> RecordedTree:
        """The tree of an output directory (or a tree.db); TreeFileError if it is none."""
        store = TreeStore.open(find_tree(path), writable=False)
        try:
            return cls(store)
        except (ValueError, TypeError) as exc:
            store.close()
            raise TreeFileError(f"{os.fspath(path)} is a damaged execution tree ({exc}); "
                                f"record a new tree with --record-tree") from exc

    def __enter__(self) -> RecordedTree:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the file."""
        self._store.close()

    # -- walking ---------------------------------------------------------------------------

    @property
    def root(self) -> RecordedNode | None:
        """The root (None for a tree with nothing recorded yet)."""
        return self._nodes.get(1)

    def node(self, node_id: int) -> RecordedNode:
        """A node by id (KeyError when there is none)."""
        return self._nodes[node_id]

    def children(self, node: RecordedNode | int) -> list[RecordedNode]:
        """The children of a fork, in child order (unrecorded ones as ``OPEN`` nodes)."""
        node = self._nodes[node] if isinstance(node, int) else node
        return [self._nodes[child] for _, child in node.children]

    def nodes(self) -> Iterator[RecordedNode]:
        """Every node, in id order."""
        for node_id in sorted(self._nodes):
            yield self._nodes[node_id]

    def leaves(self) -> Iterator[RecordedNode]:
        """Every leaf (ended, stopped or unexplored path), in id order."""
        return (node for node in self.nodes() if node.is_leaf)

    def __len__(self) -> int:
        return len(self._nodes)

    def inputs_of(self, node: RecordedNode | int) -> dict[str, bytes] | None:
        """The test inputs recorded with a leaf (object name -> bytes), or None."""
        node_id = node if isinstance(node, int) else node.id
        blob = self._store.inputs(node_id)
        if blob is None:
            return None
        layout, data = unpack_inputs(blob)
        return split_inputs(self._layouts.get(layout, []), data)

    def answers_of(self, node: RecordedNode | int) -> list[tuple[str, int]]:
        """The answers recorded for a node's segment, in order: (``SPLIT``/``VALUE``/
        ``OPTION``, answer)."""
        node_id = node if isinstance(node, int) else node.id
        log = self._store.log(node_id)
        return [(DecisionTag(e & 3).name, e >> 2) for e in decode_varints(log or b"")]
