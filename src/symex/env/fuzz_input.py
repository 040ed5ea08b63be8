"""The input of a libFuzzer fuzz target (``symex run --fuzz-target``).

``runtime/fuzz_driver.c`` is the target's ``main``: it calls ``symex_fuzz_input(&size)``,
then ``LLVMFuzzerTestOneInput(data, size)``, as libFuzzer's driver does. Here that call
makes two inputs, in this order (native replay reads them in the same order):

- ``fuzz-size``: 8 symbolic bytes, the input's length, at most ``max_input``;
- ``fuzz-data``: ``max_input`` symbolic bytes in a read-only heap object whose
  :attr:`~symex.core.memory.objects.MemoryObject.limit` is that length, so an access at or past it
  is out of bounds, as AddressSanitizer reports a read past libFuzzer's exactly sized copy.

A test's input as a fuzzer stores it (a corpus file) is the first ``fuzz-size`` bytes of
``fuzz-data``: :func:`raw_input`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from symex import expr as E
from symex.core.interpreter.machine import ExternalHandler, StateView
from symex.core.memory.objects import ObjectKind
from symex.errors import ConfigError
from symex.ir.program import WORD_ACCESS, Program

__all__ = ["DEFAULT_MAX_INPUT", "FUZZ_DATA", "FUZZ_SIZE", "FUZZ_TARGET", "check_fuzz_target", "fuzz_driver_source",
           "handlers",
           "raw_input", "seed_objects"]

#: the objects a fuzz target's input is made of, in the order they are made
FUZZ_SIZE, FUZZ_DATA = "fuzz-size", "fuzz-data"
#: the function that makes a program a libFuzzer fuzz target
FUZZ_TARGET = "LLVMFuzzerTestOneInput"
#: the longest input by default: libFuzzer's own default ``-max_len``
DEFAULT_MAX_INPUT = 4096
#: what error messages call the input object
_INPUT_NAME = "fuzz input"


def _symex_fuzz_input(view: StateView, args: list[Any]) -> int:
    ex, state = view.machine, view.state
    most = ex.max_input
    size = view.fresh_value(8, FUZZ_SIZE)
    state.add_constraint(E.ule(size, E.const(most, 64)))
    # at least one byte, so that an empty input still has an address to read past
    held = state.allocate(max(most, 1), ObjectKind.HEAP, _INPUT_NAME, read_only=True,
                          site=view.program_site())
    view.make_symbolic(held.obj.address, max(most, 1), FUZZ_DATA)
    held.obj = attrs.evolve(held.obj, limit=size)
    view.write(args[0], WORD_ACCESS, size)
    return held.obj.address


def fuzz_driver_source() -> Path:
    """``runtime/fuzz_driver.c``: the main of a libFuzzer fuzz target, under symex and in
    its native replay (compiled there with ``-DSYMEX_FUZZ_REPLAY``)."""
    return Path(__file__).resolve().parent.parent / "runtime" / "fuzz_driver.c"


def check_fuzz_target(program: Program) -> None:
    """A ConfigError unless ``program`` is a fuzz target linked with symex's driver."""
    target = program.functions.get(FUZZ_TARGET)
    if target is None or target.is_declaration:
        raise ConfigError(f"fuzz_target: the program defines no {FUZZ_TARGET}, so it is not a "
                          f"libFuzzer fuzz target")
    if "symex_fuzz_input" not in program.functions:
        raise ConfigError("fuzz_target: the program has no fuzz driver as its main; compile it "
                          "with symex.compile(..., fuzz_target=True) (symex run --fuzz-target)")


def raw_input(inputs: Mapping[str, bytes]) -> bytes | None:
    """A test's input as a fuzzer's corpus holds it (its first ``fuzz-size`` bytes), or None
    for a test that is not of a fuzz target."""
    size, data = inputs.get(FUZZ_SIZE), inputs.get(FUZZ_DATA)
    if size is None or data is None:
        return None
    return data[:int.from_bytes(size, "little")]


def seed_objects(raw: bytes, max_input: int) -> dict[str, bytes]:
    """A corpus file as a seed's objects (bytes past ``max_input`` left out, as libFuzzer's
    ``-max_len`` leaves them)."""
    data = raw[:max_input]
    return {FUZZ_SIZE: len(data).to_bytes(8, "little"),
            FUZZ_DATA: data + bytes(max(max_input, 1) - len(data))}


def handlers() -> dict[str, ExternalHandler]:
    """``symex_fuzz_input``, by name."""
    return {"symex_fuzz_input": _symex_fuzz_input}
