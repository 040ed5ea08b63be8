"""Acceptance tests for error detection: one small program per error kind.

Each program in tests/programs/errors/ has exactly one bug, on the line marked ``/* BUG``.
For each, at -O0 and at -O2, symex must report exactly that error site (kind and line), with
the buggy function innermost on the stack, and every test case that ends in the error must
show the same kind of error when the program is built natively (gcc, ASan/UBSan) and run on
the test's bytes.
"""

from __future__ import annotations

import functools
import re
import shutil
from pathlib import Path

import attrs
import pytest

import symex
from symex import ErrorKind, PathStatus, Result, TestCase
from symex.output.ktest import KTest, KTestObject
from symex.replay import NativeOutcome, build_native, run_native

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="native replay needs gcc")

PROGRAMS = Path(__file__).resolve().parent / "programs" / "errors"
OPTIMIZATIONS = ("-O0", "-O2")
#: a small frame limit keeps the unbounded-recursion program fast
MAX_STACK_FRAMES = 200


@attrs.frozen
class ErrorProgram:
    """One program with one bug: what symex must report about it."""

    source: str
    kind: ErrorKind
    function: str
    """the function the bug is in: innermost on the error's stack"""
    message: str
    """a regular expression the error's message must match"""

    def __str__(self) -> str:
        return self.source


ERROR_PROGRAMS = (
    ErrorProgram("ptr_stack_read.c", ErrorKind.PTR, "pick", r"out-of-bounds read .*stack"),
    ErrorProgram("ptr_heap_write.c", ErrorKind.PTR, "record", r"out-of-bounds write .*heap"),
    ErrorProgram("ptr_null.c", ErrorKind.PTR, "second_value", r"null"),
    ErrorProgram("ptr_use_after_free.c", ErrorKind.PTR, "current_user", r"use after free|freed"),
    ErrorProgram("free_double.c", ErrorKind.FREE, "release", r"double free"),
    ErrorProgram("free_stack.c", ErrorKind.FREE, "release", r"stack"),
    ErrorProgram("div_zero.c", ErrorKind.DIV, "average", r"division by zero"),
    ErrorProgram("rem_zero.c", ErrorKind.DIV, "bucket_of", r"remainder by zero"),
    ErrorProgram("overshift.c", ErrorKind.OVERSHIFT, "low_bits", r"shift"),
    ErrorProgram("assert_fail.c", ErrorKind.ASSERT, "withdraw", r"amount <= balance"),
    ErrorProgram("abort_call.c", ErrorKind.ABORT, "parse_digit", r"abort"),
    ErrorProgram("user_report.c", ErrorKind.USER, "pay", r"overdrawn"),
    ErrorProgram("user_assume.c", ErrorKind.USER, "clamp_small", r"klee_assume"),
    ErrorProgram("exec_unreachable.c", ErrorKind.EXEC, "checked_digit", r"unreachable"),
    ErrorProgram("exec_stack_overflow.c", ErrorKind.EXEC, "nesting", r"stack overflow"),
    ErrorProgram("reach_error.c", ErrorKind.REACH_ERROR, "check", r"reach_error"),
)


def bug_line(source: str) -> int:
    """The 1-based line of the single ``/* BUG`` marker in a program."""
    lines = [n for n, text in enumerate((PROGRAMS / source).read_text().splitlines(), 1) if "/* BUG" in text]
    assert len(lines) == 1, f"{source} must mark exactly one line with /* BUG"
    return lines[0]


@functools.cache
def explored(source: str, optimization: str) -> Result:
    """symex's exploration of one program (shared by the tests that look at it)."""
    program = symex.compile(PROGRAMS / source, [optimization])
    return symex.explore(program, searcher="dfs", max_time=60, seed=0, max_stack_frames=MAX_STACK_FRAMES)


@pytest.fixture(scope="module")
def native_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("native")


def replay(source: str, test: TestCase, out_dir: Path) -> NativeOutcome:
    """Run the natively built program on a test case's objects (in creation order)."""
    executable = build_native(PROGRAMS / source, out_dir=out_dir)
    ktest = KTest(args=(), objects=tuple(KTestObject(name, data) for name, data in test.objects.items()))
    return run_native(executable, ktest)


def sites(result: Result) -> set[tuple[str, str, int]]:
    """(kind, file name, line) of every error site found."""
    found = set()
    for error in result.errors:
        assert error.location is not None, error
        found.add((error.kind.value, Path(error.location[0]).name, error.location[1]))
    return found


@pytest.mark.parametrize("optimization", OPTIMIZATIONS)
@pytest.mark.parametrize("case", ERROR_PROGRAMS, ids=str)
def test_error_is_found_at_the_marked_line(case: ErrorProgram, optimization: str) -> None:
    result = explored(case.source, optimization)
    line = bug_line(case.source)
    assert result.halted is None
    assert sites(result) == {(case.kind.value, case.source, line)}
    error = result.errors[0]
    assert isinstance(error.kind, ErrorKind)
    assert re.search(case.message, error.message), error.message
    innermost = error.stack[0]
    assert (innermost[0], Path(innermost[1]).name, innermost[2]) == (case.function, case.source, line)
    assert error.stack[-1][0] == "main"
    assert result.paths.errors >= 1 and result.paths.partial == 0
    error_tests = [t for t in result.tests if t.error is not None]
    assert len(error_tests) == result.paths.errors
    for test in error_tests:
        assert test.status is PathStatus.ERROR
        assert test.error is not None and test.error.kind is case.kind


