"""Symbolic command-line arguments as KLEE's POSIX runtime makes them (``klee_init_env``).

A program's arguments (everything after ``argv[0]``) are a sequence of items, in order:
concrete strings, which stay where they are written, ``--sym-arg N`` (:class:`SymArg`: one
argument of at most N characters) and ``--sym-args MIN MAX N`` (:class:`SymArgs`: between MIN
and MAX such arguments). :class:`ArgvSpec` holds that sequence; ``ArgvSpec.parse`` reads KLEE's
syntax and ``words()`` writes it back (the ``args`` field of a ``.ktest`` file).

The objects a run creates, in order, are KLEE's: ``argNN`` (NN counts the symbolic arguments
from 00) of N+1 bytes for each symbolic argument, and before the arguments of each
``--sym-args`` an ``n_args`` object (4 bytes, little-endian int). :func:`replay_argv` turns the
objects of a test case back into the command line that the native program must get.

This module sits at the bottom layer (it imports only ``errors``) because the engine, the
command line and native replay all read the same syntax.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from symex.errors import ConfigError

__all__ = ["MAX_SYMBOLIC_ARGS", "SYM_STDOUT_SIZE", "ArgvItem", "ArgvSpec", "SymArg", "SymArgs",
           "FAILURE_OBJECTS", "MaxFail", "SymFiles", "SymFragments", "SymPackets", "SymStdin",
           "SymStdout", "is_posix_object",
           "replay_argv"]

MAX_SYMBOLIC_ARGS = 100
"""KLEE's limit: object names have two digits (``arg00``..``arg99``)."""

SYM_STDOUT_SIZE = 1024
"""Bytes of the ``stdout`` object ``--sym-stdout`` makes (KLEE's ``klee_init_fds``)."""


def _non_negative(instance: object, attribute: attrs.Attribute, value: int) -> None:
    if type(value) is not int or value < 0:
        raise ConfigError(f"{attribute.name} of a symbolic argument must be a whole number >= 0, "
                          f"not {value!r}")


@attrs.frozen
class SymArg:
    """``--sym-arg N``: one symbolic argument of at most ``max_len`` characters."""

    max_len: int = attrs.field(validator=_non_negative)


@attrs.frozen
class SymArgs:
    """``--sym-args MIN MAX N``: between ``min`` and ``max`` symbolic arguments (their number
    is the input ``n_args``), each of at most ``max_len`` characters."""

    min: int = attrs.field(validator=_non_negative)
    max: int = attrs.field(validator=_non_negative)
    max_len: int = attrs.field(validator=_non_negative)

    def __attrs_post_init__(self) -> None:
        if self.min > self.max or self.max == 0:
            # KLEE rejects both: "Invalid range to --sym-args"
            raise ConfigError(f"invalid range to --sym-args: MIN {self.min}, MAX {self.max}; "
                              f"give 0 <= MIN <= MAX with MAX >= 1")


@attrs.frozen
class SymFiles:
    """``--sym-files NUM N``: NUM symbolic files named ``A``, ``B``, ... of ``size`` bytes
    each (objects ``A-data`` and ``A-data-stat`` per file, as KLEE's POSIX runtime)."""

    count: int = attrs.field(validator=_non_negative)
    size: int = attrs.field(validator=_non_negative)

    def __attrs_post_init__(self) -> None:
        if self.count > 26:
            raise ConfigError(f"--sym-files allows at most 26 files (A..Z), not {self.count}")


@attrs.frozen
class SymStdin:
    """``--sym-stdin N``: standard input is N symbolic bytes (objects ``stdin``, ``stdin-stat``)."""

    size: int = attrs.field(validator=_non_negative)


@attrs.frozen
class SymStdout:
    """``--sym-stdout``: standard output is a symbolic file of :data:`SYM_STDOUT_SIZE` bytes
    that writes overwrite (objects ``stdout`` and ``stdout-stat``, after stdin's, as KLEE's
    POSIX runtime); what the path writes is still its output."""


@attrs.frozen
class SymPackets:
    """``--sym-packets NUM SIZE``: a client outside the program connects to the first socket
    that listens and accepts, sends NUM packets of SIZE symbolic bytes (objects ``packet-0``,
    ``packet-1``...), then closes (env/network.py)."""

    count: int = attrs.field(validator=_non_negative)
    size: int = attrs.field(validator=_non_negative)


