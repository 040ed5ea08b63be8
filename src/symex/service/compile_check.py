"""The compile check of an upload, run in the job's sandbox by the server before the job is
filed: ``python -m symex.service.compile_check PROGRAM [FLAG...]`` compiles PROGRAM with
symex's compiler (the IR lands in the job's cache, where its run finds it) and exits 0, or
1 with the compiler's message on stderr. It imports the compiler driver only: a submission
waits for it."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from symex.errors import SymexError, error_text
from symex.ir.compile import compile_c

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Compile the program the arguments name; the exit status (module docstring)."""
    words = list(sys.argv[1:] if argv is None else argv)
    if not words:
        sys.stderr.write("usage: python -m symex.service.compile_check PROGRAM [FLAG...]\n")
        return 2
    try:
        compile_c(words[0], words[1:])
    except SymexError as exc:
        sys.stderr.write(error_text("symex", exc))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
