"""Tests of symex.replay: test cases replayed on the real program built by gcc with sanitizers."""

from __future__ import annotations

import shutil
import signal
import struct
from pathlib import Path

import pytest

from symex.errors import CompileError, SymexError
from symex.output.ktest import KTest, KTestObject, write_ktest
from symex.replay import (
    NativeOutcome,
    ReplayTarget,
    build_native,
    classify,
    describe_outcome,
    expected_error_kind,
    find_replay_targets,
    reproduces,
    run_native,
)

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="native replay needs gcc")

# One program, one error per value of the symbolic selector `k`.
ERRORS_C = r"""
#include <klee/klee.h>
#include <stdio.h>
#include <stdlib.h>
#include <assert.h>
int g[4];
static int deep(int n) { volatile char buf[256]; buf[0] = (char)n; return deep(n + 1) + buf[0]; }
static int *dangling(void) { int x = 1; int *p = &x; return p; }
int main(void) {
  int k;
  klee_make_symbolic(&k, sizeof k, "k");
  int *h = malloc(4 * sizeof(int));
  int s[4] = {0};
  switch (k) {
  case 1: return h[4];
  case 2: return s[k + 2];
  case 3: return g[k + 1];
  case 4: free(h); return h[0];
  case 5: free(h); free(h); return 0;
  case 6: free(s); return 0;
  case 7: return 10 / (k - 7);
  case 8: return 1 << (k * 5);
  case 9: assert(k == 0); return 0;
  case 10: abort();
  case 11: klee_report_error(__FILE__, __LINE__, "boom", "user");
  case 12: klee_assume(k == 0); return 0;
  case 13: __builtin_unreachable();
  case 14: return deep(0);
  case 15: { int *volatile p = 0; return *p; }
  case 16: { int *p = dangling(); return *p; }
  case 17: klee_assert(k == 0); return 0;
  case 18: return 1 << -k;
  }
  printf("clean k=%d\n", k);
  free(h);
  return 3;
}
"""


def _int_case(value: int, name: str = "k") -> KTest:
    return KTest(args=("prog",), objects=(KTestObject(name, struct.pack("<i", value)),))


@pytest.fixture(scope="module")
def errors_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("errors")
    src = root / "errors.c"
    src.write_text(ERRORS_C)
    return build_native(src, out_dir=root / "out")


@pytest.mark.parametrize(
    ("k", "kind"),
    [
        (1, "ptr"),  # heap-buffer-overflow
        (2, "ptr"),  # stack-buffer-overflow
        (3, "ptr"),  # global-buffer-overflow
        (4, "ptr"),  # heap-use-after-free
        (5, "free"),  # double free
        (6, "free"),  # free of a stack array
        (7, "div"),
        (8, "overshift"),  # 1 << 40
        (9, "assert"),
        (10, "abort"),
        (11, "user"),  # klee_report_error
        (12, "user"),  # klee_assume violated by the test case
        (13, "exec"),  # unreachable reached
        (14, "exec"),  # stack overflow
        (15, "ptr"),  # null dereference
        (16, "ptr"),  # use after return
        (17, "assert"),  # klee_assert
        (18, "overshift"),  # negative shift
    ],
)
def test_each_error_kind_is_classified(errors_exe: Path, k: int, kind: str) -> None:
    outcome = run_native(errors_exe, _int_case(k))
    assert outcome.kind == kind, outcome.stderr
    assert not outcome.timed_out


def test_clean_run_reports_exit_code_and_output(errors_exe: Path) -> None:
    outcome = run_native(errors_exe, _int_case(42))
    assert outcome == NativeOutcome(
        exit_code=3, signal=None, stdout="clean k=42\n", stderr=outcome.stderr, timed_out=False, kind=None
    )
    assert "warning" not in outcome.stderr


def test_markers_and_signals(errors_exe: Path) -> None:
    user = run_native(errors_exe, _int_case(11))
    assert user.exit_code == 87 and "symex-replay: user error: boom" in user.stderr
    assume = run_native(errors_exe, _int_case(12))
    assert assume.exit_code == 86 and "symex-replay: klee_assume failed" in assume.stderr
    failed_assert = run_native(errors_exe, _int_case(9))
    assert failed_assert.signal == signal.SIGABRT and failed_assert.exit_code is None
    assert "Assertion `k == 0' failed" in failed_assert.stderr


def test_ktest_file_path_is_accepted(errors_exe: Path, tmp_path: Path) -> None:
    path = tmp_path / "case.ktest"
    write_ktest(path, _int_case(7))
    assert run_native(errors_exe, path).kind == "div"