@attrs.frozen
class SymFragments:
    """``--sym-fragments N``: up to N times per path, a stream ``recv`` may return part of
    what one ``send`` sent, one state per possible length (Cloud9's symbolic fragmentation)."""

    count: int = attrs.field(validator=_non_negative)


@attrs.frozen
class MaxFail:
    """``--max-fail N``: up to N system calls per path fail (KLEE's POSIX runtime): each
    ``read``, ``write`` and ``close`` may return -1 with ``errno`` EIO, as decided by the
    symbolic objects ``read_fail``, ``write_fail`` and ``close_fail`` (a call fails when its
    object equals the number of that call: the first read is 1)."""

    count: int = attrs.field(validator=_non_negative)


def _relative_directory(instance: object, attribute: attrs.Attribute, value: str) -> None:
    parts = value.split("/") if isinstance(value, str) else []
    if not value or value.startswith("/") or any(part in ("", ".", "..") for part in parts):
        raise ConfigError(f"--sym-dir takes a relative directory such as htdocs or www/data, not "
                          f"{value!r}: the symbolic files are made under the working directory")


@attrs.frozen
class SymDir:
    """``--sym-dir DIR``: the files of ``--sym-files`` are ``DIR/A``, ``DIR/B`` ... instead of
    ``A``, ``B`` ... (``DIR`` and the directories above it exist), so a program that serves or
    walks files under a directory (a web server's ``htdocs``) finds them there."""

    path: str = attrs.field(validator=_relative_directory)


#: the objects ``--max-fail`` makes, in order (KLEE's names), one per kind of call
FAILURE_OBJECTS = ("read_fail", "write_fail", "close_fail")

_ENVIRONMENT = (SymFiles, SymStdin, SymStdout, SymPackets, SymFragments, MaxFail, SymDir)

ArgvItem = (str | SymArg | SymArgs | SymFiles | SymStdin | SymStdout | SymPackets | SymFragments | MaxFail
            | SymDir)
"""One item of a command line: a concrete argument, a symbolic-argument spec, or a spec of
the symbolic environment (files, stdin), which takes no place in ``argv``."""

_POSIX_OBJECT_NAMES = frozenset({"stdin", "stdin-stat", "stdout", "stdout-stat", "model_version",
                                 *FAILURE_OBJECTS})


def is_posix_object(name: str) -> bool:
    """Whether an object name is one the POSIX model makes (``A-data``, ``A-data-stat``,
    ``stdin``, ``stdin-stat``, ``stdout``, ``stdout-stat``, ``model_version``, and
    ``--max-fail``'s ``read_fail``, ``write_fail``, ``close_fail``)."""
    if name in _POSIX_OBJECT_NAMES:
        return True
    return len(name) >= 6 and name[0].isupper() and name[1:] in ("-data", "-data-stat")


def _spec_number(word: str | None, option: str, usage: str) -> int:
    # KLEE accepts digits only (so "-1" is an error, not a negative length)
    if word is None or not word.isdigit():
        got = "nothing" if word is None else repr(word)
        raise ConfigError(f"{option} expects {usage}, got {got}")
    return int(word)


def _argv_items(items: Iterable[ArgvItem]) -> tuple[ArgvItem, ...]:
    return tuple(items)


