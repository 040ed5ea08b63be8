"""``symex cc``: a C compiler for build systems that also keeps each object's LLVM IR.

``./configure CC="symex cc" && make`` builds a project as any compiler would, and every
object, archive and executable it makes names the bitcode it was built from, so
``symex run src/echo`` explores the whole program. See :mod:`symex.ir.build_driver`.

A build system may run the compiler thousands of times: ``symex cc`` is dispatched before
the other commands are imported (``symex.cli.main``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

__all__ = ["add_parser", "main", "run_cc"]


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Declare ``symex cc`` (for ``symex --help``; its arguments are the compiler's)."""
    cc = commands.add_parser(
        "cc", help="a C compiler for builds (CC='symex cc'): objects also carry their IR",
        description="Compile and link like cc (system clang, else zig cc); each object also gets "
                    "LLVM bitcode beside it, named in the object, so 'symex run' can explore the "
                    "built executable whole.")
    cc.add_argument("arguments", nargs=argparse.REMAINDER, help="the compiler's arguments")


def run_cc(arguments: Sequence[str]) -> int:
    """Compile with ``arguments`` as ``cc`` would; the compiler's exit status."""
    from symex.ir.cc_shims import is_configure_check, recorded_shims  # noqa: PLC0415 (light)

    if not arguments:
        sys.stderr.write("symex cc: error: no input files (use it as a C compiler: "
                         "symex cc -c file.c -o file.o)\n")
        return 2
    shims = recorded_shims() if is_configure_check(arguments) else None
    if shims is not None:
        # a configure check, with the compiler's scripts known: nothing else to import
        sys.stdout.flush()
        compiler = os.path.join(shims, "clang")
        os.execv(compiler, [compiler, *arguments])
    from symex.errors import SymexError  # noqa: PLC0415 (keep start-up light)
    from symex.ir.build_driver import run_compiler_driver  # noqa: PLC0415

    try:
        return run_compiler_driver(arguments)
    except SymexError as exc:
        sys.stderr.write(f"symex cc: error: {exc}\n")
        return 2


def main(options: argparse.Namespace) -> int:
    """``symex cc`` reached through the parser (normally :func:`run_cc` is called first)."""
    return run_cc(options.arguments)
