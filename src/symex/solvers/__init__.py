"""Constraint solvers for symex: the :class:`Solver` interface and its backends.

Use :func:`create_solver` to get a solver by name; the interface lives in
:mod:`symex.solvers.base`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from symex.solvers.base import Query, Solver, SolverBase, SolverStatistics, Validity
from symex.solvers.config import ChoiceConfig, PortfolioConfig, SolverConfig, parse_config

if TYPE_CHECKING:
    from symex.solvers.shared import SharedSolutions

__all__ = [
    "create_core_solver",
    "with_chain",
    "ChoiceConfig",
    "PortfolioConfig",
    "Query",
    "Solver",
    "SolverBase",
    "SolverConfig",
    "SolverStatistics",
    "Validity",
    "create_solver",
    "parse_config",
]

def create_solver(
    config: str | SolverConfig | PortfolioConfig | ChoiceConfig = "z3", *, timeout: float | None = None,
    chain: Sequence[str] = (),
) -> Solver:
    """A new solver for a configuration string ``BACKEND[:ENCODING[:SESSION]]`` (e.g. ``"z3"``,
    ``"bitwuzla:ite"``, ``"z3:array-assert:assumptions(50)"``) or
    ``portfolio(CONFIG, CONFIG, ...)`` (raced) or ``choose(CONFIG, CONFIG, ...)`` (one per
    query, by cost), with an optional time limit in seconds per query.

    ``chain`` names the KLEE-style layers to put in front of it (``trivial``,
    ``independence``, ``cache``, ``cex``; see :mod:`symex.solvers.chain`).

    Raises ConfigError (quoting the grammar) for a malformed string and SolverError when a
    backend's package is missing.
    """
    return with_chain(create_core_solver(config, timeout=timeout), chain)


def create_core_solver(
    config: str | SolverConfig | PortfolioConfig | ChoiceConfig = "z3", *, timeout: float | None = None
) -> SolverBase:
    """The solver a configuration names, without any chain layers in front."""
    parsed = parse_config(config)
    if isinstance(parsed, PortfolioConfig):
        # Imported here: the racer loads multiprocessing machinery only when asked for.
        from symex.solvers.portfolio import PortfolioSolver

        return PortfolioSolver(list(parsed.members), timeout=timeout, stagger=parsed.stagger)
    if isinstance(parsed, ChoiceConfig):
        from symex.solvers.choice import ChoosingSolver

        return ChoosingSolver(list(parsed.members), timeout=timeout)
    # Imported here so that merely importing symex.solvers loads no solver package.
    from symex.solvers.configured import SessionSolver

    return SessionSolver(parsed, timeout=timeout)


def with_chain(solver: SolverBase, chain: Sequence[str], *,
               shared: SharedSolutions | None = None) -> SolverBase:
    """``solver`` behind the named chain layers (itself when ``chain`` is empty); ``shared``
    gives the chain's cex layer the models other parallel workers found."""
    if not chain:
        return solver
    from symex.solvers.chain import build_chain

    return build_chain(solver, chain, shared=shared)
