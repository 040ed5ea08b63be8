"""Parallel exploration (Cloud9): one execution tree split over workers.

- :mod:`~symex.parallel.jobs`: a job is a tree node as the events of its path; a worker
  rebuilds the state by replaying them, without the solver.
- :mod:`~symex.parallel.worker`: a worker explores its jobs in steps and reports.
- :mod:`~symex.parallel.balancing`: Cloud9's rule for moving work.
- :mod:`~symex.parallel.pools`: where workers run (this process, local processes).
- :mod:`~symex.parallel.coordinator`: the loop that hands out orders, moves work and
  merges the reports into one :class:`~symex.results.Result`.

Users call ``symex.explore(program, workers=N)``; see docs/parallel.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from symex.description import RunDescription
from symex.exploration import tree_identity
from symex.results import Hooks, Result
from symex.errors import ConfigError
from symex.ir.program import Program
from symex.memo.opening import open_store
from symex.memo.store import TreeFileError
from symex.parallel.balancing import LoadBalancer
from symex.parallel.coordinator import Coordinator
from symex.parallel.jobs import Job
from symex.parallel.journal import RunJournal
from symex.parallel.pools import InProcessPool, ProcessPool, RayPool, WorkerPool
from symex.parallel.tree import RunTree
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
    tree = description.tree
    unsupported = {"write_queries": description.solver.write_queries,
                   "restart_all_states": tree.restart_all_states or None,
                   "stop_after_replay": tree.stop_after_replay or None}
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
    journal = run_tree = None
    try:
        journal = open_journal(program, description)
        run_tree = open_run_tree(program, description, journal)
        limits = description.limits
        coordinator = Coordinator(program, pool, hooks=hooks, limits=limits,
                                  emit_all_errors=description.output.emit_all_errors,
                                  progress_interval=description.progress_interval,
                                  balancer=LoadBalancer(parallel.balance_ratio),
                                  journal=journal, resume=tree.continue_with is not None,
                                  tree=run_tree)
        result = coordinator.run()
        if run_tree is not None and run_tree.messages:
            result = attrs.evolve(result, messages=tuple(run_tree.messages) + result.messages)
        return result
    finally:
        pool.close()
        if journal is not None:
            journal.close()
        if run_tree is not None:
            run_tree.close()


def open_run_tree(program: Program, description: RunDescription,
                  journal: RunJournal | None) -> RunTree | None:
    """The run's recorded tree (``record_tree``): new, or, when the run goes on from another
    (``continue_with``: its output directory's tree, or the one its journal names), a copy of
    that run's tree; None when none is recorded. The journal notes the tree's place."""
    tree = description.tree
    if tree.record_tree is None:
        return None
    source: str | Path | None = tree.continue_with
    if source is not None and not Path(source).is_dir():
        source = journal.tree_path() if journal is not None else None
        if source is None:
            raise TreeFileError(f"{tree.continue_with} is the journal of a run that recorded "
                                f"no tree; continue it without record_tree")
    store, messages = open_store(tree_identity(program, description),
                                 record_tree=tree.record_tree, continue_with=source,
                                 hash_constants=tree.hash_constants)
    if journal is not None:
        journal.set_tree_path(tree.record_tree)
    run_tree = RunTree(store)
    run_tree.messages.extend(messages)
    return run_tree


def open_journal(program: Program, description: RunDescription) -> RunJournal | None:
    """The run's journal: the one ``continue_with`` names (a copy at ``journal``, if given),
    a new one at ``journal``, or none."""
    identity = tree_identity(program, description)
    target = description.parallel.journal
    if description.tree.continue_with is not None:
        return RunJournal.resume(description.tree.continue_with, identity, target)
    if target is not None:
        return RunJournal.create(target, identity)
    return None
