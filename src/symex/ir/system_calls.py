"""Every system call symex models, declared once: its handler's name, return type and
parameters, the kernel calls musl's glue routes straight to it, and the functions symex's own
library wraps it in.

From this table come the C both libraries are compiled with (``symex_system_calls.h``: the
``__symex_*`` prototypes, ``SYMEX_KERNEL_CASES`` for ``runtime/musl/glue.c``'s switch over
musl's system-call numbers, ``SYMEX_LIBRARY_WRAPPERS`` for ``runtime/libc/unistd.c``) and
the return width of each Python handler (``env/posix.py``, ``env/directories.py``, ``env/execve.py``, by the same
name); ``tests/test_system_calls.py`` checks that every declaration has its handler and every
handler its declaration. Adding ``mkdir`` is one line here, one handler and its test.

A handler returns ``-errno`` on failure, as the kernel does; the library's wrapper sets
``errno`` and returns -1. Calls whose C side is more than a cast (``open``'s variadic mode,
``newfstatat``, ``ioctl``, ``readv``, the network's) are written by hand in those files.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import attrs

__all__ = ["SYSTEM_CALLS", "SystemCall", "header_dir", "header_text"]


@attrs.frozen
class SystemCall:
    """One modelled system call."""

    name: str
    """The handler is ``__symex_<name>``."""
    returns: str
    """``int`` or ``long``: the handler's C return type (its result's width in Python)."""
    parameters: tuple[str, ...]
    """C parameter declarations, ``"const char *path"``, in the kernel's argument order."""
    kernel: tuple[str, ...] = ()
    """musl's system calls (``SYS_<name>``) routed to the handler with these arguments."""
    library: tuple[str, ...] = ()
    """Functions symex's library defines as ``errno``-setting wrappers of the handler."""

    @property
    def width(self) -> int:
        """The bits of the result."""
        return 64 if self.returns == "long" else 32

    def _types(self) -> list[str]:
        return [parameter[:len(parameter) - len(parameter.split()[-1].lstrip("*"))].strip()
                for parameter in self.parameters]

    def _names(self) -> list[str]:
        return [parameter.split()[-1].lstrip("*") for parameter in self.parameters]

    def prototype(self) -> str:
        """The handler's C declaration."""
        return f"{self.returns} __symex_{self.name}({', '.join(self.parameters) or 'void'});"

    def kernel_cases(self) -> str:
        """``case SYS_x: return __symex_name((T)a, (U)b);`` for each of ``kernel``."""
        arguments = ", ".join(f"({kind})" + register for kind, register in zip(self._types(), "abcdef"))
        return "".join(f" case SYS_{call}: return __symex_{self.name}({arguments});"
                       for call in self.kernel)

    def wrappers(self) -> str:
        """symex's library's definitions of ``library``."""
        call = f"__symex_{self.name}({', '.join(self._names())})"
        return "".join(f" WEAK {self.returns} {function}({', '.join(self.parameters)})"
                       f" {{ return ({self.returns})result({call}); }}"
                       for function in self.library)


