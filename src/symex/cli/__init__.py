"""The ``symex`` command line: ``symex COMMAND ...``.

Each command is a module of this package with ``add_parser(commands)`` (declare its options on
the sub-parser collection) and ``main(options) -> int`` (exit status). Every command reports bad
input -- an unknown option, a missing file, a malformed value -- as one line on stderr and exit
status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import os
import sys
import threading
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

from symex import __version__

__all__ = ["COMMANDS", "CommandLineParser", "command_process", "main"]

#: command name -> module (in symex.cli) implementing it, in the order ``--help`` lists them
COMMANDS: dict[str, str] = {
    "run": "run",
    "ktest": "ktest",
    "replay": "replay",
    "stats": "stats",
    "serve": "serve",
    "tenant": "tenant",
    "cc": "cc",
}


class CommandLineParser(argparse.ArgumentParser):
    """argparse that reports errors as one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        """Print one line naming the command's help, and exit with status 2."""
        sys.stderr.write(f"{self.prog}: error: {message} (see '{self.prog} --help')\n")
        raise SystemExit(2)


def _parser(only: str | None = None) -> tuple[argparse.ArgumentParser, dict[str, ModuleType]]:
    """The parser of every command, or of ``only`` (importing one command's module, not all
    seven: ``symex run`` does not pay for the service's or replay's imports at start-up)."""
    parser = CommandLineParser(prog="symex",
                               description="Symbolic execution of C programs via LLVM IR.")
    parser.add_argument("--version", action="version", version=f"symex {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND",
                                     parser_class=CommandLineParser)
    modules = {}
    for name, module_name in COMMANDS.items():
        if only is not None and name != only:
            continue
        module = importlib.import_module(f"symex.cli.{module_name}")
        module.add_parser(commands)
        modules[name] = module
    return parser, modules


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``symex`` command."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["cc"]:
        # a build runs the compiler thousands of times: no other command is imported
        from symex.cli.cc import run_cc  # noqa: PLC0415
        return run_cc(arguments[1:])
    # a command named first is the only one whose module is imported; anything else (no
    # command, --help, a typo) gets the parser of every command, to list or to refuse them.
    # Importing the engine makes some 55,000 objects (modules, classes, functions) that live
    # as long as the process: they are kept out of the collector, which would otherwise scan
    # them while they are made and again at its first collection after, finding nothing
    # (13 ms of a run's start-up). A run unfreezes the heap when it ends (fewer_collections).
    collecting = gc.isenabled()
    gc.disable()
    try:
        parser, modules = _parser(arguments[0] if arguments[:1] and arguments[0] in COMMANDS else None)
    finally:
        gc.freeze()
        if collecting:
            gc.enable()
    options = parser.parse_args(arguments)
    if options.command == "run" and "--fuzz-target" in options.args:
        # a fuzz target takes no arguments: symex's options may follow it as they follow a
        # fuzzer's (symex run target.c lib.a --fuzz-target --max-input 256)
        arguments = modules["run"].fuzz_target_arguments(arguments, options)
        options = parser.parse_args(arguments)
    # `symex run a.c -- b.c`: argparse drops the `--`; run needs to know where it was
    options.command_line = arguments
    if options.command is None:
        parser.print_help(sys.stderr)
        return 2
    return int(modules[options.command].main(options))


def command_process() -> NoReturn:
    """The ``symex`` program: :func:`main` on the command line, then the process ends.

    A run leaves a heap of up to millions of objects (the program, its states, the solver's
    terms); Python's own exit frees them one by one, 20-40 ms of a short run's whole process,
    and the operating system takes the memory back at once anyway. So once the command has
    returned, the atexit handlers run (they close pools and flush what libraries hold), the
    standard streams are flushed, and the process ends without that teardown. A command that
    leaves a thread running exits the usual way, which waits for it, and so does a process a
    profiler or tracer watches (cProfile, coverage), whose reports are written at exit.
    ``main`` itself stays an ordinary function for callers in a Python process of their own.
    """
    status = main()
    if (sys.getprofile() is not None or sys.gettrace() is not None
            or any(not thread.daemon for thread in threading.enumerate()
                   if thread is not threading.main_thread())):
        sys.exit(status)
    atexit._run_exitfuncs()  # noqa: SLF001 (the public atexit runs them only at exit)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away (| head), a closed stream
            pass
    os._exit(status)
