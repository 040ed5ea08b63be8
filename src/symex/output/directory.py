"""KLEE's output directory: ``symex-out-N`` with one ``.ktest`` per test, ``.err`` per error.

    out = OutputDirectory.create(requested=None)        # ./symex-out-0, ./symex-out-1, ...
    out.write_assembly(program.ir_text)
    hooks = Hooks(on_path_end=out.add_test)              # tests are written as they arrive
    ...
    out.write_info(...); out.write_messages(result.messages)

Every file is written to a temporary name and renamed into place, so an interrupted run never
leaves half a file: what is in the directory is always complete and readable.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from collections.abc import Iterable, Sequence

import attrs

from symex.core.outcome import ProgramError, StackEntry, TestCase
from symex.errors import SymexError
from symex.output.atomic_write import write_atomically
from symex.output.ktest import KTest, KTestObject
from symex.output.sources import SourceFiles
from symex.output.test_index import TestIndexWriter

__all__ = ["LAST_LINK", "OutputDirectory", "OutputDirectoryError", "RunSummary",
           "assembly_line", "parse_info", "read_info", "write_atomically"]

#: a file holding room on the disk for ``info`` while the run goes (removed at its end)
RESERVE_FILE = ".info-reserve"
RESERVE_BYTES = 64 << 10
#: the symlink pointing at the newest output directory (as KLEE's ``klee-last``)
LAST_LINK = "symex-last"
_PREFIX = "symex-out-"


class OutputDirectoryError(SymexError):
    """The output directory cannot be created or is not usable."""


@attrs.frozen
class RunSummary:
    """What the ``info`` file reports about a finished (or interrupted) run."""

    command_line: tuple[str, ...]
    working_directory: str
    start: str
    """ISO 8601 start time."""
    end: str
    elapsed: float
    halted: str | None
    completed: int
    partial: int
    errors: int
    tests: int
    instructions: int
    solver_queries: int
    covered_lines: int
    total_lines: int
    covered_branches: int = 0
    total_branches: int = 0
    shed_paths: int = 0
    """Paths the memory cap ended while they waited."""
    compiler: str = ""
    """What compiled the program (``loading.compiler_used``)."""
    library: str = ""
    """The C library linked in and why (``Program.library``, ``library_reason``)."""

    @property
    def explored(self) -> int:
        """All explored paths."""
        return self.completed + self.partial + self.errors


def _percent(part: int, whole: int) -> float:
    return 100.0 * part / whole if whole else 0.0


class OutputDirectory:
    """One run's output directory; tests are numbered in the order :meth:`add_test` sees them."""

    def __init__(self, path: Path, *, program_args: Sequence[str] = (),
                 emit_all_errors: bool = False, write_coverage: bool = False,
                 source_root: str | os.PathLike[str] | None = None) -> None:
        self.path = path
        self.program_args = tuple(program_args)
        self.emit_all_errors = emit_all_errors
        self.write_coverage = write_coverage
        self.tests = 0
        self.error_files = 0
        self._error_sites: set[tuple[object, ...]] = set()
        self._assembly: list[str] | None = None
        #: the program's source files, as the .err files quote them (``source_root`` confines them)
        self.sources = SourceFiles(source_root)
        self._index: TestIndexWriter | None = None
        #: the ``symex-last`` link this directory replaced: (link, its old target or None)
        self._previous_link: tuple[Path, str | None] | None = None

    @classmethod
    def create(cls, requested: str | os.PathLike[str] | None = None, *,
               parent: str | os.PathLike[str] = ".", program_args: Sequence[str] = (),
               emit_all_errors: bool = False, write_coverage: bool = False,
               source_root: str | os.PathLike[str] | None = None) -> OutputDirectory:
        """Create ``requested`` (which must not exist or be empty, as KLEE insists) or the lowest
        free ``symex-out-N`` under ``parent``, and point ``symex-last`` there. Reports quote
        source files only from inside ``source_root`` when one is given (:class:`SourceFiles`)."""
        base = Path(parent)
        if requested is not None:
            path = Path(requested)
            if path.exists() and (not path.is_dir() or any(path.iterdir())):
                raise OutputDirectoryError(
                    f"output directory {os.fspath(path)} already exists and is not empty; "
                    f"remove it or pass another --output-dir")
            try:
                path.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise OutputDirectoryError(f"cannot create output directory {os.fspath(path)}: "
                                           f"{exc.strerror or exc}") from exc
        else:
            path = cls._next_free(base)
        out = cls(path, program_args=program_args, emit_all_errors=emit_all_errors,
                  write_coverage=write_coverage, source_root=source_root)
        out._link_last(base if requested is None else path.parent)
        out._reserve()
        return out

    def _reserve(self) -> None:
        """Hold :data:`RESERVE_BYTES` of the disk for ``info``: a run that fills the disk
        still says how it ended (the reserve is given back to write it)."""
        try:
            (self.path / RESERVE_FILE).write_bytes(bytes(RESERVE_BYTES))
        except OSError:
            pass  # no room even now: the run will say so when it writes

    @staticmethod
    def _next_free(base: Path) -> Path:
        taken = set()
        if base.is_dir():
            for entry in base.iterdir():
                suffix = entry.name[len(_PREFIX):]
                if entry.name.startswith(_PREFIX) and suffix.isdigit():
                    taken.add(int(suffix))
        number = 0
        while True:
            while number in taken:
                number += 1
            path = base / f"{_PREFIX}{number}"
            try:
                path.mkdir(parents=True)  # fails if a concurrent run took it: try the next
                return path
            except FileExistsError:
                taken.add(number)
            except OSError as exc:
                raise OutputDirectoryError(f"cannot create output directory {os.fspath(path)}: "
                                           f"{exc.strerror or exc}; pass --output-dir") from exc

    def _link_last(self, where: Path) -> None:
        link = where / LAST_LINK
        try:
            if link.is_symlink():
                self._previous_link = (link, os.readlink(link))
                link.unlink()
            elif not link.exists():
                self._previous_link = (link, None)
            elif link.exists():
                return  # a real file or directory of the user's: leave it alone
            target = self.path.name if self.path.parent.resolve() == where.resolve() \
                else str(self.path.resolve())
            link.symlink_to(target, target_is_directory=True)
        except OSError:
            pass  # file systems without symlinks: the link is a convenience only

    # -- per test ------------------------------------------------------------------------

    def add_test(self, test: TestCase) -> int:
        """Write ``testNNNNNN.ktest`` (and ``.err``, ``.cov``) for the next test, and its line
        of ``tests.csv``; its number."""
        number = self.tests + 1
        stem = self.path / f"test{number:06d}"
        ktest = KTest(args=self.program_args,
                      objects=tuple(KTestObject(name, data) for name, data in test.objects.items()))
        write_atomically(stem.with_suffix(".ktest"), ktest.to_bytes())
        self.tests = number  # counted once it is whole on disk
        if self._index is None:
            self._index = TestIndexWriter(self.path)
        self._index.add(number, test)
        error = test.error
        if error is not None and (self.emit_all_errors or error.site not in self._error_sites):
            self._error_sites.add(error.site)
            write_atomically(self.path / f"test{number:06d}.{error.kind.value}.err",
                             self.error_report(error))
            self.error_files += 1
        if test.threads:
            write_atomically(stem.with_suffix(".early"), self.early_report(test))
        if self.write_coverage and test.covered_lines is not None:
            lines = sorted(test.covered_lines)
            write_atomically(stem.with_suffix(".cov"), "".join(f"{f}:{n}\n" for f, n in lines))
        return number

    def error_report(self, error: ProgramError) -> str:
        """The text of a ``.err`` file: message, location, assembly.ll line, stack with source."""
        file, line = error.location if error.location else ("unknown", 0)
        out = [f"Error: {error.message}", f"File: {file}", f"Line: {line}"]
        asm = self._assembly_line(error)
        if asm is not None:
            out.append(f"assembly.ll line: {asm}")
        out.append("Stack:")
        self._stack_lines(out, error.stack)
        for label, stack in error.threads:
            out.append(f"Stack of {label}:")
            self._stack_lines(out, stack)
        return "\n".join(out) + "\n"

    def early_report(self, test: TestCase) -> str:
        """The text of a ``.early`` file (KLEE's name for a path stopped early): why, and
        where every thread waited."""
        out = [f"Stopped: {test.reason}"]
        for label, stack in test.threads:
            out.append(f"Stack of {label}:")
            self._stack_lines(out, stack)
        return "\n".join(out) + "\n"

    def _stack_lines(self, out: list[str], stack: tuple[StackEntry, ...]) -> None:
        for depth, (function, frame_file, frame_line) in enumerate(stack):
            at = f"{frame_file}:{frame_line}" if frame_file and frame_line else (frame_file or "?")
            out.append(f"\t#{depth:03d} in {function} at {at}")
            source = self._source_line(frame_file, frame_line)
            if source:
                out.append(f"\t     {source}")

    def _source_line(self, file: str | None, line: int | None) -> str | None:
        return self.sources.line(file, line)

    def _assembly_line(self, error: ProgramError) -> int | None:
        if self._assembly is None or not error.instruction:
            return None
        function = error.stack[0][0] if error.stack else None
        return assembly_line(self._assembly, error.instruction, function,
                             error.location[1] if error.location else None)

    # -- whole-run files -----------------------------------------------------------------

    def write_assembly(self, ir_text: str) -> None:
        """``assembly.ll``: the IR the run executed (``.err`` files point into it)."""
        write_atomically(self.path / "assembly.ll", ir_text)
        self._assembly = ir_text.splitlines()

    def close(self) -> None:
        """Close the test index (every line is on disk already) and give the reserve back."""
        if self._index is not None:
            self._index.close()
            self._index = None
        (self.path / RESERVE_FILE).unlink(missing_ok=True)

    def discard(self) -> None:
        """Remove the directory of a run that failed before it wrote any test, and point
        ``symex-last`` back where it pointed: a run that never started leaves nothing."""
        if self.tests:
            return
        self.close()
        shutil.rmtree(self.path, ignore_errors=True)
        if self._previous_link is not None:
            link, target = self._previous_link
            try:
                if link.is_symlink():
                    link.unlink()
                if target is not None:
                    link.symlink_to(target, target_is_directory=True)
            except OSError:
                pass  # the link is a convenience only

    def write_messages(self, messages: Iterable[str]) -> None:
        """``messages.txt``: the program's and symex's messages and warnings, one per line."""
        write_atomically(self.path / "messages.txt", "".join(f"{m}\n" for m in messages))

    def write_info(self, summary: RunSummary) -> None:
        """``info``: how the run was started, when, why it stopped, and what it found."""
        s = summary
        lines = [
            "command line: " + " ".join(_quote(a) for a in s.command_line),
            f"working directory: {s.working_directory}",
            *([f"compiler: {s.compiler}"] if s.compiler else []),
            *([f"C library: {s.library}"] if s.library else []),
            f"started: {s.start}",
            f"finished: {s.end}",
            f"elapsed: {s.elapsed:.3f} s",
            f"stopped: {s.halted or 'all paths explored'}",
            f"symex: done: explored paths = {s.explored}",
            f"symex: done: completed paths = {s.completed}",
            f"symex: done: partial paths = {s.partial}",
            f"symex: done: error paths = {s.errors}",
            f"symex: done: generated tests = {s.tests}",
            f"symex: done: total instructions = {s.instructions}",
            f"symex: done: solver queries = {s.solver_queries}",
            f"symex: done: line coverage = {_percent(s.covered_lines, s.total_lines):.2f}% "
            f"({s.covered_lines} of {s.total_lines} lines)",
            f"symex: done: branch coverage = {_percent(s.covered_branches, s.total_branches):.2f}% "
            f"({s.covered_branches} of {s.total_branches} branches)",
        ]
        if s.shed_paths:
            lines.append(f"symex: done: paths ended by the memory cap = {s.shed_paths}")
        text = "\n".join(lines) + "\n"
        try:
            write_atomically(self.path / "info", text)
        except OSError:
            # the disk is full: the reserve made room for this file
            (self.path / RESERVE_FILE).unlink(missing_ok=True)
            write_atomically(self.path / "info", text)
        (self.path / RESERVE_FILE).unlink(missing_ok=True)


