"""``python -m symex.cli``: the same as the ``symex`` command."""

from __future__ import annotations

from symex.cli import main

raise SystemExit(main())
