"""``tests.csv``: one line per test of an output directory, as the run writes the test.

KLEE writes a ``.err`` file for the first error at each site only (``--emit-all-errors`` for
all), so the ``.err`` files do not say how every path ended: a replay that read only them
took the other erroneous paths for clean ones. This index does: each test's number, how its
path ended (``completed``, ``error``, ``partial``), its error kind, its exit code, the
instructions on its path and why it ended. A line is appended and flushed as each test is
written, so a killed run leaves an index of every test it wrote (a last line cut off by the
kill is ignored when read).
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import TextIO

import attrs

from symex.core.outcome import TestCase

__all__ = ["TEST_INDEX", "TestEntry", "TestIndexWriter", "read_test_index"]

#: the index's name in an output directory
TEST_INDEX = "tests.csv"
_COLUMNS = ("test", "status", "error", "exit_code", "instructions", "reason")


@attrs.frozen
class TestEntry:
    """One line of ``tests.csv``."""

    number: int
    status: str
    """``completed``, ``error`` or ``partial``."""
    error: str | None
    """The error kind (a ``.err`` suffix: ``ptr``, ``assert`` ...), None without an error."""
    exit_code: int | None
    instructions: int
    reason: str


class TestIndexWriter:
    """Appends a line per test to ``tests.csv`` (created with its header)."""

    __slots__ = ("_file", "_csv")

    def __init__(self, directory: Path) -> None:
        self._file: TextIO = open(directory / TEST_INDEX, "w", newline="", encoding="utf-8")
        self._csv = csv.writer(self._file)
        self._csv.writerow(_COLUMNS)
        self._file.flush()

    def add(self, number: int, test: TestCase) -> None:
        """The line of test ``number``, flushed at once."""
        self._csv.writerow((number, test.status.value,
                            test.error.kind.value if test.error is not None else "",
                            "" if test.exit_code is None else test.exit_code,
                            test.instructions, test.reason))
        self._file.flush()

    def close(self) -> None:
        """Close the file (the lines are on disk already)."""
        self._file.close()


def read_test_index(directory: str | os.PathLike[str]) -> dict[int, TestEntry] | None:
    """The entries of a directory's ``tests.csv`` by test number; None if it has none
    (a directory written by KLEE, or by a symex older than the index)."""
    path = Path(directory) / TEST_INDEX
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    entries: dict[int, TestEntry] = {}
    complete = text.endswith("\n")
    rows = list(csv.reader(io.StringIO(text)))
    if not complete and rows:
        rows.pop()  # the line a kill cut off
    for row in rows[1:]:
        if len(row) != len(_COLUMNS) or not row[0].isdigit():
            continue
        number, status, error, exit_code, instructions, reason = row
        entries[int(number)] = TestEntry(
            int(number), status, error or None,
            int(exit_code) if exit_code.lstrip("-").isdigit() else None,
            int(instructions) if instructions.isdigit() else 0, reason)
    return entries
