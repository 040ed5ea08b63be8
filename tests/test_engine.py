"""End-to-end behaviour of symex.compile / symex.explore on real C programs (real zig cc, real z3)."""

from __future__ import annotations

import subprocess
import textwrap
import struct
from pathlib import Path

import pytest

import symex
from symex import ErrorKind, PathStatus
from symex.core.shortfalls import ShortfallKind

PROGRAMS = Path(__file__).parent / "programs"
SEARCHERS = ["dfs", "bfs", "random-state", "random-path", "nurs:covnew", ["dfs", "random-path"]]


def write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


# -- get_sign ---------------------------------------------------------------------------------

def test_get_sign_has_one_test_per_sign() -> None:
    program = symex.compile(Path(__file__).parents[1] / "examples" / "get_sign.c")
    result = symex.explore(program, searcher="dfs", max_time=60.0, seed=0)
    assert (result.paths.completed, result.paths.errors, result.paths.partial) == (3, 0, 0)
    assert len(result.tests) == 3 and result.errors == ()
    values = sorted(int.from_bytes(t.objects["a"], "little", signed=True) for t in result.tests)
    assert values[0] < 0 and values[1] == 0 and values[2] > 0
    # main returns get_sign(a): the exit status is its low byte
    by_sign = {(v > 0) - (v < 0): t.exit_code for t in result.tests
               for v in [int.from_bytes(t.objects["a"], "little", signed=True)]}
    assert by_sign == {-1: 255, 0: 0, 1: 1}


# -- 2^N paths, whatever the searcher ----------------------------------------------------------

@pytest.mark.parametrize("n", [8, 10])
@pytest.mark.parametrize("searcher", SEARCHERS, ids=str)
def test_independent_branches_give_two_to_the_n_paths(n: int, searcher: object) -> None:
    program = symex.compile(PROGRAMS / "branches.c", [f"-DN={n}"])
    result = symex.explore(program, searcher=searcher, seed=1)
    assert result.paths.completed == 2 ** n and result.paths.partial == 0
    # every test takes a different path: the pattern of bytes above 100 is distinct per test
    patterns = {tuple(b > 100 for b in t.objects["b"]) for t in result.tests}
    assert len(patterns) == 2 ** n
    # and the exit status counts the bytes above 100
    for test in result.tests:
        assert test.exit_code == sum(b > 100 for b in test.objects["b"])


def test_random_searchers_are_deterministic_for_a_seed() -> None:
    program = symex.compile(PROGRAMS / "branches.c", ["-DN=6"])
    for searcher in ("random-state", "random-path", "nurs:covnew"):
        first = [t.objects["b"] for t in symex.explore(program, searcher=searcher, seed=7).tests]
        second = [t.objects["b"] for t in symex.explore(program, searcher=searcher, seed=7).tests]
        assert first == second


# -- the regular-expression matcher ------------------------------------------------------------

def test_regexp_unterminated_pattern_reads_out_of_bounds() -> None:
    program = symex.compile(PROGRAMS / "regexp.c")
    result = symex.explore(program, max_instructions=200_000)
    assert result.errors, "the out-of-bounds read of the pattern must be found"
    error = result.errors[0]
    assert error.kind is ErrorKind.PTR
    assert error.message.startswith("out-of-bounds read of 1 byte at offset 7 of a 7-byte stack object")
    assert error.location[0].endswith("regexp.c")
    assert error.stack[-1][0] == "main" and error.stack[0][0] == "matchhere"
    erroneous = [t for t in result.tests if t.error is not None]
    # the failing pattern has no NUL in its 7 bytes (otherwise the matcher would stop there)
    assert all(0 not in t.objects["re"] for t in erroneous)


@pytest.mark.slow
def test_regexp_terminated_pattern_is_safe_and_searchers_agree() -> None:
    program = symex.compile(PROGRAMS / "regexp.c", ["-DASSUME_TERMINATED"])
    counts = {}
    for searcher in ("dfs", "bfs", "random-path"):
        result = symex.explore(program, searcher=searcher, seed=3)
        assert result.errors == () and result.paths.partial == 0
        assert all(t.objects["re"][6] == 0 for t in result.tests)
        counts[searcher] = result.paths.completed
    assert len(set(counts.values())) == 1 and counts["dfs"] > 1000


