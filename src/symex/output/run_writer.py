"""A run's output directory written as the run goes, by every front end: ``symex run`` and
the testing service's job processes.

:class:`RunWriter` fills an :class:`~symex.output.directory.OutputDirectory`: each test as
its path ends (and, on request, a Test-Comp suite), a ``run.stats`` row per progress
snapshot, and at the end the solver layers' counters, the coverage report (lcov and one
HTML page), ``messages.txt`` and ``info``. Its :meth:`~RunWriter.hooks` are the
:class:`~symex.results.Hooks` a run reports to; :class:`DeferredInterrupt` makes a Ctrl-C
(or the service's SIGINT) that arrives while a file is written wait for the write to end,
so every file in the directory is whole whenever the run stops.
"""

from __future__ import annotations

import datetime
import os
import shutil
import signal
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from symex import __version__
from symex.core.outcome import TestCase
from symex.errors import SymexError
from symex.env.fuzz_input import raw_input
from symex.output.corpus import CorpusWriter
from symex.output.directory import OutputDirectory, RunSummary
from symex.output.runstats import RunStatsWriter
from symex.results import Hooks, ProgressSnapshot, Result

if TYPE_CHECKING:  # a run writes SARIF when asked to (--sarif) only
    from symex.output.sarif import Finding

__all__ = ["DeferredInterrupt", "RunWriter"]


class DeferredInterrupt:
    """Ctrl-C as a request the run cannot lose: the first one only sets :attr:`requested`,
    which the run's loop asks between two time slices (``Hooks.should_stop``) and halts on
    ("interrupted"); raised from the signal handler instead, an interrupt landing in a weakref
    callback or a ``__del__`` was swallowed, and the run went on (2 runs in 12). A second
    Ctrl-C, for a run slow to stop, is raised, but waits for the output file being written;
    any after it are ignored while the run writes what it has."""

    def __init__(self) -> None:
        self.depth = 0
        self.pending = False
        #: a Ctrl-C arrived: the run halts at its next look
        self.requested = False
        #: a second one was raised: the run stops now, and later ones are ignored
        self.raised = False
        self._previous: Any = None

    def install(self) -> None:
        """Take over SIGINT (main thread only; elsewhere Ctrl-C keeps Python's behaviour)."""
        try:
            self._previous = signal.signal(signal.SIGINT, self._handle)
        except ValueError:
            self._previous = None

    def uninstall(self) -> None:
        """Give SIGINT back."""
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if not self.requested:
            self.requested = True
        elif self.raised:
            pass  # the run is stopping at once: more Ctrl-Cs would cut its info short
        elif self.depth:
            self.pending = True
        else:
            self.raised = True
            raise KeyboardInterrupt

    def should_stop(self) -> str | None:
        """``"interrupted"`` once a Ctrl-C asked the run to halt (``Hooks.should_stop``)."""
        return "interrupted" if self.requested else None

    def guard(self, function: Callable[..., None]) -> Callable[..., None]:
        """``function`` made uninterruptible; a Ctrl-C during it is raised when it returns."""
        def guarded(*args: Any) -> None:
            self.depth += 1
            try:
                function(*args)
            finally:
                self.depth -= 1
            if self.pending and not self.depth:
                self.pending = False
                self.raised = True
                raise KeyboardInterrupt
        return guarded


