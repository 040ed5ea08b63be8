"""Seeds: concrete inputs that steer the search first (KLEE's ``--seed-file``/``--seed-dir``).

A seed gives bytes for some of a run's symbolic objects, by name (``packet-0``, ``arg00``,
``stdin``, ``A-data``: the names tests carry). Every state starts with all the seeds; a state
keeps those its path constraints still hold under (bytes the seed does not give read as
zero, KLEE's ``--zero-seed-extension``). At a fork, the seed satisfies one side: the state on
that side keeps it, the other side goes on without. The searcher runs states that still
follow a seed before any other, newest first, so each seed is followed to the end of its
path first; the states forked off along the way (every branch the seed did not take) are
then explored by the run's own searcher. The exploration stays complete: seeds change the
order, never what is explored.

Why: a parser that reads a whole packet before deciding anything (memcached's text
protocol: a command ends at the first ``\\n``, then splits at spaces, then compares words)
makes a tree whose breadth is junk commands; a seed of one real command puts a path, and
every fork beside it, inside the command's handler at once (KLEE's seeding, as zesti and
hybrid fuzzers use it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from symex import expr as E
from symex.core.search.searchers import Searcher
from symex.core.state import State
from symex.errors import ConfigError

__all__ = ["Seed", "SeedFollowing", "SeededSearcher", "seeds_from_mappings"]


@attrs.frozen
class Seed:
    """Bytes for symbolic objects by name (a ``.ktest`` file's objects), and where they
    came from (for messages)."""

    objects: tuple[tuple[str, bytes], ...]
    origin: str = ""

    def assignment(self, state: State) -> E.Assignment:
        """The seed's bytes for ``state``'s symbolic arrays (fitted to each array's size:
        cut, or extended with zeros)."""
        given = dict(self.objects)
        values: dict[E.Array, bytes] = {}
        for symbolic in state.symbolics:
            data = given.get(symbolic.name)
            if data is not None:
                size = symbolic.array.size
                values[symbolic.array] = data[:size].ljust(size, b"\0")
        return E.Assignment(values)


def seeds_from_mappings(seeds: Sequence[Mapping[str, bytes | str] | Seed]) -> tuple[Seed, ...]:
    """Seeds from ``explore(seeds=...)``: each a :class:`Seed` or a mapping of object name
    to bytes (a ``str`` is encoded as UTF-8)."""
    out: list[Seed] = []
    for i, seed in enumerate(seeds):
        if isinstance(seed, Seed):
            out.append(seed)
            continue
        if not isinstance(seed, Mapping):
            raise ConfigError(f"seed {i} is a {type(seed).__name__}; give a mapping of "
                              "symbolic object name to bytes, e.g. {'packet-0': b'get k\\r\\n'}")
        objects = []
        for name, data in seed.items():
            if isinstance(data, str):
                data = data.encode()
            if not isinstance(name, str) or not isinstance(data, (bytes, bytearray)):
                raise ConfigError(f"seed {i}: object {name!r} must map a name to bytes")
            objects.append((name, bytes(data)))
        out.append(Seed(tuple(objects), f"seed {i}"))
    return tuple(out)


class SeedFollowing:
    """The seeds a state still follows, and how many of its constraints they were checked
    against (forks share it: a child's constraints extend its parent's)."""

    __slots__ = ("seeds", "checked")

    def __init__(self, seeds: tuple[Seed, ...], checked: int) -> None:
        self.seeds = seeds
        self.checked = checked


def refresh(state: State) -> bool:
    """Drop the seeds ``state``'s newer constraints do not hold under, and make the first
    seed left the state's inputs (``State.model``: a concretization then picks the seed's
    value, a branch knows the seed's side feasible without asking the solver); whether any
    seed is left."""
    following: SeedFollowing | None = state.seeds
    if following is None:
        return False
    constraints = state.constraints
    new = constraints[following.checked:]
    kept: list[tuple[Seed, E.Assignment]] = []
    for seed in following.seeds:
        assignment = seed.assignment(state)
        if all(assignment.evaluate(c) == 1 for c in new):
            kept.append((seed, assignment))
    if not kept:
        state.seeds = None
        return False
    if len(kept) < len(following.seeds) or new:
        state.seeds = SeedFollowing(tuple(seed for seed, _ in kept), len(constraints))
    state.model = kept[0][1].values
    return True


class SeededSearcher:
    """States that follow a seed first (newest first), then the wrapped searcher's choice.

    The wrapped searcher holds every state, seeded or not, so it is ready to take over the
    moment the last seeded state forks off its seed or ends."""

    def __init__(self, base: Searcher) -> None:
        self.base = base
        self.seeded: list[State] = []

    def select(self) -> State:
        seeded = self.seeded
        return seeded[-1] if seeded else self.base.select()

    def update(self, current: State | None, added: Sequence[State], removed: Sequence[State]) -> None:
        self.base.update(current, added, removed)
        seeded = self.seeded
        for s in removed:
            if s.seeds is not None and s in seeded:
                seeded.remove(s)
        if current is not None and current.seeds is not None and current not in removed \
                and not refresh(current):
            seeded.remove(current)
        for s in added:
            if s.seeds is not None and refresh(s):
                seeded.append(s)

    def empty(self) -> bool:
        return self.base.empty()
