"""nurs:covnew's distance to uncovered code follows the call stack (KLEE's
minDistToUncoveredOnReturn): a state inside a fully covered callee is as close as what its
caller can still reach after the call returns, plus one for the frame left."""

from __future__ import annotations

import random
from pathlib import Path

import symex
from symex.core.search.searchers import BatchingSearcher, CoveringNewSearcher
from symex.core.state import Frame, State
from c_programs import write


def test_covnew_distance_follows_the_call_stack(tmp_path: Path) -> None:
    program = symex.compile(write(tmp_path, "calls.c", """
        int f(int x) { return x + 1; }
        int main(int argc, char **argv) {
            int y = f(argc);      /* block 0: the call, then the branch on y */
            if (y > 5) return 1;  /* block 1 */
            return 0;             /* block 2 */
        }
    """), ["-O0"])
    main, f = program.functions["main"], program.functions["f"]
    # main: the entry ends in the branch to the two returns, which meet in the last block
    assert len(f.blocks) == 1 and len(main.blocks) == 4
    state = State(0, 1)
    state.frames = [Frame(main, [], -1), Frame(f, [], 0)]
    state.frame = state.frames[-1]
    coverage = {"f": bytearray([1]), "main": bytearray([1, 1, 0, 1])}
    searcher = CoveringNewSearcher(random.Random(0), coverage)
    # f is covered: one frame back, main's block 2 is one edge from the call's block
    assert searcher._distance(state) == 1 + 1
    coverage["main"][2] = 1
    assert searcher._distance(state) == 10000  # nothing uncovered is reachable any more
    coverage["f"][0] = 0
    assert searcher._distance(state) == 0  # the state is in uncovered code itself


TEN_BRANCHES = """
    #include <klee/klee.h>
    #include <stdlib.h>
    int main(void) {
        unsigned char in[10];
        klee_make_symbolic(in, sizeof in, "in");
        int ones = 0;
        for (int i = 0; i < 10; i++)
            if (in[i] & 1)
                ones++;
        abort();   /* every path ends here, after ten forks */
    }
"""


def test_a_batch_runs_the_chosen_state_on_across_its_forks(tmp_path: Path) -> None:
    """KLEE's batching search (--batch-instructions): breadth-first alone makes all 1,024
    states before any reaches the end, so the first error leaves 1,023 open; batched for
    more instructions than a whole path takes, the chosen state runs on through its ten
    forks, leaving one sibling per fork; a small batch lies between. No path is lost."""
    program = symex.compile(write(tmp_path, "ten.c", TEN_BRANCHES))

    def left_open(batch: int) -> int:
        result = symex.explore(program, searcher="bfs", exit_on_error=True, batch_instructions=batch)
        assert result.paths.errors == 1
        return result.paths.partial

    assert left_open(0) == 1023
    assert left_open(1_000_000) == 10
    assert 10 < left_open(20) < 1023
    whole = symex.explore(program, searcher=["random-path", "nurs:covnew"], seed=3,
                          batch_instructions=10_000)
    assert (whole.paths.errors, whole.paths.partial) == (1024, 0)


class _Turns:
    """A searcher that hands out its states in turn (to see when a batch chooses again)."""

    def __init__(self, states: list[State]) -> None:
        self.states, self.turn = states, 0

    def select(self) -> State:
        self.turn += 1
        return self.states[(self.turn - 1) % len(self.states)]

    def update(self, current: State | None, added: object, removed: object) -> None:
        pass

    def empty(self) -> bool:
        return not self.states


def test_a_batch_ends_after_its_instructions_or_its_time() -> None:
    """KLEE's --batch-time: a batch whose steps are slow (queries) ends after its seconds
    even when its instructions are not run yet; with no time given, only instructions."""
    first, second = State(0, 1), State(1, 1)
    now = [0.0]
    batching = BatchingSearcher(_Turns([first, second]), 100, 5.0, clock=lambda: now[0])
    assert batching.select() is first
    first.instructions, now[0] = 99, 4.9
    assert batching.select() is first              # neither limit reached
    now[0] = 5.1
    assert batching.select() is second             # its time is up
    second.instructions = 100
    assert batching.select() is first              # its instructions are run
    untimed = BatchingSearcher(_Turns([first, second]), 100, clock=lambda: now[0])
    assert untimed.select() is first
    now[0] = 1e9
    assert untimed.select() is first