# -- the interpreter against the native program ----------------------------------------------

@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_concrete_program_prints_what_the_native_build_prints(level: str, tmp_path: Path) -> None:
    source = PROGRAMS / "features.c"
    exe = tmp_path / "features"
    subprocess.run(["gcc", level, "-w", str(source), "-o", str(exe)], check=True)
    native = subprocess.run([str(exe)], capture_output=True)
    result = symex.explore(symex.compile(source, [level]))
    (test,) = result.tests
    assert test.status is PathStatus.COMPLETED, test.reason
    assert test.stdout.decode() == native.stdout.decode()
    assert test.exit_code == native.returncode


def test_deep_symbolic_sum(tmp_path: Path) -> None:
    # a path that sums 100,000 symbolic values: a 100,000-deep expression is built, simplified,
    # evaluated under the path's model and turned into the exit status without recursion.
    # (Its only solver query is the shallow branch on data[0]: z3 cannot bit-blast the sum.)
    source = write(tmp_path, "sum.c", """
        #include <klee/klee.h>
        #define N 100000
        static unsigned char data[N];
        int main(void) {
          klee_make_symbolic(data, sizeof data, "data");
          if (data[0] > 5)
            return 1;
          unsigned sum = 0;
          for (int i = 0; i < N; i++) sum += data[i];
          return sum & 0xff;
        }
    """)
    result = symex.explore(symex.compile(source))
    assert result.paths.completed == 2 and result.statistics.instructions > 100_000 * 5
    for test in result.tests:
        data = test.objects["data"]
        assert len(data) == 100_000
        expected = 1 if data[0] > 5 else sum(data) & 0xFF
        assert test.exit_code == expected


# -- floats, unsupported code, hooks and limits ---------------------------------------------

def test_int_to_float_of_a_symbolic_integer_forks_on_the_float(tmp_path: Path) -> None:
    source = write(tmp_path, "f.c", """
        #include <klee/klee.h>
        int main(void) {
          int x;
          klee_make_symbolic(&x, sizeof x, "x");
          if (x > 10) {
            double d = x;            /* int-to-float of a symbolic value: symbolic */
            if (d > 20.5) return 1;
            return 0;
          }
          double c = 2.5 * 4;        /* concrete floating point runs */
          return (int)c;
        }
    """)
    result = symex.explore(symex.compile(source))
    # x <= 10; 10 < x <= 20; x >= 21: both sides of the comparison on doubles, nothing fixed
    assert (result.paths.completed, result.paths.partial) == (3, 0)
    assert sorted(t.exit_code for t in result.tests) == [0, 1, 10]
    for test in result.tests:
        x = int.from_bytes(test.objects["x"], "little", signed=True)
        assert test.exit_code == ((1 if x > 20.5 else 0) if x > 10 else 10)
    assert not [s for s in result.shortfalls if s.kind is ShortfallKind.CONCRETIZED]


def test_symbolic_double_comparison_forks(tmp_path: Path) -> None:
    source = write(tmp_path, "g.c", """
        #include <klee/klee.h>
        int main(void) {
          double d;
          int x;
          klee_make_symbolic(&d, sizeof d, "d");
          klee_make_symbolic(&x, sizeof x, "x");
          if (x > 10) {
            if (d > 20.5) return 1;  /* a comparison of a symbolic double */
            return 0;
          }
          return 10;
        }
    """)
    result = symex.explore(symex.compile(source))
    assert (result.paths.completed, result.paths.partial) == (3, 0)
    assert sorted(t.exit_code for t in result.tests) == [0, 1, 10]
    for test in result.tests:
        (d,) = struct.unpack("<d", test.objects["d"])
        x = int.from_bytes(test.objects["x"], "little", signed=True)
        assert test.exit_code == ((1 if d > 20.5 else 0) if x > 10 else 10)


def _extended(data: bytes) -> float:
    """x86's 80-bit extended value in the first 10 bytes of ``data`` (finite ones)."""
    mantissa = int.from_bytes(data[:8], "little")
    top = int.from_bytes(data[8:10], "little")
    exponent = top & 0x7FFF
    value = mantissa * 2.0 ** ((exponent or 1) - 16383 - 63)
    return -value if top >> 15 else value


