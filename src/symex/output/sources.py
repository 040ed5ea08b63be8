"""The program's source files as reports quote them (the ``.err`` files' stack lines, the
coverage page's listings), read once each.

A file is named by the program's debug information, which whoever wrote the program
chooses (``#line 1 "/etc/shadow"``, or a ``.ll`` file's ``DIFile``): a run for someone else
(the testing service's) confines reading to its ``root`` directory, so a report never quotes
a file from outside it.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["SourceFiles"]


class SourceFiles:
    """Source lines by file name, read on first use; with a ``root``, only files inside it
    (after every link is followed) are read."""

    __slots__ = ("root", "_lines")

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root).resolve() if root is not None else None
        self._lines: dict[str, list[str] | None] = {}

    def lines(self, file: str) -> list[str] | None:
        """The lines of ``file`` (None: not readable, or outside the root)."""
        if file not in self._lines:
            self._lines[file] = self._read(file)
        return self._lines[file]

    def line(self, file: str | None, number: int | None) -> str | None:
        """Line ``number`` (from 1) of ``file``, stripped; None where there is none."""
        if not file or not number:
            return None
        lines = self.lines(file)
        return lines[number - 1].strip() if lines is not None and 0 < number <= len(lines) else None

    def _read(self, file: str) -> list[str] | None:
        path = Path(file)
        try:
            if self.root is not None and not path.resolve().is_relative_to(self.root):
                return None
            return path.read_text(encoding="utf-8", errors="replace").splitlines()
        except (OSError, ValueError):
            return None
