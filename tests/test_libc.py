"""symex's C library (runtime/libc/*.c linked into programs): the same output as the host C
library on concrete inputs, forks on symbolic inputs as C code does, and the linking rules
(only what is called, a program's own definition wins, no coverage, errors at the caller)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import symex
from symex import PathStatus
from symex.ir.compile import compile_c
from c_programs import COMPILERS, explore, write

PROGRAMS = Path(__file__).parent / "programs" / "libc"





# -- concrete: the host C library's output -----------------------------------------------------

@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc for the native build")
@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("name", ["string_calls", "ctype_calls", "stdlib_calls"])
def test_every_function_prints_what_the_host_libc_prints(name: str, compiler: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMEX_CC", compiler)
    source = PROGRAMS / f"{name}.c"
    binary = tmp_path / name
    subprocess.run(["gcc", "-w", "-O0", "-o", str(binary), str(source)], check=True)
    native = subprocess.run([str(binary)], capture_output=True, check=True).stdout
    result = explore(source)
    assert result.paths.completed == 1 and result.paths.total == 1
    test = result.tests[0]
    assert test.exit_code == 0
    assert test.stdout == native
    assert len(native.splitlines()) > 20


# -- symbolic: forks as the C code branches ----------------------------------------------------

def test_strlen_of_a_symbolic_string_forks_per_length(tmp_path: Path) -> None:
    source = write(tmp_path, "len.c", """
        #include <string.h>
        #include <klee/klee.h>
        int main(void) {
          char buf[5];
          klee_make_symbolic(buf, 4, "buf");
          buf[4] = 0;
          return (int)strlen(buf);
        }
    """)
    result = explore(source)
    assert result.paths.completed == 5 and result.paths.total == 5
    assert sorted(t.exit_code for t in result.tests) == [0, 1, 2, 3, 4]
    for test in result.tests:
        data = test.objects["buf"] + b"\0"
        assert data.index(0) == test.exit_code


def test_strcmp_finds_the_password(tmp_path: Path) -> None:
    source = write(tmp_path, "password.c", """
        #include <string.h>
        #include <klee/klee.h>
        int main(void) {
          char buf[5];
          klee_make_symbolic(buf, 5, "buf");
          if (strcmp(buf, "pass") == 0)
            return 1;
          return 0;
        }
    """)
    result = explore(source)
    hits = [t for t in result.tests if t.exit_code == 1]
    assert [t.objects["buf"] for t in hits] == [b"pass\0"]
    # one path per byte compared before the mismatch, plus the match and its byte-4 variant
    assert 5 <= result.paths.completed <= 10


def test_atoi_of_a_symbolic_number_reaches_42(tmp_path: Path) -> None:
    source = write(tmp_path, "atoi.c", """
        #include <stdlib.h>
        #include <klee/klee.h>
        int main(void) {
          char buf[3];
          klee_make_symbolic(buf, 2, "digits");
          buf[2] = 0;
          int x = atoi(buf);
          if (x == 42)
            return 1;
          return 0;
        }
    """)
    result = explore(source)
    assert [t.objects["digits"] for t in result.tests if t.exit_code == 1] == [b"42"]


def test_strtol_parses_a_symbolic_hex_number(tmp_path: Path) -> None:
    source = write(tmp_path, "strtol.c", """
        #include <stdlib.h>
        #include <klee/klee.h>
        int main(void) {
          char buf[3];
          char *end;
          klee_make_symbolic(buf, 2, "hex");
          buf[2] = 0;
          long x = strtol(buf, &end, 16);
          if (x == 0xaf && *end == 0)
            return 1;
          return 0;
        }
    """)
    result = explore(source)
    hits = {t.objects["hex"] for t in result.tests if t.exit_code == 1}
    assert hits and hits <= {b"af", b"aF", b"Af", b"AF"}


@pytest.mark.parametrize("form", ["isdigit(c)", "(isdigit)(c)"], ids=["macro", "function"])
def test_isdigit_on_a_symbolic_char_forks_in_two(form: str, tmp_path: Path) -> None:
    source = write(tmp_path, "digit.c", f"""
        #include <ctype.h>
        #include <klee/klee.h>
        int main(void) {{
          unsigned char ch;
          klee_make_symbolic(&ch, 1, "ch");
          int c = ch;
          if ({form})
            return 1;
          return 0;
        }}
    """)
    result = explore(source)
    assert result.paths.completed == 2 and result.paths.total == 2
    by_exit = {t.exit_code: t.objects["ch"][0] for t in result.tests}
    assert set(by_exit) == {0, 1}
    assert chr(by_exit[1]).isdigit() and not chr(by_exit[0]).isdigit()


@pytest.mark.parametrize("form", ["toupper(c)", "(toupper)(c)"], ids=["header", "function"])
def test_toupper_on_a_symbolic_char_reaches_both_preimages(form: str, tmp_path: Path) -> None:
    source = write(tmp_path, "upper.c", f"""
        #include <ctype.h>
        #include <klee/klee.h>
        int main(void) {{
          unsigned char ch;
          klee_make_symbolic(&ch, 1, "ch");
          int c = ch;
          if ({form} == 'Q') {{
            if (c == 'q')
              return 1;
            return 2;
          }}
          return 0;
        }}
    """)
    result = explore(source)
    by_exit: dict[int, set[bytes]] = {}
    for test in result.tests:
        by_exit.setdefault(test.exit_code, set()).add(test.objects["ch"])
    assert by_exit[1] == {b"q"} and by_exit[2] == {b"Q"}
    assert all(ch not in (b"q", b"Q") for ch in by_exit[0])


def test_memcmp_with_symbolic_bytes_finds_the_match(tmp_path: Path) -> None:
    source = write(tmp_path, "memcmp.c", """
        #include <string.h>
        #include <klee/klee.h>
        int main(void) {
          unsigned char buf[3];
          klee_make_symbolic(buf, 3, "buf");
          int order = memcmp(buf, "\\x12\\x34\\x56", 3);
          if (order == 0)
            return 1;
          if (order < 0)
            return 2;
          return 3;
        }
    """)
    result = explore(source)
    assert result.paths.completed == 7  # less or greater at each of 3 bytes, or equal
    assert sorted(t.exit_code for t in result.tests) == [1, 2, 2, 2, 3, 3, 3]
    for test in result.tests:
        expected = 1 if test.objects["buf"] == b"\x12\x34\x56" else 2 if test.objects["buf"] < b"\x12\x34\x56" else 3
        assert test.exit_code == expected


# -- linking ------------------------------------------------------------------------------------

def test_a_program_defining_strlen_keeps_its_own(tmp_path: Path) -> None:
    source = write(tmp_path, "own.c", """
        #include <string.h>
        size_t strlen(const char *s) { (void)s; return 42; }
        int main(void) {
          char buf[8] = "abc";
          char copy[64];
          strcpy(copy, buf);
          strcat(copy, "de");    /* the library's strcat calls the program's strlen */
          return (int)strlen(buf) + (copy[42] == 'd');
        }
    """)
    program = symex.compile(source)
    assert program.functions["strlen"].file is not None  # the program's, with debug info
    result = explore(source)
    assert [t.exit_code for t in result.tests] == [43]


def test_only_called_functions_are_linked(tmp_path: Path) -> None:
    source = write(tmp_path, "some.c", """
        #include <string.h>
        #include <ctype.h>
        int main(void) { char *d = strdup("x"); return (int)strlen(d) + (isdigit)(d[0]); }
    """)
    program = symex.compile(source)
    defined = {name for name, fn in program.functions.items() if not fn.is_declaration}
    assert {"main", "strdup", "strlen", "isdigit"} <= defined
    assert not defined & {"strcmp", "strtok", "atoi", "qsort", "isalpha", "__ctype_b_loc"}
    get_sign = symex.compile(Path(__file__).parents[1] / "examples" / "get_sign.c")
    assert not {name for name, fn in get_sign.functions.items() if not fn.is_declaration} - {"main", "get_sign"}


def test_load_of_an_ll_file_links_the_library(tmp_path: Path) -> None:
    source = write(tmp_path, "ll.c", """
        #include <string.h>
        int main(void) { char b[6] = "hello"; return (int)strlen(b); }
    """)
    ll = compile_c(source)
    assert not [line for line in ll.read_text().splitlines() if line.startswith("define") and "@strlen(" in line]
    program = symex.load(ll)
    assert not program.functions["strlen"].is_declaration
    assert [t.exit_code for t in symex.explore(program).tests] == [5]
    assert symex.load(ll, libc=False).functions["strlen"].is_declaration


def test_library_lines_are_not_coverage_and_errors_point_at_the_caller(tmp_path: Path) -> None:
    source = write(tmp_path, "overflow.c", """
        #include <string.h>
        #include <klee/klee.h>
        int main(void) {
          char in[8], out[4];
          klee_make_symbolic(in, 8, "in");
          in[7] = 0;
          strcpy(out, in);
          return out[0];
        }
    """)
    result = explore(source)
    assert {file for file, _ in result.coverage.total_lines} == {str(source.resolve())}
    assert result.coverage.total_lines == {(str(source.resolve()), line) for line in (6, 7, 8, 9)}
    assert result.errors
    error = result.errors[0]
    assert error.location == (str(source.resolve()), 8)
    assert error.stack[0][0] == "strcpy" and error.stack[-1] == ("main", str(source.resolve()), 8)
    # lengths 0..3 fit; every longer string overflows at out[4]
    ok = [t for t in result.tests if t.status is PathStatus.COMPLETED]
    assert sorted((t.objects["in"] + b"\0").index(0) for t in ok) == [0, 1, 2, 3]


def test_a_missing_library_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An installation without runtime/libc/*.c (as wheels once were) must not run programs
    as if strlen were an unknown external function."""
    from symex.errors import LoadError
    from symex.ir import link

    (tmp_path / "symex" / "ir").mkdir(parents=True)
    monkeypatch.setattr(link, "__file__", str(tmp_path / "symex" / "ir" / "link.py"))
    with pytest.raises(LoadError, match="C library is missing from this installation"):
        link.runtime_sources()
