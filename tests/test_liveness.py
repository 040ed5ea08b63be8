"""Live registers, and states that wait in the searcher with only those (parked frames).

The analysis is checked on a hand-written function whose live sets follow from reading it;
the parking on programs whose register values must survive forks in the callee, in the
caller, across a loop and under every searcher order, with each path's output computed here
from its inputs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import symex
from symex.ir.liveness import Liveness
from symex.ir.program import Function
from symex import PathStatus

IR = """
define i32 @f(i32 %a, i32 %b) {
entry:
  %c = add i32 %a, 1
  %cond = icmp sgt i32 %b, 0
  br i1 %cond, label %then, label %done
then:
  %d = mul i32 %c, 2
  br label %done
done:
  %r = phi i32 [ %d, %then ], [ %b, %entry ]
  ret i32 %r
}

declare i32 @_setjmp(ptr)

define i32 @g(ptr %env, i32 %x) {
entry:
  %y = add i32 %x, 7
  %s = call i32 @_setjmp(ptr %env)
  %z = add i32 %y, %s
  ret i32 %z
}

define i32 @main() {
  %v = call i32 @f(i32 1, i32 2)
  ret i32 %v
}
"""


def _slots(fn: Function) -> dict[str, int]:
    """Register slot of every named value of ``fn`` (parameters, then instruction results)."""
    names = {"a": fn.params[0], "b": fn.params[1]} if fn.name == "f" else {}
    for block in fn.blocks:
        for ins in block.instructions:
            text = ins.text.strip()
            if text.startswith("%") and ins.dest >= 0:
                names[text[1:text.index(" ")]] = ins.dest
    return names


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> symex.Program:
    path = tmp_path_factory.mktemp("liveness") / "f.ll"
    path.write_text(IR)
    return symex.compile(path)


def test_live_registers_follow_the_reads_ahead(program: symex.Program) -> None:
    fn = program.functions["f"]
    live = Liveness(fn)
    s = _slots(fn)
    s["r"] = fn.blocks[2].instructions[0].operands[0]  # the phi: moves on the edges, no instruction
    entry, then, done = (b.index for b in fn.blocks)

    def names(block: int, pc: int) -> set[str]:
        return {name for name, slot in s.items() if slot in live.live_at(block, pc)}

    assert not live.keeps_all
    assert names(entry, 0) == {"a", "b"}          # both parameters are read ahead
    assert names(entry, 1) == {"b", "c"}          # %a's only read was %c
    # before the branch: its condition, %c for the then-block, %b as the phi's entry value
    assert names(entry, 2) == {"b", "c", "cond"}
    assert names(then, 0) == {"c"}
    # the phi is the move on each edge into %done: its result is all that is live there
    assert names(done, 0) == {"r"}
    assert names(done, 1) == set()                # after the return: nothing
    # constants (the literal 1 and 2) are never live: unparking takes them from the template
    assert all(fn.template[slot] is None for slot in live.live_at(entry, 0))


def test_a_function_calling_setjmp_keeps_every_register(program: symex.Program) -> None:
    # %y is not read on any control-flow path after the call... except when longjmp makes
    # the call return again, which the graph does not show: such frames are never parked
    assert Liveness(program.functions["g"]).keeps_all
    assert not Liveness(program.functions["main"]).keeps_all


PROGRAM = r"""
#include <klee/klee.h>
#include <stdio.h>

__attribute__((noinline)) static int step(int c, int k, int acc) {  /* forks, deep down */
  if (c > 'm') {
    printf("%d>", k);
    acc += c * k;
  } else {
    printf("%d<", k);
    acc -= c + k;
  }
  return acc;
}

__attribute__((noinline)) static int walk(const unsigned char *in, int n, int depth) {
  int acc = depth * 31 + 7, keep = acc ^ 0xabcd;   /* live across every call and fork */
  for (int i = 0; i < n; i++)
    acc = step(in[i], i + depth, acc) + (keep >> i);
  if (depth) {
    int below = walk(in, n, depth - 1);
    printf("|");
    return below ^ acc ^ keep;
  }
  return acc + keep;
}

int main(void) {
  unsigned char in[4];
  klee_make_symbolic(in, sizeof in, "in");
  printf(" %d\n", walk(in, 4, 1));
  return 0;
}
"""


def _walk(data: bytes, n: int, depth: int, out: list[str]) -> int:
    """walk() of PROGRAM, appending what it prints to ``out`` (32-bit ints, as in C)."""
    def wrap(v: int) -> int:
        return (v + 2**31) % 2**32 - 2**31

    acc = depth * 31 + 7
    keep = acc ^ 0xABCD
    for i in range(n):
        c, k = data[i], i + depth
        if c > ord("m"):
            out.append(f"{k}>")
            acc = wrap(acc + c * k)
        else:
            out.append(f"{k}<")
            acc = wrap(acc - (c + k))
        acc = wrap(acc + (keep >> i))
    if depth:
        below = _walk(data, n, depth - 1, out)
        out.append("|")
        return below ^ acc ^ keep
    return wrap(acc + keep)


@pytest.mark.parametrize("level", ["-O0", "-O2"])
@pytest.mark.parametrize("searcher", ["dfs", "bfs", "random-path"])
def test_states_resume_with_the_registers_they_parked(tmp_path: Path, level: str,
                                                      searcher: str) -> None:
    # bfs and random-path leave many states waiting, each parked at a different point, then
    # resume them in another order; at -O2 the values live in registers (not stack slots)
    # across the forks in mix(), in walk()'s loop and in its callers
    source = tmp_path / "walk.c"
    source.write_text(PROGRAM)
    result = symex.explore(symex.compile(source, [level]), searcher=searcher, max_time=120)
    # one path per outcome of the four comparisons (both levels compare the same bytes)
    assert result.paths.completed == 16 and not result.errors and result.paths.partial == 0
    for test in result.tests:
        assert test.status is PathStatus.COMPLETED
        data = test.objects["in"]
        printed: list[str] = []
        value = _walk(data, 4, 1, printed)
        assert test.stdout.decode() == "".join(printed) + f" {value}\n", data.hex()
