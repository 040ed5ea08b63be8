"""Writing a file so that a reader, or an interrupted run, never sees half of it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["write_atomically"]


def write_atomically(path: str | os.PathLike[str], data: bytes | str) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename (never half a file)."""
    target = Path(path)
    payload = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        # mkstemp makes the file private (0600); outputs get the usual permissions
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


_UMASK: list[int] = []


def _umask() -> int:
    if not _UMASK:
        current = os.umask(0o022)  # reading the umask means setting it: put it back at once
        os.umask(current)
        _UMASK.append(current)
    return _UMASK[0]
