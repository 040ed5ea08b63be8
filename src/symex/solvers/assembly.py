"""A run's solver, assembled in one place: the core solver a configuration names (or one the
caller brings), queries holding floating-point terms routed to a second solver, the query log
inside the chain (so it holds exactly the queries that reach the core solvers), and KLEE's
chain in front (KLEE's ``ConstructSolverChain``).

    stack = assemble_solver("z3", chain=DEFAULT_CHAIN, write_queries="queries/",
                            float_config="bitwuzla")
    try:
        ... stack.solver.get_initial_values(...) ...
    finally:
        stack.close()

Both a run in one process (:func:`symex.exploration.explore_alone`) and a parallel worker
(:class:`symex.parallel.worker.Worker`, with the models the other workers share) build theirs
here.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from symex.errors import ConfigError
from symex.solvers import create_core_solver, with_chain
from symex.solvers.base import Solver, SolverBase
from symex.solvers.float_route import FloatRoute, route_floats_to

if TYPE_CHECKING:
    from symex.solvers.recording import QueryRecorder
    from symex.solvers.shared import SharedSolutions

__all__ = ["SolverStack", "assemble_solver"]


class SolverStack:
    """An assembled solver: ``solver`` is what the run asks, ``core`` the solver at the
    bottom, ``log`` the query log (None without one). :meth:`close` closes the log and the
    core solver, unless the caller brought it."""

    __slots__ = ("solver", "core", "log", "_owns_core")

    def __init__(self, solver: Solver, core: Solver, log: QueryRecorder | None,
                 owns_core: bool) -> None:
        self.solver = solver
        self.core = core
        self.log = log
        self._owns_core = owns_core

    def close(self) -> None:
        """Finish the query log and release the core solver (if this stack made it)."""
        if self.log is not None:
            self.log.close_log()
        if self._owns_core:
            self.core.close()


def assemble_solver(config: str, *, timeout: float | None = None, chain: Sequence[str] = (),
                    write_queries: str | os.PathLike[str] | None = None,
                    shared: SharedSolutions | None = None,
                    core: Solver | None = None,
                    float_config: str | None = None) -> SolverStack:
    """The solver for configuration ``config`` (or ``core``, a solver the caller brings and
    closes), with ``timeout`` per query, the query log at ``write_queries``, and ``chain``'s
    layers in front (``shared``: the models other parallel workers found, for the cex
    layer); queries with floating-point terms go to ``float_config``'s solver where it runs
    another backend than ``config`` (:mod:`symex.solvers.float_route`; not with ``core``).
    ConfigError when a brought solver cannot carry the log or the chain."""
    if core is None and not config:
        raise ConfigError("no solver: pass a configuration string (such as 'z3') or a "
                          "solver object")
    owns_core = core is None
    # checked before a solver starts: a bad float_config leaves nothing to close
    floats = route_floats_to(config, float_config) if core is None else None
    bottom: Solver = create_core_solver(config, timeout=timeout) if core is None else core
    if floats is not None:
        assert isinstance(bottom, SolverBase)
        target = floats  # narrowed, for the lambda
        route: SolverBase = FloatRoute(bottom, target,
                                       lambda: create_core_solver(target, timeout=timeout))
        bottom = route
    log = None
    top: Solver = bottom
    try:
        if write_queries is not None:
            if not isinstance(bottom, SolverBase):
                raise ConfigError("write_queries needs a solver built by symex (a SolverBase)")
            # imported here: recording pulls in the SMT-LIB writer, which plain runs do not need
            from symex.solvers.recording import QueryRecorder  # noqa: PLC0415
            # inside the chain: the log holds exactly the queries that reached the core solver
            log = QueryRecorder(bottom, write_queries)
            top = log
        if chain:
            if not isinstance(top, SolverBase):
                raise ConfigError("solver_chain needs a solver built by symex (a SolverBase)")
            top = with_chain(top, chain, shared=shared)
    except BaseException:
        if owns_core:
            bottom.close()
        raise
    return SolverStack(top, bottom, log, owns_core)
