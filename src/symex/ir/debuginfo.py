"""Source locations from the debug metadata of textual LLVM IR.

llvmlite does not expose debug locations, so symex reads the ``!N = !DI...(...)`` lines of
``str(module)`` once with a regex, keeps each record's field text unparsed, and decodes fields
only for the records a location lookup actually touches. Scope chains and inlining chains are
followed with loops, never recursion.
"""

from __future__ import annotations

import posixpath
import re

import attrs

__all__ = ["Declaration", "DebugInfo", "SourceLocation", "dbg_attachment", "instruction_dbg_ids"]


@attrs.frozen
class SourceLocation:
    """A position in the C source.

    ``file`` is the scope's directory joined with its filename (the filename alone when it is
    absolute); ``function`` the name of the enclosing ``DISubprogram``; ``inlined_at`` the call
    site this code was inlined into, if any (itself possibly inlined).
    """

    file: str
    line: int
    column: int
    function: str | None
    inlined_at: SourceLocation | None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"

    @property
    def site(self) -> str:
        """``file:line`` with the file's base name (messages; no directory leaks)."""
        return _site(self.file, self.line)


def _site(file: str, line: int) -> str:
    return f"{posixpath.basename(file)}:{line}" if file else ""


@attrs.frozen
class Declaration:
    """Where a C variable is declared: its name in the source (``""`` for a string literal)
    and the file and line of its declaration."""

    name: str
    file: str
    line: int

    @property
    def site(self) -> str:
        """``file:line`` with the file's base name (messages; no directory leaks)."""
        return _site(self.file, self.line)


_RECORD_RE = re.compile(r"^!(\d+) = (?:distinct )?!(DI\w+)\((.*)\)\s*$", re.MULTILINE)
_FIELD_RE = re.compile(r'(\w+):\s*("(?:[^"\\]|\\.)*"|![0-9]+|[^,]+)')
_DEFINE_RE = re.compile(r'^define\b[^\n]*?@("(?:[^"\\]|\\.)*"|[-a-zA-Z$._0-9]+)\([^\n]*$', re.MULTILINE)
_DEFINE_DBG_RE = re.compile(r"!dbg !(\d+)")
_ATTACHMENT_RE = re.compile(r"!dbg !(\d+)")
# `@table = global [4 x i32] ..., !dbg !0` (the attachment names a DIGlobalVariableExpression)
_GLOBAL_DBG_RE = re.compile(r'^@("(?:[^"\\]|\\.)*"|[-a-zA-Z$._0-9]+) = [^\n]*?!dbg !(\d+)\s*$', re.MULTILINE)
# a local variable's address: `#dbg_declare(ptr %2, !22, ...)` (LLVM 19 and later) or
# `call void @llvm.dbg.declare(metadata ptr %2, metadata !22, ...)`
_DECLARE_RE = re.compile(r'(?:#dbg_declare\(|@llvm\.dbg\.declare\(metadata )'
                         r'ptr (%[-a-zA-Z$._0-9]+|%"(?:[^"\\]|\\.)*"), (?:metadata )?!(\d+)')
_STRING_ESCAPE_RE = re.compile(r"\\([0-9A-Fa-f]{2}|\\)")

#: Scope kinds whose ``scope:`` field leads further out towards the subprogram.
_NESTED_SCOPES = frozenset({"DILexicalBlock", "DILexicalBlockFile"})


def _unquote(value: str) -> str:
    """Decode a metadata string literal (``"a\\22b"`` -> ``a"b``)."""
    if len(value) < 2 or value[0] != '"':
        return value
    raw = _STRING_ESCAPE_RE.sub(
        lambda m: "\\" if m.group(1) == "\\" else chr(int(m.group(1), 16)), value[1:-1]
    )
    return raw.encode("latin-1", errors="replace").decode("utf-8", errors="replace")


def _ref(value: str | None) -> int | None:
    """The N of a ``!N`` field value; None for ``null``, absent or inline values."""
    if value is None or not value.startswith("!") or not value[1:].isdigit():
        return None
    return int(value[1:])


def dbg_attachment(instruction_text: str) -> int | None:
    """The N of the ``!dbg !N`` attachment in an instruction's text, or None.

    Beware: llvmlite's ``str(instruction)`` numbers metadata with a slot tracker local to the
    instruction's function, which matches ``str(module)``'s numbering only for the first
    defined function. Take instruction texts from the module text (see
    :func:`instruction_dbg_ids`) to get ids that :meth:`DebugInfo.location` understands.
    """
    found = None
    for m in _ATTACHMENT_RE.finditer(instruction_text):
        found = m  # attachments come last; a later match is the instruction's own
    return int(found.group(1)) if found is not None else None


_FUNCTION_HEADER_RE = re.compile(
    r'^define\b[^\n]*?@("(?:[^"\\]|\\.)*"|[-a-zA-Z$._0-9]+)\([^\n]*\{\s*$', re.MULTILINE
)
_LANDINGPAD_CONTINUATIONS = ("cleanup", "catch ", "filter ")


