"""The world the program under test sees: KLEE's intrinsics, SV-COMP inputs, heap, exit, output,
files and standard streams.

The executor calls declared (external) functions through a name -> handler registry; this
package fills it. See docs/architecture.md.
"""

from __future__ import annotations

from symex.core.machine import ExternalHandler
from symex.env import klee, libm, network, posix, process, strtod, threads


def default_externals() -> dict[str, ExternalHandler]:
    """Every external function symex models, by name."""
    table: dict[str, ExternalHandler] = {}
    table.update(process.handlers())
    table.update(klee.handlers())
    table.update(posix.handlers())
    table.update(network.handlers(table))
    table.update(threads.handlers())
    table.update(libm.handlers())
    table.update(strtod.handlers())
    return table


__all__ = ["default_externals"]