SYSTEM_CALLS: tuple[SystemCall, ...] = (
    # files and descriptors (env/posix.py)
    SystemCall("open", "int", ("const char *path", "int flags", "int mode"), kernel=("open",)),
    SystemCall("openat", "int", ("int dirfd", "const char *path", "int flags", "int mode"), kernel=("openat",)),
    SystemCall("close", "int", ("int fd",), kernel=("close",), library=("close",)),
    SystemCall("read", "long", ("int fd", "void *buffer", "unsigned long count"), kernel=("read",),
               library=("read",)),
    SystemCall("write", "long", ("int fd", "const void *buffer", "unsigned long count"), kernel=("write",),
               library=("write",)),
    SystemCall("lseek", "long", ("int fd", "long offset", "int whence"), kernel=("lseek",),
               library=("lseek", "lseek64")),
    SystemCall("stat", "int", ("const char *path", "struct stat *buffer"), kernel=("stat",),
               library=("stat", "stat64")),
    SystemCall("lstat", "int", ("const char *path", "struct stat *buffer"), kernel=("lstat",),
               library=("lstat", "lstat64")),
    SystemCall("fstat", "int", ("int fd", "struct stat *buffer"), kernel=("fstat",), library=("fstat", "fstat64")),
    SystemCall("fstatat", "int", ("int dirfd", "const char *path", "struct stat *buffer", "int flags")),
    SystemCall("access", "int", ("const char *path", "int mode"), kernel=("access",), library=("access",)),
    SystemCall("faccessat", "int", ("int dirfd", "const char *path", "int mode"), kernel=("faccessat",)),
    SystemCall("isatty", "int", ("int fd",)),
    SystemCall("dup", "int", ("int fd",), kernel=("dup",), library=("dup",)),
    SystemCall("dup2", "int", ("int fd", "int target"), kernel=("dup2",), library=("dup2",)),
    SystemCall("unlink", "int", ("const char *path",), kernel=("unlink",), library=("unlink",)),
    SystemCall("chmod", "int", ("const char *path", "unsigned mode"), kernel=("chmod",), library=("chmod",)),
    SystemCall("fchmod", "int", ("int fd", "unsigned mode"), kernel=("fchmod",), library=("fchmod",)),
    SystemCall("fchmodat", "int", ("int dirfd", "const char *path", "unsigned mode"), kernel=("fchmodat",)),
    SystemCall("ftruncate", "int", ("int fd", "long length"), kernel=("ftruncate",), library=("ftruncate",)),
    SystemCall("truncate", "int", ("const char *path", "long length"), kernel=("truncate",),
               library=("truncate",)),
    # directories (env/directories.py)
    SystemCall("mkdir", "int", ("const char *path", "int mode"), kernel=("mkdir",), library=("mkdir",)),
    SystemCall("mkdirat", "int", ("int dirfd", "const char *path", "int mode"), kernel=("mkdirat",),
               library=("mkdirat",)),
    SystemCall("rmdir", "int", ("const char *path",), kernel=("rmdir",), library=("rmdir",)),
    SystemCall("mknod", "int", ("const char *path", "unsigned mode", "unsigned long device"), kernel=("mknod",),
               library=("mknod",)),
    SystemCall("mknodat", "int", ("int dirfd", "const char *path", "unsigned mode", "unsigned long device"),
               kernel=("mknodat",)),
    SystemCall("unlinkat", "int", ("int dirfd", "const char *path", "int flags")),
    SystemCall("chdir", "int", ("const char *path",), kernel=("chdir",), library=("chdir",)),
    SystemCall("fchdir", "int", ("int fd",), kernel=("fchdir",), library=("fchdir",)),
    SystemCall("getcwd", "long", ("char *buffer", "unsigned long size"), kernel=("getcwd",)),
    SystemCall("getdents64", "long", ("int fd", "void *buffer", "unsigned long count"), kernel=("getdents64",)),
    SystemCall("link", "int", ("const char *old", "const char *new"), kernel=("link",), library=("link",)),
    SystemCall("linkat", "int", ("int olddirfd", "const char *old", "int newdirfd", "const char *new",
                                 "int flags"), kernel=("linkat",), library=("linkat",)),
    SystemCall("rename", "int", ("const char *old", "const char *new"), kernel=("rename",), library=("rename",)),
    SystemCall("renameat2", "int", ("int olddirfd", "const char *old", "int newdirfd", "const char *new",
                                    "unsigned flags"), kernel=("renameat2",)),
    SystemCall("symlink", "int", ("const char *target", "const char *path"), kernel=("symlink",),
               library=("symlink",)),
    SystemCall("symlinkat", "int", ("const char *target", "int dirfd", "const char *path"), kernel=("symlinkat",),
               library=("symlinkat",)),
    SystemCall("readlink", "long", ("const char *path", "char *buffer", "unsigned long size"), kernel=("readlink",),
               library=("readlink",)),
    SystemCall("readlinkat", "long", ("int dirfd", "const char *path", "char *buffer", "unsigned long size"),
               kernel=("readlinkat",), library=("readlinkat",)),
    # programs (env/execve.py)
    SystemCall("execve", "int", ("const char *path", "char *const *argv", "char *const *envp"),
               kernel=("execve",), library=("execve",)),
)
"""The table. Order is the header's; names are unique."""


def header_text() -> str:
    """``symex_system_calls.h``."""
    lines = ["/* generated from symex/ir/system_calls.py: edit the table there */",
             "#ifndef SYMEX_SYSTEM_CALLS_H", "#define SYMEX_SYSTEM_CALLS_H", "struct stat;"]
    lines += [call.prototype() for call in SYSTEM_CALLS]
    lines.append("#define SYMEX_KERNEL_CASES" + "".join(f" \\\n{call.kernel_cases()}"
                                                        for call in SYSTEM_CALLS if call.kernel))
    lines.append("#define SYMEX_LIBRARY_WRAPPERS" + "".join(f" \\\n{call.wrappers()}"
                                                            for call in SYSTEM_CALLS if call.library))
    lines.append("#endif")
    return "\n".join(lines) + "\n"


def header_dir(cache: Path) -> Path:
    """A directory holding the header, under ``cache``, named by its contents (written once)."""
    text = header_text()
    directory = cache / f"system-calls-{hashlib.sha256(text.encode()).hexdigest()[:16]}"
    path = directory / "symex_system_calls.h"
    if not path.is_file():
        directory.mkdir(parents=True, exist_ok=True)
        temporary = directory / f".header.{os.getpid()}.tmp"
        temporary.write_text(text)
        os.replace(temporary, path)
    return directory
