"""The printf family, atexit and setjmp/longjmp: the host C library's output on concrete
programs (built natively with gcc), and symbolic inputs where they matter."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import symex
from c_programs import COMPILERS, explore, needs_gcc, write

PROGRAMS = Path(__file__).parent / "programs" / "libc2"






def native(source: Path, tmp_path: Path) -> subprocess.CompletedProcess[bytes]:
    binary = tmp_path / source.stem
    subprocess.run(["gcc", "-w", "-O0", "-o", str(binary), str(source)], check=True)
    return subprocess.run([str(binary)], capture_output=True, check=False)


# -- printf family ---------------------------------------------------------------------------

@needs_gcc
@pytest.mark.parametrize("compiler", COMPILERS)
def test_printf_family_prints_what_the_host_libc_prints(compiler: str, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMEX_CC", compiler)
    source = PROGRAMS / "printf_calls.c"
    expected = native(source, tmp_path)
    assert expected.returncode == 0
    result = explore(source)
    assert result.paths.completed == 1 and result.paths.total == 1
    assert result.tests[0].stdout == expected.stdout
    assert len(expected.stdout.splitlines()) > 20


def test_snprintf_of_a_symbolic_int_pins_the_value(tmp_path: Path) -> None:
    source = write(tmp_path, "pin.c", """
        #include <stdio.h>
        #include <string.h>
        #include <klee/klee.h>
        int main(void) {
          int x;
          char buf[16];
          klee_make_symbolic(&x, sizeof x, "x");
          klee_assume(x > 1000);
          klee_assume(x < 1100);
          int n = snprintf(buf, sizeof buf, "%d", x);
          /* the printed digits are the value: the path condition pins x to it */
          if (x != 1000 + (buf[2] - '0') * 10 + (buf[3] - '0'))
            return 1;
          if (x == 1050)
            return 2;
          printf("%s %d\\n", buf, n);
          return 0;
        }
    """)
    result = explore(source)
    assert result.paths.errors == 0
    # x was fixed when printed: neither "digits differ" nor a second value is reachable after
    assert result.paths.completed == 1
    (test,) = result.tests
    x = int.from_bytes(test.objects["x"], "little", signed=True)
    assert 1000 < x < 1100
    assert test.exit_code == (2 if x == 1050 else 0)
    if test.exit_code == 0:
        assert test.stdout == f"{x} 4\n".encode()


def test_sprintf_past_the_buffer_is_a_memory_error(tmp_path: Path) -> None:
    source = write(tmp_path, "overflow.c", """
        #include <stdio.h>
        int main(void) {
          char small[4];
          sprintf(small, "%d", 123456);
          return small[0];
        }
    """)
    result = explore(source)
    assert result.paths.errors == 1
    assert result.errors[0].kind.name == "PTR"


def test_fprintf_alone_still_has_separate_streams(tmp_path: Path) -> None:
    source = write(tmp_path, "streams.c", """
        #include <stdio.h>
        int main(void) {
          fprintf(stdout, "out %d\\n", 1);
          int n = fprintf(stderr, "err %s\\n", "two");
          printf("n=%d\\n", n);
          return 0;
        }
    """)
    # no function of the library's stdio.c is called, but the program uses its `stdout` and
    # `stderr` globals, so the library is linked for them: stderr output stays apart
    (test,) = explore(source).tests
    assert test.stdout == b"out 1\nn=8\n"
    assert test.stderr == b"err two\n"


@needs_gcc
def test_fprintf_to_stdout_stderr_and_a_file_as_natively(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = PROGRAMS / "fprintf_streams.c"
    monkeypatch.chdir(tmp_path)
    expected = native(source, tmp_path)
    assert expected.returncode == 0
    (test,) = explore(source).tests
    assert test.exit_code == 0
    assert test.stdout == expected.stdout == b"start\nwrote 9, read back [line 7 x\n]\n"
    assert test.stderr == expected.stderr == b"err 1\n"


# -- atexit ----------------------------------------------------------------------------------

@needs_gcc
@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("how", [[], ["1"]], ids=["return", "exit"])
def test_atexit_handlers_run_last_first_as_natively(how: list[str], compiler: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMEX_CC", compiler)
    source = PROGRAMS / "atexit_calls.c"
    binary = tmp_path / "atexit_calls"
    subprocess.run(["gcc", "-w", "-O0", "-o", str(binary), str(source)], check=True)
    expected = subprocess.run([str(binary), *how], capture_output=True, check=False)
    result = symex.explore(symex.compile(source), searcher="dfs", seed=0, max_time=60.0, args=how)
    assert result.paths.completed == 1 and result.paths.total == 1
    (test,) = result.tests
    assert test.stdout == expected.stdout
    assert test.exit_code == expected.returncode == (3 if how else 7)
    assert b"third handler\nthird handler\nsecond handler, counter 17\nfirst" in test.stdout


def test_atexit_runs_on_every_path(tmp_path: Path) -> None:
    source = write(tmp_path, "paths.c", """
        #include <stdio.h>
        #include <stdlib.h>
        #include <unistd.h>
        #include <klee/klee.h>
        static int x;
        static void report(void) { printf("x was %s\\n", x > 10 ? "big" : "small"); }
        static void bye(void) { puts("bye"); }
        int main(void) {
          klee_make_symbolic(&x, sizeof x, "x");
          atexit(report);
          atexit(bye);
          if (x > 10)
            exit(1);
          if (x == 3)
            _exit(4);  /* _exit skips the handlers */
          _Exit(0);
        }
    """)
    result = explore(source)
    assert result.paths.completed == 3
    outputs = {}
    for test in result.tests:
        x = int.from_bytes(test.objects["x"], "little", signed=True)
        outputs[test.exit_code] = (x, test.stdout)
    assert sorted(outputs) == [0, 1, 4]
    assert outputs[1][0] > 10 and outputs[1][1] == b"bye\nx was big\n"
    assert outputs[4] == (3, b"")
    assert outputs[0][0] <= 10 and outputs[0][0] != 3 and outputs[0][1] == b""


# -- setjmp/longjmp --------------------------------------------------------------------------

@needs_gcc
@pytest.mark.parametrize("compiler", COMPILERS)
def test_setjmp_longjmp_as_natively(compiler: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMEX_CC", compiler)
    source = PROGRAMS / "setjmp_calls.c"
    expected = native(source, tmp_path)
    assert expected.returncode == 0
    result = explore(source)
    assert result.paths.completed == 1 and result.paths.total == 1
    assert result.tests[0].stdout == expected.stdout
    assert b"setjmp returned 400 after 3 rounds (depth 4)" in expected.stdout


def test_longjmp_after_a_symbolic_branch_two_frames_down(tmp_path: Path) -> None:
    source = write(tmp_path, "unwind.c", """
        #include <setjmp.h>
        #include <stdio.h>
        #include <klee/klee.h>
        static jmp_buf on_error;
        static int parse(int x) {
          if (x == -1)
            longjmp(on_error, 0);  /* setjmp returns 1 */
          if (x < 0)
            longjmp(on_error, 2);
          return x * 2;
        }
        static int run(int x) { int y = parse(x); return y + 1; }
        int main(void) {
          int x;
          klee_make_symbolic(&x, sizeof x, "x");
          int code = setjmp(on_error);
          if (code) {
            printf("error %d\\n", code);
            return 10 + code;
          }
          int r = run(x);
          /* printing r pins x: branch first, so both sides are explored */
          if (r > 100) {
            printf("big %d\\n", r);
            return 1;
          }
          printf("ok %d\\n", r);
          return 0;
        }
    """)
    result = explore(source)
    assert result.paths.errors == 0 and result.paths.partial == 0
    seen = {}
    for test in result.tests:
        x = int.from_bytes(test.objects["x"], "little", signed=True)
        if x < 0:
            code = 1 if x == -1 else 2
            assert test.stdout == f"error {code}\n".encode() and test.exit_code == 10 + code
        else:
            r = (x * 2 + 1) & 0xFFFFFFFF
            r = r - (1 << 32) if r >> 31 else r
            assert test.stdout == f"{'big' if r > 100 else 'ok'} {r}\n".encode()
            assert test.exit_code == int(r > 100)
        seen[test.exit_code] = x
    # both longjmp values and both normal returns are reached
    assert set(seen) == {0, 1, 11, 12}


def test_longjmp_into_a_returned_function_is_an_error(tmp_path: Path) -> None:
    source = write(tmp_path, "stale.c", """
        #include <setjmp.h>
        static jmp_buf env;
        static int arm(void) { return setjmp(env); }
        int main(void) {
          if (arm() == 0)
            longjmp(env, 1);
          return 0;
        }
    """)
    result = explore(source)
    assert result.paths.errors == 1
    assert result.errors[0].kind.name == "EXEC"
    assert "returned" in result.errors[0].message
