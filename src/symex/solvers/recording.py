"""Recording every query that reaches the core solver, as the seed did with Chef's 33,009 path
conditions: the log can be replayed through any configuration (benchmarks/queries/replay.py).

``QueryRecorder`` wraps a solver's primitives. Each query becomes one SMT-LIB2 file
(``query-000001.smt2``: the constraints asserted, then the query's condition) and one line of
``index.csv`` (number, kind, answer, seconds, file). Lines are flushed as they are written, so
an interrupted run leaves a valid prefix.
"""

from __future__ import annotations

import csv
import os
import time
from pathlib import Path
from typing import IO
from collections.abc import Sequence

from symex.errors import ConfigError, SolverUnknown
from symex.expr import Array, Expr
from symex.expr.smtlib import write_smtlib
from symex.solvers.base import SolverBase

INDEX_COLUMNS = ("number", "kind", "status", "seconds", "file")


class QueryRecorder(SolverBase):
    """A solver that answers through ``inner`` and writes down every query it was asked."""

    def __init__(self, inner: SolverBase, directory: str | os.PathLike[str]) -> None:
        """Record into ``directory`` (created; must not already hold a recording)."""
        super().__init__()
        self.inner = inner
        self.statistics = inner.statistics
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot create the query log directory {self.directory}: {exc}") from None
        index = self.directory / "index.csv"
        if index.exists():
            raise ConfigError(f"{self.directory} already holds a query log; choose an empty directory")
        self._index: IO[str] = index.open("w", newline="")
        self._csv = csv.writer(self._index)
        self._csv.writerow(INDEX_COLUMNS)
        self._index.flush()
        self.count = 0

    def set_deadline(self, deadline: float | None) -> None:
        """Cut the recorded solver's checks at ``deadline`` (see SolverBase)."""
        super().set_deadline(deadline)
        self.inner.set_deadline(deadline)

    def _record(self, kind: str, constraints: Sequence[Expr], extra: Expr | None, status: str,
                seconds: float) -> None:
        self.count += 1
        name = f"query-{self.count:06d}.smt2"
        text = write_smtlib(list(constraints), extra)
        partial = self.directory / (name + ".part")
        partial.write_text(f"; symex query {self.count} ({kind}): {status} in {seconds:.6f} s\n" + text)
        partial.replace(self.directory / name)
        self._csv.writerow((self.count, kind, status, f"{seconds:.6f}", name))
        self._index.flush()

    def _check(self, constraints: tuple[Expr, ...], extra: Expr | None) -> bool:
        start = time.perf_counter()
        try:
            sat = self.inner._check(constraints, extra)
        except SolverUnknown:
            self._record("check", constraints, extra, "unknown", time.perf_counter() - start)
            raise
        self._record("check", constraints, extra, "sat" if sat else "unsat", time.perf_counter() - start)
        return sat

    def _model(self, constraints: tuple[Expr, ...], exprs: Sequence[Expr],
               arrays: Sequence[Array]) -> tuple[list[int], list[bytes]] | None:
        start = time.perf_counter()
        try:
            model = self.inner._model(constraints, exprs, arrays)
        except SolverUnknown:
            self._record("model", constraints, None, "unknown", time.perf_counter() - start)
            raise
        self._record("model", constraints, None, "unsat" if model is None else "sat",
                     time.perf_counter() - start)
        return model

    def close_log(self) -> None:
        """Finish the log (the inner solver stays open)."""
        if not self._index.closed:
            self._index.close()

    def close(self) -> None:
        """Close the log and the inner solver."""
        self.close_log()
        self.inner.close()
