"""What a handler of an external function sees of the calling state (StateView): the caller's
variables by their C names, memory allocated, read, written and freed through the memory
model, C strings, the call stack, the path's constraints, new inputs, values fixed, forks
over values and errors: each method of the view, on a real run."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import symex
from symex import expr as E
from symex.core.interpreter.machine import StateView
from symex.core.memory.objects import ObjectKind
from symex.core.outcome import ErrorKind
from symex.ir.program import Access, ValueKind
from symex.solvers.base import Validity

INT = Access(ValueKind.INT, 4, 32)

PROGRAM = textwrap.dedent("""\
    #include <klee/klee.h>
    int threshold = 40;
    int inspect(int *seen, const char *word, int x);
    int pick(int c);
    void report(int code);
    int main(void) {
      int x;
      unsigned char c;
      klee_make_symbolic(&x, sizeof x, "x");
      klee_make_symbolic(&c, sizeof c, "c");
      int seen[2] = {7, 9};
      if (x > 10) {
        int got = inspect(seen, "hello", x);
        if (got != 49 || seen[0] != 5)
          return 100;
        if (c >= 3)
          return 99;
        return 10 + pick(c);
      }
      report(x);
      return 0;
    }
    """)


def test_a_handler_works_through_the_view(tmp_path: Path) -> None:
    source = tmp_path / "view.c"
    source.write_text(PROGRAM)
    observed: dict[str, Any] = {}

    def inspect(view: StateView, args: list[Any]) -> Any:
        threshold = view.variable("threshold")
        seen = view.variable("seen")
        assert threshold is not None and seen is not None
        assert seen == args[0]  # the local the program passes is the one found by name
        observed["threshold"] = view.read(threshold, INT)
        observed["seen"] = [view.read(seen + 4 * i, INT) for i in range(2)]
        observed["missing"] = view.variable("no_such_variable")
        observed["stack"] = view.call_stack
        observed["constraints"] = len(view.constraints)
        observed["word"] = view.read_c_string(args[1])
        observed["functions"] = {"main", "inspect"} <= set(view.program.functions)
        view.warn(f"inspected {observed['word'].decode()}")
        scratch = view.allocate(8, ObjectKind.HEAP, "scratch")
        view.write(scratch, INT, 1234)
        observed["scratch"] = view.read(scratch, INT)
        view.free(scratch)
        made = view.allocate(4, ObjectKind.HEAP, "made")
        view.make_symbolic(made, 4, "made")
        observed["made"] = view.read_bytes(made, 4)
        extra = view.fresh_value(2, "extra")
        view.assume(E.eq(extra, E.const(513, 16)))
        observed["extra"] = view.get_value(extra)
        observed["x"] = view.concretize(args[2], 32, "x seen by a handler")
        view.write_bytes(seen, (5).to_bytes(4, "little"))
        return observed["threshold"] + observed["seen"][1]

    def pick(view: StateView, args: list[Any]) -> Any:
        # c < 3 on this path: the argument takes each of 0, 1, 2, a path each (the others
        # run the call again with theirs fixed)
        choice = args[0]
        if type(choice) is int:
            return choice
        assert view.evaluate(E.ult(choice, E.const(3, 32))) is Validity.TRUE
        return view.fork_on_values(choice, 32, lambda state, value: [0, 1, 2])

    def report(view: StateView, args: list[Any]) -> None:
        view.fail(ErrorKind.USER, f"reported by a handler at {view.program_site()}")

    result = symex.explore(symex.compile(source),
                           externals={"inspect": inspect, "pick": pick, "report": report})
    assert observed["threshold"] == 40 and observed["seen"] == [7, 9]
    assert observed["missing"] is None
    function, file, line = observed["stack"][0]
    assert function == "main" and file.endswith("view.c") and line == 13
    assert observed["constraints"] >= 1  # x > 10, at least
    assert observed["word"] == b"hello" and observed["scratch"] == 1234
    assert observed["functions"] and "inspected hello" in result.messages
    assert all(isinstance(b, E.Expr) for b in observed["made"])  # each byte an input's
    assert observed["extra"] == 513 and observed["x"] > 10
    # the handler's write reached the program, its value came back, and pick forked 3 ways
    completed = sorted(t.exit_code for t in result.tests if t.error is None)
    assert completed == [10, 11, 12, 99]
    for test in result.tests:
        if test.exit_code is not None and 10 <= test.exit_code < 99:
            assert test.objects["c"][0] == test.exit_code - 10
            # the inputs the handler made are the test's, with the values the path fixed
            assert test.objects["extra"] == (513).to_bytes(2, "little")
            assert len(test.objects["made"]) == 4
            assert int.from_bytes(test.objects["x"], "little", signed=True) == observed["x"]
    (error,) = [t.error for t in result.tests if t.error is not None]
    assert error.kind is ErrorKind.USER and error.message == "reported by a handler at view.c:20"
