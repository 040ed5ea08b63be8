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

__all__ = ["BOOL_OPS", "BV_OPS", "COMPARE_OPS", "MAX_CHECK_MS", "Backend", "CheckResult",
           "ModelReading", "TermBuilder", "array_contents", "check_milliseconds", "no_model_error"]


#: the longest per-check time limit solver packages take, in milliseconds (z3's is an
#: unsigned 32-bit number; about 49 days)
MAX_CHECK_MS = 2 ** 32 - 1


def check_milliseconds(timeout: float | None) -> int | None:
    """A check's time limit in whole milliseconds (at least 1: packages read 0 as no limit),
    or None for no limit: none was given, or one too long for a package to hold (an
    infinite run's deadline, 1e10 s: z3 wrapped such a number around to a few seconds, and a
    query it then could not decide cut a branch)."""
    if timeout is None or timeout != timeout or timeout * 1000 >= MAX_CHECK_MS:
        return None
    return max(1, int(timeout * 1000))


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


def array_contents(writes: Sequence[tuple[int, int]], default: int, size: int) -> bytes:
    """Bytes ``0 .. size-1`` of an array model value read as a chain of stores over a
    constant array: ``writes`` lists the outermost (newest) store first, so it is applied
    last; indices past ``size`` are dropped, values taken modulo 256."""
    contents = bytearray([default & 0xFF]) * size
    for index, byte in reversed(writes):
        if 0 <= index < size:
            contents[index] = byte & 0xFF
    return bytes(contents)


class ModelReading:
    """The value and model glue backends share (pySMT's ``IncrementalTrackingSolver``
    pattern): whether the last check left a model (``_sat``), why it answered UNKNOWN
    (``_last_reason``), and a term's value read only after SAT. A backend sets those two in
    its ``check`` and says how to read its own values (:meth:`_model_value`,
    :meth:`_boolean_of`, :meth:`_integer_of`, :meth:`_stores_of`)."""

    __slots__ = ()

    _sat: bool
    _last_reason: str
    name: str

    def reason_unknown(self) -> str:
        """Why the last check answered UNKNOWN."""
        return self._last_reason

    def _value(self, term: Any) -> Any:
        """The model value of ``term``, or a SolverError if the last check was not SAT."""
        if not self._sat:
            raise no_model_error()
        return self._model_value(term)

    def bv_value(self, term: Any) -> int:
        """The unsigned value of ``term`` in the last model (booleans read as 0/1)."""
        value = self._value(term)
        truth = self._boolean_of(value)
        return (1 if truth else 0) if truth is not None else self._integer_of(value)

    def array_value(self, array: Any, size: int) -> bytes:
        """Bytes ``0 .. size-1`` of ``array``, decoding its model value once."""
        value = self._value(array)
        stores = self._stores_of(value)
        if stores is None:
            raise SolverError(f"{self.name} gave an array model symex cannot read ({value}); "
                              "use another backend for this query")
        return array_contents(*stores, size)

    def _model_value(self, term: Any) -> Any:
        """The backend's model value of ``term`` (the last check was SAT)."""
        raise NotImplementedError

    def _boolean_of(self, value: Any) -> bool | None:
        """A boolean model value as a bool; None for a bit-vector."""
        raise NotImplementedError

    def _integer_of(self, value: Any) -> int:
        """A bit-vector model value as an unsigned int."""
        raise NotImplementedError

    def _stores_of(self, value: Any) -> tuple[list[tuple[int, int]], int] | None:
        """An array model value as (stores, newest first; the default byte), or None for a
        shape this backend cannot read."""
        raise NotImplementedError
