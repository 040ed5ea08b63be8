"""One declaration per system call (issue 44): the table in ``ir/system_calls.py`` gives the
C both libraries are built with and each Python handler's width; they must agree."""

from __future__ import annotations

import re
from pathlib import Path

from symex.env import directories, execve, posix, system_call_handlers
from symex.ir.system_calls import SYSTEM_CALLS, header_text

RUNTIME = Path(__file__).parents[1] / "src" / "symex" / "runtime"


def test_every_declared_call_has_a_handler_and_every_handler_a_declaration() -> None:
    declared = [call.name for call in SYSTEM_CALLS]
    assert len(declared) == len(set(declared)), "a call declared twice"
    assert set(declared) == set(posix.HANDLERS) | set(directories.HANDLERS) | set(execve.HANDLERS)
    assert not set(posix.HANDLERS) & set(directories.HANDLERS), "one handler per call"
    assert set(system_call_handlers()) == {f"__symex_{name}" for name in declared}


def test_the_c_sides_take_the_declarations_from_the_table() -> None:
    """Neither C file declares a table call's handler by hand, routes its kernel call by
    hand, or wraps it by hand where the table does: they include the generated header."""
    glue = (RUNTIME / "musl" / "glue.c").read_text()
    library = (RUNTIME / "libc" / "unistd.c").read_text()
    for text in (glue, library):
        assert '#include "symex_system_calls.h"' in text
    assert "SYMEX_KERNEL_CASES" in glue and "SYMEX_LIBRARY_WRAPPERS" in library
    switch = glue[glue.index("long __symex_syscall("):]
    switch = switch[:switch.index("\n}\n")]
    for call in SYSTEM_CALLS:
        for text in (glue, library):
            assert not re.search(rf"^\w+ __symex_{call.name}\(", text, re.MULTILINE), call.name
        for kernel in call.kernel:
            assert f"case SYS_{kernel}:" not in switch, kernel
        for function in call.library:
            assert not re.search(rf"^WEAK \w+ \**{function}\(", library, re.MULTILINE), function


def test_the_header_declares_what_the_handlers_return() -> None:
    header = header_text()
    assert "int __symex_mkdir(const char *path, int mode);" in header
    assert "long __symex_read(int fd, void *buffer, unsigned long count);" in header
    assert " case SYS_lstat: return __symex_lstat((const char *)a, (struct stat *)b);" in header
    assert (" case SYS_readlinkat: return __symex_readlinkat((int)a, (const char *)b, (char *)c, (unsigned long)d);"
            in header)
    assert " WEAK int rmdir(const char *path) { return (int)result(__symex_rmdir(path)); }" in header
    widths = {call.name: call.width for call in SYSTEM_CALLS}
    assert (widths["read"], widths["getdents64"], widths["open"], widths["chdir"]) == (64, 64, 32, 32)
