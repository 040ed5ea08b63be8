"""The programs a program may ``execve`` (``--program NAME=PATH``), linked into its module.

A child that calls ``execve`` goes on in the same path running another program's IR, as a
forked child goes on running its parent's (:mod:`symex.env.execve`). For that, each named
program is compiled like the main one and linked into the same module, every external name
it defines renamed ``__symex_program.NAME.<name>`` (``EXEC_PREFIX``): its ``main`` and its
globals cannot clash with the main program's, while the C library, linked once afterwards,
serves both. ``Program.exec_entries`` finds each one's main again by that name, so the
mapping is in the IR itself (a run's assembly.ll, a worker's copy).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path


from symex.errors import ConfigError
from symex.ir.compile import default_cache_dir
from symex.ir.program import EXEC_PREFIX
from symex.ir.whole_program import parse_module

__all__ = ["check_program_names", "renamed_program"]

#: linkages whose names stay inside their module: nothing to rename
_LOCAL = frozenset({"internal", "private"})


def check_program_names(programs: Mapping[str, object]) -> None:
    """ConfigError for a NAME ``--program`` cannot use: empty, or ending in a slash."""
    for name in programs:
        if not name or name.endswith("/") or "\0" in name:
            raise ConfigError(f"--program {name!r}=...: NAME is a command (diff) or the path a "
                              f"program runs it by (/usr/bin/diff)")


def renamed_program(path: Path, name: str, cache_dir: os.PathLike[str] | None = None) -> Path:
    """A copy of the module at ``path`` whose defined external names carry the prefix of
    program ``name`` (cached by the module's bytes and the name)."""
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape") + b"\0" + path.read_bytes())
    directory = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    target = directory / f"exec-{digest.hexdigest()[:32]}.ll"
    if target.is_file():
        return target
    module = parse_module(path)
    prefix = f"{EXEC_PREFIX}{name}."
    for value in [*module.functions, *module.global_variables]:
        if value.is_declaration or value.linkage.name in _LOCAL or value.name.startswith("llvm."):
            continue
        value.name = prefix + value.name
    directory.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=".exec.", suffix=".tmp", dir=directory)
    with os.fdopen(fd, "w") as stream:
        stream.write(str(module))
    os.replace(temporary, target)
    return target