INPUTS_C = r"""
#include <symex.h>
#include <stdio.h>
int main(int argc, char **argv) {
  unsigned char buf[3];
  short s;
  klee_make_symbolic(buf, sizeof buf, "buf");
  int r = klee_range(0, 100, "r");
  int i = klee_int("i");
  _Bool b = __VERIFIER_nondet_bool();
  char c = __VERIFIER_nondet_char();
  unsigned long ul = __VERIFIER_nondet_ulong();
  klee_make_symbolic(&s, sizeof s, "s");
  printf("%d %d %d|%d|%d|%d|%c|%lu|%d|%s|%u\n", argc, buf[0], buf[1] + buf[2], r, i, b,
         c, ul, s, argc > 1 ? argv[1] : "-", klee_is_symbolic(i));
  return klee_get_value_i32(i) == i ? 0 : 1;
}
"""


@pytest.fixture(scope="module")
def inputs_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("inputs")
    src = root / "inputs.c"
    src.write_text(INPUTS_C)
    return build_native(src, out_dir=root / "out")


def test_objects_are_consumed_in_order_not_by_name(inputs_exe: Path) -> None:
    ktest = KTest(
        args=("prog",),
        objects=(
            KTestObject("whatever", bytes([7, 1, 2])),
            KTestObject("r", struct.pack("<i", 55)),
            KTestObject("i", struct.pack("<i", -9)),
            KTestObject("nondet_bool", b"\x05"),
            KTestObject("nondet_char", b"Z"),
            KTestObject("nondet_ulong", struct.pack("<Q", 2**40 + 1)),
            KTestObject("s", struct.pack("<h", -300)),
        ),
    )
    outcome = run_native(inputs_exe, ktest, args=["hello"])
    assert outcome.stdout == f"2 7 3|55|-9|1|Z|{2**40 + 1}|-300|hello|0\n"
    assert outcome.exit_code == 0 and outcome.kind is None
    assert "warning" not in outcome.stderr


def test_size_mismatch_and_missing_objects_are_zero_filled(inputs_exe: Path) -> None:
    ktest = KTest(
        args=("prog",),
        objects=(
            KTestObject("buf", bytes([9])),  # too short: buf[1], buf[2] become 0
            KTestObject("r", struct.pack("<i", 12) + b"\xff\xff"),  # too long: first 4 bytes used
        ),
    )
    outcome = run_native(inputs_exe, ktest)
    assert outcome.stdout == "1 9 0|12|0|0|\x00|0|0|-|0\n"
    assert outcome.kind is None and outcome.exit_code == 0
    assert outcome.stderr.count("symex-replay: warning") == 2 + 5


SVCOMP_C = r"""
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__((__noreturn__));
void reach_error() { __assert_fail("0", "svcomp.c", 3, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
extern void __VERIFIER_assume(int);
extern void __VERIFIER_error(void);
int main(void) {
  int x = __VERIFIER_nondet_int();
  __VERIFIER_assume(x >= 0);
  if (x == 5) reach_error();
  if (x == 6) __VERIFIER_error();
  return 0;
}
"""

DEFAULT_REACH_C = r"""
#include <symex.h>
extern void reach_error(void);
int main(void) { if (__VERIFIER_nondet_uint() == 2u) reach_error(); return 0; }
"""


def test_svcomp_programs(tmp_path: Path) -> None:
    src = tmp_path / "svcomp.c"
    src.write_text(SVCOMP_C)
    exe = build_native(src, out_dir=tmp_path / "out")
    # the program's own reach_error wins over the runtime's weak one: it asserts
    assert run_native(exe, _int_case(5, "x")).kind == "assert"
    assert run_native(exe, _int_case(6, "x")).kind == "reach_error"
    assert run_native(exe, _int_case(-1, "x")).kind == "user"
    clean = run_native(exe, _int_case(4, "x"))
    assert (clean.kind, clean.exit_code) == (None, 0)

    src2 = tmp_path / "default_reach.c"
    src2.write_text(DEFAULT_REACH_C)
    exe2 = build_native(src2, out_dir=tmp_path / "out")
    outcome = run_native(exe2, _int_case(2, "u"))
    assert (outcome.kind, outcome.exit_code) == ("reach_error", 88)
    assert "symex-replay: reach_error" in outcome.stderr


def test_build_is_cached_and_flags_pass_through(tmp_path: Path) -> None:
    src = tmp_path / "flag.c"
    src.write_text("int main(void) { return VALUE; }\n")
    exe = build_native(src, ["-DVALUE=5"], out_dir=tmp_path / "out")
    built = exe.stat().st_ino  # a build renames a new file into place: a new inode
    assert build_native(src, ["-DVALUE=5"], out_dir=tmp_path / "out") == exe
    assert exe.stat().st_ino == built  # (a hit marks the file used: its time changes)
    other = build_native(src, ["-DVALUE=6"], out_dir=tmp_path / "out")
    assert other != exe
    empty = KTest(args=(), objects=())
    assert run_native(exe, empty).exit_code == 5
    assert run_native(other, empty).exit_code == 6


