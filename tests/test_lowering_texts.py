"""Each lowered instruction keeps its text (error reports, unsupported-instruction messages,
switch cases), read from one printout of the module rather than by printing instructions one
by one (which numbers the whole module each time: loading toybox linked with musl took
minutes). The texts must be those LLVM prints for each instruction."""

from __future__ import annotations

import re
from pathlib import Path

import llvmlite.binding as llvm

import symex
from symex.ir.lower import _function_bodies, _instruction_texts
from symex.ir.lower_instructions import _clean_text

PROGRAM = r"""
#include <stdio.h>
#include <klee/klee.h>

static int classify(int c) {
    switch (c) {
    case 'a': case 'e': case 'i': case 'o': case 'u':
        return 1;
    case ' ': case '\t':
        return 2;
    default:
        return c > 127 ? 3 : 0;
    }
}

int main(void) {
    char s[4];
    int counts[4] = {0};
    klee_make_symbolic(s, sizeof s, "s");
    for (int i = 0; i < 4; i++)
        counts[classify(s[i])]++;
    printf("%d %d\n", counts[1], counts[2]);
    return counts[3];
}
"""


def _attributes_unnumbered(text: str) -> str:
    # attribute group numbers differ between a module's printout and one instruction's
    return re.sub(r"#\d+", "#", text)


def test_texts_are_the_instructions_as_printed(tmp_path: Path) -> None:
    source = tmp_path / "vowels.c"
    source.write_text(PROGRAM)
    program = symex.compile(source)
    module = llvm.parse_assembly(program.ir_text)
    bodies = _function_bodies(str(module))
    for function in module.functions:
        if function.is_declaration:
            continue
        printed = _instruction_texts(bodies[function.name])
        alone = [str(ins) for block in function.blocks for ins in block.instructions]
        assert [_attributes_unnumbered(_clean_text(t)) for t in printed] == \
            [_attributes_unnumbered(_clean_text(t)) for t in alone]
    # the switch kept its case lines: the lowered switch has all seven cases
    (switch,) = [ins for block in program.functions["classify"].blocks for ins in block.instructions
                 if ins.text.startswith("switch")]
    default, cases = switch.aux
    assert sorted(value for value, _ in cases) == sorted(map(ord, "aeiou \t"))


def test_the_program_explores_as_before(tmp_path: Path) -> None:
    source = tmp_path / "vowels.c"
    source.write_text(PROGRAM)
    result = symex.explore(symex.compile(source), max_time=60)
    # each of the 4 bytes is a vowel, a blank, above 127 (as a signed char: never) or other
    assert result.paths.errors == 0 and result.paths.partial == 0
    assert {t.exit_code for t in result.tests} == {0}
