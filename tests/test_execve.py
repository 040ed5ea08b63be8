"""execve of a program the run names (issue 44): the child goes on as that program in the
same path, its output read by the parent through a pipe, the same as natively; a program
nobody named fails with ENOENT, counted; ``--program NAME=PATH`` on the command line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import symex
from symex.core.shortfalls import ShortfallKind
from symex.errors import ConfigError
from symex.output.ktest import KTest, KTestObject, write_ktest
from symex.replay import build_native

PROGRAMS = Path(__file__).parent / "programs"
PARENT, SHOUT = PROGRAMS / "exec_parent.c", PROGRAMS / "exec_shout.c"


def test_a_child_runs_the_named_program_and_the_parent_reads_its_output(tmp_path: Path) -> None:
    program = symex.compile(PARENT, programs={"shout": SHOUT})
    assert program.library == "musl"  # execvp: musl's, searching PATH's directories
    result = symex.explore(program)
    assert all(t.status.value == "completed" for t in result.tests)
    outputs = {t.objects["word"]: (t.exit_code, t.stdout) for t in result.tests}
    # the child's strcmp forked the path: "y" and every other word
    assert outputs[b"y\0\0"] == (10, b"child said [YES\n], status 4\n")
    others = [out for word, out in outputs.items() if word[:2] not in (b"y\0", b"y")]
    assert others and all(out == (0, b"child said [NO\n], status 4\n") for out in others)
    assert not [s for s in result.shortfalls if s.kind is ShortfallKind.UNKNOWN_PROGRAM]
    # the named program's lines count, covered and in the total (its renamed functions keep
    # their debug information)
    total = {line for file, line in result.coverage.total_lines if file.endswith("exec_shout.c")}
    covered = {line for file, line in result.coverage.covered_lines if file.endswith("exec_shout.c")}
    assert {9, 10, 11, 12} <= total and {9, 11, 12} <= covered and 10 not in covered
    # natively, with shout where PATH says, each test prints the same
    parent = build_native(PARENT, out_dir=tmp_path / "parent")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shutil.copy(build_native(SHOUT, out_dir=tmp_path / "shout"), bin_dir / "shout")
    for word, (code, stdout) in outputs.items():
        test = tmp_path / f"{word.hex()}.ktest"
        write_ktest(test, KTest(args=[], objects=[KTestObject("word", word)]))
        ran = subprocess.run([str(parent)], capture_output=True, timeout=60,
                             env={"PATH": str(bin_dir), "KTEST_FILE": str(test)})
        assert (ran.returncode, ran.stdout) == (code, stdout), ran.stderr


@pytest.mark.parametrize("libc", ["symex", "musl"])
def test_execve_replaces_the_image_and_keeps_pid_and_descriptors(tmp_path: Path, libc: str) -> None:
    """Without fork: the process becomes the other program (fresh globals, the arguments
    and environment given, the same pid, its descriptors open), and its exit status is the
    path's."""
    source = tmp_path / "becomes.c"
    source.write_text(r'''
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
int counter = 5;
int main(void) {
  counter = 9;
  int fd = open("note", O_WRONLY | O_CREAT, 0600);
  char pid[16];
  snprintf(pid, sizeof pid, "%d", (int)getpid());
  char *args[] = {"/bin/other", "two words", pid, NULL};
  char *env[] = {"A=1", "B=2", NULL};
  fflush(stdout);
  execve("/bin/other", args, env);
  return 99;  /* not reached */
}
''')
    other = tmp_path / "other.c"
    other.write_text(r'''
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int counter = 5;
int main(int argc, char **argv, char **envp) {
  int envs = 0;
  while (envp[envs]) envs++;
  printf("%d [%s] [%s] same pid %d, counter %d, env %d %s\n", argc, argv[0], argv[1],
         atoi(argv[2]) == (int)getpid(), counter, envs, getenv("B"));
  printf("note open: %d\n", write(3, "x", 1) == 1);
  return 7;
}
''')
    program = symex.compile(source, programs={"/bin/other": other}, libc=libc)
    result = symex.explore(program)
    [test] = result.tests
    assert (test.status.value, test.exit_code) == ("completed", 7)
    assert test.stdout == (b"3 [/bin/other] [two words] same pid 1, counter 5, env 2 2\n"
                           b"note open: 1\n")