@attrs.frozen
class ArgvSpec:
    """A program's arguments after ``argv[0]``: concrete strings and symbolic specs, in order."""

    items: tuple[ArgvItem, ...] = attrs.field(converter=_argv_items)

    def __attrs_post_init__(self) -> None:
        for item in self.items:
            if not isinstance(item, (str, SymArg, SymArgs) + _ENVIRONMENT):
                raise ConfigError(f"a command-line item must be a str, SymArg, SymArgs, "
                                  f"SymFiles, SymStdin, SymStdout, SymPackets, "
                                  f"SymFragments, MaxFail or SymDir, not {item!r}")
        if self.max_symbolic > MAX_SYMBOLIC_ARGS:
            raise ConfigError(f"at most {MAX_SYMBOLIC_ARGS} symbolic arguments are allowed "
                              f"(these specs allow {self.max_symbolic}); lower MAX or drop some")

    @property
    def max_symbolic(self) -> int:
        """How many symbolic arguments the specs can create at most."""
        return sum(1 if isinstance(i, SymArg) else i.max for i in self.items
                   if isinstance(i, (SymArg, SymArgs)))

    @property
    def input_bytes(self) -> int:
        """The symbolic bytes of data the specs make at most: arguments (with their
        terminators), files, stdin, the symbolic stdout, packets (the files' stat records and
        the small counters aside)."""
        total = 0
        for item in self.items:
            if isinstance(item, SymArg):
                total += item.max_len + 1
            elif isinstance(item, SymArgs):
                total += item.max * (item.max_len + 1)
            elif isinstance(item, SymFiles):
                total += item.count * item.size
            elif isinstance(item, SymStdin):
                total += item.size
            elif isinstance(item, SymStdout):
                total += SYM_STDOUT_SIZE
            elif isinstance(item, SymPackets):
                total += item.count * item.size
        return total

    @property
    def is_symbolic(self) -> bool:
        """Whether any item is a symbolic spec (arguments, files or stdin)."""
        return any(not isinstance(i, str) for i in self.items)

    @property
    def has_symbolic_arguments(self) -> bool:
        """Whether any item makes a symbolic argument of ``argv``."""
        return any(isinstance(i, (SymArg, SymArgs)) for i in self.items)

    @property
    def sym_dir(self) -> str:
        """The last ``--sym-dir`` (where the symbolic files are; "" for the working directory)."""
        found = [i for i in self.items if isinstance(i, SymDir)]
        return found[-1].path if found else ""

    def sym_file_path(self, letter: str) -> str:
        """Where the symbolic file ``letter`` is, relative to the working directory."""
        return f"{self.sym_dir}/{letter}" if self.sym_dir else letter

    @property
    def sym_files(self) -> SymFiles | None:
        """The last ``--sym-files`` spec, if any (KLEE keeps the last one too)."""
        found = [i for i in self.items if isinstance(i, SymFiles)]
        return found[-1] if found else None

    @property
    def sym_stdin(self) -> SymStdin | None:
        """The last ``--sym-stdin`` spec, if any."""
        found = [i for i in self.items if isinstance(i, SymStdin)]
        return found[-1] if found else None

    @property
    def sym_packets(self) -> SymPackets | None:
        """The last ``--sym-packets`` spec, if any."""
        found = [i for i in self.items if isinstance(i, SymPackets)]
        return found[-1] if found else None

    @property
    def sym_fragments(self) -> SymFragments | None:
        """The last ``--sym-fragments`` spec, if any."""
        found = [i for i in self.items if isinstance(i, SymFragments)]
        return found[-1] if found else None

    @property
    def max_fail(self) -> int:
        """The last ``--max-fail`` count (0: no call fails)."""
        found = [i for i in self.items if isinstance(i, MaxFail)]
        return found[-1].count if found else 0

    @property
    def sym_stdout(self) -> bool:
        """Whether ``--sym-stdout`` is among the items."""
        return any(isinstance(i, SymStdout) for i in self.items)

    @classmethod
    def parse(cls, words: Sequence[str]) -> ArgvSpec:
        """Read KLEE's syntax: ``--sym-arg N`` and ``--sym-args MIN MAX N`` (also with one
        dash) among concrete arguments. Bad numbers raise :class:`ConfigError`."""
        items: list[ArgvItem] = []
        k = 0
        while k < len(words):
            word = words[k]
            if word in ("--sym-arg", "-sym-arg"):
                usage = "an integer argument <max-len>"
                items.append(SymArg(_spec_number(words[k + 1] if k + 1 < len(words) else None,
                                                 word, usage)))
                k += 2
            elif word in ("--sym-args", "-sym-args"):
                usage = "three integer arguments <min-argvs> <max-argvs> <max-len>"
                numbers = [_spec_number(words[k + j] if k + j < len(words) else None, word, usage)
                           for j in (1, 2, 3)]
                items.append(SymArgs(*numbers))
                k += 4
            elif word in ("--sym-files", "-sym-files"):
                usage = "two integer arguments <no-sym-files> <sym-file-len>"
                numbers = [_spec_number(words[k + j] if k + j < len(words) else None, word, usage)
                           for j in (1, 2)]
                items.append(SymFiles(*numbers))
                k += 3
            elif word in ("--sym-stdin", "-sym-stdin"):
                usage = "an integer argument <stdin-len>"
                items.append(SymStdin(_spec_number(words[k + 1] if k + 1 < len(words) else None,
                                                   word, usage)))
                k += 2
            elif word in ("--sym-stdout", "-sym-stdout"):
                items.append(SymStdout())
                k += 1
            elif word in ("--sym-packets", "-sym-packets"):
                usage = "two integer arguments <packets> <packet-size>"
                numbers = [_spec_number(words[k + j] if k + j < len(words) else None, word, usage)
                           for j in (1, 2)]
                items.append(SymPackets(*numbers))
                k += 3
            elif word in ("--sym-fragments", "-sym-fragments"):
                usage = "an integer argument <splits>"
                items.append(SymFragments(_spec_number(words[k + 1] if k + 1 < len(words) else None,
                                                       word, usage)))
                k += 2
            elif word in ("--sym-dir", "-sym-dir"):
                if k + 1 >= len(words):
                    raise ConfigError(f"{word} takes a directory argument <dir>")
                items.append(SymDir(words[k + 1]))
                k += 2
            elif word in ("--max-fail", "-max-fail"):
                usage = "an integer argument <max-failures>"
                items.append(MaxFail(_spec_number(words[k + 1] if k + 1 < len(words) else None,
                                                  word, usage)))
                k += 2
            else:
                items.append(word)
                k += 1
        return cls(items)

    def words(self) -> tuple[str, ...]:
        """The items in KLEE's syntax (what a ``.ktest`` file's ``args`` field lists)."""
        out: list[str] = []
        for item in self.items:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, SymArg):
                out += ["--sym-arg", str(item.max_len)]
            elif isinstance(item, SymArgs):
                out += ["--sym-args", str(item.min), str(item.max), str(item.max_len)]
            elif isinstance(item, SymFiles):
                out += ["--sym-files", str(item.count), str(item.size)]
            elif isinstance(item, SymStdin):
                out += ["--sym-stdin", str(item.size)]
            elif isinstance(item, SymPackets):
                out += ["--sym-packets", str(item.count), str(item.size)]
            elif isinstance(item, SymFragments):
                out += ["--sym-fragments", str(item.count)]
            elif isinstance(item, MaxFail):
                out += ["--max-fail", str(item.count)]
            elif isinstance(item, SymDir):
                out += ["--sym-dir", item.path]
            else:
                out.append("--sym-stdout")
        return tuple(out)


