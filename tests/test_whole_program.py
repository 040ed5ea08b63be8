"""Whole programs: a project built by `make CC="symex cc"` (objects, a static archive, a link)
explored whole, several source files linked by `symex run` and `symex.compile`, and the
driver's behaviour as a build system's compiler. Every expected outcome is worked out from
the sources in tests/programs/wholeprogram, and every test input is replayed on the native
executable the same build produced."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import symex
from symex.errors import LoadError
from symex.ir.whole_program import bitcode_paths
from symex.output.ktest import read_ktest
from symex.output.test_index import read_test_index

ROOT = Path(__file__).parents[1]
PROJECT = ROOT / "tests" / "programs" / "wholeprogram"
SYMEX_CC = f"{sys.executable} -m symex.cli cc"

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def symex_command(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "symex.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=600)


def symex_cc(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SYMEX_CC.split(), *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def build(project: Path, cc: str = SYMEX_CC, libc: str = "") -> None:
    """``make CC=...``: for musl (symex cc's default) or, with ``libc="symex"``, the
    system's headers and library natively and symex's small library in the IR."""
    environment = {**os.environ, "SYMEX_LIBC": libc}
    proc = subprocess.run(["make", f"CC={cc}"], cwd=project, capture_output=True, text=True, timeout=600,
                          env=environment)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(PROJECT, copy)
    return copy


def outcomes(out: Path) -> tuple[list[int], list[bytes]]:
    """The exit codes of the completed tests (sorted) and the standard inputs of the
    division errors."""
    index = read_test_index(out)
    assert index is not None
    exits = sorted(entry.exit_code for entry in index.values() if entry.status == "completed"
                   if entry.exit_code is not None)
    errors = [stdin_of(out / f"test{number:06d}.ktest") for number, entry in sorted(index.items())
              if entry.error == "div"]
    assert all(entry.status in ("completed", "error") for entry in index.values())
    return exits, errors


def stdin_of(ktest: Path) -> bytes:
    return next(obj.data for obj in read_ktest(ktest).objects if obj.name == "stdin")


def test_a_make_project_with_an_archive_is_explored_whole_and_replays_natively(project: Path) -> None:
    build(project, libc="symex")
    records = project / "records"
    # the native build is a working program: "r4" is a ratio 100/4 = 25, exit 2*10 + 0;
    # checksum: 114 ("r"), (114*31 + 52) & 255 = 2, (2*31 + 120) & 255 = 182
    native = subprocess.run([str(records)], input=b"r4x", capture_output=True, timeout=60)
    assert native.returncode == 20 and native.stdout == b"kind 2 value 25 checksum 182\n"
    # the dependency file of the -MD compile names the object, not the bitcode beside it
    assert (project / "lib" / "parse.d").read_text().startswith("lib/parse.o:")

    proc = symex_command("run", "--output-dir", "out", "records", "--sym-stdin", "3", cwd=project)
    assert proc.returncode == 0, proc.stderr
    exits, errors = outcomes(project / "out")
    # '#': 10; 'r' then '1': 100 > 50, 21; 'r' then '2'..'9': 20; 'r' then a non-digit below
    # or above the digits, or any other first byte: 30; 'r' then '0': division by zero
    assert exits == [10, 20, 21, 30, 30, 30]
    assert len(errors) == 1 and errors[0][:2] == b"r0"
    err = next((project / "out").glob("*.div.err")).read_text()
    assert "parse.c:20" in err  # `*value = 100 / divisor;`, in the archive's member

    # symex replay runs the executable symex cc built, as it is
    replay = symex_command("replay", "records", "out", cwd=project)
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert replay.stdout.splitlines()[-1] == "symex replay: 7 tests: 1 of 1 error reproduced; 6 clean"
    # every test on the native executable: the same exit code, the error as SIGFPE
    index = read_test_index(project / "out")
    assert index is not None
    for number, entry in index.items():
        data = stdin_of(project / "out" / f"test{number:06d}.ktest")
        native = subprocess.run([str(records)], input=data, capture_output=True, timeout=60)
        if entry.error == "div":
            assert native.returncode == -8, data
        else:
            assert native.returncode == entry.exit_code, data


def test_the_ir_holds_what_the_native_linker_took(project: Path) -> None:
    build(project)
    parts = bitcode_paths(project / "records")
    # main.o and the two archive members main needs; unused.o stayed in the archive
    assert sorted(path.name for path in parts) == [".checksum.o.bc", ".main.o.bc", ".parse.o.bc"]
    assert len(bitcode_paths(project / "lib" / "libparse.a")) == 3
    program = symex.load(project / "records")
    names = set(program.functions)
    assert {"main", "parse_record", "checksum"} <= names
    assert "unused_in_records" not in names
    # both files' static `helper`s, kept apart
    assert len([name for name in names if name.startswith("helper")]) == 2


def test_a_make_project_on_musl_by_default_replays_every_test_natively(project: Path) -> None:
    """symex cc's default: the native executable is linked with musl (zig's copy of the
    release symex explores), so each test's native exit code is the one symex found."""
    build(project)
    native = subprocess.run([str(project / "records")], input=b"r4x", capture_output=True, timeout=60)
    assert native.returncode == 20 and native.stdout == b"kind 2 value 25 checksum 182\n"
    proc = symex_command("run", "--output-dir", "out", "records", "--sym-stdin", "3", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert "C library: musl (the program was compiled against musl's headers)" in (
        project / "out" / "info").read_text()
    exits, errors = outcomes(project / "out")
    # the same outcomes as with symex's library; musl's printf of the symbolic checksum
    # splits paths on its digits, so each outcome comes on several paths
    assert set(exits) == {10, 20, 21, 30}
    assert errors and all(data[:2] == b"r0" for data in errors)
    replay = symex_command("replay", "records", "out", cwd=project)
    assert replay.returncode == 0, replay.stdout + replay.stderr
    total = len(exits) + len(errors)
    assert replay.stdout.splitlines()[-1] == (
        f"symex replay: {total} tests: {len(errors)} of {len(errors)} error{'s' if len(errors) > 1 else ''} "
        f"reproduced; {len(exits)} clean")


def test_a_header_edit_and_make_change_what_runs(project: Path) -> None:
    build(project, libc="symex")
    header = project / "lib" / "parse.h"
    header.write_text(header.read_text().replace("#define RATIO_DIGITS 1", "#define RATIO_DIGITS 2"))
    build(project, libc="symex")
    proc = symex_command("run", "--output-dir", "out", "records", "--sym-stdin", "3", cwd=project)
    assert proc.returncode == 0, proc.stderr
    _, errors = outcomes(project / "out")
    # two digits now: only "r00" divides by zero
    assert errors == [b"r00"]


def test_run_links_several_source_files(tmp_path: Path) -> None:
    lib = PROJECT / "lib"
    proc = symex_command("run", "-I", str(lib), "--output-dir", "out", str(PROJECT / "main.c"),
                         str(lib / "parse.c"), str(lib / "checksum.c"), "--sym-stdin", "3", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    exits, errors = outcomes(tmp_path / "out")
    assert exits == [10, 20, 21, 30, 30, 30] and len(errors) == 1


def test_compile_links_a_list_of_files() -> None:
    lib = PROJECT / "lib"
    program = symex.compile([PROJECT / "main.c", lib / "parse.c", lib / "checksum.c"], ["-I", str(lib)])
    assert {"main", "parse_record", "checksum"} <= set(program.functions)
    result = symex.explore(program, sym_stdin=3)
    exits = sorted(test.exit_code for test in result.tests if test.error is None)
    assert exits == [10, 20, 21, 30, 30, 30]
    assert [test.error.kind.value for test in result.tests if test.error is not None] == ["div"]


def test_files_after_double_dash_are_arguments(tmp_path: Path) -> None:
    (tmp_path / "count.c").write_text("int extra(void);\n"
                                      "int main(int argc, char **argv) { return argc * 10 + extra(); }\n")
    (tmp_path / "extra.c").write_text("int extra(void) { return 1; }\n")
    linked = symex_command("run", "count.c", "extra.c", cwd=tmp_path)
    assert linked.returncode == 0, linked.stderr
    assert "completed exit 11" in linked.stdout  # argc 1, extra() 1
    (tmp_path / "alone.c").write_text("int main(int argc, char **argv) { return argc; }\n")
    passed = symex_command("run", "alone.c", "--", "extra.c", cwd=tmp_path)
    assert passed.returncode == 0, passed.stderr
    assert "completed exit 2" in passed.stdout  # extra.c is argv[1]


def test_two_definitions_of_one_name_fail_as_a_link_would(tmp_path: Path) -> None:
    (tmp_path / "a.c").write_text("int twice(int x) { return 2 * x; }\nint main(void) { return twice(1); }\n")
    (tmp_path / "b.c").write_text("int twice(int x) { return x + x; }\n")
    proc = symex_command("run", "a.c", "b.c", cwd=tmp_path)
    assert proc.returncode == 2
    assert "b.c" in proc.stderr and "twice" in proc.stderr and "Traceback" not in proc.stderr


def test_programs_not_built_by_symex_cc_are_refused_with_what_to_do(project: Path) -> None:
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        pytest.skip("needs a native C compiler")
    build(project, cc=gcc)
    proc = symex_command("run", "records", cwd=project)
    assert proc.returncode == 2
    assert "not built by symex cc" in proc.stderr and "CC='symex cc'" in proc.stderr


def test_a_program_whose_bitcode_is_gone_says_so(project: Path) -> None:
    build(project)
    (project / "lib" / ".checksum.o.bc").unlink()
    with pytest.raises(LoadError, match=r"checksum\.o\.bc, which no longer exists; rebuild records"):
        symex.load(project / "records")


def test_preprocessing_and_configure_style_checks_pass_through(tmp_path: Path) -> None:
    source = "#include <stdio.h>\n#define ANSWER 42\nint main(void) { return ANSWER - 42; }\n"
    (tmp_path / "hello.c").write_text(source)
    pre = symex_cc("-E", "hello.c", cwd=tmp_path)
    assert pre.returncode == 0 and "return 42 - 42;" in pre.stdout and pre.stderr == ""
    # compile and link in one step: a working executable, and its bitcode named in it
    link = symex_cc("hello.c", "-o", "hello", cwd=tmp_path)
    assert link.returncode == 0 and link.stderr == "", link.stderr
    assert subprocess.run([str(tmp_path / "hello")], timeout=60).returncode == 0
    assert len(bitcode_paths(tmp_path / "hello")) == 1
    # configure's checks (conftest.c) are compiled natively only: their programs are
    # never explored, and configure runs thousands of them
    (tmp_path / "conftest.c").write_text(source)
    check = symex_cc("conftest.c", "-o", "conftest", cwd=tmp_path)
    assert check.returncode == 0 and check.stderr == "", check.stderr
    assert subprocess.run([str(tmp_path / "conftest")], timeout=60).returncode == 0
    assert not list(tmp_path.glob(".conftest*"))
    with pytest.raises(LoadError, match="not built by symex cc"):
        bitcode_paths(tmp_path / "conftest")
    # a compile error is the compiler's, with its status
    (tmp_path / "broken.c").write_text("int main(void) { return missing; }\n")
    broken = symex_cc("-c", "broken.c", cwd=tmp_path)
    assert broken.returncode != 0 and "missing" in broken.stderr


def test_the_driver_needs_neither_binutils_nor_file(tmp_path: Path) -> None:
    """On a machine with pip only, objcopy and file(1) may be absent: the section goes in
    through zig, and objects are told from executables by their headers."""
    tools = tmp_path / "bin"
    tools.mkdir()
    for name in ("sh", "mktemp", "rm", "mv", "cat"):
        found = shutil.which(name)
        assert found is not None
        (tools / name).symlink_to(found)
    (tmp_path / "twice.c").write_text("int twice(int x) { return 2 * x; }\n")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{tools}",
           "SYMEX_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-m", "symex.cli", "cc", "-c", "twice.c", "-o", "twice.o"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    assert shutil.which("objcopy", path=env["PATH"]) is None
    assert [path.name for path in bitcode_paths(tmp_path / "twice.o")] == [".twice.o.bc"]
