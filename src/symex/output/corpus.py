"""A fuzz target's inputs as fuzzers keep them: one raw file per input.

``symex run --fuzz-target --corpus-out DIR`` writes each test's input (the first
``fuzz-size`` bytes of ``fuzz-data``: :func:`symex.env.fuzz_input.raw_input`) into DIR, named
as libFuzzer and AFL++'s tools name corpus files: the SHA-1 of the content, and
``crash-SHA1`` (``timeout-SHA1`` for a hang) for an input whose path ended in an error, so
that ``./target crash-...`` reproduces it with libFuzzer's own driver. ``--seed-corpus DIR``
reads such a directory back as seeds (:func:`read_corpus`).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from symex.core.outcome import ErrorKind, TestCase
from symex.core.search.seeding import Seed
from symex.env.fuzz_input import raw_input, seed_objects
from symex.errors import ConfigError
from symex.output.atomic_write import write_atomically

__all__ = ["CorpusWriter", "corpus_name", "read_corpus"]


def corpus_name(data: bytes, error: ErrorKind | None = None) -> str:
    """The file name libFuzzer gives ``data``: its SHA-1, prefixed ``crash-`` for an input
    that fails (``timeout-`` for one that hangs)."""
    digest = hashlib.sha1(data, usedforsecurity=False).hexdigest()
    if error is None:
        return digest
    return f"{'timeout' if error is ErrorKind.HANG else 'crash'}-{digest}"


class CorpusWriter:
    """Writes the raw input of each test of a fuzz target into one directory (made when
    missing); tests of other programs have none and are skipped."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        #: how many inputs were written (an input met twice is written once)
        self.written = 0

    def add(self, test: TestCase) -> Path | None:
        """Write ``test``'s input; its path, or None for a test of no fuzz target."""
        data = raw_input(test.objects)
        if data is None:
            return None
        path = self.directory / corpus_name(data, test.error.kind if test.error else None)
        if not path.exists():
            write_atomically(path, data)
            self.written += 1
        return path


def read_corpus(directory: str | os.PathLike[str], max_input: int) -> list[Seed]:
    """The files of a fuzzer's corpus directory as seeds of a fuzz target, in name order
    (bytes past ``max_input`` left out, as libFuzzer's ``-max_len`` does). Hidden files and
    subdirectories are skipped (AFL++'s ``.state``)."""
    where = Path(directory)
    if not where.is_dir():
        raise ConfigError(f"--seed-corpus {os.fspath(where)}: not a directory; give a fuzzer's "
                          f"corpus directory (one input per file)")
    files = sorted(p for p in where.iterdir() if p.is_file() and not p.name.startswith("."))
    if not files:
        raise ConfigError(f"--seed-corpus {os.fspath(where)}: no input files there")
    return [Seed(tuple(seed_objects(p.read_bytes(), max_input).items()), os.fspath(p))
            for p in files]
