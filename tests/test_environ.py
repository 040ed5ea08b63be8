"""The program's environment (explore(environ=...), symex run --environ FILE, KLEE's
-environ): envp, environ and getenv see the variables, with symex's library and with musl;
without them the environment is empty."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import symex
from symex.errors import ConfigError

SOURCE = r"""
#include <stdio.h>
#include <stdlib.h>
extern char **environ;
int main(int argc, char **argv, char **envp) {
    const char *home = getenv("HOME"), *lang = getenv("LANG"), *partial = getenv("HOM");
    int count = 0;
    for (char **e = envp; *e; e++)
        count++;
    printf("%s %s %s %d %d\n", home ? home : "-", lang ? lang : "-", partial ? partial : "-", count,
           environ == envp);
    return count;
}
"""


@pytest.fixture()
def program_file(tmp_path: Path) -> Path:
    path = tmp_path / "env.c"
    path.write_text(SOURCE)
    return path


@pytest.mark.parametrize("libc", ["symex", "musl"])
def test_getenv_envp_and_environ_see_the_variables(program_file: Path, libc: str) -> None:
    program = symex.compile(program_file, libc=libc)
    given = symex.explore(program, environ=["HOME=/home/tester", "LANG=C.UTF-8", "EMPTY="])
    # HOM is a prefix of HOME, not a variable; three entries; environ is envp
    assert [t.stdout for t in given.tests] == [b"/home/tester C.UTF-8 - 3 1\n"]
    empty = symex.explore(program)
    assert [t.stdout for t in empty.tests] == [b"- - - 0 1\n"]


def test_the_command_line_reads_an_environ_file(program_file: Path, tmp_path: Path) -> None:
    (tmp_path / "env.txt").write_text("# for the test\nHOME=/root\n\nLANG=C\n")
    proc = subprocess.run([sys.executable, "-m", "symex.cli", "run", "--environ", "env.txt",
                           "--output-dir", "out", str(program_file)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "test000001: completed exit 2" in proc.stdout  # two variables: main returns the count
    (tmp_path / "bad.txt").write_text("HOME\n")
    bad = subprocess.run([sys.executable, "-m", "symex.cli", "run", "--environ", "bad.txt", str(program_file)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "'HOME' is not NAME=VALUE" in bad.stderr
    missing = subprocess.run([sys.executable, "-m", "symex.cli", "run", "--environ", "nope.txt",
                              str(program_file)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert missing.returncode == 2 and "cannot read --environ nope.txt" in missing.stderr


def test_a_malformed_variable_is_refused(program_file: Path) -> None:
    with pytest.raises(ConfigError, match="is not NAME=VALUE"):
        symex.explore(symex.compile(program_file), environ=["=x"])