def instruction_dbg_ids(module_text: str) -> dict[str, list[int | None]]:
    """For each defined function of a module's text, the ``!dbg`` id of every instruction,
    in llvmlite's iteration order (blocks in order, instructions in order; debug records such
    as ``#dbg_declare`` are not instructions). Ids use the module's numbering, as
    :meth:`DebugInfo.location` expects; ``None`` where an instruction has no location."""
    out: dict[str, list[int | None]] = {}
    for header in _FUNCTION_HEADER_RE.finditer(module_text):
        name = _unquote(header.group(1))
        ids: list[int | None] = []
        pos = header.end() + 1
        current: list[str] = []
        in_switch = False
        while pos < len(module_text):
            end = module_text.find("\n", pos)
            if end < 0:
                end = len(module_text)
            line = module_text[pos:end]
            pos = end + 1
            if line.startswith("}"):
                break
            stripped = line.strip()
            if in_switch:
                current.append(line)
                if stripped.startswith("]"):
                    in_switch = False
                continue
            if current and stripped.startswith(_LANDINGPAD_CONTINUATIONS):
                current.append(line)
                continue
            if not stripped or stripped[0] == ";" or stripped.startswith("#dbg_"):
                continue
            if not line[0].isspace():
                continue  # a block label
            if current:
                ids.append(dbg_attachment("\n".join(current)))
            current = [line]
            # A switch's case list spans lines up to the closing bracket.
            in_switch = " switch " in f" {stripped}" and stripped.endswith("[")
        if current:
            ids.append(dbg_attachment("\n".join(current)))
        out[name] = ids
    return out


