"""symex plug-ins for tests/test_plugins.py: a searcher, a solver backend, a model of an
external C function and a memory model, each as a package outside symex would write it."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from symex import expr as E
from symex.core.interpreter.machine import StateView
from symex.core.memory.forking import ForkingModel
from symex.core.memory.model import PathDecisions
from symex.core.search.searchers import BFSSearcher, SearchContext
from symex.core.state import State
from symex.solvers.backends.z3_backend import Z3Backend


class NewestLast:
    """Breadth-first order under its own name: the oldest waiting state runs next."""

    def __init__(self) -> None:
        self.inner = BFSSearcher()

    def select(self) -> State:
        return self.inner.select()

    def update(self, current: State | None, added: Sequence[State], removed: Sequence[State]) -> None:
        self.inner.update(current, added, removed)

    def empty(self) -> bool:
        return self.inner.empty()


def make_newest_last(context: SearchContext) -> NewestLast:
    """The searcher ``newest-last``."""
    return NewestLast()


class CountingZ3(Z3Backend):
    """z3, counting its checks in the file $SYMEX_TEST_PLUGIN_COUNT (one line per check), so
    a test sees that this backend answered, in whichever process it ran."""

    def __init__(self) -> None:
        super().__init__()
        self.name = "counting-z3"

    def check(self, *args: Any, **kwargs: Any) -> Any:
        path = os.environ.get("SYMEX_TEST_PLUGIN_COUNT")
        if path:
            with open(path, "a") as log:
                log.write(f"{os.getpid()}\n")
        return super().check(*args, **kwargs)


def sensor_read(view: StateView, args: list[Any]) -> Any:
    """``int sensor_read(void)``: a fresh symbolic value in [0, 100]."""
    value = view.fresh_value(4, "sensor")
    view.assume(E.ule(value, E.const(100, 32)))
    return value


class ConcretizingModel(ForkingModel):
    """The memory model ``concretizing``: a symbolic pointer is fixed to the value the path's
    inputs give it (as concolic testers do), then read or written as the forking model
    reads a concrete one; each fix is a shortfall, "pointer fixed by the concretizing
    model"."""

    name = "concretizing"

    def read_bytes(self, machine: PathDecisions, state: State, address: Any, size: int) -> list[Any]:
        return super().read_bytes(machine, state, self._fixed(machine, state, address), size)

    def write_bytes(self, machine: PathDecisions, state: State, address: Any,
                    data: list[Any] | bytes) -> None:
        super().write_bytes(machine, state, self._fixed(machine, state, address), data)

    @staticmethod
    def _fixed(machine: PathDecisions, state: State, address: Any) -> Any:
        if isinstance(address, int):
            return address
        return machine.concretize(state, address, 64, "pointer fixed by the concretizing model")
