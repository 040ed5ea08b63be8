"""What the tests of the C library and the POSIX model share: the two frontends to run them
under, the gcc marker for native comparisons, and writing and exploring a small C program."""

from __future__ import annotations

import importlib.util
import shutil
import textwrap
from pathlib import Path

import pytest

import symex

#: glibc's headers through clang, and zig's bundled ones: both must work
COMPILERS = ["clang", pytest.param("zig", marks=pytest.mark.skipif(
    importlib.util.find_spec("ziglang") is None, reason="the ziglang package is not installed"))]

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc for the native build")


def write(tmp_path: Path, name: str, source: str) -> Path:
    """Write the dedented ``source`` to ``tmp_path/name``."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


def explore(path: Path, **options: object) -> symex.Result:
    """Explore the C file at ``path`` (dfs, seed 0, at most a minute)."""
    return symex.explore(symex.compile(path), searcher="dfs", seed=0, max_time=60.0, **options)
