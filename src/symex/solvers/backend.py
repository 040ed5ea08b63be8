"""The ``Backend`` protocol: what every SMT solver package is wrapped into.

A backend does two jobs:

* **Terms** -- it implements the *core language* that encodings emit: bit-vector and boolean
  constants, variables, 32->8 arrays with ``select``/``store``, bit-vector operations,
  comparisons (which give booleans), boolean connectives and the two conversions between a
  boolean and a 1-bit vector. Terms are opaque objects of the backend's own package.
* **Solving** -- one incremental solver context: ``assert_``, ``check`` (optionally under
  assumption literals), ``push``/``pop``, model values after a SAT answer, ``interrupt`` from
  another thread where the package allows it, ``reset``.

Sessions (none / push-pop / assumptions) and encodings (array-assert / nested-write / ite) are
built on top of this protocol, so a new solver package only has to implement it and pass
``tests/test_backend_conformance.py``.
"""

from __future__ import annotations

import enum
from typing import Any, Protocol, runtime_checkable
from collections.abc import Sequence

from symex.encodings.core import BOOL_OPS, BV_OPS, COMPARE_OPS, TermBuilder
from symex.errors import SolverError

__all__ = ["BOOL_OPS", "BV_OPS", "COMPARE_OPS", "Backend", "CheckResult", "TermBuilder",
           "no_model_error"]


def no_model_error() -> SolverError:
    """What a backend raises when asked for model values after a check that was not SAT."""
    return SolverError("no model: the last check was not SAT (or the context changed); "
                       "call check() and read values only after a SAT answer")


class CheckResult(enum.Enum):
    """The answer of one satisfiability check."""

    SAT = "sat"
    UNSAT = "unsat"
    UNKNOWN = "unknown"


@runtime_checkable
class Backend(TermBuilder, Protocol):
    """One solver context of one SMT package: the core language of
    :class:`symex.encodings.core.TermBuilder` plus solving. Semantics are SMT-LIB's QF_ABV
    throughout (``bvudiv`` by zero is all ones, ``bvurem`` by zero is the dividend, ...)."""

    name: str
    """The configuration name: ``z3``, ``cvc5``, ``bitwuzla``, ``pysmt`` (or ``pysmt-SOLVER``)."""
    can_interrupt: bool
    """True when :meth:`interrupt` from another thread stops a running :meth:`check`."""
    releases_gil: bool
    """True when :meth:`check` releases the GIL, so racing it in a thread makes sense."""

    # -- solving -------------------------------------------------------------------------

    def set_logic(self, logic: str) -> None:
        """Set the SMT-LIB logic (``QF_ABV`` or ``QF_BV``) of the (fresh or just reset)
        context. The seed measured z3 much slower without an explicit logic."""
        ...

    def assert_(self, term: Any) -> None:
        """Assert a boolean term in the current context level."""
        ...

    def push(self) -> None:
        """Open a context level."""
        ...

    def pop(self, levels: int = 1) -> None:
        """Drop the last ``levels`` context levels and their assertions."""
        ...

    def check(self, assumptions: Sequence[Any] = (), timeout: float | None = None) -> CheckResult:
        """Satisfiability of the assertions (and the boolean ``assumptions``), within
        ``timeout`` seconds (None: no limit). A timeout or interrupt gives UNKNOWN."""
        ...

    def reason_unknown(self) -> str:
        """Why the last check answered UNKNOWN (the package's own words)."""
        ...

    def bv_value(self, term: Any) -> int:
        """The value of a bit-vector term in the model of the last SAT check."""
        ...

    def array_value(self, array: Any, size: int) -> bytes:
        """Bytes ``0 .. size-1`` of an array term in the model of the last SAT check
        (unconstrained bytes read as 0)."""
        ...

    def interrupt(self) -> None:
        """Stop a :meth:`check` running in another thread (no-op if not supported)."""
        ...

    def reset(self) -> None:
        """Forget every assertion, level and term; the backend is as new (call
        :meth:`set_logic` again)."""
        ...

    def close(self) -> None:
        """Release the package's resources."""
        ...
