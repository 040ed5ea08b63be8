"""Test-Comp test suites (test-format 1.1): ``metadata.xml`` and one XML file per test.

The format of the Test-Comp competition (https://gitlab.com/sosy-lab/software/test-format):
a test is the sequence of values the program's ``__VERIFIER_nondet_*`` calls return, in call
order, each as a decimal number in the type of the call. symex names the input object of such
a call ``nondet_KIND`` (``nondet_KIND_N`` for later calls), so the type comes from the name;
objects made by other means (``klee_make_symbolic``) are not Test-Comp inputs and are left out.
"""

from __future__ import annotations

import datetime
import hashlib
import math
import os
import re
import struct
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from symex.core.outcome import ErrorKind, TestCase
from symex.errors import SymexError

__all__ = [
    "COVER_BRANCHES",
    "NONDET_SIGNED",
    "TestCompWriter",
    "metadata_xml",
    "nondet_inputs",
    "nondet_kind",
    "render_nondet",
    "testcase_xml",
]

COVER_BRANCHES = "COVER( init(main()), FQL(COVER EDGES(@DECISIONEDGE)) )"
"""The Test-Comp branch-coverage specification (``coverage-branches.prp``)."""

NONDET_SIGNED: Mapping[str, bool] = {
    "bool": False, "char": True, "uchar": False, "short": True, "ushort": False,
    "int": True, "uint": False, "long": True, "ulong": False, "longlong": True,
    "ulonglong": False, "size_t": False, "pointer": False, "pchar": False, "u32": False,
    "u16": False, "u8": False, "unsigned": False, "loff_t": True, "sector_t": False,
    "float": True, "double": True,
}
"""Whether each ``__VERIFIER_nondet_KIND`` returns a signed type (x86-64: ``char`` is signed)."""

# Longest kinds first, so "nondet_ulong_1" is never read as kind "u..." of something shorter.
_NONDET_NAME = re.compile(
    r"nondet_(" + "|".join(sorted(map(re.escape, NONDET_SIGNED), key=len, reverse=True)) + r")(?:_\d+)?"
)

_XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n'
_METADATA_DOCTYPE = ('<!DOCTYPE test-metadata PUBLIC "+//IDN sosy-lab.org//DTD test-format test-metadata 1.1//EN" '
                     '"https://sosy-lab.org/test-format/test-metadata-1.1.dtd">\n')
_TESTCASE_DOCTYPE = ('<!DOCTYPE testcase PUBLIC "+//IDN sosy-lab.org//DTD test-format testcase 1.1//EN" '
                     '"https://sosy-lab.org/test-format/testcase-1.1.dtd">\n')


def render_nondet(kind: str, data: bytes) -> str:
    """The Test-Comp text of one ``__VERIFIER_nondet_KIND`` result held in little-endian ``data``."""
    if kind == "bool":
        # the replay runtime and symex both read any non-zero byte as true
        return "1" if any(data) else "0"
    if kind == "float" or kind == "double":
        # the shortest decimal that reads back as the same float (C's strtod reads it)
        value = struct.unpack("<f" if kind == "float" else "<d", data)[0]
        if not math.isfinite(value):
            return {"inf": "INFINITY", "-inf": "-INFINITY"}.get(repr(value), "NAN")
        if kind == "double":
            return repr(value)
        # a float's shortest: at most 9 digits read back as the same binary32 value
        for digits in range(1, 10):
            text = f"{value:.{digits}g}"
            if struct.unpack("<f", struct.pack("<f", float(text)))[0] == value:
                return text
        return repr(value)
    return str(int.from_bytes(data, "little", signed=NONDET_SIGNED[kind]))


def nondet_kind(name: str) -> str | None:
    """The KIND of an object named for a ``__VERIFIER_nondet_KIND`` call (``nondet_int_2``),
    or None."""
    match = _NONDET_NAME.fullmatch(name)
    return match.group(1) if match is not None else None


def nondet_inputs(objects: Mapping[str, bytes]) -> list[str]:
    """The Test-Comp input values of a test's objects (in creation order = call order)."""
    values = []
    for name, data in objects.items():
        kind = nondet_kind(name)
        if kind is not None:
            values.append(render_nondet(kind, data))
    return values


def testcase_xml(values: Iterable[str], *, covers_error: bool = False) -> str:
    """A complete Test-Comp testcase document with ``values`` as its inputs."""
    # imported here: xml.sax imports urllib (13 ms), and every run imports this module for
    # rendering values while only a Test-Comp suite writes XML
    from xml.sax.saxutils import escape  # noqa: PLC0415
    attribute = ' coversError="true"' if covers_error else ""
    inputs = "".join(f"  <input>{escape(value)}</input>\n" for value in values)
    return f"{_XML_DECLARATION}{_TESTCASE_DOCTYPE}<testcase{attribute}>\n{inputs}</testcase>\n"


def metadata_xml(program_file: str, program_hash: str, entry: str = "main",
                 producer: str = "symex") -> str:
    """A complete Test-Comp ``metadata.xml`` for the program ``program_file`` whose source's
    SHA-256 is ``program_hash``, created now."""
    from xml.sax.saxutils import escape  # noqa: PLC0415 (as in testcase_xml)
    created = datetime.datetime.now(datetime.UTC).astimezone().isoformat(timespec="seconds")
    fields = [
        ("sourcecodelang", "C"),
        ("producer", producer),
        ("specification", COVER_BRANCHES),
        ("programfile", program_file),
        ("programhash", program_hash),
        ("entryfunction", entry),
        ("architecture", "64bit"),
        ("creationtime", created),
    ]
    body = "".join(f"  <{tag}>{escape(value)}</{tag}>\n" for tag, value in fields)
    return f"{_XML_DECLARATION}{_METADATA_DOCTYPE}<test-metadata>\n{body}</test-metadata>\n"


def _write_atomically(path: Path, text: str) -> None:
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


class TestCompWriter:
    """Writes a Test-Comp test suite (test-format 1.1) into a directory."""

    __test__ = False  # not a pytest class

    def __init__(self, directory: Path, program_source: Path, entry: str = "main",
                 producer: str = "symex") -> None:
        """Create ``directory`` if needed and write ``metadata.xml`` for ``program_source`` at once."""
        self.directory = Path(directory)
        self._count = 0
        self._closed = False
        try:
            program_hash = hashlib.sha256(Path(program_source).read_bytes()).hexdigest()
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SymexError(f"cannot write a Test-Comp suite for {program_source} into {directory}: "
                             f"{exc.strerror or exc} (check both paths)") from exc
        _write_atomically(self.directory / "metadata.xml",
                          metadata_xml(os.fspath(program_source), program_hash, entry, producer))

    def add(self, test: TestCase) -> Path:
        """Write the next test as ``testNNNNNN.xml`` (numbered from 1) and return its path."""
        if self._closed:
            raise SymexError("TestCompWriter.add after close (create a new writer for another suite)")
        self._count += 1
        path = self.directory / f"test{self._count:06d}.xml"
        covers_error = test.error is not None and test.error.kind is ErrorKind.REACH_ERROR
        _write_atomically(path, testcase_xml(nondet_inputs(test.objects), covers_error=covers_error))
        return path

    def close(self) -> None:
        """Finish the suite; every file is complete already, so this only refuses later adds."""
        self._closed = True
