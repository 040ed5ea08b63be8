"""Solver backends by name. Each lives in its own module and imports its package lazily, so a
missing package only matters when that backend is asked for."""

from __future__ import annotations

import importlib

from symex.errors import SolverError
from symex.plugins import PluginKind, load_plugin, plugin_names
from symex.solvers.backend import Backend

#: backend name -> (module, class, the pip package that provides the solver)
BACKENDS: dict[str, tuple[str, str, str]] = {
    "z3": ("symex.solvers.backends.z3_backend", "Z3Backend", "z3-solver"),
    "cvc5": ("symex.solvers.backends.cvc5_backend", "Cvc5Backend", "cvc5"),
    "bitwuzla": ("symex.solvers.backends.bitwuzla_backend", "BitwuzlaBackend", "bitwuzla"),
    "pysmt": ("symex.solvers.backends.pysmt_backend", "PysmtBackend", "pysmt"),
}
#: the solvers the ``pysmt`` backend may drive (``pysmt-SOLVER``; plain ``pysmt`` drives z3)
PYSMT_SOLVERS = ("z3", "cvc5")
#: every backend name a configuration may give, as messages list them
BACKEND_NAMES = (*BACKENDS, *(f"pysmt-{solver}" for solver in PYSMT_SOLVERS))


def make_backend(name: str) -> Backend:
    """A fresh backend context. ``pysmt`` may name the solver pySMT drives: ``pysmt-cvc5``.
    Unknown names and missing or broken packages raise one SolverError naming the fix."""
    base, _, option = name.partition("-")
    if base not in BACKENDS or (option and base != "pysmt"):
        make = load_plugin(PluginKind.BACKEND, name)
        if make is None:
            choices = (*BACKEND_NAMES, *plugin_names(PluginKind.BACKEND))
            raise SolverError(f"unknown solver backend '{name}'; choose from {', '.join(choices)}")
        backend: Backend = make()
        return backend
    module_name, class_name, package = BACKENDS[base]
    try:
        module = importlib.import_module(module_name)
        cls = getattr(module, class_name)
    except ImportError as exc:
        raise SolverError(f"the {base} backend needs the '{package}' package, which is missing or "
                          f"broken ({exc}): pip install {package}") from None
    return cls(option) if option else cls()


__all__ = ["BACKENDS", "make_backend"]
