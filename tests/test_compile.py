"""Tests of symex.ir.compile: C -> LLVM IR with the real compiler available here."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import llvmlite.binding as llvm
import pytest

from symex.errors import CompileError
from symex.ir.compile import Compiler, compile_c, find_compiler, include_dir


@pytest.fixture(scope="module")
def compiler() -> Compiler:
    return find_compiler()


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _function_body(ir: str, name: str) -> str:
    match = re.search(r"define [^\n]*@" + name + r"\(.*?\n}\n", ir, re.DOTALL)
    assert match, f"function {name} not found in IR"
    return match.group(0)


def test_find_compiler_reports_kind_and_version(compiler: Compiler) -> None:
    assert compiler.kind in ("clang", "zig")
    assert "clang" in compiler.version.lower()
    assert compiler.command


def test_include_dir_holds_shipped_headers() -> None:
    assert (include_dir() / "klee" / "klee.h").is_file()
    assert (include_dir() / "symex.h").is_file()


def test_ir_parses_and_has_debug_locations(tmp_path: Path, compiler: Compiler) -> None:
    src = _write(tmp_path, "prog.c", "int add(int a, int b) {\n  int c = a + b;\n  return c;\n}\n")
    ll = compile_c(src, compiler=compiler, cache_dir=tmp_path / "cache")
    ir = ll.read_text()
    module = llvm.parse_assembly(ir)
    module.verify()
    assert module.triple.startswith("x86_64-")
    assert "!dbg" in ir
    assert "DILocation(line: 2" in ir
    body = _function_body(ir, "add")
    # -O0 keeps locals in memory, but -disable-O0-optnone must keep functions optimisable
    assert "alloca" in body
    assert "optnone" not in ir
    # zig must not add UBSan instrumentation
    assert "__ubsan" not in ir


def test_define_flag_takes_effect(tmp_path: Path, compiler: Compiler) -> None:
    src = _write(tmp_path, "d.c", "int f(void) { return NAME * 7; }\n")
    ir = compile_c(src, ["-DNAME=3"], compiler=compiler, cache_dir=tmp_path / "c").read_text()
    assert "ret i32 21" in _function_body(ir, "f")


def test_optimisation_flag_replaces_O0(tmp_path: Path, compiler: Compiler) -> None:
    src = _write(tmp_path, "o.c", "int g(int x) {\n  int y = x;\n  return y + 1;\n}\n")
    o0 = compile_c(src, compiler=compiler, cache_dir=tmp_path / "c")
    o2 = compile_c(src, ["-O2"], compiler=compiler, cache_dir=tmp_path / "c")
    assert o0 != o2
    assert "alloca" in _function_body(o0.read_text(), "g")
    body = _function_body(o2.read_text(), "g")
    assert "alloca" not in body and "add nsw i32 %" in body
    llvm.parse_assembly(o2.read_text()).verify()


def test_include_path_flag_passes_through(tmp_path: Path, compiler: Compiler) -> None:
    incdir = tmp_path / "inc"
    incdir.mkdir()
    (incdir / "val.h").write_text("#define VAL 42\n")
    src = _write(tmp_path, "i.c", '#include "val.h"\nint h(void) { return VAL; }\n')
    ir = compile_c(src, [f"-I{incdir}"], compiler=compiler, cache_dir=tmp_path / "c").read_text()
    assert "ret i32 42" in _function_body(ir, "h")


def test_shipped_headers_compile(tmp_path: Path, compiler: Compiler) -> None:
    src = _write(
        tmp_path,
        "k.c",
        "#include <symex.h>\n"
        "int main(void) {\n"
        "  int x;\n"
        '  klee_make_symbolic(&x, sizeof x, "x");\n'
        "  klee_assume(x > 0);\n"
        "  klee_assert(x != 5);\n"
        "  return __VERIFIER_nondet_int() + klee_range(0, 4, \"r\");\n"
        "}\n",
    )
    ir = compile_c(src, compiler=compiler, cache_dir=tmp_path / "c").read_text()
    llvm.parse_assembly(ir).verify()
    # opaque pointers (`ptr`) from current LLVM, typed ones (`i8*`) from clang 14
    assert re.search(r"declare void @klee_make_symbolic\((ptr|i8\*) noundef, i64 noundef, (ptr|i8\*) noundef\)", ir)
    assert "@klee_assume(i64" in ir
    assert "@__assert_fail(" in ir
    assert "@__VERIFIER_nondet_int(" in ir


def test_cache_hit_does_not_run_compiler(tmp_path: Path, compiler: Compiler) -> None:
    src = _write(tmp_path, "c.c", "int k(void) { return 1; }\n")
    first = compile_c(src, compiler=compiler, cache_dir=tmp_path / "c")
    # Same kind and version (the cache key) but a command that cannot run: only a cache hit succeeds.
    broken = Compiler(kind=compiler.kind, command=(str(tmp_path / "no-such-compiler"),), version=compiler.version)
    assert compile_c(src, compiler=broken, cache_dir=tmp_path / "c") == first
    with pytest.raises(CompileError):
        compile_c(src, ["-DOTHER=1"], compiler=broken, cache_dir=tmp_path / "c")


def test_source_change_invalidates_cache(tmp_path: Path, compiler: Compiler) -> None:
    src = _write(tmp_path, "s.c", "int k(void) { return 1; }\n")
    first = compile_c(src, compiler=compiler, cache_dir=tmp_path / "c")
    src.write_text("int k(void) { return 2; }\n")
    second = compile_c(src, compiler=compiler, cache_dir=tmp_path / "c")
    assert first != second
    assert "ret i32 2" in second.read_text()


def test_header_change_invalidates_cache(tmp_path: Path, compiler: Compiler) -> None:
    """Editing an included header (two levels deep) compiles anew; putting it back finds the
    first IR again without the compiler."""
    (tmp_path / "inc").mkdir()
    _write(tmp_path / "inc", "outer.h", '#include "inner.h"\n')
    inner = _write(tmp_path / "inc", "inner.h", "#define VALUE 1\n")
    src = _write(tmp_path, "h.c", '#include "inc/outer.h"\nint k(void) { return VALUE; }\n')
    first = compile_c(src, compiler=compiler, cache_dir=tmp_path / "c")
    assert "ret i32 1" in first.read_text()

    inner.write_text("#define VALUE 2\n")
    second = compile_c(src, compiler=compiler, cache_dir=tmp_path / "c")
    assert second != first
    assert "ret i32 2" in second.read_text()

    inner.write_text("#define VALUE 1\n")
    broken = Compiler(kind=compiler.kind, command=(str(tmp_path / "no-such-compiler"),),
                      version=compiler.version)
    assert compile_c(src, compiler=broken, cache_dir=tmp_path / "c") == first


def test_removed_header_is_a_compile_error_not_a_cache_hit(tmp_path: Path, compiler: Compiler) -> None:
    header = _write(tmp_path, "gone.h", "#define VALUE 1\n")
    src = _write(tmp_path, "g.c", '#include "gone.h"\nint k(void) { return VALUE; }\n')
    compile_c(src, compiler=compiler, cache_dir=tmp_path / "c")
    header.unlink()
    with pytest.raises(CompileError, match="gone.h"):
        compile_c(src, compiler=compiler, cache_dir=tmp_path / "c")


def test_cache_dir_from_environment(tmp_path: Path, compiler: Compiler, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMEX_CACHE_DIR", str(tmp_path / "envcache"))
    src = _write(tmp_path, "e.c", "int k(void) { return 1; }\n")
    assert compile_c(src, compiler=compiler).parent == tmp_path / "envcache"


def test_compile_error_carries_compiler_diagnostics(tmp_path: Path, compiler: Compiler) -> None:
    src = _write(tmp_path, "prog.c", "int main(void) {\n  int x = 0;\n  return y;\n}\n")
    with pytest.raises(CompileError) as info:
        compile_c(src, compiler=compiler, cache_dir=tmp_path / "c")
    message = str(info.value)
    assert "prog.c:3:10: error: use of undeclared identifier 'y'" in message
    assert "argument unused during compilation" not in message
    # a failed compile leaves nothing in the cache, not even a temp file
    assert list((tmp_path / "c").iterdir()) == []


def test_missing_source(tmp_path: Path, compiler: Compiler) -> None:
    with pytest.raises(CompileError, match="no such file"):
        compile_c(tmp_path / "absent.c", compiler=compiler, cache_dir=tmp_path / "c")


def test_last_optimisation_flag_wins(tmp_path: Path, compiler: Compiler) -> None:
    src = _write(tmp_path, "w.c", "int g(int x) {\n  int y = x;\n  return y + 1;\n}\n")
    ir = compile_c(src, ["-O2", "-O0"], compiler=compiler, cache_dir=tmp_path / "c").read_text()
    assert "alloca" in _function_body(ir, "g")
    assert "optnone" not in ir


def test_asserts_stay_at_O2_unless_the_user_defines_ndebug(tmp_path: Path) -> None:
    # zig cc defines NDEBUG in optimised builds; symex must not lose assert() bugs to that
    source = tmp_path / "a.c"
    source.write_text("#include <assert.h>\nint check(int x) { assert(x > 3); return x; }\n")
    kept = compile_c(source, ["-O2"], cache_dir=tmp_path / "cache").read_text()
    assert "__assert_fail" in kept
    dropped = compile_c(source, ["-O2", "-DNDEBUG"], cache_dir=tmp_path / "cache").read_text()
    assert "__assert_fail" not in dropped


def test_a_compiler_removed_after_it_was_found_is_not_used(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # a "system clang" that is zig's clang behind a script: found first, then uninstalled
    bindir = tmp_path / "bin"
    bindir.mkdir()
    clang = bindir / "clang"
    clang.write_text(f"#!/bin/sh\nexec {sys.executable} -m ziglang cc \"$@\"\n")
    clang.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("SYMEX_CC", raising=False)
    found = find_compiler()
    assert found.kind == "clang" and found.command == (str(clang),)
    clang.unlink()
    again = find_compiler()
    assert again.command != (str(clang),)


def _counting_compiler(tmp_path: Path, version: str) -> tuple[Path, Path]:
    """A "clang" that says ``version`` and counts each time it is asked."""
    asked = tmp_path / "asked"
    clang = tmp_path / "bin" / "clang"
    clang.parent.mkdir(exist_ok=True)
    clang.write_text(f"#!/bin/sh\necho x >> {asked}\necho '{version}'\n")
    clang.chmod(0o755)
    return clang, asked


def _found_in_new_process(clang: Path, cache: Path) -> str:
    """find_compiler's version in a fresh process (as each `symex run` is)."""
    import subprocess  # noqa: PLC0415
    done = subprocess.run([sys.executable, "-c", "from symex.ir.compile import find_compiler; "
                           "print(find_compiler().version)"], capture_output=True, text=True,
                          env={**os.environ, "SYMEX_CC": str(clang), "SYMEX_CACHE_DIR": str(cache)},
                          check=True, timeout=120)
    return done.stdout.strip()