def read_info(path: str | os.PathLike[str]) -> dict[str, str]:
    """The ``symex: done: KEY = VALUE`` lines and the header fields of an ``info`` file."""
    return parse_info(Path(path).read_text())


def parse_info(text: str) -> dict[str, str]:
    """The fields of an ``info`` file's text (see :func:`read_info`)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("symex: done: ") and " = " in line:
            key, value = line[len("symex: done: "):].split(" = ", 1)
            fields[key] = value
        elif ": " in line:
            key, value = line.split(": ", 1)
            fields.setdefault(key, value)
    return fields


def _quote(arg: str) -> str:
    return arg if arg and re.fullmatch(r"[\w@%+=:,./-]+", arg) else "'" + arg.replace("'", "'\\''") + "'"


_DBG_RE = re.compile(r"!dbg !(\d+)")


def assembly_line(lines: Sequence[str], instruction: str, function: str | None,
                  source_line: int | None) -> int | None:
    """The 1-based line of ``lines`` (an ``.ll`` file) holding ``instruction``, or None.

    Instruction texts are searched inside ``function``'s body first (SSA names repeat across
    functions); several equal texts (a ``store`` repeated, say) are told apart by the source
    line of their ``!dbg`` location, and stay None if that does not settle it."""
    wanted = instruction.strip()
    if not wanted:
        return None
    candidates: list[int] = []
    in_function = function is None
    define = re.compile(rf"^define\b.*@\"?{re.escape(function)}\"?\(") if function else None
    for number, text in enumerate(lines, 1):
        if define is not None:
            if define.match(text):
                in_function = True
                continue
            if in_function and text.startswith("}"):
                break
        if not in_function:
            continue
        stripped = text.strip()
        if stripped == wanted or stripped.startswith(wanted + ","):
            candidates.append(number)
    if len(candidates) == 1:
        return candidates[0]
    if not candidates or source_line is None:
        return None
    locations = {}
    line_re = re.compile(r"^!(\d+) = !DILocation\(line: (\d+)")
    for text in lines:
        match = line_re.match(text)
        if match:
            locations[match.group(1)] = int(match.group(2))
    narrowed = [n for n in candidates
                if (m := _DBG_RE.search(lines[n - 1])) and locations.get(m.group(1)) == source_line]
    return narrowed[0] if len(narrowed) == 1 else None