def test_symbolic_long_double_is_fixed_to_one_value_and_counted(tmp_path: Path) -> None:
    """x86's 80-bit format is computed concretely: a symbolic one loaded from memory (od -t
    fL reads its input so) is fixed to a value the path allows, counted with a hint, and the
    path goes on; the test's bytes give the same comparison natively."""
    source = write(tmp_path, "l.c", """
        #include <klee/klee.h>
        int main(void) {
          long double d;
          int x;
          klee_make_symbolic(&d, sizeof d, "d");
          klee_make_symbolic(&x, sizeof x, "x");
          if (x > 10)
            return d > 20.5L;        /* x87's 80-bit format: not solved */
          return 10;
        }
    """)
    result = symex.explore(symex.compile(source))
    assert (result.paths.completed, result.paths.partial) == (2, 0)
    fixed = [s for s in result.shortfalls if s.kind is ShortfallKind.CONCRETIZED]
    assert [("long double" in s.what and "-mlong-double-64" in s.what, s.site) for s in fixed] == \
        [(True, "l.c:9")]
    for test in result.tests:
        x = int.from_bytes(test.objects["x"], "little", signed=True)
        if x > 10:
            assert test.exit_code == (1 if _extended(test.objects["d"]) > 20.5 else 0)
        else:
            assert test.exit_code == 10


def test_hooks_see_every_fork_path_error_and_new_block() -> None:
    program = symex.compile(PROGRAMS / "errors" / "div_zero.c")
    seen: dict[str, list] = {"fork": [], "end": [], "error": [], "coverage": []}
    hooks = symex.Hooks(
        on_fork=lambda parent, child: seen["fork"].append((parent.id, child.id)),
        on_path_end=lambda test: seen["end"].append(test),
        on_error=lambda error, test: seen["error"].append(error.kind),
        on_new_coverage=lambda function, line: seen["coverage"].append(function),
    )
    result = symex.explore(program, hooks=hooks)
    assert len(seen["end"]) == len(result.tests) == result.paths.total
    assert seen["error"] == [ErrorKind.DIV] * result.paths.errors and result.paths.errors >= 1
    assert len(seen["fork"]) == result.statistics.forks >= 1
    assert "main" in seen["coverage"]


def test_max_states_ends_extra_states_as_partial() -> None:
    program = symex.compile(PROGRAMS / "branches.c", ["-DN=8"])
    result = symex.explore(program, searcher="bfs", max_states=4)
    assert result.statistics.max_states <= 4
    assert result.paths.partial > 0
    assert result.paths.completed + result.paths.partial == len(result.tests)
    assert all("max-states" in t.reason for t in result.tests if t.status is PathStatus.PARTIAL)


def test_max_depth_and_max_instructions_stop_paths_as_partial() -> None:
    program = symex.compile(PROGRAMS / "branches.c", ["-DN=8"])
    shallow = symex.explore(program, max_depth=3)
    assert shallow.paths.completed == 0 and shallow.paths.partial == 2 ** 4
    short = symex.explore(program, max_instructions=500)
    assert short.halted == "max-instructions reached"
    assert short.paths.partial >= 1 and short.paths.completed < 2 ** 8


@pytest.mark.parametrize("searcher", [*SEARCHERS, ["random-path", "nurs:covnew"]], ids=str)
def test_a_limit_ends_each_live_state_once(searcher: object) -> None:
    """At a limit every state still waiting ends as one partial path with its own test: none
    twice, none left out, whichever searcher held them (random-path picks from the tree)."""
    program = symex.compile(PROGRAMS / "branches.c", ["-DN=8"])
    result = symex.explore(program, searcher=searcher, seed=3, max_instructions=3000)
    assert result.halted == "max-instructions reached"
    assert result.paths.partial >= 2
    assert len(result.tests) == result.paths.completed + result.paths.partial
    # different paths decided different bytes differently: no two tests alike
    patterns = {tuple(b > 100 for b in t.objects["b"]) for t in result.tests}
    assert len(patterns) == len(result.tests)


def test_max_time_halts_with_partial_tests() -> None:
    program = symex.compile(PROGRAMS / "regexp.c", ["-DASSUME_TERMINATED"])
    result = symex.explore(program, searcher="bfs", max_time=0.5)
    assert result.halted == "max-time reached"
    assert result.paths.partial >= 1
    assert result.statistics.time < 10


