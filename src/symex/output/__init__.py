"""What a run writes, in one place (a run with workers is merged here too).

- :mod:`~symex.output.directory`: ``symex-out-N`` (tests, errors, info, messages, assembly);
- :mod:`~symex.output.ktest`: KLEE's ``.ktest`` file format, read and written;
- :mod:`~symex.output.runstats`: ``run.stats``, the run's progress in SQLite;
- :mod:`~symex.output.progress`: the status line;
- :mod:`~symex.output.coverage_report`: lcov and HTML coverage reports;
- :mod:`~symex.output.testcomp`: Test-Comp test suites;
- :mod:`~symex.output.atomic_write`: every file written whole or not at all.

Each module is imported on its own (``from symex.output.ktest import read_ktest``); this
package imports none of them, so reading a ``.ktest`` loads no SQLite or rich.
"""
