"""Cloud9's load-balancing rule: when the most loaded worker has at least ``ratio`` times the
load of the least loaded one, the two exchange work, the loaded one handing over half the
difference as jobs (the shallowest states: the cheapest to rebuild).

A worker's load is its number of live states, as its last report gave it. The rule pairs the
most loaded with the least loaded, the second most with the second least, and so on, while
the rule holds; a worker that is already giving or receiving work is left out.
"""

from __future__ import annotations

import attrs

__all__ = ["DEFAULT_BALANCE_RATIO", "LoadBalancer", "Move"]

#: Cloud9's threshold x: a transfer when max load >= x * min load
DEFAULT_BALANCE_RATIO = 10.0
#: a worker keeps at least this many states when it gives work
KEPT_STATES = 1


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

    def moves(self, loads: dict[int, int]) -> list[Move]:
        """The transfers the rule asks for between the workers of ``loads`` (worker ->
        load), most loaded first."""
        order = sorted(loads, key=lambda w: (loads[w], w))
        out: list[Move] = []
        low, high = 0, len(order) - 1
        while low < high:
            least, most = order[low], order[high]
            small, big = loads[least], loads[most]
            if big <= KEPT_STATES or big < self.ratio * small:
                break
            count = min((big - small) // 2, big - KEPT_STATES)
            if count <= 0:
                break
            out.append(Move(most, least, count))
            low += 1
            high -= 1
        return out
