"""Path parity: symex explores each feasible path of a program exactly once.

For small programs whose inputs are one to three bytes, the truth is computed without symex:
the program is built natively by the compiler symex uses, with the flags it uses, and with
``-fsanitize-coverage=bb,trace-pc-guard``, so every run reports the sequence of basic blocks
it entered (its path: a switch's cases that share a target are one path, as symex forks once
per target), and run on every possible input (``programs/parity/trace_driver.c``). symex's
library functions the program calls (``runtime/libc/string.c``, ``ctype.c``) are built the
same way and linked in, so paths through them count as they do under symex. Then:

- symex completes as many paths as there are distinct native paths, and
- the tests symex writes, run natively, take pairwise different paths that are exactly
  the native ones (none missing, none twice, none infeasible).

This is how the difference with KLEE on its tutorial's Regexp.c was settled (docs/benchmarks.md,
"KLEE parity"): on the same IR, symex's 6,012 paths are the 6,012 the exhaustive enumeration
finds.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import symex
from symex.core.outcome import PathStatus
from symex.ir.compile import _final_flags, find_compiler
from symex.ir.link import RUNTIME_FLAGS

PARITY = Path(__file__).parent / "programs" / "parity"
PROGRAMS = Path(__file__).parent / "programs"
LIBRARY = Path(symex.__file__).parent / "runtime" / "libc"
TRACE = "-fsanitize-coverage=bb,trace-pc-guard"


def _native_flags(flags: list[str]) -> list[str]:
    """symex's compile flags for these, producing an object file instead of IR text."""
    compiler = find_compiler()
    return [f for f in _final_flags(compiler, flags) if f not in ("-S", "-emit-llvm")]


def build_tracer(source: Path, directory: Path, flags: list[str] = ()) -> Path:
    """The trace driver linked with ``source`` (main renamed) and symex's string and ctype
    functions, all but the driver instrumented for their paths."""
    command = list(find_compiler().command)
    objects = []

    def compile_object(path: Path, extra: list[str], name: str) -> None:
        target = directory / f"{name}.o"
        done = subprocess.run([*command, *_native_flags(extra), "-c", str(path), "-o", str(target)],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        objects.append(target)

    compile_object(source, [*flags, TRACE, "-Dmain=parity_main"], "program")
    for library in ("string.c", "ctype.c"):
        compile_object(LIBRARY / library, [*RUNTIME_FLAGS, TRACE], library[:-2])
    compile_object(PARITY / "trace_driver.c", [], "driver")
    executable = directory / "tracer"
    done = subprocess.run([*command, *[str(o) for o in objects], "-o", str(executable)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return executable


def native_paths(tracer: Path, input_bytes: int, classes: bytes | None = None) -> set[str]:
    """The distinct paths of every input of ``input_bytes`` bytes (made of ``classes``'
    bytes only, when given)."""
    how = ["enumerate", str(input_bytes)] if classes is None else \
        ["classes", str(input_bytes), classes.hex()]
    done = subprocess.run([str(tracer), *how], capture_output=True, text=True, timeout=600,
                          check=True)
    return set(done.stdout.split())


def paths_of_tests(tracer: Path, result: symex.Result) -> list[str]:
    """The native path of each of symex's tests (its objects' bytes, in order)."""
    lines = "".join(b"".join(t.objects.values()).hex() + "\n" for t in result.tests)
    done = subprocess.run([str(tracer), "replay"], input=lines, capture_output=True, text=True,
                          timeout=300, check=True)
    return done.stdout.split()


CASES = [
    # (program, compile flags, bytes of input)
    ("loops.c", [], 2),
    ("switch.c", [], 1),
    ("arrays.c", [], 2),
    ("strings.c", [], 2),
    ("assume.c", [], 2),
    ("calls.c", [], 2),
    ("regexp.c", ["-DSIZE=3", "-DASSUME_TERMINATED"], 3),
    ("regexp.c", ["-DSIZE=3", "-DASSUME_TERMINATED", "-DEND_OF_PATTERN=0"], 3),
]


@pytest.mark.parametrize("name, flags, input_bytes", CASES,
                         ids=[f"{c[0]}{''.join(c[1][2:])}" for c in CASES])
def test_symex_explores_each_feasible_path_exactly_once(name: str, flags: list[str],
                                                        input_bytes: int, tmp_path: Path) -> None:
    source = PARITY / name if (PARITY / name).exists() else PROGRAMS / name
    tracer = build_tracer(source, tmp_path, flags)
    truth = native_paths(tracer, input_bytes)
    result = symex.explore(symex.compile(source, flags=flags))
    assert all(t.status is PathStatus.COMPLETED for t in result.tests), \
        [(t.status, t.reason) for t in result.tests if t.status is not PathStatus.COMPLETED]
    assert sum(len(v) for v in result.tests[0].objects.values()) == input_bytes
    assert len(result.tests) == len(truth)
    replayed = paths_of_tests(tracer, result)
    assert "0" * 16 not in replayed  # every test satisfies the program's assumptions
    assert len(set(replayed)) == len(replayed)
    assert set(replayed) == truth


@pytest.mark.slow
def test_klee_tutorial_regexp_has_exactly_the_paths_symex_explores(tmp_path: Path) -> None:
    """KLEE's tutorial matcher (-DEND_OF_PATTERN=0), 7-byte pattern, last byte NUL: KLEE 3.2
    completes 5,895 paths on it; symex 6,012. The matcher compares pattern bytes only for
    equality with '\\0', '^', '$', '*', '.' and the text's letters, so one byte per class
    (those nine and one other) gives every path: 10^6 native runs."""
    flags = ["-DASSUME_TERMINATED", "-DEND_OF_PATTERN=0"]
    source = PROGRAMS / "regexp.c"
    tracer = build_tracer(source, tmp_path, flags)
    truth = native_paths(tracer, 6, b"\0^$*.helox")
    assert len(truth) == 6012
    result = symex.explore(symex.compile(source, flags=flags))
    assert len(result.tests) == 6012
    assert all(t.status is PathStatus.COMPLETED for t in result.tests)
    replayed = paths_of_tests(tracer, result)
    assert len(set(replayed)) == 6012 and set(replayed) == truth
