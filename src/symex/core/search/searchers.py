"""Searchers: which state runs next (KLEE's ``--search`` strategies).

A searcher sees the states the engine adds and removes and picks one to run. All randomness
comes from a ``random.Random`` seeded by the caller, so a run is deterministic for a seed.
"""

from __future__ import annotations

import collections
import random
import time
from typing import Protocol
from collections.abc import Callable, Sequence

import attrs

from symex.core.state import Frame, State
from symex.errors import ConfigError
from symex.plugins import PluginKind, load_plugin, plugin_names
from symex.ir.program import Function, Opcode

class Searcher(Protocol):
    """KLEE's Searcher interface."""

    def select(self) -> State:
        """The state to run next (the searcher must not be empty)."""
        ...

    def update(self, current: State | None, added: Sequence[State], removed: Sequence[State]) -> None:
        """``current`` ran (and maybe forked ``added``); ``removed`` states ended."""
        ...

    def empty(self) -> bool:
        """True when no state is left."""
        ...


class DFSSearcher:
    """Depth-first: always the newest state."""

    def __init__(self) -> None:
        self.states: list[State] = []

    def select(self) -> State:
        return self.states[-1]

    def update(self, current: State | None, added: Sequence[State], removed: Sequence[State]) -> None:
        self.states.extend(added)
        for s in removed:
            if self.states and self.states[-1] is s:
                self.states.pop()
            else:
                self.states.remove(s)

    def empty(self) -> bool:
        return not self.states


class BFSSearcher:
    """Breadth-first: the oldest state; a state that forked goes to the back (as in KLEE)."""

    def __init__(self) -> None:
        self.states: collections.deque[State] = collections.deque()

    def select(self) -> State:
        return self.states[0]

    def update(self, current: State | None, added: Sequence[State], removed: Sequence[State]) -> None:
        self.states.extend(added)
        if added and current is not None and current not in removed and self.states[0] is current:
            self.states.popleft()
            self.states.append(current)
        for s in removed:
            if self.states and self.states[0] is s:
                self.states.popleft()
            else:
                self.states.remove(s)

    def empty(self) -> bool:
        return not self.states


