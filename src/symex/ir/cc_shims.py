"""Where ``symex cc``'s compiler scripts are, found without importing the rest of symex.

A ``configure`` runs the compiler hundreds of times, and each of its checks is one process:
working out the scripts' texts (which compiler, musl's headers, symex's flags) imports the
IR layer and runs the compiler for its version, ten times what zig cc takes to compile a
check. :mod:`symex.ir.build_driver` does that once and records the scripts' directory here,
under a key of everything that could change them: the environment variables symex reads,
the Python and symex in use, the modification times of the directories on ``PATH`` (a clang
installed or removed changes them) and of the files that write the scripts. A check then
costs a Python start-up and an ``exec``.

Standard library only: this is imported on every ``symex cc``.
"""

from __future__ import annotations

import os
import sys
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["default_cache_dir", "is_configure_check", "recorded_shims", "record_shims"]

# os.path, not pathlib, on the path a check takes (pathlib and hashlib cost a tenth of it)
_SYMEX = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: the files and directories whose change changes the scripts
_WRITERS = ("ir/build_driver.py", "ir/compile.py", "ir/musl.py", "include", "include/klee",
            "runtime/musl", "runtime/musl/arch", "prebuilt")


def default_cache_dir() -> Path:
    """Where compiled IR is cached: ``$SYMEX_CACHE_DIR`` if set, else ``~/.cache/symex/ir``."""
    from pathlib import Path  # noqa: PLC0415 (not on a check's path)

    return Path(_cache_dir())


def _cache_dir() -> str:
    env = os.environ.get("SYMEX_CACHE_DIR")
    if env:
        return os.path.expanduser(env)
    return os.path.join(os.path.expanduser("~"), ".cache", "symex", "ir")


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


def _key() -> str:
    """Everything the scripts depend on, as one line of text."""
    parts = [os.environ.get(name, "") for name in ("SYMEX_LIBC", "SYMEX_CC", "PATH", "SYMEX_MUSL_SOURCE")]
    parts += [sys.executable, _SYMEX]
    parts += [str(_mtime(os.path.join(_SYMEX, name))) for name in _WRITERS]
    parts += [str(_mtime(directory)) for directory in os.environ.get("PATH", "").split(os.pathsep) if directory]
    return "\x1f".join(parts).replace("\n", "\\n")


def _record_path(key: str) -> str:
    # the file is named by a checksum and holds the whole key, which a lookup compares
    return os.path.join(_cache_dir(), "cc-shims", f"env-{zlib.crc32(key.encode('utf-8', 'surrogateescape')):08x}")


def recorded_shims() -> str | None:
    """The scripts' directory recorded for this environment, if it is still there."""
    key = _key()
    try:
        with open(_record_path(key), encoding="utf-8", errors="surrogateescape") as stream:
            recorded_key, directory = stream.read().split("\n")[:2]
    except (OSError, ValueError):
        return None
    return directory if recorded_key == key and os.path.isfile(os.path.join(directory, "clang")) else None


def record_shims(directory: Path) -> None:
    """Record ``directory`` as this environment's scripts (atomically; a failure to write
    costs only speed)."""
    key = _key()
    path = _record_path(key)
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        with open(temporary, "w", encoding="utf-8", errors="surrogateescape") as stream:
            stream.write(f"{key}\n{directory}\n")
        os.replace(temporary, path)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass


def is_configure_check(arguments: Sequence[str]) -> bool:
    """Whether this run is one of configure's checks: every file it names is autoconf's
    ``conftest`` (``conftest.c``, ``conftest.o``, ``-o conftest``), or it names no file at
    all (``--version``, ``-v``, ``-print-prog-name=ld``). Its program is never explored, so
    no bitcode is built, which halves the time ``./configure CC="symex cc"`` takes."""
    files = [a for a in arguments if not a.startswith("-")]
    return all(os.path.basename(name).split(".")[0] == "conftest" for name in files)
