"""nurs:covnew's distance to uncovered code follows the call stack (KLEE's
minDistToUncoveredOnReturn): a state inside a fully covered callee is as close as what its
caller can still reach after the call returns, plus one for the frame left."""

from __future__ import annotations

import random
from pathlib import Path

import symex
from symex.core.search.searchers import CoveringNewSearcher
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