@pytest.mark.parametrize("optimization", OPTIMIZATIONS)
@pytest.mark.parametrize("case", ERROR_PROGRAMS, ids=str)
def test_error_test_cases_reproduce_natively(case: ErrorProgram, optimization: str, native_dir: Path) -> None:
    result = explored(case.source, optimization)
    error_tests = [t for t in result.tests if t.error is not None]
    assert error_tests
    for test in error_tests:
        outcome = replay(case.source, test, native_dir)
        assert not outcome.timed_out
        assert outcome.kind == case.kind.value, (test.objects, outcome.stderr)


@pytest.mark.parametrize("optimization", OPTIMIZATIONS)
@pytest.mark.parametrize("case", ERROR_PROGRAMS, ids=str)
def test_paths_without_the_bug_run_cleanly_natively(case: ErrorProgram, optimization: str, native_dir: Path) -> None:
    result = explored(case.source, optimization)
    completed = [t for t in result.tests if t.status is PathStatus.COMPLETED]
    assert len(completed) == result.paths.completed
    for test in completed:
        outcome = replay(case.source, test, native_dir)
        assert (outcome.kind, outcome.exit_code) == (None, test.exit_code), (test.objects, outcome.stderr)


@pytest.mark.parametrize("case", ERROR_PROGRAMS, ids=str)
def test_optimized_build_finds_the_same_error_sites(case: ErrorProgram) -> None:
    assert sites(explored(case.source, "-O2")) == sites(explored(case.source, "-O0"))


def test_stack_overflow_stack_lists_every_frame() -> None:
    result = explored("exec_stack_overflow.c", "-O0")
    (error,) = result.errors
    line = bug_line("exec_stack_overflow.c")
    # the call that would open frame 201 fails: main plus 199 recursive frames, each at the call
    assert len(error.stack) == MAX_STACK_FRAMES
    assert [frame[0] for frame in error.stack] == ["nesting"] * (MAX_STACK_FRAMES - 1) + ["main"]
    assert all(frame[2] == line for frame in error.stack[:-1])
    (test,) = [t for t in result.tests if t.error is not None]
    assert test.objects["text"][0] == ord("(")


@pytest.mark.parametrize("optimization", OPTIMIZATIONS)
def test_clean_program_has_no_errors_and_replays_cleanly(optimization: str, native_dir: Path) -> None:
    result = explored("clean.c", optimization)
    assert result.errors == ()
    assert result.paths.errors == 0 and result.paths.partial == 0 and result.halted is None
    assert result.tests and all(t.status is PathStatus.COMPLETED and t.error is None for t in result.tests)
    for test in result.tests:
        c = test.objects["c"][0]
        digit = ord("0") <= c <= ord("9")
        letter = ord("a") <= (c | 0x20) <= ord("z")
        expected_class = 1 if digit else 2 if letter else 0
        # main returns the class plus its count (1)
        assert test.exit_code == expected_class + 1
        assert test.stdout == f"class {expected_class}\n".encode()
        outcome = replay("clean.c", test, native_dir)
        assert (outcome.kind, outcome.exit_code, outcome.stdout) == (None, test.exit_code, test.stdout.decode())
    if optimization == "-O0":
        # -O0 keeps classify's branches: one path per class (digit, letter, other)
        assert {t.exit_code for t in result.tests} == {1, 2, 3}


# -- errors on paths whose constraints pin the operand ------------------------------------
# A switch case or klee_assume can pin an operand to a constant through the path's equalities;
# the checks must still see the error (regression: they once read "unknown model" as
# "infeasible", missing real errors and reporting in-bounds accesses as out of bounds).
PINNED_ERROR_PROGRAMS = (
    ErrorProgram("div_switch_case.c", ErrorKind.DIV, "scale", r"division by zero"),
    ErrorProgram("overshift_assumed.c", ErrorKind.OVERSHIFT, "low_mask", r"shift"),
)


@pytest.mark.parametrize("case", PINNED_ERROR_PROGRAMS, ids=str)
def test_error_is_found_when_the_path_pins_the_operand(case: ErrorProgram, native_dir: Path) -> None:
    result = explored(case.source, "-O0")
    assert sites(result) == {(case.kind.value, case.source, bug_line(case.source))}
    assert result.errors[0].stack[0][0] == case.function
    error_tests = [t for t in result.tests if t.error is not None]
    for test in error_tests:
        assert replay(case.source, test, native_dir).kind == case.kind.value


def test_in_bounds_write_with_assumed_index_is_not_an_error(native_dir: Path) -> None:
    result = explored("clean_assumed_index.c", "-O0")
    assert result.errors == ()
    (test,) = result.tests
    assert (test.status, test.exit_code, test.objects["index"]) == (PathStatus.COMPLETED, 5, b"\x01\x00\x00\x00")
    outcome = replay("clean_assumed_index.c", test, native_dir)
    assert (outcome.kind, outcome.exit_code) == (None, 5)


def test_pinned_operand_programs_misbehave_natively_as_documented(native_dir: Path) -> None:
    # the native builds confirm what the programs above are meant to show, independent of symex
    def case(value: int) -> TestCase:
        return TestCase(objects={"x": value.to_bytes(4, "little")}, status=PathStatus.COMPLETED)

    assert replay("div_switch_case.c", case(8), native_dir).kind == "div"
    assert replay("div_switch_case.c", case(4), native_dir).kind is None
    assert replay("overshift_assumed.c", case(32), native_dir).kind == "overshift"
    clean = replay("clean_assumed_index.c", case(1), native_dir)
    assert (clean.kind, clean.exit_code) == (None, 5)
