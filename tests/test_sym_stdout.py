"""``--sym-stdout`` (env/posix.py): standard output becomes KLEE's symbolic file of 1024 bytes,
with the objects ``stdout`` and ``stdout-stat`` after stdin's, while the path's output still
holds what the program wrote.

The program below reports on standard error what it sees of descriptor 1; the expected values
come from KLEE's model: a regular file of 1024 bytes that is seekable, whose offset moves by
every write's full count (bytes past the end are dropped, the count is still returned).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import symex
from symex.core.outcome import PathStatus
from symex.output.ktest import read_ktest
from symex.symargs import SymStdout

SOURCE = r"""
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void) {
  char c;
  if (read(0, &c, 1) != 1)
    return 3;
  if (c == 'x')
    write(1, "yes\n", 4);
  else
    write(1, "no\n", 3);
  write(1, &c, 1);
  struct stat st;
  int stat_ok = fstat(1, &st) == 0;
  long where = (long)lseek(1, 0, SEEK_CUR);
  static char big[2000];
  memset(big, '.', sizeof big);
  long wrote = (long)write(1, big, sizeof big);
  long after = (long)lseek(1, 0, SEEK_CUR);
  fprintf(stderr, "stat %d reg %d size %ld at %ld wrote %ld then %ld\n", stat_ok,
          S_ISREG(st.st_mode) ? 1 : 0, (long)st.st_size, where, wrote, after);
  return 0;
}
"""


def compile_program(tmp_path: Path) -> Path:
    path = tmp_path / "echo_stdout.c"
    path.write_text(textwrap.dedent(SOURCE))
    return path


def test_sym_stdout_makes_klee_objects_and_keeps_the_output(tmp_path: Path) -> None:
    program = symex.compile(compile_program(tmp_path))
    result = symex.explore(program, sym_stdin=1, sym_args=[SymStdout()], searcher="dfs")
    # one branch on the byte: 'x' or not
    assert result.paths.completed == 2 and len(result.tests) == 2
    for test in result.tests:
        assert test.status is PathStatus.COMPLETED and test.exit_code == 0
        assert [(name, len(data)) for name, data in test.objects.items()] == \
            [("stdin", 1), ("stdin-stat", 144), ("stdout", 1024), ("stdout-stat", 144)]
        c = test.objects["stdin"]
        head = b"yes\n" if c == b"x" else b"no\n"
        # the path's output is every byte written, the 2000 past the file's end too
        assert test.stdout == head + c + b"." * 2000
        at = len(head) + 1
        assert test.stderr.decode() == \
            f"stat 1 reg 1 size 1024 at {at} wrote 2000 then {at + 2000}\n"
    assert sorted(t.objects["stdin"] == b"x" for t in result.tests) == [False, True]


def test_without_sym_stdout_standard_output_is_a_pipe(tmp_path: Path) -> None:
    program = symex.compile(compile_program(tmp_path))
    result = symex.explore(program, sym_stdin=1, searcher="dfs")
    assert len(result.tests) == 2
    for test in result.tests:
        assert list(test.objects) == ["stdin", "stdin-stat"]
        head = b"yes\n" if test.objects["stdin"] == b"x" else b"no\n"
        assert test.stdout == head + test.objects["stdin"] + b"." * 2000
        # lseek on a pipe fails (-1, ESPIPE); fstat says FIFO, size 0
        assert test.stderr == b"stat 1 reg 0 size 0 at -1 wrote 2000 then -1\n"


def test_sym_stdout_on_the_command_line_writes_the_objects_in_klee_order(tmp_path: Path) -> None:
    source = compile_program(tmp_path)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "symex.cli", "run", "-q", "--output-dir",
                           str(out), "--sym-stdout", str(source), "--sym-arg", "2",
                           "--sym-stdin", "1"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    tests = [read_ktest(p) for p in sorted(out.glob("*.ktest"))]
    assert len(tests) == 2
    for ktest in tests:
        assert [(o.name, len(o.data)) for o in ktest.objects] == \
            [("arg00", 3), ("stdin", 1), ("stdin-stat", 144), ("stdout", 1024),
             ("stdout-stat", 144)]
