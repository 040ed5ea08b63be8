"""What a run could not follow: symbolic values it fixed to one value and calls to functions
nothing models, counted by program line (KLEE's messages.txt), also over parallel workers.
tests/programs/shortfalls/shortfalls.c has three paths (x < 0, x == 0, x > 0); the two
where x is still symbolic print it at line 18 (fixing it), and the x > 0 one then calls an
undefined function at line 20."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import symex
from symex.core.shortfalls import Shortfall, ShortfallKind

PROGRAM = Path(__file__).parent / "programs" / "shortfalls" / "shortfalls.c"


@pytest.mark.parametrize("workers", [1, 2])
def test_concretizations_and_unmodelled_calls_are_counted_by_line(workers: int) -> None:
    result = symex.explore(symex.compile(PROGRAM), workers=workers)
    assert result.paths.completed == 2 and result.paths.partial == 1
    assert set(result.shortfalls) == {
        Shortfall(ShortfallKind.CONCRETIZED, "printf argument", "shortfalls.c:18", 2),
        Shortfall(ShortfallKind.UNMODELLED, "not_defined_anywhere", "shortfalls.c:20", 1),
    }
    # the most frequent first
    assert result.shortfalls[0].count == 2


def test_messages_txt_lists_them(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "symex.cli", "run", "--output-dir", "out", str(PROGRAM)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    messages = (tmp_path / "out" / "messages.txt").read_text().splitlines()
    assert ("symex: warning: a symbolic printf argument at shortfalls.c:18 was fixed to one of "
            "its values 2 times (the others are not explored there)") in messages
    assert ("symex: warning: 1 path ended at a call to 'not_defined_anywhere' at shortfalls.c:20, "
            "which symex does not model") in messages
    # and the end of the run says them too
    assert "'not_defined_anywhere' at shortfalls.c:20" in proc.stderr
