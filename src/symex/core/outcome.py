"""How paths end: error kinds, program errors, test cases.

Error kind names follow KLEE's ``.err`` file suffixes so that users of KLEE recognise them.
"""

from __future__ import annotations

import enum

import attrs


class ErrorKind(str, enum.Enum):
    """Kinds of bugs found in the program under test (KLEE's ``.err`` suffixes)."""

    PTR = "ptr"  # out-of-bounds, null, use-after-free access
    FREE = "free"  # double or invalid free
    DIV = "div"  # division or remainder by zero
    OVERSHIFT = "overshift"  # shift by at least the bit width
    ASSERT = "assert"  # assert() failed
    ABORT = "abort"  # abort() called
    USER = "user"  # klee_report_error, provably false klee_assume
    EXEC = "exec"  # reached `unreachable`, stack overflow, trap
    READONLY = "readonly"  # write to a constant object
    REACH_ERROR = "reach_error"  # SV-COMP reach_error() / __VERIFIER_error()
    HANG = "hang"  # every process and thread blocked (possible deadlock)

    def __str__(self) -> str:
        return self.value


class PathStatus(str, enum.Enum):
    """How a path ended."""

    COMPLETED = "completed"  # the program exited normally
    ERROR = "error"  # the program hit a bug (see TestCase.error)
    PARTIAL = "partial"  # exploration of the path stopped early (limit, unsupported, solver unknown)

    def __str__(self) -> str:
        return self.value


#: One stack frame of an error trace: (function, file, line); file/line None without debug info.
StackEntry = tuple[str, "str | None", "int | None"]


@attrs.frozen
class ProgramError:
    """A bug found in the program: its kind, a message, where, and the call stack (innermost
    first)."""

    kind: ErrorKind
    message: str
    location: tuple[str, int] | None
    stack: tuple[StackEntry, ...]
    instruction: str = ""
    threads: tuple[tuple[str, tuple[StackEntry, ...]], ...] = ()
    """For a hang: every thread's stack, labelled with its process and thread."""

    @property
    def site(self) -> tuple[str, str, int | None, str]:
        """What makes two errors "the same bug": kind, file, line, instruction."""
        file, line = self.location if self.location else ("", None)
        return (self.kind.value, file, line, self.instruction)


@attrs.frozen
class TestCase:
    """Concrete inputs for one explored path.

    ``objects`` maps every symbolic object's name to its bytes, in creation order;
    ``error`` is the bug the path ended in, if any; ``status`` says how it ended and ``reason``
    why a partial path stopped."""

    __test__ = False  # not a pytest class

    objects: dict[str, bytes]
    status: PathStatus
    error: ProgramError | None = None
    reason: str = ""
    exit_code: int | None = None
    path: tuple[int, ...] = ()
    stdout: bytes = b""
    instructions: int = 0
    covered_lines: frozenset[tuple[str, int]] | None = None
    """The source lines this path executed (whole blocks entered); only filled when
    ``explore(track_test_coverage=True)``."""
    covers_new: bool = False
    """Whether this path reached a basic block no earlier path had reached. A block is first
    entered by one state; the credit goes to the first path to end among that state and its
    later forks (so two paths that share a prefix are not both "new" for it)."""
    stderr: bytes = b""
    """What the path wrote to standard error (descriptor 2)."""
    threads: tuple[tuple[str, tuple[StackEntry, ...]], ...] = ()
    """Every live thread's stack where a partial path stopped waiting (``idle``), labelled
    as a hang error's are; written to the test's ``.early`` file."""


#: why paths end when the run's time limit (max_time, --max-time) is reached
TIME_LIMIT_REASON = "max-time reached"


class PathTerminated(Exception):
    """Raised inside the interpreter to end the current path; the engine catches it."""

    def __init__(self, status: PathStatus, reason: str = "", error: ProgramError | None = None,
                 exit_code: int | None = None, emit_test: bool = True,
                 limit: bool = False,
                 threads: tuple[tuple[str, tuple[StackEntry, ...]], ...] = ()) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.error = error
        self.exit_code = exit_code
        self.emit_test = emit_test
        #: a limit of the run stopped the path (time, depth, states...), not the path itself:
        #: a later run over the recorded tree explores on from there
        self.limit = limit
        #: every live thread's stack, for a path that stopped waiting (TestCase.threads)
        self.threads = threads


class Forked(Exception):
    """Raised after a fork so the engine can hand the new states to the searcher."""
