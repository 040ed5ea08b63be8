"""Cloud9's load-balancing rule: when the most loaded worker has at least ``ratio`` times the
load of the least loaded one, the two exchange work, the loaded one handing over its
shallowest states as jobs (the cheapest to rebuild).

A worker's load is its number of live states, as its last report gave it. The rule pairs the
most loaded with the least loaded, the second most with the second least, and so on, while
the rule holds; a worker that is already giving or receiving work is left out.

Cloud9 moves half the difference. symex moves at most :data:`MAX_JOBS_PER_MOVE` jobs: with
depth-first search the shallowest states hold most of a worker's subtree, so half of its
states is nearly all of its work; the giver then runs dry and the work bounces back, and
every move costs a rebuild and a cold solver cache (measured: tokens with 2 workers did 8.8 s
of work against 11.6 s, regexp's 2-worker speed-up rose from 1.54x to 1.7x; the simulation
in docs/benchmarks.md shows the same at 64 workers). ``LoadBalancer(max_jobs=None)`` is
Cloud9's rule. A worker with at most ``low_water`` states counts as idle, so that work is on
its way before it runs dry.
"""

from __future__ import annotations

import attrs

from symex.options import DEFAULT_BALANCE_RATIO

__all__ = ["DEFAULT_BALANCE_RATIO", "LOW_WATER", "MAX_JOBS_PER_MOVE", "LoadBalancer", "Move"]

#: a worker keeps at least this many states when it gives work
KEPT_STATES = 1
#: jobs one move hands over at most (see the module docstring)
MAX_JOBS_PER_MOVE = 1
#: a worker with at most this many live states counts as idle: work is sent before it runs
#: dry, so it does not wait a round trip for it
LOW_WATER = 1


@attrs.frozen
class Move:
    """Hand ``count`` jobs from worker ``source`` to worker ``target``."""

    source: int
    target: int
    count: int


@attrs.frozen
class LoadBalancer:
    """The rule (module docstring), with Cloud9's threshold by default."""

    ratio: float = DEFAULT_BALANCE_RATIO
    max_jobs: int | None = MAX_JOBS_PER_MOVE
    """Jobs one move hands over at most (None: half the difference, as Cloud9)."""
    low_water: int = LOW_WATER
    """A worker with at most this many states counts as idle (0: only an empty one)."""

    def moves(self, loads: dict[int, int], strategies: dict[int, str] | None = None) -> list[Move]:
        """The transfers the rule asks for between the workers of ``loads`` (worker ->
        load), most loaded first. With ``strategies`` (worker -> its search strategy, a
        portfolio), the rule holds between workers of one strategy, and work crosses to
        another strategy's worker only when that one is idle: otherwise a depth-first worker,
        always lightly loaded, drained a random-path worker of every state it made, and
        random-path completed no path of its own (0 of 19,010 in 5 s)."""
        if not strategies or len(set(strategies.values())) <= 1:
            return self._pairs(loads)
        out: list[Move] = []
        for name in sorted(set(strategies.values())):
            out += self._pairs({w: n for w, n in loads.items() if strategies.get(w) == name})
        paired = {m.source for m in out} | {m.target for m in out}
        idle = sorted(w for w in loads if w not in paired and loads[w] <= self.low_water)
        givers = sorted((w for w in loads if w not in paired and loads[w] > KEPT_STATES),
                        key=lambda w: (-loads[w], w))
        for target, source in zip(idle, givers):
            count = min(loads[source] // 2, loads[source] - KEPT_STATES)
            if self.max_jobs is not None:
                count = min(count, self.max_jobs)
            if count > 0:
                out.append(Move(source, target, count))
        return out

    def _pairs(self, loads: dict[int, int]) -> list[Move]:
        """The rule among the workers of ``loads``."""
        order = sorted(loads, key=lambda w: (loads[w], w))
        out: list[Move] = []
        low, high = 0, len(order) - 1
        while low < high:
            least, most = order[low], order[high]
            small, big = loads[least], loads[most]
            if small <= self.low_water:
                small = 0
            if big <= KEPT_STATES or big < self.ratio * small:
                break
            count = min((big - small) // 2, big - KEPT_STATES)
            if self.max_jobs is not None:
                count = min(count, self.max_jobs)
            if count <= 0:
                break
            out.append(Move(most, least, count))
            low += 1
            high -= 1
        return out
