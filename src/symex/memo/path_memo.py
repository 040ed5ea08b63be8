"""``PathMemo``: what the exploration loop (:class:`symex.exploration.Exploration`) asks of
the memo its executor reports decisions to: the tree recorder of this package
(:class:`~symex.memo.recorder.TreeRecorder`), or a parallel worker's job replay."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from symex.core.outcome import PathTerminated
    from symex.core.state import State
    from symex.memo.recorder import MemoStatistics

__all__ = ["PathMemo"]


class PathMemo(Protocol):
    """What the exploration loop asks of the memo its executor reports decisions to (a
    :class:`~symex.core.forks.DecisionMemo` too): the tree recorder of :mod:`symex.memo`,
    or a parallel worker's job replay. States it is replaying carry ``state.memo.recorded``
    not None; the loop runs those first."""

    messages: list[str]
    stop_after_replay: bool

    def attach(self, executor: Any) -> None:
        """Take the executor's decisions from now on."""
        ...

    def start(self, state: State) -> bool:
        """Place an initial state; False when there is nothing to explore from it."""
        ...

    def tick(self) -> None:
        """Called between time slices."""
        ...

    def replay_budget(self, state: State) -> int | None:
        """Instructions ``state`` may run before it must stop at a recorded point."""
        ...

    def reach_frontier(self, state: State) -> PathTerminated | None:
        """``state`` reached that point (its budget is 0); an end for it, or None."""
        ...

    def take_pruned(self) -> list[State]:
        """States that are no paths of this run (the loop drops them uncounted)."""
        ...

    def counts(self, state: State) -> bool:
        """Whether the end of ``state``'s path counts as a path."""
        ...

    def path_ended(self, state: State, end: PathTerminated) -> dict[str, bytes] | None:
        """A path ended; recorded test inputs for it, if the memo has them."""
        ...

    def leaf_written(self, state: State, objects: dict[str, bytes] | None) -> None:
        """The ended path's test inputs (None: none)."""
        ...

    def statistics(self, instructions: int, *, final: bool = False) -> MemoStatistics | None:
        """Counters for the progress line and the result."""
        ...

    def run_completed(self) -> None:
        """The run explored everything."""
        ...

    def close(self) -> None:
        """Release what the memo holds."""
        ...
