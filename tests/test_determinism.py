"""Same program, same inputs, same bytes: two processes write identical test files.

Replay (memo/) and parallel workers rebuild states by re-executing decisions, so a test's
bytes must not depend on the process that computed them. z3 used to answer one query with
different models in different processes (the order in which Python freed terms changed z3's
term numbering, and the counter-example cache handed constraints over in ``id()`` order);
this program showed it within 100,000 instructions.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PARSER = ROOT / "benchmarks" / "queries" / "programs" / "expr_parser.c"


def run_into(directory: Path, solver: str) -> dict[str, bytes]:
    """``symex run`` in a fresh process; the test files it wrote, by name."""
    proc = subprocess.run(
        [sys.executable, "-m", "symex.cli", "run", "--quiet", "--solver", solver,
         "--max-instructions", "100000", "--output-dir", str(directory), str(PARSER)],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return {p.name: p.read_bytes() for p in sorted(directory.glob("*.ktest"))}


@pytest.mark.slow
@pytest.mark.parametrize("solver", ["z3", "bitwuzla", "cvc5"])
def test_two_processes_write_identical_tests(tmp_path: Path, solver: str) -> None:
    first = run_into(tmp_path / "first", solver)
    second = run_into(tmp_path / "second", solver)
    # a few hundred paths, each ending with inputs the solver chose
    assert len(first) > 300
    assert first.keys() == second.keys()
    differing = [name for name in first if first[name] != second[name]]
    assert not differing, f"{len(differing)} tests differ, first {differing[0]}"


_IR_DIGEST = """
import hashlib, sys
import symex
program = symex.compile(sys.argv[1], libc="musl")
print(hashlib.sha256(program.ir_text.encode()).hexdigest())
"""


def _ir_digest(program: Path, hash_seed: str) -> str:
    proc = subprocess.run([sys.executable, "-c", _IR_DIGEST, str(program)],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONHASHSEED": hash_seed})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


@pytest.mark.slow
def test_a_program_on_musl_loads_to_the_same_ir_in_every_process() -> None:
    """A tree recorded by one process is replayed by another only if both load the same IR
    (the tree names it by a hash of it). musl's files were linked in an order that followed
    each process's string hashes: every replay of a coreutils recording said the program
    had changed, and some diverged (globals at other addresses)."""
    server = ROOT / "tests" / "programs" / "network" / "mini_memcached.c"
    first = _ir_digest(server, hash_seed="1")
    assert _ir_digest(server, hash_seed="2") == first
    assert _ir_digest(server, hash_seed="3") == first
