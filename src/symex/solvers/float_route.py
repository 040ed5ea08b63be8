"""``FloatRoute``: the queries that hold floating-point terms go to a solver strong in that
theory, the others to the run's solver.

z3's floating-point theory is 9 to 29 times slower than bitwuzla's on the queries symex's
float programs ask (one 64-bit ``sqrt`` query: z3 97 s, bitwuzla 0.23 s; docs/benchmarks.md,
"Symbolic floating point"), while z3 is the measured default for the rest. So the default
configuration keeps z3 and sends a query to bitwuzla only when one of its expressions holds a
float operation (``FADD`` ... ``FOLE``): a program without float arithmetic never starts the
second solver. Which solver answers depends on the query alone, so runs stay deterministic.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import attrs

from symex.errors import ConfigError, SolverError
from symex.expr import FLOAT_OPS, OpFinder
from symex.solvers.base import SolverBase, SolverStatistics
from symex.solvers.config import ChoiceConfig, PortfolioConfig, SolverConfig, parse_config

if TYPE_CHECKING:
    from symex.expr import Array, Expr

__all__ = ["DEFAULT_FLOAT_SOLVER", "SAME", "FloatRoute", "RouteStatistics", "parse_float_solver",
           "route_floats_to"]

#: The configuration that answers queries on floats unless the run names another
#: (``float_solver``; ``same`` keeps them on the run's solver).
DEFAULT_FLOAT_SOLVER = "bitwuzla"
#: The ``float_solver`` value that keeps float queries on the run's own solver.
SAME = "same"


@attrs.define
class RouteStatistics(SolverStatistics):
    """:class:`SolverStatistics` of every query, plus the two solvers' own counters."""

    solvers: dict[str, SolverStatistics] = attrs.Factory(dict)
    """``solver`` (the run's) and ``floats`` (the float solver's, once it has been asked)."""

    def refresh(self) -> None:
        """Make the route's counters the sums of the two solvers' (after a query)."""
        parts = self.solvers.values()
        self.queries = sum(p.queries for p in parts)
        self.sat = sum(p.sat for p in parts)
        self.unsat = sum(p.unsat for p in parts)
        self.unknown = sum(p.unknown for p in parts)
        self.time = sum(p.time for p in parts)

    def as_dict(self) -> dict[str, float]:
        """The counters as a flat mapping: the route's, then ``route[NAME].COUNTER``."""
        counters = super().as_dict()
        for name, stats in self.solvers.items():
            for key, value in stats.as_dict().items():
                counters[f"route[{name}].{key}"] = value
        return counters


def parse_float_solver(text: str | None) -> SolverConfig | PortfolioConfig | ChoiceConfig | None:
    """The configuration ``float_solver`` names, or None for ``same`` (or empty): the run's
    solver answers float queries too. ConfigError, quoting the grammar, for anything else."""
    if text is None or (isinstance(text, str) and text.strip().lower() in ("", SAME)):
        return None
    if not isinstance(text, str):
        raise ConfigError(f"float_solver must be a configuration string or 'same', not "
                          f"{type(text).__name__}")
    try:
        return parse_config(text)
    except ConfigError as exc:
        raise ConfigError(f"float_solver (--float-solver): {exc}; or 'same' to answer "
                          "floating-point queries with the run's solver") from None


def route_floats_to(config: str | SolverConfig | PortfolioConfig | ChoiceConfig,
                    float_config: str | None) -> SolverConfig | PortfolioConfig | ChoiceConfig | None:
    """The configuration float queries should go to when the run's solver is ``config``, or
    None when ``config`` answers them itself: ``float_config`` is empty or ``same``, or names
    the backend ``config`` already runs (alone or as a member of a portfolio or choice)."""
    target = parse_float_solver(float_config)
    if target is None:
        return None
    main = parse_config(config)
    mine = {main.backend} if isinstance(main, SolverConfig) else {m.backend for m in main.members}
    theirs = {target.backend} if isinstance(target, SolverConfig) \
        else {m.backend for m in target.members}
    return None if theirs <= mine else target


class FloatRoute(SolverBase):
    """Answers through ``solver``, but a query with floating-point terms through the solver
    ``start()`` makes (a solver of ``float_config``), started at the first such query."""

    statistics: RouteStatistics

    def __init__(self, solver: SolverBase, float_config: SolverConfig | PortfolioConfig | ChoiceConfig,
                 start: Callable[[], SolverBase]) -> None:
        """Route between ``solver`` (closed with this one) and ``start()``'s solver."""
        super().__init__()
        self.solver = solver
        self.float_config = float_config
        self.floats: SolverBase | None = None
        """The float solver, once a query needed it."""
        self.statistics = RouteStatistics(solvers={"solver": solver.statistics})
        self._start = start
        self._finder = OpFinder(FLOAT_OPS)

    def _for(self, roots: Sequence[Expr]) -> SolverBase:
        """The solver that answers a query on ``roots``."""
        if not self._finder.found_in(roots):
            return self.solver
        floats = self.floats
        if floats is None:
            try:
                floats = self._start()
            except SolverError as exc:
                raise SolverError(f"the solver for floating-point queries ({self.float_config}) "
                                  f"cannot start: {exc}; pass float_solver='same' "
                                  "(--float-solver same) to answer them with the run's "
                                  "solver") from exc
            floats.set_deadline(self.deadline)
            self.floats = floats
            self.statistics.solvers["floats"] = floats.statistics
        return floats

    def _check(self, constraints: tuple[Expr, ...], extra: Expr | None) -> bool:
        """Whether ``constraints`` and ``extra`` are satisfiable, asked of the right solver."""
        solver = self._for(constraints if extra is None else (*constraints, extra))
        try:
            return solver._check(constraints, extra)
        finally:
            self.statistics.refresh()

    def _model(self, constraints: tuple[Expr, ...], exprs: Sequence[Expr],
               arrays: Sequence[Array]) -> tuple[list[int], list[bytes]] | None:
        """A model from the right solver (see :meth:`SolverBase._model`)."""
        solver = self._for((*constraints, *exprs))
        try:
            return solver._model(constraints, exprs, arrays)
        finally:
            self.statistics.refresh()

    def set_deadline(self, deadline: float | None) -> None:
        """Cut both solvers' checks at ``deadline`` (see SolverBase)."""
        super().set_deadline(deadline)
        self.solver.set_deadline(deadline)
        if self.floats is not None:
            self.floats.set_deadline(deadline)

    def interrupt(self) -> None:
        """Stop a check running in another thread, whichever solver runs it."""
        for solver in (self.solver, self.floats):
            interrupt = getattr(solver, "interrupt", None)
            if interrupt is not None:
                interrupt()

    def close(self) -> None:
        """Close both solvers."""
        floats, self.floats = self.floats, None
        try:
            if floats is not None:
                floats.close()
        finally:
            self.solver.close()

    def __repr__(self) -> str:
        """Name both solvers."""
        return f"FloatRoute({self.solver!r}, floats={str(self.float_config)!r})"
