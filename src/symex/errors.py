"""The one exception hierarchy of symex.

Every error a user can see derives from :class:`SymexError` and says what to do about it.
Errors *in the program under test* (out-of-bounds access, failed assertions, ...) are not
exceptions: they are reported as :class:`symex.core.outcome.ProgramError` values on test cases.
"""

from __future__ import annotations


class SymexError(Exception):
    """Base class of every error symex raises."""


class CompileError(SymexError):
    """The C compiler rejected the program. ``headline`` says so in one line; ``diagnostics``
    is the compiler's own output, verbatim (its ``^`` markers line up with the source lines
    it quotes); the message holds both."""

    def __init__(self, headline: str, diagnostics: str = "") -> None:
        super().__init__(f"{headline}\n{diagnostics}" if diagnostics else headline)
        self.headline = headline
        self.diagnostics = diagnostics


class CompilerNotFound(SymexError):
    """Neither clang nor zig cc could be found to compile C source."""


class LoadError(SymexError):
    """An LLVM IR file could not be read or parsed (missing, malformed, unsupported)."""


class QueryFormatError(LoadError):
    """A solver query file (SMT-LIB2 or KQuery) is malformed or uses what symex does not read;
    the message says where and what is supported."""


class SolverError(SymexError):
    """A solver failed: not installed, crashed, or gave an answer it cannot justify."""


class SolverUnknown(SolverError):
    """The solver answered ``unknown`` (time limit or incompleteness); ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"solver returned unknown: {reason}")
        self.reason = reason


class ConfigError(SymexError):
    """An option or argument given to symex is invalid."""


def error_text(command: str, exc: SymexError) -> str:
    """How ``command`` (``symex``, a job's process) reports ``exc`` on stderr: one line,
    ``COMMAND: error: WHAT``, then, for a compile error, the compiler's own output as it
    printed it (ending in a newline)."""
    if isinstance(exc, CompileError) and exc.diagnostics:
        # verbatim: joined into one line, the compiler's ^ markers would point nowhere
        return f"{command}: error: {' '.join(exc.headline.split())}\n{exc.diagnostics.rstrip()}\n"
    return f"{command}: error: {' '.join(str(exc).split())}\n"
