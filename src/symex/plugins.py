"""Plug-ins: installed packages that extend symex without editing it.

A package declares its extensions as entry points of the group ``symex.plugins``, each named
``KIND.NAME`` (in its ``pyproject.toml``)::

    [project.entry-points."symex.plugins"]
    "searcher.newest-first" = "my_package.search:make_newest_first"
    "backend.my-z3" = "my_package.solver:MyZ3Backend"
    "external.sensor_read" = "my_package.models:sensor_read"
    "memory-model.my-model" = "my_package.memory:MyModel"

- ``searcher.NAME``: a callable taking a :class:`symex.core.search.searchers.SearchContext`
  and returning a searcher (``select``, ``update``, ``empty``); ``--search NAME`` and
  ``explore(searcher="NAME")`` choose it;
- ``backend.NAME``: a callable with no arguments returning a solver backend (the protocol of
  :class:`symex.solvers.backend.Backend`); ``--solver NAME[:ENCODING[:SESSION]]`` uses it;
- ``external.NAME``: an external-function handler ``(view, args)`` (the calling state's
  :class:`symex.core.interpreter.machine.StateView` and the call's arguments)
  for the C function ``NAME``, which a program calls without defining it and symex does not
  model itself (``explore(externals=...)`` replaces any model, in one process);
- ``memory-model.NAME``: a callable with no arguments returning a memory model (the protocol
  of :class:`symex.core.memory.model.MemoryModel`); ``--memory-model NAME`` and
  ``explore(memory_model="NAME")`` choose it.

Every process that resolves a name reads the same entry points (a run, each of its workers,
the service's job processes), so a plug-in works wherever symex runs once its package is
installed there. Entry points are read only when a name is not one of symex's own, or when a
message lists the names to choose from: reading them costs tens of milliseconds, which a run
that uses none of them does not pay. A plug-in that cannot be loaded is a ConfigError naming
its package's entry point.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from symex.errors import ConfigError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = ["PLUGIN_GROUP", "PluginKind", "load_plugin", "plugin_directories", "plugin_names"]

#: the entry point group plug-ins declare
PLUGIN_GROUP = "symex.plugins"


class PluginKind(enum.Enum):
    """What a plug-in adds: the prefix of its entry point's name."""

    SEARCHER = "searcher"
    BACKEND = "backend"
    EXTERNAL = "external"
    MEMORY_MODEL = "memory-model"


def _entries(kind: PluginKind) -> dict[str, EntryPoint]:
    """The installed plug-ins of ``kind`` by name (first declared wins, in the order
    ``importlib.metadata`` lists the installed packages)."""
    # imported here: importlib.metadata costs 20 ms (csv, email, socket) of every run's
    # start, and a run that uses no plug-in never gets here
    from importlib.metadata import entry_points  # noqa: PLC0415

    found: dict[str, EntryPoint] = {}
    prefix = kind.value + "."
    for entry in entry_points(group=PLUGIN_GROUP):
        if entry.name.startswith(prefix):
            found.setdefault(entry.name[len(prefix):], entry)
    return found


def plugin_names(kind: PluginKind) -> tuple[str, ...]:
    """The names installed plug-ins give to ``kind``, sorted (for messages and help)."""
    return tuple(sorted(_entries(kind)))


def load_plugin(kind: PluginKind, name: str) -> Any | None:
    """The object the installed plug-in ``kind.name`` points to, or None when no installed
    package declares one."""
    entry = _entries(kind).get(name)
    if entry is None:
        return None
    try:
        return entry.load()
    except Exception as exc:  # a broken plug-in: say which, whatever it raised
        raise ConfigError(f"the symex plug-in '{entry.name}' ({entry.value}) cannot be loaded: "
                          f"{type(exc).__name__}: {exc}; fix or uninstall the package that "
                          f"declares it") from None


def plugin_directories() -> tuple[Path, ...]:
    """The directories the installed plug-in packages are imported from (``sys.path``
    entries: site-packages, or a ``pip install --target`` directory on ``PYTHONPATH``), each
    once, in the order ``importlib.metadata`` lists the packages: what a sandboxed process
    must see to find the same plug-ins (the service's jobs)."""
    from importlib.metadata import distributions  # noqa: PLC0415 (as in _entries)

    found: dict[Path, None] = {}
    for dist in distributions():
        if any(entry.group == PLUGIN_GROUP for entry in dist.entry_points):
            found.setdefault(Path(str(dist.locate_file(""))).resolve(), None)
    return tuple(found)
