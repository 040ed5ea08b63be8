"""``python -m symex.cli``: the same as the ``symex`` command."""

from __future__ import annotations

from symex.cli import command_process

command_process()
