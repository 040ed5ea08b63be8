"""The caches kept to a size: least recently used files go first.

Every program compiled, every edit of it, every set of flags and every small program loaded
leaves a file in the IR cache (``~/.cache/symex/ir``: IR text, build manifests, lowered
programs under ``programs/``), and every replayed program an executable in the native one;
nothing removed them (a machine that ran the test suite a few dozen times held 6,000 files,
300 MB). The first time a process adds to a cache, it first trims that cache's files to
``SYMEX_CACHE_MB`` megabytes (:data:`DEFAULT_CACHE_MB`), the least recently used first (a
lookup that finds a file marks it used: :func:`mark_used`, its modification time), so what
it adds is never what it removes, and a cache holds at most the limit and what one process
added. Only the
cache's own top-level files and ``programs/`` are trimmed; musl's builds and the system-call
tables (folders of one version each) are not. Removing a file another process is about to
read costs that process a rebuild, never a wrong answer: every key names its contents.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from symex.errors import ConfigError

__all__ = ["CACHE_MB_VARIABLE", "DEFAULT_CACHE_MB", "cache_limit", "mark_used", "trim", "trim_once"]

#: the environment variable that sets the limit, in megabytes
CACHE_MB_VARIABLE = "SYMEX_CACHE_MB"
#: each cache's size unless ``SYMEX_CACHE_MB`` says otherwise (GNU coreutils' 88 tools
#: compiled once take about 450 MB)
DEFAULT_CACHE_MB = 2048
#: the folders of a cache that are trimmed beside its top level
_TRIMMED_FOLDERS = ("programs",)
#: a temporary file (``.name.XXXX``) this old was left by a process that was killed
_ABANDONED_SECONDS = 3600.0

_trimmed: set[str] = set()


def cache_limit() -> int:
    """The most bytes a cache may hold (``SYMEX_CACHE_MB``, else the default)."""
    text = os.environ.get(CACHE_MB_VARIABLE, "").strip()
    if not text:
        return DEFAULT_CACHE_MB * 2 ** 20
    try:
        megabytes = float(text)
    except ValueError:
        megabytes = -1.0
    if not megabytes >= 0:
        raise ConfigError(f"{CACHE_MB_VARIABLE}={text!r} is not a size: give the most megabytes "
                          f"each of symex's caches may hold, e.g. {CACHE_MB_VARIABLE}={DEFAULT_CACHE_MB}")
    return int(megabytes * 2 ** 20)


def mark_used(path: Path) -> None:
    """Note that ``path``, a cache file, was used now (a read-only cache stays as it is)."""
    try:
        os.utime(path)
    except OSError:
        pass


def trim(directory: Path, limit: int) -> int:
    """Remove the least recently used files of the cache ``directory`` until it holds at
    most ``limit`` bytes, and temporary files a killed process left; the bytes removed."""
    now = time.time()
    files: list[tuple[float, int, str]] = []
    removed = 0
    for folder in (directory, *(directory / name for name in _TRIMMED_FOLDERS)):
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if not entry.is_file(follow_symlinks=False):
                    continue
                stat = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if entry.name.startswith(".") and ".uncached" not in entry.name:
                # being written by another process, unless it was left long ago
                if now - stat.st_mtime > _ABANDONED_SECONDS and _remove(entry.path):
                    removed += stat.st_size
                continue
            files.append((stat.st_mtime, stat.st_size, entry.path))
    total = sum(size for _, size, _ in files)
    files.sort()
    for _, size, path in files:
        if total <= limit:
            break
        if _remove(path):
            removed += size
        total -= size
    return removed


def trim_once(directory: Path) -> None:
    """:func:`trim` ``directory`` to :func:`cache_limit` once in this process (the first
    time it adds to it: a scan of a full cache takes some milliseconds)."""
    key = os.fspath(directory)
    if key in _trimmed:
        return
    _trimmed.add(key)
    trim(directory, cache_limit())


def _remove(path: str) -> bool:
    try:
        os.unlink(path)
    except OSError:
        return False
    return True