def test_an_unnamed_program_fails_with_enoent_and_is_counted(tmp_path: Path) -> None:
    source = tmp_path / "runs.c"
    source.write_text(r'''
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
int main(void) {
  char *args[] = {"diff", NULL};
  int got = execve("/usr/bin/diff", args, args + 1);
  int enoent = errno == ENOENT;
  int again = execve("/usr/bin/diff", args, args + 1);
  printf("%d %d %d\n", got, enoent, again);
  return 0;
}
''')
    program = symex.compile(source, programs={"shout": SHOUT})
    result = symex.explore(program)
    [test] = result.tests
    assert test.stdout == b"-1 1 -1\n"
    unknown = [s for s in result.shortfalls if s.kind is ShortfallKind.UNKNOWN_PROGRAM]
    assert sorted((s.what, s.count, s.site) for s in unknown) == [
        ("/usr/bin/diff", 1, "runs.c:7"), ("/usr/bin/diff", 1, "runs.c:9")]
    assert "--program NAME=PATH" in unknown[0].describe()


def test_a_program_name_must_be_a_command_or_a_path() -> None:
    with pytest.raises(ConfigError, match="NAME is a command"):
        symex.compile(PARENT, programs={"bin/": SHOUT})


def test_symex_run_takes_program_options(tmp_path: Path) -> None:
    out = tmp_path / "out"
    ran = subprocess.run([sys.executable, "-m", "symex.cli", "run", "--output-dir", str(out),
                          "--program", f"shout={SHOUT}", str(PARENT)],
                         capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stderr
    assert "4 completed" in ran.stdout
    assert "shout" in (out / "assembly.ll").read_text()
    bad = subprocess.run([sys.executable, "-m", "symex.cli", "run", "--program", "shout",
                          str(PARENT)], capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and "NAME=PATH" in bad.stderr


def test_without_programs_named_the_module_is_the_programs_own() -> None:
    program = symex.compile(SHOUT)
    assert program.exec_entries == {}
    assert os.path.basename(program.path) == "exec_shout.c"


SPAWNS = r'''
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
int main(void) {
  int status = system("echo hi");
  printf("system: %d exited %d\n", WIFEXITED(status), WEXITSTATUS(status));
  fflush(stdout);
  FILE *p = popen("say two", "r");
  char line[64] = {0};
  if (p && fgets(line, sizeof line, p)) printf("popen read: %s", line);
  if (p) printf("pclose: %d\n", WEXITSTATUS(pclose(p)));
  return 0;
}
'''


def test_system_and_popen_run_the_named_shell(tmp_path: Path) -> None:
    """musl's system and popen spawn /bin/sh -c COMMAND (posix_spawn, made of fork and
    execve under symex): with a shell named, it runs, its output read through popen's pipe
    and its status returned; without, the child exits 127 as a shell that cannot be found."""
    source = tmp_path / "spawns.c"
    source.write_text(SPAWNS)
    program = symex.compile(source, programs={"/bin/sh": PROGRAMS / "exec_fake_sh.c"})
    [test] = symex.explore(program).tests
    assert (test.status.value, test.exit_code) == ("completed", 0), test.reason
    assert test.stdout == (b"sh [-c] [echo hi]\nsystem: 1 exited 3\n"
                           b"popen read: sh [-c] [say two]\npclose: 3\n")
    result = symex.explore(symex.compile(source))
    [test] = result.tests
    assert test.stdout == b"system: 1 exited 127\npclose: 127\n"
    assert sum(s.count for s in result.shortfalls if s.kind is ShortfallKind.UNKNOWN_PROGRAM) == 2
