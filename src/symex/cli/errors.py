"""How a command reports an error of symex's: one line, ``COMMAND: error: WHAT``, then, for
a compile error, the compiler's own output as it printed it."""

from __future__ import annotations

from symex.errors import CompileError, SymexError

__all__ = ["error_text"]


def error_text(command: str, exc: SymexError) -> str:
    """The lines to print on stderr for ``exc`` (ending in a newline)."""
    if isinstance(exc, CompileError) and exc.diagnostics:
        # verbatim: joined into one line, the compiler's ^ markers would point nowhere
        return f"{command}: error: {' '.join(exc.headline.split())}\n{exc.diagnostics.rstrip()}\n"
    return f"{command}: error: {' '.join(str(exc).split())}\n"
