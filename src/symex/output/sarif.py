"""Errors as SARIF 2.1.0, the format CI systems read (GitHub code scanning among them).

One result per distinct error (its site: kind, file, line, instruction), with the error's
kind as the rule, its message, its source location, the call stack as a code flow (the
outermost call first, as a thread flow runs), the test that triggers it (``properties``:
the ``.ktest`` file, and a fuzz target's raw input in hex), and a fingerprint that stays the
same from run to run. Paths under the project root are relative to it (``uriBaseId``
``SRCROOT``), as code scanning needs to place an alert on a file of the repository; others
(a system header, symex's own driver) stay absolute ``file:`` URIs, or with ``private``
(the testing service's logs) are given by their file name alone, and the root is not
named.

    symex run --sarif results.sarif prog.c          # the command line
    write_sarif(path, findings_of(result), root)    # the library
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs

from symex.core.outcome import ErrorKind, ProgramError, StackEntry, TestCase
from symex.env.fuzz_input import raw_input
from symex.output.atomic_write import write_atomically

__all__ = ["RULES", "SARIF_SCHEMA", "Finding", "findings_of", "sarif_log", "write_sarif"]

#: the schema a log names (the OASIS standard's, errata 01)
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_INFORMATION_URI = "https://github.com/symex/symex"

#: each error kind's rule: a name, a short and a full description
RULES: dict[ErrorKind, tuple[str, str, str]] = {
    ErrorKind.PTR: ("InvalidMemoryAccess", "Out-of-bounds, null or dangling pointer access",
                    "A path reads or writes memory outside any live object: past an object's "
                    "end (a fuzz target's input included), through a null pointer, or after "
                    "the object was freed or went out of scope."),
    ErrorKind.FREE: ("InvalidFree", "Double or invalid free",
                     "free() of a pointer that malloc did not return, or of one already freed."),
    ErrorKind.DIV: ("DivisionByZero", "Division or remainder by zero",
                    "An integer division or remainder whose divisor can be zero."),
    ErrorKind.OVERSHIFT: ("OversizedShift", "Shift by at least the bit width",
                          "A shift whose amount can be the operand's width or more (undefined "
                          "behaviour in C)."),
    ErrorKind.ASSERT: ("AssertionFailure", "assert() failed",
                       "An assertion of the program can be false."),
    ErrorKind.ABORT: ("Abort", "abort() called", "A path calls abort()."),
    ErrorKind.USER: ("UserError", "klee_report_error or a false klee_assume",
                     "The harness reported an error (klee_report_error), or assumed what "
                     "cannot hold."),
    ErrorKind.EXEC: ("ExecutionError", "Unreachable code, trap or stack overflow",
                     "A path reaches an unreachable instruction, a trap, or nests calls past "
                     "the stack's limit."),
    ErrorKind.READONLY: ("WriteToReadOnly", "Write to read-only memory",
                         "A path writes to a constant object: a string literal, a const "
                         "global, or a fuzz target's const input."),
    ErrorKind.REACH_ERROR: ("ReachError", "reach_error() reached",
                            "A path reaches reach_error() or __VERIFIER_error() (SV-COMP's "
                            "unreach-call property)."),
    ErrorKind.HANG: ("Hang", "Every process and thread blocked",
                     "A path ends with every process and thread waiting: a deadlock, or a "
                     "wait for input that never comes."),
}


@attrs.frozen
class Finding:
    """One error as the log reports it: the error, the test file that triggers it (a name
    in the run's output directory, or ""), and a fuzz target's raw input (or None)."""

    error: ProgramError
    test: str = ""
    raw_input: bytes | None = None


def findings_of(result_tests: Iterable[TestCase]) -> list[Finding]:
    """The findings of a run's tests (``Result.tests``), without test file names."""
    return [Finding(t.error, "", raw_input(t.objects)) for t in result_tests if t.error is not None]


@attrs.frozen
class _Paths:
    """How a log names files: relative to ``root`` when under it; others absolute, or by
    their name alone when ``private``."""

    root: Path
    private: bool = False

    def uri(self, file: str) -> dict[str, str]:
        """An artifact location."""
        path = Path(file)
        absolute = (path if path.is_absolute() else self.root / path).resolve()
        relative = os.path.relpath(absolute, self.root)
        if not relative.startswith(".."):
            return {"uri": Path(relative).as_posix(), "uriBaseId": "SRCROOT"}
        return {"uri": absolute.name if self.private else absolute.as_uri()}


def _location(file: str | None, line: int | None, root: _Paths, text: str = "") -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": root.uri(file or "")}
    if line:
        physical["region"] = {"startLine": line}
    location: dict[str, Any] = {"physicalLocation": physical}
    if text:
        location["message"] = {"text": text}
    return location


def _primary(error: ProgramError, root: _Paths) -> tuple[str | None, int | None]:
    """Where the alert goes: the innermost frame in a file under the root (an error inside a
    library function is shown at the program's call), else the error's own location."""
    for _function, file, line in error.stack:
        if file and line and "uriBaseId" in root.uri(file):
            return file, line
    if error.location:
        return error.location
    return None, None


def _code_flow(stack: Sequence[StackEntry], root: _Paths) -> dict[str, Any]:
    frames = [_location(file, line, root, f"in {function}")
              for function, file, line in reversed(stack) if file]
    return {"threadFlows": [{"locations": [{"location": frame} for frame in frames]}]}


def _fingerprint(error: ProgramError, file: str | None, line: int | None, root: _Paths) -> str:
    """The same bug, the same value in every run (the site, with the file relative to the
    root where it can be)."""
    where = root.uri(file)["uri"] if file else ""
    text = "\0".join((error.kind.value, where, str(line or ""), error.instruction))
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def sarif_log(findings: Iterable[Finding], root: str | os.PathLike[str], *,
              version: str = "", private: bool = False) -> dict[str, Any]:
    """The SARIF 2.1.0 log of ``findings`` (one result per distinct error site; the first
    finding of a site is its example), paths relative to ``root`` (``private``: files
    outside it by name, the root itself unnamed)."""
    base = _Paths(Path(root).resolve(), private)
    kinds = list(ErrorKind)
    results: list[dict[str, Any]] = []
    seen: set[tuple[str, str, int | None, str]] = set()
    for finding in findings:
        error = finding.error
        if error.site in seen:
            continue
        seen.add(error.site)
        file, line = _primary(error, base)
        properties: dict[str, Any] = {}
        if finding.test:
            properties["test"] = finding.test
        if finding.raw_input is not None:
            properties["input"] = finding.raw_input.hex()
        result: dict[str, Any] = {
            "ruleId": error.kind.value,
            "ruleIndex": kinds.index(error.kind),
            "level": "error",
            "message": {"text": error.message + (f" (test {finding.test})" if finding.test else "")},
            "locations": [_location(file, line, base)],
            "partialFingerprints": {"symexErrorSite/v1": _fingerprint(error, file, line, base)},
        }
        if error.stack:
            result["codeFlows"] = [_code_flow(error.stack, base)]
        if properties:
            result["properties"] = properties
        results.append(result)
    rules = [{"id": kind.value, "name": RULES[kind][0],
              "shortDescription": {"text": RULES[kind][1]},
              "fullDescription": {"text": RULES[kind][2]},
              "help": {"text": f"{RULES[kind][2]} The test named in the result reproduces "
                               f"it: symex replay PROGRAM TEST."},
              "defaultConfiguration": {"level": "error"},
              "properties": {"tags": ["correctness", "security"] if kind is ErrorKind.PTR
                             else ["correctness"]}}
             for kind in kinds]
    driver: dict[str, Any] = {"name": "symex", "informationUri": _INFORMATION_URI, "rules": rules}
    if version:
        driver["semanticVersion"] = version
        driver["version"] = version
    run: dict[str, Any] = {"tool": {"driver": driver}}
    if not private:
        run["originalUriBaseIds"] = {"SRCROOT": {"uri": base.root.as_uri() + "/"}}
    run.update(results=results, columnKind="unicodeCodePoints")
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def write_sarif(path: str | os.PathLike[str], findings: Iterable[Finding],
                root: str | os.PathLike[str], *, version: str = "", private: bool = False) -> None:
    """Write :func:`sarif_log` to ``path`` atomically."""
    log = sarif_log(findings, root, version=version, private=private)
    write_atomically(path, json.dumps(log, indent=1) + "\n")
