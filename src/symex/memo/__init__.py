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

from symex.memo.format import TREE_FILE, NodeStatus
from symex.memo.recorder import MemoStatistics, TreeRecorder
from symex.memo.store import TreeFileError
from symex.memo.tree import RecordedTree, RecordedNode

__all__ = ["RecordedTree", "MemoStatistics", "NodeStatus", "TREE_FILE", "TreeFileError",
           "RecordedNode", "TreeRecorder"]
