"""Lowered programs kept for the next process that loads the same module.

Loading a module (LLVM parsing it, symex's C library linked in, its functions lowered) costs
a run 6-25 ms, and importing llvmlite's LLVM another 20 ms, every time the same bitcode is
run again: a user trying options, a benchmark's repeats, a test suite. A small program's
lowered :class:`~symex.ir.program.Program` is pickled into the IR cache under a key of
everything it was made from: the file's path and bytes, how it was asked to be loaded (the C
library, whether a musl recompile may follow), the compiler that builds symex's library,
and symex's own files (each module's and library source's size and modification time, so a
checkout edited since never reads a program an older lowering made). A program linked with
musl, or larger than :data:`LARGEST_KEPT`, is not kept: it is read lazily, function by
function, and a pickle of all of it would cost more than it saves. Nor is one holding
expressions, which are hash-consed in their process (:mod:`symex.expr.nodes`).
"""

from __future__ import annotations

import hashlib
import os
import pickle
from pathlib import Path

from symex.ir.build_cache import keep_file
from symex.ir.cache_size import mark_used, trim_once
from symex.ir.compile import Compiler
from symex.ir.program import Program

__all__ = ["LARGEST_KEPT", "cached_program", "keep_program", "program_key"]

#: the largest program kept, by the length of its IR text (get_sign.c: 5 KB; regexp: 20 KB)
LARGEST_KEPT = 256 * 1024

#: the pickle format (the version of this module's own layout, not Python's protocol)
_FORMAT = b"symex-program-1"

_code_identity: list[bytes] = []


def _code() -> bytes:
    """symex's own files as this process found them: each ``.py``, ``.c`` and ``.h`` file of
    the package (not musl's tree, not bytecode caches), by path, size and modification time
    (1 ms; once per process)."""
    if not _code_identity:
        files: list[str] = []
        pending = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]  # the package
        while pending:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in ("__pycache__", "musl"):
                            pending.append(entry.path)
                    elif entry.name.endswith((".py", ".c", ".h")):
                        stat = entry.stat()
                        files.append(f"{entry.path}\0{stat.st_size}\0{stat.st_mtime_ns}")
        _code_identity.append(hashlib.sha256("\n".join(sorted(files)).encode()).digest())
    return _code_identity[0]


def program_key(path: Path, data: bytes, asked: str, compiler: Compiler | None) -> str:
    """The key of the program loaded from ``path`` holding ``data`` (``asked``: how it was
    asked to be loaded, the C library and whether a musl recompile may follow)."""
    digest = hashlib.sha256(_FORMAT)
    fields = (os.fspath(path.resolve()).encode("utf-8", "surrogateescape"), data, asked.encode(),
              repr(compiler).encode(), _code())
    for field in fields:
        digest.update(len(field).to_bytes(8, "little"))
        digest.update(field)
    return digest.hexdigest()[:40]


def _cache_file(directory: Path, key: str) -> Path:
    return directory / "programs" / f"{key}.pickle"


def cached_program(directory: Path, key: str) -> Program | None:
    """The program kept under ``key``, or None (none kept, or unreadable: loaded afresh)."""
    try:
        data = _cache_file(directory, key).read_bytes()
    except OSError:
        return None
    if not data.startswith(_FORMAT):
        return None
    try:
        program = pickle.loads(data[len(_FORMAT):])
    except Exception:  # noqa: BLE001 (a damaged file is a miss, whatever unpickling raised)
        return None
    if not isinstance(program, Program):
        return None
    mark_used(_cache_file(directory, key))
    return program


def keep_program(directory: Path, key: str, program: Program) -> bool:
    """Keep ``program`` under ``key`` where it is small, linked without musl and holds no
    expression; whether it was kept. A cache that cannot be written is no error."""
    if program.library == "musl" or len(program.ir_text) > LARGEST_KEPT:
        return False
    try:
        # lowers what was left for its first call (Program.__getstate__)
        data = pickle.dumps(program, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 (a function that does not lower fails where it is called)
        return False
    if b"symex.expr" in data:
        return False
    trim_once(directory)  # before: the program kept now is the newest, and kept
    return keep_file(_cache_file(directory, key), _FORMAT + data)
