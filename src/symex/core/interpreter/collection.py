"""Fewer garbage collections while paths run.

An exploration allocates millions of small objects that live long (states, their frames and
memory, expressions) and makes few reference cycles. Python's collector scans the oldest
generation again each time it has grown by a quarter: on memcached with symbolic packets, 28
full collections took 12.5 s of a 45 s run, and collections of all generations 16 s
(measured with ``gc.callbacks``; docs/benchmarks.md, "memcached"). While paths run, the
objects that existed before (the loaded program, its compiled code) are frozen out of every
collection and the young generation is collected every 100,000 allocations instead of 700,
with full collections only after 1,000 of the middle one: cycles are still collected, the
long-lived heap is no longer rescanned as it grows. The process's own settings come back
when the run stops, so a program embedding symex keeps its collector as it set it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["RUN_THRESHOLDS", "fewer_collections"]

#: the collector's thresholds while paths run (generation 0 allocations, collections of
#: generation 0 per generation 1 collection, of 1 per 2)
RUN_THRESHOLDS = (100_000, 50, 1_000)


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the body with :data:`RUN_THRESHOLDS` and what exists now frozen out of
    collections; the thresholds before, and an unfrozen heap, afterwards."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*RUN_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