class RandomStateSearcher:
    """A uniformly random state."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.states: list[State] = []
        self.index: dict[int, int] = {}

    def select(self) -> State:
        return self.states[self.rng.randrange(len(self.states))]

    def update(self, current: State | None, added: Sequence[State], removed: Sequence[State]) -> None:
        for s in added:
            self.index[s.id] = len(self.states)
            self.states.append(s)
        for s in removed:
            i = self.index.pop(s.id)
            last = self.states.pop()
            if last is not s:
                self.states[i] = last
                self.index[last.id] = i

    def empty(self) -> bool:
        return not self.states


class TreeNode:
    """An internal node of the execution tree: a fork point. Its children are nodes or, at
    the leaves, the live states themselves (a state's ``node`` is the fork point holding it,
    None while it is the whole tree), so a fork adds one node, not three."""

    __slots__ = ("parent", "children")

    def __init__(self, parent: TreeNode | None, children: tuple[TreeNode | State, ...]) -> None:
        self.parent = parent
        self.children = children


class ExecutionTree:
    """The tree of forks (KLEE's PTree); random-path walks it from the root."""

    def __init__(self) -> None:
        self.root: TreeNode | State | None = None
        #: the node above several roots (a parallel worker starts one state per job), if any
        self._forest: TreeNode | None = None

    def add_root(self, state: State) -> None:
        """Start a tree at ``state``; a second root and later ones share one node above them
        (so random-path gives each root's subtree an equal chance)."""
        root = self.root
        state.node = None
        if root is None:
            self.root = state
            return
        if root is not self._forest:
            forest = TreeNode(None, (root,))
            if type(root) is TreeNode:
                root.parent = forest
            else:
                root.node = forest  # type: ignore[union-attr]
            self.root = self._forest = root = forest
        root.children += (state,)
        state.node = root

    def split(self, parent: State, child: State) -> None:
        """``parent`` forked ``child``: a fork point holding both takes the parent's place."""
        above = parent.node
        node = TreeNode(above, (parent, child))
        if above is None:
            self.root = node
        else:
            above.children = tuple(node if c is parent else c for c in above.children)
        parent.node = node
        child.node = node

    def remove(self, state: State) -> None:
        """Drop a finished state and every fork point left without children."""
        node = state.node
        state.node = None
        item: TreeNode | State = state
        while node is not None:
            node.children = tuple(c for c in node.children if c is not item)
            if node.children:
                return
            item, node = node, node.parent
        if self.root is item:
            self.root = None
            if item is self._forest:
                self._forest = None


class RandomPathSearcher:
    """KLEE's random-path: walk the execution tree from the root, a fair coin at every fork,
    so states in shallow, rarely-split subtrees get more turns."""

    def __init__(self, tree: ExecutionTree, rng: random.Random) -> None:
        self.tree = tree
        self.rng = rng
        self.count = 0

    def select(self) -> State:
        node = self.tree.root
        while type(node) is TreeNode:
            children = node.children
            node = children[self.rng.randrange(len(children))] if len(children) > 1 else children[0]
        return node  # type: ignore[return-value]

    def update(self, current: State | None, added: Sequence[State], removed: Sequence[State]) -> None:
        self.count += len(added) - len(removed)

    def empty(self) -> bool:
        return self.count <= 0


class CoveringNewSearcher:
    """KLEE's ``nurs:covnew``: random, weighted towards states close to uncovered code and
    states that recently covered something new.

    As in KLEE, a state's weight is computed when it joins and again each time it has run
    (it is the ``current`` of an update); the others keep theirs. Weighing every state at
    every selection cost a quarter of a memcached run with 10,000 live states. The distance
    to uncovered code follows the call stack (KLEE's ``minDistToUncoveredOnReturn``): a
    state inside a fully covered callee (``memchr``, a tokenizer) is as close as what its
    callers can still reach after it returns, one step per frame left."""

    def __init__(self, rng: random.Random, coverage: dict[str, bytearray]) -> None:
        self.rng = rng
        self.coverage = coverage
        self.states: list[State] = []
        self.weights: list[float] = []
        self.index: dict[int, int] = {}
        self.successors: dict[str, list[list[int]]] = {}

    def _successors(self, fn: Function) -> list[list[int]]:
        succ = self.successors.get(fn.name)
        if succ is None:
            succ = []
            for block in fn.blocks:
                last = block.instructions[-1] if block.instructions else None
                targets: list[int] = []
                if last is not None:
                    if last.opcode is Opcode.BR:
                        targets = [last.aux.target]
                    elif last.opcode is Opcode.CONDBR:
                        targets = [e.target for e in last.aux]
                    elif last.opcode is Opcode.SWITCH:
                        targets = [last.aux[0].target] + [e.target for _, e in last.aux[1]]
                    elif last.opcode is Opcode.INDIRECTBR:
                        targets = [e.target for e in last.aux]
                succ.append(targets)
            self.successors[fn.name] = succ
        return succ

    def _distance(self, state: State) -> int:
        """Blocks from the state to uncovered code: in the running function, else in a
        caller after the frames above it return (one more per frame left); 10,000 when
        none is reachable."""
        frames = state.frames
        for returns in range(len(frames)):
            found = self._distance_in(frames[-1 - returns])
            if found is not None:
                return found + returns
        return 10000

    def _distance_in(self, frame: Frame) -> int | None:
        """Blocks from the frame's block to an uncovered block of its function."""
        fn = frame.function
        covered = self.coverage.get(fn.name)
        if covered is None:
            return None
        succ = self._successors(fn)
        start = frame.block.index
        seen = {start}
        queue = collections.deque([(start, 0)])
        while queue:
            block, dist = queue.popleft()
            if not covered[block]:
                return dist
            for nxt in succ[block]:
                if nxt not in seen:
                    seen.add(nxt)
                    queue.append((nxt, dist + 1))
        return None

    def _weight(self, state: State) -> float:
        since = state.since_new_coverage
        inv_covnew = 1.0 / max(1, since - 1000) if since else 0.0
        distance = self._distance(state)
        inv_distance = 1.0 / distance if distance else 1.0
        return inv_covnew * inv_covnew + inv_distance * inv_distance

    def select(self) -> State:
        states = self.states
        total = sum(self.weights)
        if total <= 0:
            return states[self.rng.randrange(len(states))]
        return self.rng.choices(states, self.weights)[0]

    def update(self, current: State | None, added: Sequence[State], removed: Sequence[State]) -> None:
        states, weights, index = self.states, self.weights, self.index
        for s in added:
            index[s.id] = len(states)
            states.append(s)
            weights.append(self._weight(s))
        for s in removed:
            i = index.pop(s.id)
            last = states.pop()
            last_weight = weights.pop()
            if last is not s:
                states[i] = last
                weights[i] = last_weight
                index[last.id] = i
        if current is not None:
            i = index.get(current.id, -1)
            if i >= 0:
                weights[i] = self._weight(current)

    def empty(self) -> bool:
        return not self.states


class InterleavedSearcher:
    """Several searchers taking turns (KLEE's repeated ``--search`` options)."""

    def __init__(self, searchers: Sequence[Searcher]) -> None:
        self.searchers = list(searchers)
        self.turn = 0

    def select(self) -> State:
        searcher = self.searchers[self.turn % len(self.searchers)]
        self.turn += 1
        return searcher.select()

    def update(self, current: State | None, added: Sequence[State], removed: Sequence[State]) -> None:
        for searcher in self.searchers:
            searcher.update(current, added, removed)

    def empty(self) -> bool:
        return self.searchers[0].empty()


class BatchingSearcher:
    """KLEE's ``--use-batching-search``: the state the wrapped searcher chose keeps running,
    across its own forks, until it has run ``instructions`` more instructions or for
    ``seconds`` (KLEE's ``--batch-time``; 0: no time limit), or has ended; then the wrapped
    searcher chooses again.

    Without it every fork is a new choice, and a searcher that favours shallow states
    (random-path: a coin at every fork) rarely lets one path get past the argument parsing
    of a coreutils tool into the code that reads its input. KLEE's coreutils runs batch
    10,000 instructions, and at most 5 s: a path whose every step asks slow queries (seq's
    long doubles, date's parser) would otherwise hold the run for 10,000 instructions. A
    batch ended by its time depends on the machine's speed, so a run that ends one no longer
    repeats for its seed (``seconds=0`` keeps it repeatable). Unlike KLEE, the time does not
    grow after a batch that overran it."""

    def __init__(self, base: Searcher, instructions: int, seconds: float = 0.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.base = base
        self.instructions = instructions
        self.seconds = seconds
        self.clock = clock
        self.batched: State | None = None
        self.until = 0
        self.deadline = 0.0

    def select(self) -> State:
        batched = self.batched
        if batched is not None and batched.instructions < self.until and (
                not self.seconds or self.clock() < self.deadline):
            return batched
        batched = self.batched = self.base.select()
        self.until = batched.instructions + self.instructions
        if self.seconds:
            self.deadline = self.clock() + self.seconds
        return batched

    def update(self, current: State | None, added: Sequence[State], removed: Sequence[State]) -> None:
        self.base.update(current, added, removed)
        if self.batched is not None and any(s is self.batched for s in removed):
            self.batched = None

    def empty(self) -> bool:
        return self.base.empty()


@attrs.frozen
class SearchContext:
    """What a searcher is built from: the run's seeded random generator (shared by the
    searchers a run interleaves), the execution tree of live states, and the block coverage
    (function name -> one flag per block, set once the block ran)."""

    rng: random.Random
    tree: ExecutionTree
    coverage: dict[str, bytearray]


#: each searcher's name and how it is made from the run's :class:`SearchContext`; ``covnew``
#: is KLEE's short name for nurs:covnew
SEARCHERS: dict[str, Callable[[SearchContext], Searcher]] = {
    "dfs": lambda context: DFSSearcher(),
    "bfs": lambda context: BFSSearcher(),
    "random-state": lambda context: RandomStateSearcher(context.rng),
    "random-path": lambda context: RandomPathSearcher(context.tree, context.rng),
    "nurs:covnew": lambda context: CoveringNewSearcher(context.rng, context.coverage),
    "covnew": lambda context: CoveringNewSearcher(context.rng, context.coverage),
}
#: the names a run takes, as messages and the docs list them (the table less KLEE's alias)
SEARCHER_NAMES = tuple(name for name in SEARCHERS if name != "covnew")
#: the searchers that can order the states replaying a recorded tree: random-path walks the
#: tree of all live states, replaying or not, so it cannot order the replaying ones alone
REPLAY_SEARCHER_NAMES = tuple(name for name in SEARCHER_NAMES if name != "random-path")


def _maker(name: str) -> Callable[[SearchContext], Searcher] | None:
    """How the searcher ``name`` is made: symex's own, or an installed plug-in's."""
    make = SEARCHERS.get(name)
    return make if make is not None else load_plugin(PluginKind.SEARCHER, name)


def searcher_choices(*, replay: bool = False) -> str:
    """The searcher names to choose from, for messages: symex's own, then plug-ins'."""
    own = REPLAY_SEARCHER_NAMES if replay else SEARCHER_NAMES
    return ", ".join((*own, *plugin_names(PluginKind.SEARCHER)))


def _resolved(spec: str | Sequence[str], replay: bool) -> list[tuple[str, Callable[[SearchContext], Searcher]]]:
    """Each searcher name in ``spec`` with how it is made, checked (see searcher_names)."""
    names = [spec] if isinstance(spec, str) else list(spec)
    names = [n.strip() for name in names for n in name.split("+") if n.strip()]
    if not names:
        raise ConfigError(f"no searcher given; choose from {searcher_choices(replay=replay)}")
    resolved = []
    for name in names:
        make = _maker(name)
        if make is None:
            raise ConfigError(f"unknown searcher '{name}'; choose from "
                              f"{searcher_choices(replay=replay)}")
        if replay and name in SEARCHERS and name not in REPLAY_SEARCHER_NAMES \
                and name != "covnew":
            raise ConfigError(f"searcher '{name}' cannot order a replay (it walks every live "
                              f"state); choose from {searcher_choices(replay=True)}")
        resolved.append((name, make))
    return resolved


def searcher_names(spec: str | Sequence[str], *, replay: bool = False) -> list[str]:
    """The searcher names in ``spec`` (a name, names joined by ``+``, or a list of them),
    checked against :data:`SEARCHERS` and the installed plug-ins (``replay``: those that
    can order a replay); a ConfigError lists the names to choose from."""
    return [name for name, _ in _resolved(spec, replay)]


def make_searcher(spec: str | Sequence[str], *, seed: int, tree: ExecutionTree,
                  coverage: dict[str, bytearray]) -> Searcher:
    """A searcher from KLEE-style names (:data:`SEARCHERS`, or an installed plug-in's):
    ``"dfs"``, ``"random-path"``, ... A list (or names joined by ``+``) interleaves them."""
    context = SearchContext(random.Random(seed), tree, coverage)
    built = [make(context) for _, make in _resolved(spec, False)]
    return built[0] if len(built) == 1 else InterleavedSearcher(built)
