"""Global variables and aliases recovered from a module's text (llvmlite does not expose
their initializers): each definition's name, type, initializer (a parsed constant), linkage,
alignment and section."""
from __future__ import annotations

import re

import attrs

from symex.ir.constants import (
    WORD_RE,
    Constant,
    parse_error,
    parse_typed_constant,
    parse_value,
    skip_balanced_parens,
)
from symex.ir.types import (
    IRType,
    TypeParser,
    scan_identifier,
    skip_spaces,
)

__all__ = ["AliasDef", "GlobalDef", "parse_aliases", "parse_globals"]


@attrs.frozen
class GlobalDef:
    """One global variable definition or declaration of a module."""

    name: str
    type: IRType
    initializer: Constant | None
    is_constant: bool
    linkage: str
    align: int | None
    #: a declaration without initializer (``external global``)
    external: bool
    thread_local: bool = False
    section: str | None = None


@attrs.frozen
class AliasDef:
    """``@name = alias TYPE, ptr TARGET``."""

    name: str
    target: Constant


_LINKAGES = frozenset(
    {"private", "internal", "available_externally", "linkonce", "weak", "common", "appending",
     "extern_weak", "linkonce_odr", "weak_odr", "external"}
)
_GLOBAL_ATTRIBUTE_WORDS = _LINKAGES | {
    "dso_local", "dso_preemptable", "default", "hidden", "protected", "dllimport", "dllexport",
    "unnamed_addr", "local_unnamed_addr", "externally_initialized", "thread_local", "addrspace",
}
_DEFINITION_LINE_RE = re.compile(r'^@("(?:[^"\\]|\\.)*"|[-a-zA-Z$._0-9]+)\s*=\s*', re.MULTILINE)
_ALIGN_RE = re.compile(r",\s*align\s+([0-9]+)")
_SECTION_RE = re.compile(r',\s*section\s+"([^"]*)"')


def _definition_head(text: str, pos: int) -> tuple[str, str, bool, int]:
    """Read linkage/visibility/... words up to the defining keyword.

    Returns (keyword, linkage, thread_local, position after the keyword)."""
    linkage = "external"
    thread_local = False
    while True:
        pos = skip_spaces(text, pos)
        m = WORD_RE.match(text, pos)
        if m is None:
            raise parse_error(text, pos, "expected a global definition keyword")
        word = m.group(0)
        pos = m.end()
        if word in ("global", "constant", "alias", "ifunc"):
            return word, linkage, thread_local, pos
        if word not in _GLOBAL_ATTRIBUTE_WORDS:
            raise parse_error(text, m.start(), f"unexpected word {word!r} in global definition")
        if word in _LINKAGES:
            linkage = word
        if word == "thread_local":
            thread_local = True
        if text.startswith("(", pos):
            pos = skip_balanced_parens(text, pos)


def _definition_lines(module_text: str) -> list[tuple[str, str, int]]:
    """(name, line, offset of the text after ``=``) of each ``@name = ...`` line."""
    out = []
    for m in _DEFINITION_LINE_RE.finditer(module_text):
        line_end = module_text.find("\n", m.end())
        if line_end < 0:
            line_end = len(module_text)
        line = module_text[m.start() : line_end]
        name, _ = scan_identifier(module_text, m.start() + 1)
        out.append((name, line, m.end() - m.start()))
    return out


def parse_globals(module_text: str, types: TypeParser) -> list[GlobalDef]:
    """Every global variable (``@x = ... global|constant ...``) of a module's text, in order."""
    out: list[GlobalDef] = []
    for name, line, pos in _definition_lines(module_text):
        keyword, linkage, thread_local, pos = _definition_head(line, pos)
        if keyword not in ("global", "constant"):
            continue
        value_type, pos = types.parse_prefix(line, pos)
        initializer: Constant | None = None
        if pos < len(line) and not line.startswith(",", pos):
            initializer, pos = parse_value(line, pos, value_type, types)
        tail = line[pos:]
        align = _ALIGN_RE.search(tail)
        section = _SECTION_RE.search(tail)
        out.append(
            GlobalDef(
                name=name,
                type=value_type,
                initializer=initializer,
                is_constant=keyword == "constant",
                linkage=linkage,
                align=int(align.group(1)) if align else None,
                external=initializer is None,
                thread_local=thread_local,
                section=section.group(1) if section else None,
            )
        )
    return out


def parse_aliases(module_text: str, types: TypeParser) -> list[AliasDef]:
    """Every ``@a = [linkage...] alias TYPE, ptr TARGET`` of a module's text, in order."""
    out: list[AliasDef] = []
    for name, line, pos in _definition_lines(module_text):
        keyword, _, _, pos = _definition_head(line, pos)
        if keyword != "alias":
            continue
        _, pos = types.parse_prefix(line, pos)
        if not line.startswith(",", pos):
            raise parse_error(line, pos, "expected ',' after alias value type")
        target, _ = parse_typed_constant(line, types, pos + 1)
        out.append(AliasDef(name, target))
    return out