# -- bad input -------------------------------------------------------------------------------

def test_malformed_ir_missing_file_and_compile_error_are_clear(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ll"
    bad.write_text("define i32 @main() {\n  ret i64 0\n}\n")
    with pytest.raises(symex.LoadError, match="bad.ll: not valid LLVM IR"):
        symex.load(bad)
    with pytest.raises(symex.LoadError, match="no such file"):
        symex.load(tmp_path / "missing.ll")
    broken = write(tmp_path, "broken.c", "int main(void) { return y; }\n")
    with pytest.raises(symex.CompileError, match="use of undeclared identifier 'y'"):
        symex.compile(broken)


def test_unknown_searcher_and_entry_are_config_errors() -> None:
    program = symex.compile(Path(__file__).parents[1] / "examples" / "get_sign.c")
    with pytest.raises(symex.ConfigError, match="unknown searcher"):
        symex.explore(program, searcher="best-first")
    with pytest.raises(symex.ConfigError, match="no function 'start'"):
        symex.explore(program, entry="start")


def test_load_reads_ll_and_bc(tmp_path: Path) -> None:
    import llvmlite.binding as llvm

    from symex.ir.compile import compile_c

    ll = compile_c(Path(__file__).parents[1] / "examples" / "get_sign.c")
    bc = tmp_path / "get_sign.bc"
    bc.write_bytes(llvm.parse_assembly(ll.read_text()).as_bitcode())
    for path in (ll, bc):
        result = symex.explore(symex.load(path))
        assert result.paths.completed == 3


def test_verifier_nondet_inputs_are_named_and_replayable(tmp_path: Path) -> None:
    source = write(tmp_path, "sv.c", """
        extern int __VERIFIER_nondet_int(void);
        extern _Bool __VERIFIER_nondet_bool(void);
        extern void __VERIFIER_assume(int);
        extern void reach_error(void);
        int main(void) {
          int a = __VERIFIER_nondet_int();
          int b = __VERIFIER_nondet_int();
          _Bool flag = __VERIFIER_nondet_bool();
          __VERIFIER_assume(a > 0);
          if (flag && a + b == 1000 && b > 900) reach_error();
          return 0;
        }
    """)
    result = symex.explore(symex.compile(source))
    (error,) = result.errors
    assert error.kind is ErrorKind.REACH_ERROR
    test = next(t for t in result.tests if t.error is not None)
    assert list(test.objects) == ["nondet_int", "nondet_int_1", "nondet_bool"]
    a = int.from_bytes(test.objects["nondet_int"], "little", signed=True)
    b = int.from_bytes(test.objects["nondet_int_1"], "little", signed=True)
    assert a > 0 and a + b == 1000 and b > 900 and test.objects["nondet_bool"] != b"\0"
    # no completed path violates the assumption a > 0
    for t in result.tests:
        assert int.from_bytes(t.objects["nondet_int"], "little", signed=True) > 0


def test_symbolic_pointer_forks_per_object(tmp_path: Path) -> None:
    source = write(tmp_path, "ptr.c", """
        #include <klee/klee.h>
        int a[4] = {1, 2, 3, 4};
        int b[4] = {10, 20, 30, 40};
        int main(void) {
          int pick, i;
          klee_make_symbolic(&pick, sizeof pick, "pick");
          klee_make_symbolic(&i, sizeof i, "i");
          int *p = pick ? a : b;
          klee_assume(i >= 0);
          klee_assume(i < 4);
          return p[i];
        }
    """)
    result = symex.explore(symex.compile(source))
    assert result.errors == ()
    for test in result.tests:
        pick = int.from_bytes(test.objects["pick"], "little")
        i = int.from_bytes(test.objects["i"], "little")
        assert test.exit_code == ([1, 2, 3, 4] if pick else [10, 20, 30, 40])[i]
    assert result.paths.completed >= 2


def test_symbolic_index_write_then_read(tmp_path: Path) -> None:
    source = write(tmp_path, "idx.c", """
        #include <klee/klee.h>
        int main(void) {
          unsigned char buf[8] = {0};
          unsigned i, j;
          klee_make_symbolic(&i, sizeof i, "i");
          klee_make_symbolic(&j, sizeof j, "j");
          klee_assume(i < 8);
          klee_assume(j < 8);
          buf[i] = 7;
          if (buf[j] == 7) return 1;
          return 0;
        }
    """)
    result = symex.explore(symex.compile(source))
    assert result.paths.completed == 2 and result.errors == ()
    for test in result.tests:
        i = int.from_bytes(test.objects["i"], "little")
        j = int.from_bytes(test.objects["j"], "little")
        assert test.exit_code == (1 if i == j else 0)


def test_klee_intrinsics(tmp_path: Path) -> None:
    source = write(tmp_path, "intrinsics.c", """
        #include <klee/klee.h>
        int main(void) {
          int r = klee_range(10, 20, "r");
          int k = klee_int("k");
          int concrete = 5;
          if (klee_is_symbolic(concrete) || !klee_is_symbolic(r)) return 99;
          klee_warning("checking k");
          klee_print_expr("k plus one", k + 1);
          if (k == 7) klee_silent_exit(0);          /* no test case for this path */
          int v = klee_get_value_i32(r);             /* one feasible value of r */
          if (v < 10 || v >= 20) return 98;
          return r;
        }
    """)
    result = symex.explore(symex.compile(source))
    assert result.errors == ()
    # r in [10, 20) always; the k == 7 path ends silently: completed but without a test
    assert result.paths.completed == 2 and len(result.tests) == 1
    (test,) = result.tests
    assert list(test.objects) == ["r", "k"]
    r = int.from_bytes(test.objects["r"], "little", signed=True)
    assert 10 <= r < 20 and test.exit_code == r
    assert int.from_bytes(test.objects["k"], "little", signed=True) != 7
    assert "KLEE: WARNING: checking k" in result.messages
    printed = [m for m in result.messages if m.startswith("k plus one:")]
    assert len(printed) == 1 and "k" in printed[0] and "Add" in printed[0]


def test_provably_false_klee_assume_is_a_user_error(tmp_path: Path) -> None:
    source = write(tmp_path, "assume.c", """
        #include <klee/klee.h>
        int main(void) {
          int x = klee_int("x");
          if (x > 0) {
            klee_assume(x < 0);   /* cannot hold here */
          }
          return 0;
        }
    """)
    result = symex.explore(symex.compile(source))
    (error,) = result.errors
    assert error.kind is ErrorKind.USER and "provably false" in error.message
    assert result.paths.completed == 1 and result.paths.errors == 1


def test_vector_operations(tmp_path: Path) -> None:
    # insertelement/extractelement/shufflevector and element-wise arithmetic and compares
    source = write(tmp_path, "vec.c", """
        #include <klee/klee.h>
        typedef int v4 __attribute__((vector_size(16)));
        int main(void) {
          v4 a = {1, 2, 3, 4}, b = {10, 20, 30, 40};
          v4 c = a + b;                                    /* 11 22 33 44 */
          v4 d = c * 2 - a;                                /* 21 42 63 84 */
          v4 s = __builtin_shufflevector(a, b, 0, 5, 2, 7);/* 1 20 3 40  */
          volatile int k = 2;
          d[k] = 100;                                      /* 21 42 100 84 */
          int x = d[k - 1];                                /* 42 */
          v4 m = a > (v4){2, 2, 2, 2};                     /* 0 0 -1 -1 */
          int y = klee_int("y");
          v4 e = a;
          e[0] = y;                                        /* a symbolic element */
          int big = (e + b)[0] > 15;                       /* y + 10 > 15 */
          return s[1] + s[3] + x + m[3] + d[2] + big;      /* 60 + 42 - 1 + 100 + big */
        }
    """)
    for level in ("-O0", "-O2"):
        result = symex.explore(symex.compile(source, [level]))
        assert result.paths.partial == 0 and result.errors == ()
        # `big` is computed without a branch; the symbolic exit status is fixed to one value
        # consistent with the test's y
        for test in result.tests:
            y = int.from_bytes(test.objects["y"], "little", signed=True)
            assert test.exit_code == 201 + (y + 10 > 15), level


def test_computed_goto(tmp_path: Path) -> None:
    source = write(tmp_path, "goto.c", """
        static int f(int x) {
          static void *table[] = {&&a, &&b, &&c};
          goto *table[x];
        a: return 10;
        b: return 20;
        c: return 30;
        }
        int main(void) { return f(0) + f(1) + f(2); }
    """)
    (test,) = symex.explore(symex.compile(source)).tests
    assert test.exit_code == 60


def test_solver_timeout_leaves_a_side_unexplored_and_the_path_goes_on(tmp_path: Path) -> None:
    # factoring a 64-bit product of two random 32-bit primes: z3 cannot do it in 50 ms
    source = write(tmp_path, "factor.c", """
        #include <klee/klee.h>
        int main(void) {
          unsigned long long p = (unsigned)klee_int("p"), q = (unsigned)klee_int("q");
          if (p > 1 && q > 1) {
            if (p * q == 3000000019ULL * 2500000001ULL)
              return 1;
            return 2;
          }
          return 3;
        }
    """)
    result = symex.explore(symex.compile(source), solver_timeout=0.05)
    # the product's side is undecided (or, on a fast day, found): either way no path ends
    # early, and the side the inputs take goes on to return 2
    assert result.paths.partial == 0
    exits = {t.exit_code for t in result.tests}
    assert {2, 3} <= exits
    undecided = any(s.kind is ShortfallKind.UNDECIDED for s in result.shortfalls)
    assert undecided or 1 in exits


def test_a_run_leaves_the_embedding_programs_collector_as_it_was(tmp_path: Path) -> None:
    """Paths run with fewer garbage collections (core.collection), and the program that
    called explore() gets its own thresholds back and an unfrozen heap."""
    import gc
    from symex.core.interpreter.collection import RUN_THRESHOLDS
    program = symex.compile(Path(__file__).parents[1] / "examples" / "get_sign.c")
    seen: list[tuple[int, int, int]] = []
    before = gc.get_threshold()
    gc.set_threshold(1234, 11, 12)
    try:
        hooks = symex.Hooks(on_fork=lambda parent, child: seen.append(gc.get_threshold()))
        result = symex.explore(program, hooks=hooks)
        assert result.paths.completed == 3
        assert seen and all(t == RUN_THRESHOLDS for t in seen)
        assert gc.get_threshold() == (1234, 11, 12)
        assert gc.get_freeze_count() == 0
    finally:
        gc.set_threshold(*before)


def test_ptrmask_aligns_down_within_the_object(tmp_path: Path) -> None:
    """``llvm.ptrmask`` (``__builtin_align_down``; clang 22's va_arg of a long double, in
    musl's printf: coreutils' printf ended 61 paths on it): the pointer stays in its object,
    aligned, and musl prints a long double through it."""
    source = write(tmp_path, "align.c", r'''
#include <stdint.h>
#include <stdio.h>
int main(void) {
  _Alignas(16) char buffer[64];
  char *p = __builtin_align_down(buffer + 37, 16);
  p[0] = 'x';
  printf("%ld %d %Lg\n", (long)(p - buffer), (int)((uintptr_t)p % 16), 1.5L);
  return 0;
}
''')
    program = symex.compile(source, libc="musl")
    # clang 14 writes the mask as an `and` of the address; the test below has the intrinsic
    # whichever compiler is here
    [test] = symex.explore(program).tests
    assert (test.status, test.stdout) == (PathStatus.COMPLETED, b"32 0 1.5\n"), test.reason


def test_ptrmask_in_ir_keeps_the_pointer_in_its_object(tmp_path: Path) -> None:
    """The intrinsic itself, as clang 15 and later write ``__builtin_align_down``."""
    path = tmp_path / "ptrmask.ll"
    path.write_text("""
declare ptr @llvm.ptrmask.p0.i64(ptr, i64)

define i32 @main() {
  %buffer = alloca [64 x i8], align 16
  %inside = getelementptr inbounds i8, ptr %buffer, i64 37
  %aligned = call ptr @llvm.ptrmask.p0.i64(ptr %inside, i64 -16)
  store i8 120, ptr %aligned, align 1
  %start = ptrtoint ptr %buffer to i64
  %at = ptrtoint ptr %aligned to i64
  %offset = sub i64 %at, %start
  %low = and i64 %at, 15
  %sum = add i64 %offset, %low
  %code = trunc i64 %sum to i32
  ret i32 %code
}
""")
    [test] = symex.explore(symex.load(path)).tests
    assert (test.status, test.exit_code) == (PathStatus.COMPLETED, 32), test.reason
