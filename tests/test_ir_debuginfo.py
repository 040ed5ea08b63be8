"""Tests of symex.ir.debuginfo: source locations of real compiled C and hand-written metadata."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import llvmlite.binding as llvm
import pytest

from symex.ir.debuginfo import DebugInfo, SourceLocation, dbg_attachment, instruction_dbg_ids

HEADER = "static inline int twice(int v) {\n  return v * v + 3;\n}\n"

PROGRAM = """\
#include "inc.h"
static int helper(int v) { return v * v + 7; }
int work(int a) {
  int r;
  if (a > 10)
    r = a - 1;
  else
    r = a + 1;
  return helper(r) + twice(a);
}
int main(int argc, char **argv) {
  if (argc > 1)
    return work(argc);
  switch (argv[0][0]) {
  case 'a': return 4;
  case 'q': return 9;
  case 'z': return 11;
  }
  return 0;
}
"""
IF_LINE, CALL_LINE = 5, 9


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    directory = tmp_path_factory.mktemp("dbg")
    (directory / "inc.h").write_text(HEADER)
    (directory / "prog.c").write_text(PROGRAM)
    texts = {}
    for level in ("-O0", "-O2"):
        subprocess.run(
            [sys.executable, "-m", "ziglang", "cc", "-S", "-emit-llvm", "-g", level, "-fno-sanitize=all",
             "-target", "x86_64-linux-gnu", "prog.c", "-o", f"prog{level}.ll"],
            cwd=directory, check=True, capture_output=True,
        )
        texts[level] = (directory / f"prog{level}.ll").read_text()
    return directory, texts


def instructions(module: llvm.ModuleRef, name: str) -> list[llvm.ValueRef]:
    return [i for b in module.get_function(name).blocks for i in b.instructions]


def test_if_and_call_lines_at_O0(built: tuple[Path, dict[str, str]]) -> None:
    directory, texts = built
    text = texts["-O0"]
    module = llvm.parse_assembly(text)
    info = DebugInfo.parse(str(module))
    insts = instructions(module, "work")
    locations = info.instruction_locations("work")
    assert len(locations) == len(insts)
    source = str(directory / "prog.c")
    icmps = [loc for i, loc in zip(insts, locations) if i.opcode == "icmp"]
    calls = [loc for i, loc in zip(insts, locations) if i.opcode == "call"]
    assert [(loc.file, loc.line, loc.function) for loc in icmps] == [(source, IF_LINE, "work")]
    assert {(loc.file, loc.line, loc.function) for loc in calls} == {(source, CALL_LINE, "work")}
    assert all(loc.inlined_at is None for loc in icmps + calls)
    # `work` is the module's first function, where llvmlite's per-instruction text agrees with
    # the module's metadata numbering.
    assert next(iter(module.functions)).name == "work"
    via_text = [info.location(dbg_attachment(str(i))) for i in insts if i.opcode == "icmp"]
    assert via_text == icmps


def test_every_function_maps_instructions_one_to_one(built: tuple[Path, dict[str, str]]) -> None:
    _, texts = built
    for text in texts.values():
        module = llvm.parse_assembly(text)
        ids = instruction_dbg_ids(str(module))
        for function in module.functions:
            if function.is_declaration:
                assert function.name not in ids
                continue
            insts = instructions(module, function.name)
            assert len(ids[function.name]) == len(insts), function.name
            # `ret` always carries a location in -g builds; the last instruction is a terminator.
            assert ids[function.name][-1] is not None


def test_subprograms(built: tuple[Path, dict[str, str]]) -> None:
    directory, texts = built
    info = DebugInfo.parse(texts["-O0"])
    assert info.subprogram_file("work") == str(directory / "prog.c")
    assert info.subprogram_line("work") == 3
    assert info.subprogram_line("main") == 11
    assert info.subprogram_line("helper") == 2
    twice_file = info.subprogram_file("twice")
    assert twice_file is not None and os.path.samefile(twice_file, directory / "inc.h")
    assert info.subprogram_line("twice") == 1
    assert info.subprogram_file("no_such_function") is None


def test_inlined_call_has_inlined_at_at_O2(built: tuple[Path, dict[str, str]]) -> None:
    directory, texts = built
    module = llvm.parse_assembly(texts["-O2"])
    info = DebugInfo.parse(str(module))
    locations = [loc for loc in info.instruction_locations("work") if loc is not None]
    from_helper = [loc for loc in locations if loc.function == "helper"]
    assert from_helper, "helper should be inlined into work at -O2"
    for loc in from_helper:
        assert loc.line == 2
        assert loc.inlined_at is not None
        assert (loc.inlined_at.line, loc.inlined_at.function) == (CALL_LINE, "work")
        assert loc.inlined_at.file == str(directory / "prog.c")
    from_header = [loc for loc in locations if loc.function == "twice"]
    assert from_header and all(loc.file.endswith("inc.h") and loc.line == 2 for loc in from_header)
    # work itself is inlined into main: a doubly-inlined location chains two call sites.
    nested = [
        loc for loc in info.instruction_locations("main")
        if loc is not None and loc.function == "helper"
    ]
    assert nested
    assert nested[0].inlined_at is not None and nested[0].inlined_at.function == "work"
    outer = nested[0].inlined_at.inlined_at
    assert outer is not None and (outer.function, outer.line) == ("main", 13)


HAND_WRITTEN = r"""
define i32 @second(i32 %x) !dbg !20 {
entry:
  switch i32 %x, label %out [
    i32 1, label %one
  ], !dbg !24
one:
    #dbg_value(i32 %x, !9, !DIExpression(), !24)
  ret i32 1, !dbg !25
out:
  ret i32 0
}
!0 = !DIFile(filename: "a\22b.c", directory: "/src")
!1 = !DIFile(filename: "/abs/h.h", directory: "/ignored")
!2 = !DIFile(filename: "rel.c", directory: "")
!20 = distinct !DISubprogram(name: "second", scope: !0, file: !0, line: 40, spFlags: DISPFlagDefinition, unit: !99)
!21 = distinct !DILexicalBlock(scope: !20, file: !0, line: 41, column: 3)
!22 = !DILexicalBlockFile(scope: !21, file: !1, discriminator: 0)
!23 = !DISubprogram(name: "decl_only", scope: !2, file: !2, line: 7, spFlags: 0)
!24 = !DILocation(line: 42, column: 5, scope: !22)
!25 = !DILocation(line: 43, scope: !21)
!26 = distinct !DILocation(line: 1, column: 1, scope: !20, inlinedAt: !27)
!27 = distinct !DILocation(line: 2, column: 2, scope: !23)
"""


def test_hand_written_metadata() -> None:
    info = DebugInfo.parse(HAND_WRITTEN)
    assert info.location(24) == SourceLocation("/abs/h.h", 42, 5, "second", None)
    assert info.location(25) == SourceLocation('/src/a"b.c', 43, 0, "second", None)
    chained = info.location(26)
    assert chained is not None and chained.inlined_at == SourceLocation("rel.c", 2, 2, "decl_only", None)
    assert info.location(20) is None  # a subprogram is not a location
    assert info.location(999) is None
    assert info.subprogram_line("decl_only") == 7 and info.subprogram_file("decl_only") == "rel.c"
    # the multi-line switch is one instruction; #dbg_value records are not instructions
    assert instruction_dbg_ids(HAND_WRITTEN) == {"second": [24, 25, None]}
    assert [str(loc) if loc else None for loc in info.instruction_locations("second")] == [
        "/abs/h.h:42:5", '/src/a"b.c:43:0', None,
    ]


def test_dbg_attachment() -> None:
    assert dbg_attachment("  %5 = icmp sgt i32 %4, 3, !dbg !82") == 82
    assert dbg_attachment("  %8 = load i32, ptr %7, align 4, !dbg !93, !tbaa !73") == 93
    assert dbg_attachment("  store i32 %0, ptr %2, align 4") is None


def test_many_records_parse_quickly() -> None:
    lines = ['!0 = !DIFile(filename: "big.c", directory: "/d")',
             '!1 = distinct !DISubprogram(name: "f", scope: !0, file: !0, line: 1, spFlags: DISPFlagDefinition)']
    # a long lexical-block nesting, resolved by iteration rather than recursion
    for n in range(2, 20002):
        lines.append(f"!{n} = distinct !DILexicalBlock(scope: !{n - 1}, file: !0, line: {n}, column: 1)")
    lines.append("!30000 = !DILocation(line: 7, column: 9, scope: !20001)")
    info = DebugInfo.parse("\n".join(lines))
    assert info.location(30000) == SourceLocation("/d/big.c", 7, 9, "f", None)
