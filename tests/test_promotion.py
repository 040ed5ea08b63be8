"""Locals whose address never escapes live in registers (ir/promotion.py): which allocas are
promoted, and that promoting them changes nothing a user sees but the speed: the same
tests, paths, outputs, errors, instruction counts and coverage as with every local in memory."""

from __future__ import annotations

from pathlib import Path

import pytest

import symex
from symex.ir.program import Opcode
from symex.ir.promotion import ENABLE_VARIABLE
from c_programs import write

LOCALS = r"""
#include <klee/klee.h>
#include <setjmp.h>
#include <string.h>
static void fill(int *p) { *p = 7; }
union word { int i; unsigned char c[4]; };
int locals(int parameter) {
  int plain = parameter + 1;          /* promoted, as is the parameter's own slot */
  long wide = plain * 3L;             /* promoted */
  char *text = "abc";                 /* a pointer variable: promoted */
  int taken;                          /* its address goes to a call: memory */
  fill(&taken);
  int array[3] = {1, 2, 3};           /* an array: memory */
  union word u; u.i = 0x01020304;     /* read as bytes too: memory */
  volatile int v = 5;                 /* volatile: memory */
  int *alias = &plain;                /* plain's address is stored: plain stays in memory;
                                         alias itself is promoted */
  return plain + (int)wide + text[1] + taken + array[parameter & 1] + u.c[0] + v + *alias;
}
int jumps(int parameter) {
  jmp_buf env;
  int counted = parameter;            /* a function calling setjmp keeps every local in memory */
  if (setjmp(env) == 0) longjmp(env, 1);
  return counted;
}
int main(void) { return locals(2) + jumps(3); }
"""


def promoted_locals(program: symex.Program, function: str) -> list[bool]:
    """For each alloca of ``function``, in the order clang emits them (the order of the
    declarations): promoted (now a copy) or not."""
    return [ins.opcode is Opcode.COPY for block in program.functions[function].blocks
            for ins in block.instructions if " alloca " in ins.text]


#: locals()'s variables in declaration order, and whether each can live in a register
LOCALS_PROMOTED = {"parameter": True, "plain": False, "wide": True, "text": True, "taken": False,
                   "array": False, "u": False, "v": False, "alias": True}
#: 3 + 9 + 'b' + 7 + array[0] + 4 + 5 + 3 from locals(2), and 3 from jumps(3)
EXIT_CODE = 3 + 9 + 98 + 7 + 1 + 4 + 5 + 3 + 3


def test_only_locals_nobody_else_can_see_are_promoted(tmp_path: Path) -> None:
    program = symex.compile(write(tmp_path, "locals.c", LOCALS))
    assert promoted_locals(program, "locals") == list(LOCALS_PROMOTED.values())
    assert promoted_locals(program, "jumps") == [False, False, False]
    assert [t.exit_code for t in symex.explore(program).tests] == [EXIT_CODE]


def test_turned_off_every_local_stays_in_memory(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENABLE_VARIABLE, "0")
    program = symex.compile(write(tmp_path, "locals.c", LOCALS))
    assert not any(promoted_locals(program, "locals"))
    assert [t.exit_code for t in symex.explore(program).tests] == [EXIT_CODE]


SYMBOLIC_LOCALS = r"""
#include <klee/klee.h>
#include <stdio.h>
static int classify(int c, int depth) {     /* c and depth live in registers */
  int kind = 0;
  if (c >= 'a' && c <= 'z') kind = 1;
  else if (c >= '0' && c <= '9') kind = 2;
  if (depth > 0 && kind == 0) return classify(c + 1, depth - 1);
  return kind * 10 + depth;
}
int main(void) {
  unsigned char in[3];
  klee_make_symbolic(in, sizeof in, "in");
  int total = 0;
  for (int i = 0; i < 3; i++) {
    short s = (short)(in[i] * 3);           /* a symbolic value kept in a promoted local */
    total += classify(in[i], i) + (s > 300);
  }
  int bad = 10 / (total - 11);              /* may divide by zero: an error path */
  printf("%d %d\n", total, bad);
  return total;
}
"""


def results_both_ways(monkeypatch: pytest.MonkeyPatch, source: Path,
                      **options: object) -> list[symex.Result]:
    results = []
    for enabled in ("0", "1"):
        monkeypatch.setenv(ENABLE_VARIABLE, enabled)
        results.append(symex.explore(symex.compile(source), **options))
    return results


@pytest.mark.parametrize("name, options", [
    ("symbolic_locals", {"emit_all_errors": True}),
    ("regexp", {}),
])
def test_promoting_changes_nothing_but_the_speed(name: str, options: dict[str, object],
                                                 tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    source = write(tmp_path, "symbolic_locals.c", SYMBOLIC_LOCALS) if name == "symbolic_locals" \
        else Path(__file__).parent / "programs" / "regexp.c"
    memory, registers = results_both_ways(monkeypatch, source, **options)
    assert memory.paths.errors > 0 or name == "regexp"

    # the inputs may differ: the solver is asked the same questions in other words (a value
    # kept whole rather than its bytes concatenated again), and answers with other models
    def seen(result: symex.Result) -> list[tuple[object, ...]]:
        return [(t.status, t.exit_code, t.path, t.stdout, t.instructions,
                 t.error.message if t.error else None) for t in result.tests]
    assert seen(registers) == seen(memory)
    assert registers.statistics.instructions == memory.statistics.instructions
    assert registers.coverage.covered_lines == memory.coverage.covered_lines
    assert registers.coverage.covered_branches == memory.coverage.covered_branches
