"""The status line of `symex run` fits the terminal it is drawn on.

It goes to stderr, which may be a terminal while stdout is a file, and the terminal may be
wider or narrower than 80 columns: the line is fitted to its real width, leaving out the
least telling parts first, never coverage or the errors found.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import termios
from types import SimpleNamespace

from symex.output.progress import ProgressDisplay, ProgressMode, format_progress


def _snapshot() -> SimpleNamespace:
    return SimpleNamespace(elapsed=12.3, instructions=5_837_389, live_states=3, completed=13125,
                           errors=892, covered_lines=27, total_lines=27, covered_branches=28,
                           total_branches=30, solver_time=1.23, memo=None, parallel=None)


def test_a_narrow_line_drops_counts_before_coverage() -> None:
    full = format_progress(_snapshot())
    assert "5.8M instrs" in full and "branches 93.3%" in full and "solver 10%" in full
    assert format_progress(_snapshot(), len(full)) == full
    for width in (100, 80, 60):
        line = format_progress(_snapshot(), width)
        assert len(line) <= width, (width, line)
        assert "892 errors" in line and "lines 100.0%" in line
    assert "branches 93.3%" in format_progress(_snapshot(), 60)
    assert "solver 10%" in format_progress(_snapshot(), 80)
    assert "instrs" not in format_progress(_snapshot(), 80)


def _drawn_on_terminal(columns: int) -> str:
    """What a live display writes for one snapshot on a pseudo-terminal ``columns`` wide."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    stream = os.fdopen(slave, "w")
    try:
        display = ProgressDisplay(ProgressMode.LIVE, stream)
        display(_snapshot())
        stream.flush()
        chunks = []
        while select.select([master], [], [], 0.2)[0]:
            chunks.append(os.read(master, 65536))
        drawn = b"".join(chunks).decode("utf-8", "replace")
        display.close()
    finally:
        stream.close()
        os.close(master)
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", drawn)  # the escapes rich draws with


def test_a_wide_terminal_shows_the_whole_line() -> None:
    drawn = _drawn_on_terminal(160)
    assert format_progress(_snapshot()) in drawn


def test_a_narrow_terminal_keeps_coverage_and_errors() -> None:
    drawn = _drawn_on_terminal(70)
    assert "892 errors" in drawn and "lines 100.0%" in drawn and "branches 93.3%" in drawn
    assert "…" not in drawn  # fitted, not cut
