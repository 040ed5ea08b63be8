"""The world the program under test sees: KLEE's intrinsics, SV-COMP inputs, heap, exit, output,
files and standard streams.

The executor calls declared (external) functions through a name -> handler registry; this
package fills it. See docs/architecture.md.
"""

from __future__ import annotations

from symex.core.interpreter.machine import ExternalHandler
from symex.env import (directories, execve, fuzz_input, klee, libm, network, posix, process, strtod,
                       threads)
from symex.errors import SymexError
from symex.ir.system_calls import SYSTEM_CALLS


def system_call_handlers() -> dict[str, ExternalHandler]:
    """The handler of every system call ``ir/system_calls.py`` declares, as
    ``__symex_NAME`` with the declared return width."""
    implemented = {**posix.HANDLERS, **directories.HANDLERS, **execve.HANDLERS}
    table: dict[str, ExternalHandler] = {}
    for call in SYSTEM_CALLS:
        handler = implemented.get(call.name)
        if handler is None:
            raise SymexError(f"system call {call.name} is declared in ir/system_calls.py and has no "
                             f"handler in env/posix.py, env/directories.py or env/execve.py")
        table[f"__symex_{call.name}"] = posix.returning(call.width, handler)
    return table


def default_externals() -> dict[str, ExternalHandler]:
    """Every external function symex models, by name."""
    table: dict[str, ExternalHandler] = {}
    table.update(process.handlers())
    table.update(klee.handlers())
    table.update(fuzz_input.handlers())
    table.update(system_call_handlers())
    table.update(posix.handlers())
    table.update(network.handlers(table))
    table.update(threads.handlers())
    table.update(libm.handlers())
    table.update(strtod.handlers())
    return table


__all__ = ["default_externals", "system_call_handlers"]
