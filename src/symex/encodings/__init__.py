"""Encodings of symbolic memory into the solver's core language (see
:mod:`symex.encodings.base`): ``array-assert``, ``nested-write``, ``ite`` and ``hybrid``
(``ite`` for small arrays, ``array-assert`` for the others)."""

from __future__ import annotations

from symex.encodings.array_assert import ArrayAssertEncoding
from symex.encodings.base import Encoding
from symex.encodings.hybrid import HybridEncoding
from symex.encodings.ite import IteEncoding
from symex.encodings.nested_write import NestedWriteEncoding
from symex.errors import ConfigError

__all__ = ["ENCODINGS", "Encoding", "get_encoding", "ArrayAssertEncoding", "NestedWriteEncoding",
           "IteEncoding", "HybridEncoding"]

#: encoding name -> the (stateless) encoding
ENCODINGS: dict[str, Encoding] = {
    "array-assert": ArrayAssertEncoding(),
    "nested-write": NestedWriteEncoding(),
    "ite": IteEncoding(),
    "hybrid": HybridEncoding(),
}


def get_encoding(name: str) -> Encoding:
    """The encoding called ``name``; an unknown name raises ConfigError listing the known ones."""
    try:
        return ENCODINGS[name]
    except KeyError:
        raise ConfigError(f"unknown encoding '{name}'; choose one of "
                          f"{', '.join(ENCODINGS)}") from None
