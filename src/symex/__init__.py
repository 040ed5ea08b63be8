"""symex: symbolic execution of C programs compiled to LLVM IR.

    import symex
    program = symex.compile("get_sign.c")
    result = symex.explore(program, searcher="dfs", max_time=60.0, seed=0)
    for test in result.tests:
        print(test.objects, test.error)
"""

from __future__ import annotations

from symex.core.outcome import ErrorKind, PathStatus, ProgramError, TestCase
from symex.engine import (
    Coverage,
    Hooks,
    PathCounts,
    ProgressSnapshot,
    Result,
    Statistics,
    explore,
    run_exploration,
)
from symex.description import RunDescription
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
from symex.solvers import create_solver as solver

#: The error a path ended in (the name used in the user documentation)
Error = ProgramError

__version__ = "0.1.0"

__all__ = [
    "CompileError", "CompilerNotFound", "ConfigError", "Coverage", "Error", "ErrorKind", "Hooks",
    "LoadError", "PathCounts", "PathStatus", "ProgramError", "ProgressSnapshot", "Result",
    "RunDescription", "SolverError", "SolverUnknown", "Statistics", "SymexError", "TestCase",
    "compile", "explore", "load", "run_exploration", "solver",
]
