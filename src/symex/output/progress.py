"""What a running ``symex run`` shows while it explores.

:class:`ProgressDisplay` is fed the engine's progress snapshots (``Hooks.on_progress``): on a
terminal it keeps one live status line on stderr (redrawn only when a snapshot arrives, with no
refresh thread, so it costs nothing between snapshots); elsewhere (a log file, CI) it prints a
plain line every ``plain_interval`` seconds; in quiet mode nothing.
"""

from __future__ import annotations

import enum
import os
import sys
from typing import Any, TextIO

__all__ = ["ProgressDisplay", "ProgressMode", "format_progress", "terminal_width"]


class ProgressMode(enum.Enum):
    """How progress is shown."""

    LIVE = "live"  # a status line redrawn in place (a terminal)
    PLAIN = "plain"  # a line now and then (not a terminal)
    QUIET = "quiet"  # nothing

    @classmethod
    def for_stream(cls, stream: TextIO, quiet: bool = False) -> ProgressMode:
        """LIVE on a terminal, PLAIN otherwise, QUIET when asked."""
        if quiet:
            return cls.QUIET
        try:
            return cls.LIVE if stream.isatty() else cls.PLAIN
        except (AttributeError, ValueError):
            return cls.PLAIN


def _count(n: float) -> str:
    if n >= 10_000_000:
        return f"{n / 1e6:.0f}M"
    if n >= 1_000_000:
        return f"{n / 1e6:.1f}M"
    if n >= 10_000:
        return f"{n / 1e3:.0f}k"
    return f"{int(n)}"


def format_progress(snapshot: Any, width: int | None = None) -> str:
    """One line: elapsed, instructions, live states, paths, errors, coverage, solver share,
    and, for a run over a recorded tree, its replay; for a run with workers, how the work is
    spread. With ``width``, the least telling parts are left out until the line fits (the
    workers' and the tree's details first, then instructions, live states and completed
    paths): a line cut at the edge would lose coverage and the solver's share instead."""
    s = snapshot
    lines = 100.0 * s.covered_lines / s.total_lines if s.total_lines else 0.0
    branches = 100.0 * s.covered_branches / s.total_branches if s.total_branches else 0.0
    parallel = getattr(s, "parallel", None)
    # with workers, the solver's share of the workers' time together
    workers = parallel.workers if parallel is not None else 1
    solver = 100.0 * s.solver_time / (s.elapsed * workers) if s.elapsed > 0 else 0.0
    memo = getattr(s, "memo", None)
    # (text, group, priority): groups are joined by " | ", parts of a group by ", "; the
    # highest priority number goes first when the line must shrink
    parts: list[tuple[str, int, int]] = [
        (f"{_count(s.instructions)} instrs", 0, 4), (f"{s.live_states} states", 0, 3),
        (f"{s.completed} completed", 0, 2), (f"{s.errors} errors", 0, 0),
        (f"lines {lines:.1f}%", 1, 0), (f"branches {branches:.1f}%", 1, 1),
        (f"solver {solver:.0f}%", 2, 1),
    ]
    if memo is not None:
        # MoKlee's view: how much was replayed, and what the replay found
        parts.append((f"tree: {getattr(s, 'replaying_states', 0)} replaying, "
                      f"{_count(memo.replayed_instructions)} replayed, {memo.pruned_states} pruned"
                      + (f", {memo.diverged_states} diverged" if memo.diverged_states else ""),
                      3, 5))
    if parallel is not None:
        # Cloud9's view: how the work is spread
        parts.append((f"workers: {parallel.workers}, {parallel.jobs_in_flight} jobs in flight, "
                      f"{parallel.balancing_moves} moves ({parallel.jobs_moved} jobs)"
                      + (f", {parallel.lost_workers} lost" if parallel.lost_workers else ""),
                      4, 6))
    head = f"[{s.elapsed:6.1f}s] "

    def joined(kept: list[tuple[str, int, int]]) -> str:
        groups: dict[int, list[str]] = {}
        for text, group, _ in kept:
            groups.setdefault(group, []).append(text)
        return head + " | ".join(", ".join(texts) for _, texts in sorted(groups.items()))

    line = joined(parts)
    while width is not None and len(line) > width and len(parts) > 1:
        drop = max(range(len(parts)), key=lambda i: (parts[i][2], i))
        if parts[drop][2] == 0:
            break  # errors and line coverage stay; the display cuts what is left
        del parts[drop]
        line = joined(parts)
    return line


def terminal_width(stream: TextIO) -> int | None:
    """The width of the terminal ``stream`` writes to (not stdout's: stdout may be a file
    while the status line goes to a terminal on stderr), or None if it is not one."""
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        return None


class ProgressDisplay:
    """Shows progress snapshots; call it with each one and :meth:`close` at the end."""

    def __init__(self, mode: ProgressMode, stream: TextIO | None = None,
                 plain_interval: float = 10.0) -> None:
        self.mode = mode
        self.stream = stream if stream is not None else sys.stderr
        self.plain_interval = plain_interval
        self._next_plain = plain_interval
        self._live: Any = None
        if mode is ProgressMode.LIVE:
            # imported here: quiet and plain runs never pay for rich's import
            from rich.console import Console
            from rich.live import Live

            # no auto-refresh: a refresh thread would compete with the run for the GIL
            # force_terminal: LIVE was chosen by the caller (ProgressMode.for_stream asks isatty)
            console = Console(file=self.stream, force_terminal=True,
                              width=terminal_width(self.stream) or 80)
            self._live = Live(console=console, auto_refresh=False,
                              transient=True, redirect_stdout=False, redirect_stderr=False)
            self._live.start()

    def __call__(self, snapshot: Any) -> None:
        """Show ``snapshot`` (a ``symex.results.ProgressSnapshot``)."""
        if self.mode is ProgressMode.LIVE:
            from rich.text import Text

            # one line, fitted to the terminal's width now (it may have been resized): a
            # wrapped line would be redrawn badly
            width = terminal_width(self.stream) or self._live.console.width
            self._live.console.width = width
            self._live.update(Text(format_progress(snapshot, width - 1), style="bold",
                                   no_wrap=True, overflow="ellipsis"), refresh=True)
        elif self.mode is ProgressMode.PLAIN and snapshot.elapsed >= self._next_plain:
            self.stream.write(f"symex: {format_progress(snapshot)}\n")
            self.stream.flush()
            while self._next_plain <= snapshot.elapsed:
                self._next_plain += self.plain_interval

    def close(self) -> None:
        """Remove the live line (the run's summary follows it)."""
        if self._live is not None:
            self._live.stop()
            self._live = None