def test_build_failure_carries_gcc_message(tmp_path: Path) -> None:
    src = tmp_path / "broken.c"
    src.write_text("int main(void) {\n  return undeclared_thing;\n}\n")
    with pytest.raises(CompileError, match="broken.c:2:10: error: .undeclared_thing. undeclared"):
        build_native(src, out_dir=tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []
    with pytest.raises(CompileError, match="no such file"):
        build_native(tmp_path / "absent.c", out_dir=tmp_path / "out")


def test_timeout_kills_the_run(tmp_path: Path) -> None:
    src = tmp_path / "loop.c"
    src.write_text("int main(void) { volatile int x = 1; while (x) {} return 0; }\n")
    exe = build_native(src, out_dir=tmp_path / "out")
    outcome = run_native(exe, KTest(args=(), objects=()), timeout=0.5)
    assert outcome.timed_out and outcome.kind is None and outcome.signal == signal.SIGKILL


@pytest.mark.parametrize(
    ("exit_code", "sig", "stderr", "kind"),
    [
        (0, None, "", None),
        (87, None, "", None),  # exit 87 without the runtime's marker is the program's own exit code
        (1, None, "x.c:3:5: runtime error: integer division by zero\n", "div"),
        (None, signal.SIGFPE, "", "div"),
        (None, signal.SIGSEGV, "", "ptr"),
        (None, signal.SIGABRT, "", "abort"),
        (None, signal.SIGABRT, "prog: x.c:4: main: Assertion `a' failed.\n", "assert"),
        (None, signal.SIGILL, "", "exec"),
        (1, None, "==1==ERROR: AddressSanitizer: stack-buffer-underflow on address 0x1\n", "ptr"),
    ],
)
def test_classify(exit_code: int | None, sig: int | None, stderr: str, kind: str | None) -> None:
    assert classify(exit_code, sig, stderr) == kind


def _outcome(exit_code: int | None = 0, sig: int | None = None, kind: str | None = None,
             timed_out: bool = False) -> NativeOutcome:
    return NativeOutcome(exit_code=exit_code, signal=sig, stdout="", stderr="", timed_out=timed_out, kind=kind)


def test_describe_outcome() -> None:
    assert describe_outcome(_outcome(0)) == "exit 0"
    assert describe_outcome(_outcome(None, signal.SIGSEGV)) == "signal 11 (SIGSEGV)"
    assert describe_outcome(_outcome(None, signal.SIGKILL, timed_out=True)) == "timeout"
    assert describe_outcome(_outcome(None, 77)) == "signal 77"


@pytest.mark.parametrize(
    ("expected", "native", "verdict"),
    [
        ("ptr", "ptr", True),
        ("ptr", None, False),
        ("ptr", "div", False),
        ("assert", "abort", False),
        # SV-COMP programs define reach_error() as assert(0) or abort()
        ("reach_error", "assert", True),
        ("reach_error", "abort", True),
        ("reach_error", "reach_error", True),
        ("reach_error", "ptr", False),
        ("readonly", "ptr", True),  # a write to .rodata is a SEGV natively
        ("div", "div", True),
    ],
)
def test_reproduces(expected: str, native: str | None, verdict: bool) -> None:
    assert reproduces(expected, _outcome(1, kind=native)) is verdict


def test_replay_targets_and_their_expected_kinds(tmp_path: Path) -> None:
    for name in ("test000002.ktest", "test000001.ktest", "test000001.ptr.err", "test000003.ktest",
                 "test000003.assert.err", "test000010.ktest.err", "info", "messages.txt"):
        (tmp_path / name).write_bytes(b"")
    targets = find_replay_targets(tmp_path)
    assert [(t.path.name, t.expected) for t in targets] == [
        ("test000001.ktest", "ptr"), ("test000002.ktest", None), ("test000003.ktest", "assert")]
    assert find_replay_targets(tmp_path / "test000003.ktest") == [ReplayTarget(tmp_path / "test000003.ktest", "assert")]
    assert expected_error_kind(tmp_path / "test000002.ktest") is None
    with pytest.raises(SymexError, match="no such file"):
        find_replay_targets(tmp_path / "nothing")
    (tmp_path / "sub").mkdir()
    with pytest.raises(SymexError, match="holds no .ktest files"):
        find_replay_targets(tmp_path / "sub")


def test_native_build_follows_header_changes(tmp_path: Path) -> None:
    header = tmp_path / "code.h"
    header.write_text("#define CODE 3\n")
    source = tmp_path / "uses_header.c"
    source.write_text('#include "code.h"\nint main(void) { return CODE; }\n')
    empty = KTest(args=(), objects=())
    first = build_native(source, out_dir=tmp_path / "cache")
    assert run_native(first, empty).exit_code == 3
    header.write_text("#define CODE 4\n")
    second = build_native(source, out_dir=tmp_path / "cache")
    assert second != first
    assert run_native(second, empty).exit_code == 4