def test_a_compilers_version_is_asked_once_until_it_changes(tmp_path: Path) -> None:
    clang, asked = _counting_compiler(tmp_path, "clang version 99.1.0 (a test)")
    cache = tmp_path / "cache"
    assert _found_in_new_process(clang, cache) == "clang version 99.1.0 (a test)"
    assert _found_in_new_process(clang, cache) == "clang version 99.1.0 (a test)"
    assert len(asked.read_text().splitlines()) == 1
    # an upgrade in place (a new file at the same path) is asked again
    clang.write_text(clang.read_text().replace("99.1.0", "99.2.0") + "# upgraded\n")
    assert _found_in_new_process(clang, cache) == "clang version 99.2.0 (a test)"
    assert len(asked.read_text().splitlines()) == 2


def _older_clang() -> str | None:
    """A clang on PATH older than the LLVM llvmlite reads IR with, if there is one."""
    from symex.ir.compile import clang_candidates  # noqa: PLC0415
    for candidate in clang_candidates():
        found = re.search(r"clang-(\d+)$", candidate)
        if found and int(found.group(1)) < llvm.llvm_version_info[0]:
            return candidate
    return None


def test_an_older_clangs_ir_is_read_through_its_bitcode(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    older = _older_clang()
    if older is None:
        pytest.skip(f"no clang-NN older than llvmlite's LLVM {llvm.llvm_version_info[0]} on PATH")
    import symex  # noqa: PLC0415
    # a weak function's address compared with null: clang-14 writes a constant icmp
    # expression, which LLVM 19 and later no longer parse as text
    source = _write(tmp_path, "weak.c", """
        extern int maybe(void) __attribute__((weak));
        int main(void) { return maybe != 0 ? maybe() : 7; }
    """)
    monkeypatch.setenv("SYMEX_CC", older)
    monkeypatch.setenv("SYMEX_CACHE_DIR", str(tmp_path / "cache"))
    result = symex.explore(symex.compile(source, libc="symex"))
    assert [t.exit_code for t in result.tests] == [7]


def test_an_older_clangs_ir_names_types_as_the_source_does(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading an older clang's bitcode must leave nothing behind in the process: musl's
    1,141 files built that way once renamed every later program's structs (%struct.stat.13),
    so a program compiled just after the library build had other IR, and another hash, than
    the same program in the next process (a recorded tree then never replays)."""
    older = _older_clang()
    if older is None:
        pytest.skip(f"no clang-NN older than llvmlite's LLVM {llvm.llvm_version_info[0]} on PATH")
    import symex  # noqa: PLC0415
    monkeypatch.setenv("SYMEX_CC", older)
    monkeypatch.setenv("SYMEX_CACHE_DIR", str(tmp_path / "cache"))
    pair = "struct pair { int left, right; };"
    # as the library build does: files compiled, not loaded
    compile_c(_write(tmp_path, "library.c", f"{pair} int sum(struct pair *p) {{ return p->left; }}"))
    source = _write(tmp_path, "main.c", f"""
        {pair}
        int main(void) {{ struct pair p = {{1, 2}}; return p.left + p.right; }}
    """)
    assert "%struct.pair = type { i32, i32 }" in symex.compile(source, libc="symex").ir_text
