"""symex: symbolic execution of C programs compiled to LLVM IR.

    import symex
    program = symex.compile("get_sign.c")
    result = symex.explore(program, searcher="dfs", max_time=60.0, seed=0)
    for test in result.tests:
        print(test.objects, test.error)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from symex.core.outcome import ErrorKind, PathStatus, ProgramError, TestCase
    from symex.core.outcome import ProgramError as Error
    from symex.description import RunDescription
    from symex.engine import explore, run_exploration
    from symex.errors import (
        CompileError,
        CompilerNotFound,
        ConfigError,
        LoadError,
        SolverError,
        SolverUnknown,
        SymexError,
    )
    from symex.loading import compile, load
    from symex.results import Coverage, Hooks, PathCounts, ProgressSnapshot, Result, Statistics
    from symex.solvers import create_solver as solver

# Loaded on first use (PEP 562): `symex cc`, which a build runs thousands of times, imports
# symex.ir.build_driver without paying for the engine and the solvers.
_EXPORTS: dict[str, tuple[str, str]] = {
    **{name: ("symex.core.outcome", name) for name in ("ErrorKind", "PathStatus", "ProgramError", "TestCase")},
    "Error": ("symex.core.outcome", "ProgramError"),
    "RunDescription": ("symex.description", "RunDescription"),
    **{name: ("symex.results", name) for name in ("Coverage", "Hooks", "PathCounts", "ProgressSnapshot",
                                                  "Result", "Statistics")},
    **{name: ("symex.engine", name) for name in ("explore", "run_exploration")},
    **{name: ("symex.errors", name) for name in ("CompileError", "CompilerNotFound", "ConfigError",
                                                 "LoadError", "SolverError", "SolverUnknown", "SymexError")},
    "compile": ("symex.loading", "compile"),
    "load": ("symex.loading", "load"),
    "solver": ("symex.solvers", "create_solver"),
}


def __getattr__(name: str) -> Any:
    """The public names, imported when first asked for."""
    try:
        module, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'symex' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


__version__ = "0.1.0"

__all__ = [
    "CompileError", "CompilerNotFound", "ConfigError", "Coverage", "Error", "ErrorKind", "Hooks",
    "LoadError", "PathCounts", "PathStatus", "ProgramError", "ProgressSnapshot", "Result",
    "RunDescription", "SolverError", "SolverUnknown", "Statistics", "SymexError", "TestCase",
    "compile", "explore", "load", "run_exploration", "solver",
]
