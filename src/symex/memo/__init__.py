"""Memoized exploration (MoKlee): the execution tree recorded in SQLite, replayed, pruned and
resumed by later runs.

* :mod:`symex.memo.format` -- the file format (``tree.db``), documented in docs/memo.md;
* :mod:`symex.memo.store` -- the database: opening, checking, reading, batched writing;
* :mod:`symex.memo.recorder` -- :class:`TreeRecorder`, which records and replays during
  :func:`symex.explore`;
* :mod:`symex.memo.opening` -- which tree a run uses (new, continued, copied);
* :mod:`symex.memo.tree` -- :class:`RecordedTree`, the reader other tools use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from symex.memo.format import TREE_FILE, NodeStatus

if TYPE_CHECKING:
    from symex.memo.recorder import MemoStatistics, TreeRecorder
    from symex.memo.store import TreeFileError
    from symex.memo.tree import RecordedNode, RecordedTree

__all__ = ["RecordedTree", "MemoStatistics", "NodeStatus", "TREE_FILE", "TreeFileError",
           "RecordedNode", "TreeRecorder"]

#: where each name lives, imported on first use: every run names the tree file (its
#: options' help), few record one, and the rest costs 7 ms of a run's start
_LAZY = {"MemoStatistics": "recorder", "TreeRecorder": "recorder", "TreeFileError": "store",
         "RecordedTree": "tree", "RecordedNode": "tree"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
