"""A cache of build outputs keyed on a source and on every header the build read.

This is ccache's *direct mode*: a build's key (source bytes, flags, compiler...) leads to a
*manifest* listing the headers the build read (from the compiler's make-style dependency
file), and the output is named by the key plus a digest of those headers' contents. A later
lookup hashes the listed headers again, so editing any of them (the program's own or a
system one) misses and builds anew, while putting a header back finds the earlier output.
A header that would newly shadow another on the include path is not seen (ccache shares
this blind spot). Used for the IR of C programs (:mod:`symex.ir.compile`) and the native
replay executables (:mod:`symex.replay`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from symex.ir.cache_size import mark_used, trim_once

__all__ = ["DEPENDENCY_TARGET", "BuildCache", "keep_file", "list_headers", "read_dependency_file"]

#: the make target name builds write their dependency file for (``-MT``)
DEPENDENCY_TARGET = "symex-build"


def read_dependency_file(depfile: Path, source: Path, cwd: Path) -> list[str]:
    """The absolute paths of the files a build read besides ``source``, from the make-style
    dependency file the compiler wrote (``target: a.h b.h \\`` with ``\\ `` for a space);
    relative paths are relative to ``cwd``, where the compiler ran."""
    text = depfile.read_text(errors="surrogateescape").replace("\\\n", " ")
    _, _, rest = text.partition(f"{DEPENDENCY_TARGET}:")
    paths: dict[str, None] = {}  # in order, once each
    for raw in re.split(r"(?<!\\)\s+", rest.strip()):
        if raw:
            paths[os.path.normpath(os.path.join(cwd, raw.replace("\\ ", " ")))] = None
    paths.pop(str(source), None)
    return list(paths)


def list_headers(compiler: Sequence[str], source: Path, depfile: Path,
                 run: Callable[[list[str]], int] | None = None,
                 cwd: Path | None = None) -> list[str] | None:
    """The files a compile of ``source`` by ``compiler`` (its command and flags) reads besides
    it, from a preprocessor-only run of it (``-M``, dependencies into ``depfile``): zig cc
    writes no output file when asked for a dependency file in the compile itself, and gcc
    would list the runtime a replay build links too. ``run`` runs that command in ``cwd``
    (its exit status; by default here, in this directory: a sandbox's is another). None if
    that run fails."""
    command = [*compiler, "-M", "-MF", str(depfile), "-MT", DEPENDENCY_TARGET, str(source),
               "-o", os.devnull]
    try:
        status = (run(command) if run is not None
                  else subprocess.run(command, capture_output=True, check=False).returncode)
    except OSError:
        return None
    if status != 0 or not depfile.is_file():
        return None
    return read_dependency_file(depfile, source, cwd or Path.cwd())


def keep_file(target: Path, data: bytes) -> bool:
    """Write ``data`` as ``target`` in a cache directory: under a temporary name beside it,
    then renamed over it, so a reader (another process) never sees half of it. False where
    the cache cannot be written (read-only, full): a cache is never an error, and no
    temporary file is left behind."""
    temporary = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, target)
    except OSError:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
        return False
    return True


def _contents_digest(paths: Sequence[str]) -> str | None:
    """SHA-256 over the names and contents of ``paths``; None if one cannot be read."""
    digest = hashlib.sha256()
    for path in paths:
        try:
            data = Path(path).read_bytes()
        except OSError:
            return None
        for field in (path.encode("utf-8", "surrogateescape"), data):
            digest.update(len(field).to_bytes(8, "little"))
            digest.update(field)
    return digest.hexdigest()


class BuildCache:
    """The cached outputs of one source under one key, in ``directory``: ``lookup`` before
    building, ``store`` after (module docstring)."""

    __slots__ = ("directory", "stem", "key", "suffix")

    def __init__(self, directory: Path, stem: str, key: str, suffix: str) -> None:
        self.directory = directory
        self.stem = stem
        self.key = key
        self.suffix = suffix

    @property
    def manifest(self) -> Path:
        """The manifest of this key: the headers its last build read."""
        return self.directory / f"{self.stem}-{self.key[:32]}.deps"

    def _output(self, headers_digest: str) -> Path:
        name = hashlib.sha256((self.key + headers_digest).encode()).hexdigest()[:32]
        return self.directory / f"{self.stem}-{name}{self.suffix}"

    def lookup(self) -> Path | None:
        """The cached output while every header the manifest lists is unchanged."""
        try:
            recorded = json.loads(self.manifest.read_text())
            key, headers = recorded["key"], recorded["headers"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        digest = _contents_digest(headers) if key == self.key else None
        if digest is None:
            return None
        output = self._output(digest)
        if not output.is_file():
            return None
        mark_used(output)
        mark_used(self.manifest)
        return output

    def store(self, built: Path, headers: Sequence[str] | None) -> Path:
        """Move ``built`` into the cache under the headers it was built from; its path there.
        Without the list of headers (``None``), or when one of them vanished since the
        build, it is moved aside uncached: the next lookup builds again."""
        trim_once(self.directory)  # before: what this store adds is the newest, and kept
        digest = _contents_digest(headers) if headers is not None else None
        if digest is None:
            output = self.directory / f".{self.stem}-{self.key[:32]}.uncached{self.suffix}"
            os.replace(built, output)
            return output
        output = self._output(digest)
        os.replace(built, output)
        # the manifest last: a lookup that finds it finds the output it leads to
        fd, temporary = tempfile.mkstemp(prefix=f".{self.manifest.name}.", dir=self.directory)
        with os.fdopen(fd, "w") as handle:
            json.dump({"key": self.key, "headers": list(headers or ())}, handle)
        os.replace(temporary, self.manifest)
        return output
