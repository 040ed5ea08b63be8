"""The world the program under test sees: KLEE's intrinsics, SV-COMP inputs, heap, exit, output.

The executor calls declared (external) functions through a name -> handler registry; this
package fills it. See docs/architecture.md.
"""

from __future__ import annotations

from symex.core.executor import ExternalHandler
from symex.env import klee, process


def default_externals() -> dict[str, ExternalHandler]:
    """Every external function symex models, by name."""
    table: dict[str, ExternalHandler] = {}
    table.update(process.handlers())
    table.update(klee.handlers())
    return table


__all__ = ["default_externals"]
