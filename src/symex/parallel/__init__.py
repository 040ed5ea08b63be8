"""Parallel exploration (Cloud9): one execution tree split over workers.

- :mod:`~symex.parallel.jobs`: a job is a tree node as the events of its path; a worker
  rebuilds the state by replaying them, without the solver.
- :mod:`~symex.parallel.worker`: a worker explores its jobs in steps and reports.
- :mod:`~symex.parallel.balancing`: Cloud9's rule for moving work.
- :mod:`~symex.parallel.pools`: where workers run (this process, local processes).
- :mod:`~symex.parallel.coordinator`: the loop that hands out orders, moves work and
  merges the reports into one :class:`~symex.engine.Result`.

Users call ``symex.explore(program, workers=N)``; see docs/parallel.md.
"""

from __future__ import annotations

from typing import Any

from symex.description import RunDescription
from symex.engine import Hooks, Result, tree_identity
from symex.errors import ConfigError
from symex.ir.program import Program
from symex.parallel.balancing import LoadBalancer
from symex.parallel.coordinator import Coordinator
from symex.parallel.jobs import Job
from symex.parallel.journal import RunJournal
from symex.parallel.pools import InProcessPool, ProcessPool, RayPool, WorkerPool
from symex.parallel.worker import Worker

__all__ = ["BACKENDS", "Job", "explore_in_parallel"]

#: the places workers can run, by the name ``explore(parallel_backend=)`` takes
BACKENDS = ("processes", "in-process", "ray")


def explore_in_parallel(program: Program, description: RunDescription, *, hooks: Hooks,
                        solver: Any = None) -> Result:
    """``explore()`` with workers: ``description.parallel`` says how many and where;
    ``solver`` must be None (each worker builds its own from ``description.solver``)."""
    parallel = description.parallel
    workers, backend, cluster = parallel.workers, parallel.backend, parallel.cluster
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ConfigError(f"workers must be a whole number of at least 1, not {workers!r}")
    if cluster is not None:
        if backend not in (None, "ray"):
            raise ConfigError(f"cluster= runs workers on Ray; it cannot be combined with "
                              f"parallel_backend={backend!r}")
        if not isinstance(cluster, str) or not cluster.strip():
            raise ConfigError("cluster must be 'auto' (a local Ray instance), 'HOST:PORT' or "
                              "'ray://HOST:PORT'")
        backend = "ray"
    backend = backend or "processes"
    if backend not in BACKENDS:
        raise ConfigError(f"unknown parallel backend {backend!r}; use one of: "
                          f"{', '.join(BACKENDS)}")
    if solver is not None or not description.solver.config:
        raise ConfigError("parallel workers build their own solvers: pass solver as a "
                          "configuration string (such as 'z3'), not a solver object")
    unsupported = {"write_queries": description.solver.write_queries,
                   "record_tree": description.tree.record_tree}
    for name, value in unsupported.items():
        if value is not None:
            raise ConfigError(f"{name} is not available with parallel workers yet; "
                              f"run with workers=1 to use it")
    if hooks.on_fork is not None or hooks.on_new_coverage is not None:
        raise ConfigError("hooks.on_fork and hooks.on_new_coverage see states inside one "
                          "process; they are not available with parallel workers")
    if not parallel.balance_ratio >= 1.0:
        raise ConfigError(f"balance_ratio must be at least 1, not {parallel.balance_ratio!r}")
    pool: WorkerPool
    if backend == "in-process":
        pool = InProcessPool(workers, program, description)
    else:
        # a worker per strategy built here first: a bad setting (searcher, solver not
        # installed) is reported at once, as by a run without workers, not from inside a
        # process
        for index in range(max(1, len(description.search.portfolio))):
            Worker(index, program, description).close()
        pool = (RayPool(workers, program, description, cluster or "auto") if backend == "ray"
                else ProcessPool(workers, program, description))
    journal = None
    try:
        journal = open_journal(program, description)
        limits = description.limits
        coordinator = Coordinator(program, pool, hooks=hooks, max_time=limits.max_time,
                                  max_instructions=limits.max_instructions,
                                  emit_all_errors=description.output.emit_all_errors,
                                  progress_interval=description.progress_interval,
                                  balancer=LoadBalancer(parallel.balance_ratio),
                                  journal=journal,
                                  resume=description.tree.continue_with is not None)
        return coordinator.run()
    finally:
        pool.close()
        if journal is not None:
            journal.close()


def open_journal(program: Program, description: RunDescription) -> RunJournal | None:
    """The run's journal: the one ``continue_with`` names (a copy at ``journal``, if given),
    a new one at ``journal``, or none."""
    inputs = description.inputs
    identity = tree_identity(program, inputs.entry, inputs.argv, inputs.posix)
    target = description.parallel.journal
    if description.tree.continue_with is not None:
        return RunJournal.resume(description.tree.continue_with, identity, target)
    if target is not None:
        return RunJournal.create(target, identity)
    return None
