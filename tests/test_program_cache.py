"""A loaded program is kept for the next process that loads the same module: that process
explores it without parsing it with LLVM (llvmlite is not even imported) and finds the same
tests; a module whose text changed is loaded afresh; a damaged, musl-linked or large
program is never read back (symex.ir.program_cache)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import symex
from symex.ir.program_cache import LARGEST_KEPT, cached_program, keep_program

ROOT = Path(__file__).parents[1]

#: explores the program SOURCE names; prints its tests' exit codes and whether LLVM was loaded
EXPLORE = """
import json, sys
import symex
program = symex.compile(sys.argv[1])
result = symex.explore(program, searcher="dfs")
print(json.dumps({"exits": sorted(t.exit_code for t in result.tests),
                  "llvm": "llvmlite.binding" in sys.modules}))
"""


def _explore_in_a_new_process(source: Path) -> dict[str, object]:
    proc = subprocess.run([sys.executable, "-c", EXPLORE, str(source)], capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout.splitlines()[-1])
    return result


def test_the_next_process_explores_the_kept_program_without_llvm(tmp_path: Path) -> None:
    source = tmp_path / "get_sign.c"
    source.write_text((ROOT / "examples" / "get_sign.c").read_text())
    first = _explore_in_a_new_process(source)
    second = _explore_in_a_new_process(source)
    # get_sign's three signs: exit codes 0, 1 and 255 (its -1)
    assert first["exits"] == second["exits"] == [0, 1, 255]
    assert first["llvm"] is True and second["llvm"] is False
    # the program changed: its new text is loaded, not the kept program
    source.write_text(source.read_text().replace("return -1;", "return 7;"))
    third = _explore_in_a_new_process(source)
    assert third["exits"] == [0, 1, 7] and third["llvm"] is True


def test_a_kept_program_reads_back_whole_and_a_damaged_one_not_at_all(tmp_path: Path) -> None:
    program = symex.compile(ROOT / "examples" / "get_sign.c")
    assert keep_program(tmp_path, "k", program)
    again = cached_program(tmp_path, "k")
    assert again is not None and again is not program
    assert again.ir_text == program.ir_text and set(again.functions) == set(program.functions)
    kept = next((tmp_path / "programs").iterdir())
    kept.write_bytes(kept.read_bytes()[:-40])
    assert cached_program(tmp_path, "k") is None
    kept.write_bytes(b"not a program")
    assert cached_program(tmp_path, "k") is None
    assert cached_program(tmp_path, "never kept") is None


def test_musl_linked_and_large_programs_are_not_kept(tmp_path: Path) -> None:
    program = symex.compile(ROOT / "examples" / "get_sign.c")
    program.library = "musl"
    assert not keep_program(tmp_path, "musl", program)
    program.library = "symex"
    program.ir_text += ";" * LARGEST_KEPT
    assert not keep_program(tmp_path, "large", program)
    assert not (tmp_path / "programs").exists() or not any((tmp_path / "programs").iterdir())