class RunWriter:
    """Writes one run into ``out`` (see the module docstring). ``command_line`` is what
    ``info`` says ran, ``compiler`` what compiled the program; ``stats_interval`` the least
    seconds between two ``run.stats`` rows;
    ``test_comp``: also a Test-Comp suite of the tests, for the program ``program_name``;
    ``corpus_out``: also each fuzz target input as a raw file there (output/corpus.py);
    ``sarif``: also the errors as a SARIF log at that path, rewritten as each new error is
    found (so a killed run leaves one), paths relative to ``sarif_root`` (``sarif_private``:
    files outside it by name alone; output/sarif.py)."""

    def __init__(self, out: OutputDirectory, command_line: Sequence[str], *,
                 stats_interval: float = 2.0, test_comp: bool = False,
                 program_name: str = "", compiler: str = "", library: str = "",
                 corpus_out: str | os.PathLike[str] | None = None,
                 sarif: str | os.PathLike[str] | None = None,
                 sarif_root: str | os.PathLike[str] = ".", sarif_private: bool = False) -> None:
        self.out = out
        self.command_line = tuple(command_line)
        #: what compiled the program, and the C library linked in, as ``info`` says them
        self.compiler = compiler
        self.library = library
        self.started = datetime.datetime.now().astimezone()
        self.clock = time.monotonic()
        #: what could not be written, said at the end (messages.txt and stderr)
        self.warnings: list[str] = []
        self.stats = RunStatsWriter(out.path / "run.stats", min_interval=stats_interval)
        self.suite: Any = None
        if test_comp:
            try:
                from symex.output.testcomp import TestCompWriter  # noqa: PLC0415  (optional)
                self.suite = TestCompWriter(out.path / "test-suite", Path(program_name))
            except (ImportError, SymexError) as exc:
                self.warnings.append(f"symex: warning: no Test-Comp suite written: {exc}")
        self.corpus = CorpusWriter(corpus_out) if corpus_out is not None else None
        self.sarif = Path(sarif).resolve() if sarif is not None else None
        self.sarif_root = Path(sarif_root).resolve()
        self.sarif_private = sarif_private
        #: the errors the SARIF log reports (each with the test that shows it)
        self.findings: list[Finding] = []
        self.sarif_sites: set[tuple[str, str, int | None, str]] = set()
        if self.sarif is not None:
            self._write_sarif()  # an empty log from the start: a CI step always finds one
        #: the last progress snapshot (what ``info`` says after a second Ctrl-C)
        self.last: ProgressSnapshot | None = None
        #: why the output could not be written on (a full disk): the run stops
        self.failed: str | None = None

    def path_ended(self, test: TestCase) -> None:
        """A test, written as its path ends (none once the disk is full: the run stops)."""
        if self.failed is not None:
            return
        try:
            number = self.out.add_test(test)
            if self.sarif is not None and test.error is not None and \
                    test.error.site not in self.sarif_sites:
                self.sarif_sites.add(test.error.site)
                from symex.output.sarif import Finding  # noqa: PLC0415 (see the imports)
                self.findings.append(Finding(test.error, f"test{number:06d}.ktest",
                                             raw_input(test.objects)))
                self._write_sarif()
            if self.suite is not None:
                self.suite.add(test)
            if self.corpus is not None:
                self.corpus.add(test)
        except OSError as exc:
            self._cut_short(exc, f"test{self.out.tests + 1:06d}")

    def progressed(self, snapshot: ProgressSnapshot) -> None:
        """A progress snapshot: a ``run.stats`` row (or held back, if too soon)."""
        self.last = snapshot
        if self.failed is not None:
            return
        try:
            self.stats.add(snapshot)
        except (OSError, sqlite3.Error) as exc:
            self._cut_short(exc, "run.stats")

    def _cut_short(self, exc: OSError | sqlite3.Error, what: str) -> None:
        """Writing ``what`` failed (a full disk, a quota): the run stops, saying why; what
        was written stays whole (every file is written whole, then named)."""
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        self.failed = f"cut short: {reason} (writing {what} in {self.out.path})"

    def should_stop(self) -> str | None:
        """Why the run must stop for its output (None: it may go on)."""
        return self.failed

    def hooks(self, interrupt: DeferredInterrupt,
              show: Callable[[ProgressSnapshot], None] | None = None) -> Hooks:
        """The hooks a run reports to, each finishing its writes before a Ctrl-C takes
        effect; ``show`` also gets every snapshot (a progress line)."""
        def progressed(snapshot: ProgressSnapshot) -> None:
            self.progressed(snapshot)
            if show is not None:
                show(snapshot)
        def should_stop() -> str | None:
            return self.should_stop() or interrupt.should_stop()
        return Hooks(on_path_end=interrupt.guard(self.path_ended),
                     on_progress=interrupt.guard(progressed), should_stop=should_stop)

    def finish(self, result: Result) -> None:
        """The whole-run files: solver counters, coverage report, messages and info (on a
        full disk, each that fits; ``info`` last, in the room the directory kept for it)."""
        out = self.out
        try:
            self.stats.write_solver_layers(result.statistics.solver_layers)
            if self.suite is not None:
                self.suite.close()
        except (OSError, sqlite3.Error) as exc:
            self.warnings.append(f"symex: warning: statistics incomplete: {exc}")
        cov = result.coverage
        try:
            from symex.output.coverage_report import write_html_report, write_lcov  # noqa: PLC0415
        except ImportError as exc:
            self.warnings.append(f"symex: warning: no coverage report written: {exc}")
        else:
            try:
                write_lcov(out.path / "coverage.info", cov)
                # the report is one self-contained page: keep it as coverage.html beside the rest
                staging = Path(tempfile.mkdtemp(prefix=".coverage-html.", dir=out.path))
                try:
                    os.replace(write_html_report(staging, cov, out.sources), out.path / "coverage.html")
                finally:
                    shutil.rmtree(staging, ignore_errors=True)
            except (SymexError, OSError) as exc:
                self.warnings.append(f"symex: warning: coverage report incomplete: {exc}")
        try:
            if self.corpus is not None:
                result_messages = [*result.messages, f"symex: {self.corpus.written} fuzz "
                                   f"input{'s' if self.corpus.written != 1 else ''} written to "
                                   f"{os.fspath(self.corpus.directory)}"]
            else:
                result_messages = list(result.messages)
            out.write_messages([*result_messages,
                                *(shortfall.describe() for shortfall in result.shortfalls),
                                *self.warnings])
        except OSError as exc:
            self.warnings.append(f"symex: warning: messages.txt not written: {exc}")
        p = result.paths
        out.write_info(self._summary(
            halted=result.halted, completed=p.completed, partial=p.partial, errors=p.errors,
            instructions=result.statistics.instructions,
            solver_queries=result.statistics.solver_queries,
            covered_lines=len(cov.covered_lines), total_lines=len(cov.total_lines),
            covered_branches=len(cov.covered_branches), total_branches=len(cov.total_branches),
            shed_paths=result.statistics.shed_paths))

    def _write_sarif(self) -> None:
        assert self.sarif is not None
        from symex.output.sarif import write_sarif  # noqa: PLC0415 (see the imports)
        write_sarif(self.sarif, self.findings, self.sarif_root, version=__version__,
                    private=self.sarif_private)

    def interrupted(self) -> None:
        """``info`` for a run stopped without a result (a second Ctrl-C while the open paths
        were ending): what the last progress snapshot saw."""
        s = self.last
        self.out.write_info(self._summary(
            halted="interrupted", completed=s.completed if s else 0,
            partial=s.partial if s else 0, errors=s.errors if s else 0,
            instructions=s.instructions if s else 0, solver_queries=s.solver_queries if s else 0,
            covered_lines=s.covered_lines if s else 0, total_lines=s.total_lines if s else 0,
            covered_branches=s.covered_branches if s else 0,
            total_branches=s.total_branches if s else 0))

    def _summary(self, **counts: Any) -> RunSummary:
        return RunSummary(
            command_line=self.command_line, working_directory=os.getcwd(),
            start=self.started.isoformat(timespec="seconds"),
            end=datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            elapsed=time.monotonic() - self.clock, tests=self.out.tests, compiler=self.compiler,
            library=self.library, **counts)

    def close(self) -> None:
        """Close the statistics and the directory (every file written so far stays)."""
        self.stats.close()
        self.out.close()


def default_command_line() -> tuple[str, ...]:
    """``symex`` and this process's arguments, as ``info`` records a command-line run."""
    return ("symex", *sys.argv[1:])