def _argument(data: bytes, max_len: int) -> bytes:
    # the runtime writes NUL at byte max_len whatever the object holds there
    return data[:max_len].split(b"\0", 1)[0]


def replay_argv(args: Sequence[str], objects: Sequence[tuple[str, bytes]]) -> tuple[list[bytes], int]:
    """The native command line (after ``argv[0]``) for a test case, and how many of its
    leading objects the command line consumed.

    ``args`` is the ``.ktest`` args field without the program (KLEE's syntax); ``objects``
    the test's (name, bytes) pairs in order. As ``klee-replay``: each ``--sym-arg`` takes the
    next object's string up to its NUL; each ``--sym-args`` takes an ``n_args`` object, then
    that many argument objects. A ``model_version`` object right after them (written by older
    KLEE versions) is consumed too. Missing objects count as empty strings (``n_args``: MIN).
    """
    try:
        spec = ArgvSpec.parse(args)
    except ConfigError:
        # not KLEE's syntax after all: the words are the program's concrete arguments
        spec = ArgvSpec(tuple(args))
    argv: list[bytes] = []
    cursor = 0

    def take() -> bytes | None:
        nonlocal cursor
        if cursor >= len(objects):
            return None
        cursor += 1
        return objects[cursor - 1][1]

    for item in spec.items:
        if isinstance(item, str):
            argv.append(item.encode("utf-8", "surrogateescape"))
        elif isinstance(item, SymArg):
            argv.append(_argument(take() or b"", item.max_len))
        elif isinstance(item, _ENVIRONMENT):
            continue  # files and stdin: their objects follow the arguments' (see below)
        else:
            count_bytes = take()
            count = item.min if count_bytes is None else \
                int.from_bytes(count_bytes[:4].ljust(4, b"\0"), "little", signed=True)
            count = min(max(count, item.min), item.max)
            for _ in range(count):
                argv.append(_argument(take() or b"", item.max_len))
    if spec.is_symbolic:
        # KLEE's POSIX runtime makes the files', stdin's and stdout's objects (and
        # model_version) after the arguments; the program's own inputs come after them
        while cursor < len(objects) and is_posix_object(objects[cursor][0]):
            cursor += 1
    return argv, cursor
