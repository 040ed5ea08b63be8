"""``symex cc`` as build systems use it: musl by default for both the native build and the
IR, symex's headers on the include path, harnesses that link natively, CMake and Meson, the library
``auto`` picks, and parts built for two libraries refused (issue 44)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import symex
from symex.errors import LoadError
from symex.ir.cc_shims import is_configure_check
from symex.output.test_index import read_test_index

ROOT = Path(__file__).parents[1]
PROGRAMS = ROOT / "tests" / "programs"
# the console script a user's CC names (beside this Python, as pip installs it)
SYMEX = Path(sys.executable).parent / "symex"

pytestmark = pytest.mark.skipif(not SYMEX.is_file(), reason="needs the symex script beside this Python")


def run(command: list[str], cwd: Path, **environment: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, **environment})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def explore_and_replay_natively(program: Path, cwd: Path) -> list[int]:
    """``symex run`` the built executable, then each test through the native executable with
    KTEST_FILE (symex cc's klee_* functions): the same exit code. The exit codes, sorted."""
    run([str(SYMEX), "run", "-q", "--output-dir", "out", str(program)], cwd)
    index = read_test_index(cwd / "out")
    assert index is not None
    exits = []
    for number, entry in sorted(index.items()):
        assert entry.status == "completed", entry
        ktest = cwd / "out" / f"test{number:06d}.ktest"
        native = subprocess.run([str(program)], env={**os.environ, "KTEST_FILE": str(ktest)},
                                capture_output=True, timeout=60)
        assert native.returncode == entry.exit_code, (number, native.stderr)
        exits.append(native.returncode)
    return sorted(exits)


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_a_makefile_harness_including_klee_h_builds_links_and_replays(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(PROGRAMS / "harness_project", project)
    run(["make", f"CC={SYMEX} cc"], project)
    exits = explore_and_replay_natively(project / "harness", project)
    # "ab" in any case (4 spellings, on paths of their own through musl's strcasecmp), 'z'
    # first, or anything else
    assert set(exits) == {1, 2, 3}
    info = (project / "out" / "info").read_text()
    assert "C library: musl (the program was compiled against musl's headers)" in info


@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake (apt-get install cmake)")
def test_a_cmake_project_builds_with_cc_set_and_replays(tmp_path: Path) -> None:
    source = tmp_path / "source"
    shutil.copytree(PROGRAMS / "cmake_project", source)
    build = tmp_path / "build"
    run(["cmake", "-S", str(source), "-B", str(build)], tmp_path, CC=f"{SYMEX} cc")
    run(["cmake", "--build", str(build)], tmp_path)
    assert explore_and_replay_natively(build / "harness", tmp_path) == [0, 1, 2]


@pytest.mark.skipif(shutil.which("meson") is None or shutil.which("ninja") is None,
                    reason="needs meson and ninja (pip install 'symex[test]')")
def test_a_meson_project_builds_with_cc_set_and_replays(tmp_path: Path) -> None:
    """Meson's compiler checks identify symex cc (clang beneath, zig's linker) and the build
    explores and replays as CMake's does."""
    source = tmp_path / "source"
    shutil.copytree(PROGRAMS / "cmake_project" / "src", source / "src")
    (source / "meson.build").write_text(
        "project('sign', 'c')\n"
        "sign = static_library('sign', 'src/sign.c')\n"
        "executable('harness', 'src/main.c', link_with: sign)\n")
    build = tmp_path / "build"
    run(["meson", "setup", str(build), str(source)], tmp_path, CC=f"{SYMEX} cc")
    run(["ninja", "-C", str(build)], tmp_path)
    assert explore_and_replay_natively(build / "harness", tmp_path) == [0, 1, 2]


def test_configure_checks_see_musl_like_the_ir(tmp_path: Path) -> None:
    """What configure learns from a test program it runs is what the IR is compiled against:
    no glibc, musl's own macros and types."""
    (tmp_path / "conftest.c").write_text(
        "#include <stdio.h>\n#include <sys/stat.h>\n"
        "int main(void) {\n#ifdef __GLIBC__\n  puts(\"glibc\");\n#else\n  puts(\"not glibc\");\n#endif\n"
        "  return sizeof(struct stat) == 144 ? 0 : 1;\n}\n")
    run([str(SYMEX), "cc", "conftest.c", "-o", "conftest"], tmp_path)
    probe = subprocess.run([str(tmp_path / "conftest")], capture_output=True, text=True, timeout=60)
    assert probe.stdout == "not glibc\n" and probe.returncode == 0
    # the same source, built for exploring: its IR names musl and sees no glibc either
    (tmp_path / "probe.c").write_text((tmp_path / "conftest.c").read_text())
    run([str(SYMEX), "cc", "probe.c", "-o", "probe"], tmp_path)
    program = symex.load(tmp_path / "probe")
    assert program.library == "musl"
    result = symex.explore(program)
    assert [path.stdout for path in result.tests] == [b"not glibc\n"]


def test_an_implicit_declaration_is_reported_whatever_the_standard(tmp_path: Path) -> None:
    (tmp_path / "old.c").write_text('int main(void) { return rawmemchr("a", 0) != 0; }\n')
    proc = run([str(SYMEX), "cc", "-std=gnu89", "-c", "old.c", "-o", "old.o"], tmp_path)
    assert "implicit declaration of function 'rawmemchr'" in proc.stderr


def test_configure_checks_are_told_apart_from_a_build() -> None:
    assert is_configure_check(["conftest.c", "-o", "conftest"])
    assert is_configure_check(["-O2", "conftest.o", "-o", "conftest", "-lm"])
    assert is_configure_check(["--version"])
    assert not is_configure_check(["-c", "main.c", "-o", "main.o"])
    assert not is_configure_check(["conftest.c", "lib.o", "-o", "conftest"])


def test_parts_built_for_two_libraries_are_refused(tmp_path: Path) -> None:
    (tmp_path / "one.c").write_text("int one(void) { return 1; }\n")
    (tmp_path / "main.c").write_text("int one(void);\nint main(void) { return one(); }\n")
    run([str(SYMEX), "cc", "-c", "one.c", "-o", "one.o"], tmp_path)
    run([str(SYMEX), "cc", "-c", "main.c", "-o", "main.o"], tmp_path, SYMEX_LIBC="symex")
    run([str(SYMEX), "cc", "one.o", "main.o", "-o", "mixed"], tmp_path)
    with pytest.raises(LoadError, match="compiled against musl's headers and .* against the system's"):
        symex.load(tmp_path / "mixed")


def test_auto_takes_musl_only_for_what_symex_lacks(tmp_path: Path) -> None:
    small = tmp_path / "small.c"
    small.write_text("#include <klee/klee.h>\n#include <string.h>\n"
                     "int main(void) { char s[3]; klee_make_symbolic(s, 3, \"s\"); s[2] = 0;"
                     " return (int)strlen(s); }\n")
    program = symex.compile(small)
    assert (program.library, program.library_reason) == (
        "symex", "symex's library defines every function the program calls")
    assert sorted(p.exit_code for p in symex.explore(program).tests) == [0, 1, 2]
    locale = tmp_path / "locale.c"
    locale.write_text("#include <klee/klee.h>\n#include <locale.h>\n#include <strings.h>\n"
                      "int main(void) { char s[2]; klee_make_symbolic(s, 2, \"s\"); s[1] = 0;\n"
                      "  setlocale(LC_ALL, \"\");\n  return strcasecmp(s, \"q\") == 0; }\n")
    program = symex.compile(locale)
    assert program.library == "musl"
    assert program.library_reason == "symex's library lacks setlocale, strcasecmp"
    result = symex.explore(program)
    # no path ends as unsupported; "q" and "Q" match (musl's tolower splits the rest by range)
    assert all(p.status.value == "completed" for p in result.tests)
    assert sorted(p.objects["s"][:1] for p in result.tests if p.exit_code == 1) == [b"Q", b"q"]
    assert [s for s in symex.explore(symex.compile(locale, libc="symex")).tests
            if "unsupported: call to external function 'setlocale'" in s.reason]
