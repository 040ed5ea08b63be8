"""Constraint solvers for symex: the :class:`Solver` interface and its backends.

Use :func:`create_solver` to get a solver by name; the interface lives in
:mod:`symex.solvers.base`.
"""

from __future__ import annotations

from symex.errors import ConfigError
from symex.solvers.base import Query, Solver, SolverBase, SolverStatistics, Validity

__all__ = [
    "KNOWN_SOLVERS",
    "Query",
    "Solver",
    "SolverBase",
    "SolverStatistics",
    "Validity",
    "create_solver",
]

KNOWN_SOLVERS: tuple[str, ...] = ("z3",)
"""The names :func:`create_solver` accepts."""


def create_solver(name: str = "z3", *, timeout: float | None = None) -> Solver:
    """A new solver backend by name, with an optional time limit in seconds per check."""
    if name == "z3":
        # Imported here so that merely importing symex.solvers does not load z3.
        from symex.solvers.z3_solver import Z3Solver

        return Z3Solver(timeout=timeout)
    raise ConfigError(
        f"unknown solver {name!r}: choose one of {', '.join(KNOWN_SOLVERS)}"
    )