class DebugInfo:
    """Debug-metadata index of one module: DILocation ids to source locations."""

    __slots__ = (
        "_records",
        "_fields",
        "_locations",
        "_function_subprograms",
        "_subprograms_by_name",
        "_module_text",
        "_instruction_ids",
        "_locals",
    )

    def __init__(
        self,
        records: dict[int, tuple[str, str]],
        function_subprograms: dict[str, int] | None = None,
    ) -> None:
        """``records`` maps a metadata id to (``DI`` kind, raw field text); ``function_subprograms``
        maps an IR function name to the id of its ``DISubprogram`` (from ``define ... !dbg !N``)."""
        self._records = records
        self._fields: dict[int, dict[str, str]] = {}
        self._locations: dict[int, SourceLocation | None] = {}
        self._function_subprograms = dict(function_subprograms or {})
        self._subprograms_by_name: dict[str, int] | None = None
        self._module_text = ""
        self._instruction_ids: dict[str, list[int | None]] | None = None
        self._locals: dict[str, dict[str, Declaration]] | None = None

    @classmethod
    def parse(cls, module_text: str) -> DebugInfo:
        """Index every ``!N = [distinct] !DI...(...)`` line of a module's text."""
        records = {int(m.group(1)): (m.group(2), m.group(3)) for m in _RECORD_RE.finditer(module_text)}
        functions: dict[str, int] = {}
        for m in _DEFINE_RE.finditer(module_text):
            dbg = _DEFINE_DBG_RE.search(m.group(0), m.end(1) - m.start(0))
            if dbg is not None:
                functions[_unquote(m.group(1))] = int(dbg.group(1))
        info = cls(records, functions)
        info._module_text = module_text
        return info

    def instruction_locations(self, function_name: str) -> list[SourceLocation | None]:
        """Location of every instruction of function ``function_name`` in llvmlite's iteration
        order (see :func:`instruction_dbg_ids`); empty for a function without a body."""
        if self._instruction_ids is None:
            self._instruction_ids = instruction_dbg_ids(self._module_text)
        return [
            self.location(md_id) if md_id is not None else None
            for md_id in self._instruction_ids.get(function_name, [])
        ]

    def _record_fields(self, md_id: int) -> dict[str, str] | None:
        fields = self._fields.get(md_id)
        if fields is not None:
            return fields
        record = self._records.get(md_id)
        if record is None:
            return None
        fields = {m.group(1): m.group(2).strip() for m in _FIELD_RE.finditer(record[1])}
        self._fields[md_id] = fields
        return fields

    def _kind(self, md_id: int | None) -> str | None:
        if md_id is None:
            return None
        record = self._records.get(md_id)
        return record[0] if record is not None else None

    def _file_path(self, file_id: int | None) -> str | None:
        fields = self._record_fields(file_id) if file_id is not None else None
        if fields is None:
            return None
        filename = _unquote(fields.get("filename", '""'))
        directory = _unquote(fields.get("directory", '""'))
        if not directory or filename.startswith("/"):
            return filename
        return posixpath.join(directory, filename)

    def _scope_facts(self, scope_id: int | None) -> tuple[str | None, str | None]:
        """(file of the innermost scope, name of the enclosing subprogram)."""
        file: str | None = None
        seen = 0
        while scope_id is not None and seen < 100_000:
            seen += 1
            kind = self._kind(scope_id)
            fields = self._record_fields(scope_id)
            if kind is None or fields is None:
                break
            if file is None and "file" in fields:
                file = self._file_path(_ref(fields["file"]))
            if kind == "DISubprogram":
                name = fields.get("name")
                return file, _unquote(name) if name is not None else None
            if kind not in _NESTED_SCOPES:
                break
            scope_id = _ref(fields.get("scope"))
        return file, None

    def location(self, md_id: int) -> SourceLocation | None:
        """Source location of DILocation ``!md_id`` (None if it is not a DILocation)."""
        if md_id in self._locations:
            return self._locations[md_id]
        # Follow the inlinedAt chain outwards, then build locations from the outermost call site in.
        chain: list[int] = []
        current: int | None = md_id
        while current is not None and current not in self._locations:
            if self._kind(current) != "DILocation" or current in chain:
                self._locations[current] = None
                break
            chain.append(current)
            fields = self._record_fields(current)
            assert fields is not None
            current = _ref(fields.get("inlinedAt"))
        outer = self._locations.get(current) if current is not None else None
        for loc_id in reversed(chain):
            fields = self._record_fields(loc_id)
            assert fields is not None
            file, function = self._scope_facts(_ref(fields.get("scope")))
            outer = SourceLocation(
                file=file or "",
                line=int(fields.get("line", "0")),
                column=int(fields.get("column", "0")),
                function=function,
                inlined_at=outer,
            )
            self._locations[loc_id] = outer
        return self._locations.get(md_id)

    def _subprogram_id(self, function_name: str) -> int | None:
        found = self._function_subprograms.get(function_name)
        if found is not None:
            return found
        if self._subprograms_by_name is None:
            by_name: dict[str, int] = {}
            for md_id, (kind, _) in self._records.items():
                if kind != "DISubprogram":
                    continue
                fields = self._record_fields(md_id)
                assert fields is not None
                name = fields.get("name")
                if name is None:
                    continue
                key = _unquote(name)
                # A defining subprogram beats a declaration of the same name.
                if key not in by_name or "DISPFlagDefinition" in fields.get("spFlags", ""):
                    by_name[key] = md_id
            self._subprograms_by_name = by_name
        return self._subprograms_by_name.get(function_name)

    def subprogram_file(self, function_name: str) -> str | None:
        """File of the ``DISubprogram`` of IR function ``function_name`` (None if unknown)."""
        md_id = self._subprogram_id(function_name)
        if md_id is None:
            return None
        fields = self._record_fields(md_id)
        assert fields is not None
        return self._file_path(_ref(fields.get("file")))

    def subprogram_line(self, function_name: str) -> int | None:
        """Line where IR function ``function_name`` is defined, per its ``DISubprogram``."""
        md_id = self._subprogram_id(function_name)
        if md_id is None:
            return None
        fields = self._record_fields(md_id)
        assert fields is not None
        line = fields.get("line")
        return int(line) if line is not None else None

    def _declaration(self, md_id: int | None) -> Declaration | None:
        """A DILocalVariable or DIGlobalVariable record as a declaration."""
        fields = self._record_fields(md_id) if md_id is not None else None
        if fields is None or self._kind(md_id) not in ("DILocalVariable", "DIGlobalVariable"):
            return None
        file = self._file_path(_ref(fields.get("file")))
        if file is None:
            file, _ = self._scope_facts(_ref(fields.get("scope")))
        return Declaration(_unquote(fields.get("name", '""')), file or "",
                           int(fields.get("line", "0")))

    def global_declarations(self) -> dict[str, Declaration]:
        """For each global variable of the module carrying debug info, its declaration,
        keyed by IR name (``main.local`` for a static local, ``.str`` for a string literal)."""
        found: dict[str, Declaration] = {}
        for m in _GLOBAL_DBG_RE.finditer(self._module_text):
            expression = self._record_fields(int(m.group(2)))
            if expression is None:
                continue
            declaration = self._declaration(_ref(expression.get("var")))
            if declaration is not None:
                found[_unquote(m.group(1))] = declaration
        return found

    def local_declarations(self, function_name: str) -> dict[str, Declaration]:
        """For each ``alloca`` of function ``function_name`` that holds a C variable, its
        declaration, keyed by the alloca's value name as the IR text writes it (``%2``)."""
        if self._locals is None:
            self._locals = {}
            for header in _FUNCTION_HEADER_RE.finditer(self._module_text):
                end = self._module_text.find("\n}", header.end())
                body = self._module_text[header.end():end if end >= 0 else None]
                declared: dict[str, Declaration] = {}
                for m in _DECLARE_RE.finditer(body):
                    declaration = self._declaration(int(m.group(2)))
                    if declaration is not None:
                        declared.setdefault(m.group(1), declaration)
                self._locals[_unquote(header.group(1))] = declared
        return self._locals.get(function_name, {})
