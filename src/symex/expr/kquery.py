"""Reader and writer for KLEE's KQuery language (``.kquery`` query logs).

:func:`parse_kquery` turns text such as::

    array arr[3] : w32 -> w8 = symbolic
    (query [(Eq 0 N0:(Read w8 0 arr))] (Ult N0 5) [N0] [arr])

into :class:`KQuery` values built with the smart constructors of :mod:`symex.expr`;
:func:`write_kquery` prints queries back in a form the reader turns into the same expressions.
Both walk the text and the expression DAG with explicit stacks: nesting depth grows with
program paths and must not hit Python's recursion limit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

import attrs

from symex.errors import QueryFormatError
from symex.expr.float_build import FLOAT_NODE_NAMES, float_node_named
from symex.expr.printing import OP_NAMES
from symex.expr.build import (
    FALSE,
    TRUE,
    add,
    and_,
    ashr,
    concat,
    const,
    eq,
    extract,
    ite,
    lshr,
    mul,
    ne,
    neg,
    not_,
    or_,
    read,
    sdiv,
    sext,
    sge,
    sgt,
    shl,
    sle,
    slt,
    srem,
    sub,
    udiv,
    uge,
    ugt,
    ule,
    ult,
    urem,
    xor,
    zext,
)
from symex.expr.nodes import ELEMENT_WIDTH, INDEX_WIDTH, Array, Expr, Op, UpdateList, UpdateNode
from symex.expr.walk import arrays_in, postorder

__all__ = ["KQuery", "parse_kquery", "write_kquery"]


@attrs.frozen
class KQuery:
    """One ``(query [constraints] query [values] [arrays])`` command of a KQuery file.

    KLEE asks whether the constraints imply ``query``; ``values`` are expressions and
    ``arrays`` are arrays whose values it wants in a model of the constraints.
    """

    constraints: tuple[Expr, ...]
    """Width-1 expressions assumed true (the path condition)."""
    query: Expr
    """The width-1 expression asked about."""
    values: tuple[Expr, ...] = ()
    """Expressions to evaluate in a model (KLEE's ``getValue`` queries)."""
    arrays: tuple[Array, ...] = ()
    """Arrays whose contents are wanted (KLEE's ``getInitialValues`` queries)."""


# ---------------------------------------------------------------------------------------------
# Tokens

_TOKEN_RE = re.compile(
    r"""
    (?P<skip>[\s,]+|\#[^\n]*)
    |(?P<arrow>->)
    |(?P<punct>[()\[\]=@:])
    |(?P<num>[-+]?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|[0-9]+))
    |(?P<word>[A-Za-z_][A-Za-z0-9_.]*)
    |(?P<bad>.)
    """,
    re.VERBOSE,
)
_WIDTH_RE = re.compile(r"w([0-9]+)\Z")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\Z")
_LABEL_LIKE_RE = re.compile(r"[NU][0-9]+\Z|w[0-9]+\Z")
_RESERVED = frozenset({"array", "query", "symbolic", "true", "false"})

_WORD = "word"
_NUM = "num"
_END = "end of input"


class _Number:
    """An integer literal whose width comes from where it is used (``(Eq 0 x)``)."""

    __slots__ = ("value", "pos")

    def __init__(self, value: int, pos: int) -> None:
        self.value = value
        self.pos = pos


class _ListValue:
    """A finished ``[...]`` not followed by ``@``: the lists of a query command."""

    __slots__ = ("items", "pos")

    def __init__(self, items: list[object], pos: int) -> None:
        self.items = items
        self.pos = pos


_EQUALS = object()
"""Marks ``=`` between the index and the value of a write inside ``[...]``."""

_OP_FRAME = 0
_CONST_FRAME = 1
_LIST_FRAME = 2
_VERSION_FRAME = 3
_QUERY_FRAME = 4


class _Frame:
    """An open construct on the parser's stack."""

    __slots__ = ("kind", "name", "width", "items", "label", "pos")

    def __init__(
        self, kind: int, name: str, width: int | None, label: str | None, pos: int
    ) -> None:
        self.kind = kind
        self.name = name
        self.width = width
        self.items: list[object] = []
        self.label = label
        self.pos = pos


_BINARY: dict[str, Callable[[Expr, Expr], Expr]] = {
    "Add": add,
    "Sub": sub,
    "Mul": mul,
    "UDiv": udiv,
    "SDiv": sdiv,
    "URem": urem,
    "SRem": srem,
    "And": and_,
    "Or": or_,
    "Xor": xor,
    "Shl": shl,
    "LShr": lshr,
    "AShr": ashr,
}
_COMPARISON: dict[str, Callable[[Expr, Expr], Expr]] = {
    "Eq": eq,
    "Ne": ne,
    "Ult": ult,
    "Ule": ule,
    "Ugt": ugt,
    "Uge": uge,
    "Slt": slt,
    "Sle": sle,
    "Sgt": sgt,
    "Sge": sge,
}
_OTHER_OPS = frozenset(
    {"Not", "Neg", "Select", "Concat", "Extract", "ZExt", "SExt", "Read", "ReadLSB", "ReadMSB"}
)


def parse_kquery(text: str, *, arrays: Mapping[str, Array] | None = None) -> list[KQuery]:
    """Parse every ``(query ...)`` command of KQuery ``text``, in order.

    Array declarations (``array a[4] : w32 -> w8 = symbolic`` or ``= [1 2 3 4]``) stay in
    scope for the rest of the text; labels (``N0:``, ``U0:``) only within their query. A
    declaration whose name is in ``arrays`` with the same size and contents yields that
    :class:`Array` object instead of a new one (so expressions can be compared with ``is``),
    as does repeating an identical declaration. Raises QueryFormatError, with the line, for text
    that is not valid KQuery or uses a width or construct symex does not support.
    """
    return _Parser(text, dict(arrays) if arrays is not None else {}).parse()


class _Parser:
    """Single-use KQuery parser over a token list."""

    def __init__(self, text: str, known: dict[str, Array]) -> None:
        self.text = text
        self.known = known
        self.tokens: list[tuple[str, str, int]] = []
        for m in _TOKEN_RE.finditer(text):
            kind = m.lastgroup
            assert kind is not None
            if kind == "skip":
                continue
            if kind == "bad":
                raise self.error(f"unexpected character {m.group()!r}", m.start())
            value = m.group()
            self.tokens.append((value if kind in ("punct", "arrow") else kind, value, m.start()))
        self.tokens.append((_END, "", len(text)))
        self.i = 0
        self.arrays: dict[str, Array] = {}
        self.expr_labels: dict[str, Expr] = {}
        self.version_labels: dict[str, UpdateList] = {}

    # -- helpers ------------------------------------------------------------------------------

    def error(self, message: str, pos: int) -> QueryFormatError:
        line = self.text.count("\n", 0, pos) + 1
        column = pos - (self.text.rfind("\n", 0, pos) + 1) + 1
        return QueryFormatError(f"KQuery line {line}, column {column}: {message}")

    def next(self) -> tuple[str, str, int]:
        tok = self.tokens[self.i]
        if tok[0] != _END:
            self.i += 1
        return tok

    def expect(self, kind: str, what: str) -> tuple[str, str, int]:
        tok = self.next()
        if tok[0] != kind:
            raise self.error(f"expected {what}, found {tok[1] or tok[0]!r}", tok[2])
        return tok

    def number(self, text: str) -> int:
        return int(text, 0) if not re.fullmatch(r"[-+]?0[0-9]+", text) else int(text, 10)

    def width_token(self, what: str) -> int:
        tok = self.expect(_WORD, f"a width such as w32 ({what})")
        m = _WIDTH_RE.match(tok[1])
        if m is None or int(m.group(1)) == 0:
            raise self.error(f"expected a width such as w32 ({what}), found {tok[1]!r}", tok[2])
        return int(m.group(1))

    # -- top level ----------------------------------------------------------------------------

    def parse(self) -> list[KQuery]:
        result: list[KQuery] = []
        while True:
            kind, value, pos = self.tokens[self.i]
            if kind == _END:
                return result
            if kind == _WORD and value == "array":
                self.i += 1
                self.parse_array()
            elif kind == "(":
                nxt = self.tokens[self.i + 1]
                if nxt[0] != _WORD or nxt[1] != "query":
                    raise self.error(
                        f"expected a (query ...) command, found ({nxt[1] or nxt[0]}", nxt[2]
                    )
                self.expr_labels.clear()
                self.version_labels.clear()
                result.append(self.parse_query())
            else:
                raise self.error(
                    f"expected `array` or `(query`, found {value or kind!r}", pos
                )

    def parse_array(self) -> None:
        _, name, pos = self.expect(_WORD, "an array name")
        self.expect("[", "`[` and the array size")
        size = self.number(self.expect(_NUM, "the array size")[1])
        self.expect("]", "`]`")
        self.expect(":", "`:`")
        index_width = self.width_token("index type")
        self.expect("->", "`->`")
        element_width = self.width_token("element type")
        if index_width != INDEX_WIDTH or element_width != ELEMENT_WIDTH:
            raise self.error(
                f"array {name!r} is w{index_width} -> w{element_width}; symex supports only "
                f"w{INDEX_WIDTH} -> w{ELEMENT_WIDTH} arrays",
                pos,
            )
        self.expect("=", "`=`")
        tok = self.next()
        initial: bytes | None
        if tok[0] == _WORD and tok[1] == "symbolic":
            initial = None
        elif tok[0] == "[":
            values: list[int] = []
            while self.tokens[self.i][0] == _NUM:
                v = self.number(self.next()[1])
                values.append(v & 0xFF)
            self.expect("]", "`]` closing the constant array contents")
            if len(values) != size:
                raise self.error(
                    f"constant array {name!r} has size {size} but {len(values)} values", pos
                )
            initial = bytes(values)
        else:
            raise self.error("expected `symbolic` or `[values...]` after `=`", tok[2])
        for candidate in (self.known.get(name), self.arrays.get(name)):
            if candidate is not None and candidate.size == size and candidate.initial == initial:
                self.arrays[name] = candidate
                return
        self.arrays[name] = Array(name, size, initial)

    # -- expressions --------------------------------------------------------------------------

    def parse_query(self) -> KQuery:
        stack: list[_Frame] = []
        label: str | None = None

        def emit(value: object, pos: int) -> None:
            while True:
                top = stack[-1]
                if top.kind == _VERSION_FRAME:
                    stack.pop()
                    value = self.finish_version(top, value, pos)
                    continue
                top.items.append(value)
                return

        while True:
            kind, value, pos = self.next()
            if kind == "(":
                _, name, npos = self.expect(_WORD, "an operation name after `(`")
                if not stack:
                    stack.append(_Frame(_QUERY_FRAME, name, None, None, pos))
                    continue
                m = _WIDTH_RE.match(name)
                if m is not None:
                    stack.append(_Frame(_CONST_FRAME, name, int(m.group(1)), label, pos))
                elif name in _BINARY or name in _COMPARISON or name in _OTHER_OPS \
                        or name in FLOAT_NODE_NAMES:
                    width: int | None = None
                    nxt = self.tokens[self.i]
                    if nxt[0] == _WORD and _WIDTH_RE.match(nxt[1]):
                        width = self.width_token(name)
                    stack.append(_Frame(_OP_FRAME, name, width, label, pos))
                else:
                    raise self.error(f"unknown operation {name!r}", npos)
                label = None
            elif kind == "[":
                stack.append(_Frame(_LIST_FRAME, "[", None, label, pos))
                label = None
            elif kind == "]":
                frame = stack.pop() if stack else None
                if frame is None or frame.kind != _LIST_FRAME:
                    raise self.error("`]` without a matching `[`", pos)
                if self.tokens[self.i][0] == "@":
                    self.i += 1
                    frame.kind = _VERSION_FRAME
                    stack.append(frame)
                    continue
                if frame.label is not None:
                    raise self.error(f"label {frame.label!r} on a list; only expressions "
                                     "and update lists take labels", frame.pos)
                emit(_ListValue(frame.items, frame.pos), pos)
            elif kind == ")":
                if not stack or stack[-1].kind in (_LIST_FRAME, _VERSION_FRAME):
                    raise self.error("`)` without a matching `(`", pos)
                frame = stack.pop()
                if frame.kind == _QUERY_FRAME:
                    return self.finish_query(frame)
                expr = self.finish_op(frame)
                if frame.label is not None:
                    self.bind_expr(frame.label, expr, frame.pos)
                emit(expr, pos)
            elif kind == _WORD:
                if not stack:
                    raise self.error(f"unexpected {value!r}", pos)
                if self.tokens[self.i][0] == ":":
                    if label is not None:
                        raise self.error(f"two labels in a row: {label!r} and {value!r}", pos)
                    self.i += 1
                    label = value
                    continue
                item: object
                if value == "true":
                    item = TRUE
                elif value == "false":
                    item = FALSE
                elif value in self.expr_labels:
                    item = self.expr_labels[value]
                elif value in self.version_labels:
                    item = self.version_labels[value]
                elif value in self.arrays:
                    item = self.arrays[value]
                else:
                    raise self.error(
                        f"unknown name {value!r}: declare arrays with `array` before the query "
                        "and define labels (NAME:expr) before using them",
                        pos,
                    )
                if label is not None:
                    if not isinstance(item, Expr):
                        raise self.error(f"label {label!r} on {value!r}, which is no expression", pos)
                    self.bind_expr(label, item, pos)
                    label = None
                emit(item, pos)
            elif kind == _NUM:
                if not stack:
                    raise self.error(f"unexpected number {value!r}", pos)
                if label is not None:
                    raise self.error(
                        f"label {label!r} on the untyped number {value}; write (wN {value})", pos
                    )
                emit(_Number(self.number(value), pos), pos)
            elif kind == "=":
                if not stack or stack[-1].kind != _LIST_FRAME:
                    raise self.error("`=` outside an update list `[index=value ...]`", pos)
                stack[-1].items.append(_EQUALS)
            elif kind == _END:
                raise self.error("unexpected end of input: a `(query` is not closed", pos)
            else:
                raise self.error(f"unexpected {value!r}", pos)

    def bind_expr(self, label: str, expr: Expr, pos: int) -> None:
        if label in self.expr_labels or label in self.version_labels:
            raise self.error(f"label {label!r} is defined twice in one query", pos)
        self.expr_labels[label] = expr

    def typed(self, item: object, width: int | None, frame: _Frame) -> Expr:
        if isinstance(item, Expr):
            return item
        if isinstance(item, _Number):
            if width is None:
                raise self.error(
                    f"cannot infer the width of the number {item.value} in ({frame.name} ...); "
                    f"write it as (wN {item.value})",
                    item.pos,
                )
            return const(item.value % (1 << width), width)
        raise self.error(f"({frame.name} ...) expects an expression here", frame.pos)

    def version(self, item: object, frame: _Frame) -> UpdateList:
        if isinstance(item, UpdateList):
            return item
        if isinstance(item, Array):
            return UpdateList(item)
        raise self.error(
            f"({frame.name} ...) expects an array or update list `[i=v ...] @ array`", frame.pos
        )

    def finish_version(self, frame: _Frame, tail: object, pos: int) -> UpdateList:
        if isinstance(tail, Array):
            updates = UpdateList(tail)
        elif isinstance(tail, UpdateList):
            updates = tail
        else:
            raise self.error("expected an array or update-list label after `@`", pos)
        items = frame.items
        if len(items) % 3 or any(items[k] is not _EQUALS for k in range(1, len(items), 3)):
            raise self.error("an update list is `[index=value ...] @ array`", frame.pos)
        writes: list[tuple[Expr, Expr]] = []
        for k in range(0, len(items), 3):
            index = self.typed(items[k], INDEX_WIDTH, frame)
            value = self.typed(items[k + 2], ELEMENT_WIDTH, frame)
            if index.width != INDEX_WIDTH or value.width != ELEMENT_WIDTH:
                raise self.error(
                    f"update list writes must be w{INDEX_WIDTH}=w{ELEMENT_WIDTH}, got "
                    f"w{index.width}=w{value.width}",
                    frame.pos,
                )
            writes.append((index, value))
        # The text lists the newest write first.
        for index, value in reversed(writes):
            updates = updates.write(index, value)
        if frame.label is not None:
            if frame.label in self.expr_labels or frame.label in self.version_labels:
                raise self.error(f"label {frame.label!r} is defined twice in one query", frame.pos)
            self.version_labels[frame.label] = updates
        return updates

    def finish_query(self, frame: _Frame) -> KQuery:
        items = frame.items
        if not 2 <= len(items) <= 4 or not isinstance(items[0], _ListValue):
            raise self.error(
                "a query is (query [constraints] expr [values] [arrays])", frame.pos
            )
        constraints: list[Expr] = []
        for c in items[0].items:
            e = self.typed(c, 1, frame)
            if e.width != 1:
                raise self.error(f"constraint of width {e.width}; constraints are w1", frame.pos)
            constraints.append(e)
        query = self.typed(items[1], 1, frame)
        if query.width != 1:
            raise self.error(f"query expression of width {query.width}; it must be w1", frame.pos)
        values: list[Expr] = []
        arrays: list[Array] = []
        if len(items) >= 3:
            if not isinstance(items[2], _ListValue):
                raise self.error("expected the [values] list of the query", frame.pos)
            values = [self.typed(v, None, frame) for v in items[2].items]
        if len(items) == 4:
            if not isinstance(items[3], _ListValue):
                raise self.error("expected the [arrays] list of the query", frame.pos)
            for a in items[3].items:
                if not isinstance(a, Array):
                    raise self.error("the last list of a query names arrays", items[3].pos)
                arrays.append(a)
        return KQuery(tuple(constraints), query, tuple(values), tuple(arrays))

    def finish_op(self, frame: _Frame) -> Expr:
        name = frame.name
        items = frame.items
        w = frame.width
        try:
            if frame.kind == _CONST_FRAME:
                assert w is not None
                if len(items) != 1 or not isinstance(items[0], (_Number, Expr)):
                    raise self.error(f"a typed constant is ({name} NUMBER)", frame.pos)
                item = items[0]
                if isinstance(item, Expr):
                    if item.op is not Op.CONST or item.width != w:
                        raise self.error(f"a typed constant is ({name} NUMBER)", frame.pos)
                    return item
                return const(item.value % (1 << w), w)
            if name in _BINARY or name in _COMPARISON:
                self.arity(frame, 2)
                a, b = items
                comparison = name in _COMPARISON
                if comparison and w is not None and w != 1:
                    raise self.error(f"({name} ...) has width 1, not w{w}", frame.pos)
                ow = None if comparison else w
                if ow is None:
                    for x in items:
                        if isinstance(x, Expr):
                            ow = x.width
                            break
                builder = _BINARY[name] if not comparison else _COMPARISON[name]
                return builder(self.typed(a, ow, frame), self.typed(b, ow, frame))
            if name in FLOAT_NODE_NAMES:
                try:
                    return float_node_named(name, [self.typed(x, None, frame) for x in items], w)
                except ValueError as exc:
                    raise self.error(f"({name} ...): {exc}", frame.pos) from None
            if name == "Not" or name == "Neg":
                self.arity(frame, 1)
                e = self.typed(items[0], w, frame)
                return not_(e) if name == "Not" else neg(e)
            if name == "Select":
                self.arity(frame, 3)
                ow = w
                if ow is None:
                    for x in items[1:]:
                        if isinstance(x, Expr):
                            ow = x.width
                            break
                return ite(
                    self.typed(items[0], 1, frame),
                    self.typed(items[1], ow, frame),
                    self.typed(items[2], ow, frame),
                )
            if name == "Concat":
                if len(items) < 2:
                    raise self.error("(Concat ...) takes at least two expressions", frame.pos)
                parts = [self.typed(x, None, frame) for x in items]
                result = parts[-1]
                for part in reversed(parts[:-1]):
                    result = concat(part, result)
                if w is not None and result.width != w:
                    raise self.error(
                        f"(Concat w{w} ...) of parts totalling {result.width} bits", frame.pos
                    )
                return result
            if name == "Extract":
                self.arity(frame, 2)
                if w is None or not isinstance(items[0], _Number):
                    raise self.error("extraction is (Extract wN OFFSET expr)", frame.pos)
                return extract(self.typed(items[1], None, frame), items[0].value, w)
            if name == "ZExt" or name == "SExt":
                self.arity(frame, 1)
                if w is None:
                    raise self.error(f"({name} wN expr) needs its result width", frame.pos)
                e = self.typed(items[0], None, frame)
                return zext(e, w) if name == "ZExt" else sext(e, w)
            # Read, ReadLSB, ReadMSB
            self.arity(frame, 2)
            if w is None:
                w = ELEMENT_WIDTH
            if w % ELEMENT_WIDTH or (name == "Read" and w != ELEMENT_WIDTH):
                raise self.error(
                    f"({name} w{w} ...) must read w8 (Read) or a multiple of 8 bits", frame.pos
                )
            index = self.typed(items[0], INDEX_WIDTH, frame)
            updates = self.version(items[1], frame)
            count = w // ELEMENT_WIDTH
            byte_reads = [
                read(updates, index if k == 0 else add(index, const(k, INDEX_WIDTH)))
                for k in range(count)
            ]
            if name == "ReadMSB":
                byte_reads.reverse()
            # byte_reads[0] is the least significant byte.
            value = byte_reads[0]
            for b in byte_reads[1:]:
                value = concat(b, value)
            return value
        except (ValueError, TypeError) as exc:
            raise self.error(f"invalid ({name} ...): {exc}", frame.pos) from None

    def arity(self, frame: _Frame, n: int) -> None:
        if len(frame.items) != n:
            raise self.error(
                f"({frame.name} ...) takes {n} operand(s), got {len(frame.items)}", frame.pos
            )


# ---------------------------------------------------------------------------------------------
# Writer


def write_kquery(queries: Iterable[KQuery]) -> str:
    """KQuery text of ``queries``: array declarations before each query, then the query.

    Subexpressions and update-list tails used more than once are printed once with a label
    (``N0:``/``U0:``) and referenced afterwards, so the text stays linear in the DAG size.
    Constants print as ``(wN value)`` (``true``/``false`` for width 1). Arrays keep their names
    unless two arrays share one or a name is not a KQuery identifier; :func:`parse_kquery`
    (given the arrays by name) reads the text back to the same expressions.
    """
    names: dict[Array, str] = {}
    used: set[str] = set()
    out: list[str] = []
    for q in queries:
        roots = [*q.constraints, q.query, *q.values]
        wanted = arrays_in(roots)
        for a in q.arrays:
            if a not in wanted:
                wanted.append(a)
        for a in wanted:
            if a not in names:
                name = a.name
                if not _NAME_RE.match(name) or _LABEL_LIKE_RE.match(name) or name in _RESERVED:
                    name = "arr_" + re.sub(r"[^A-Za-z0-9_]", "_", name)
                base, k = name, 0
                while name in used:
                    k += 1
                    name = f"{base}_{k}"
                used.add(name)
                names[a] = name
            out.append(_declaration(a, names[a]))
        out.append(_QueryWriter(names, roots).write(q))
    return "\n".join(out) + ("\n" if out else "")


def _declaration(a: Array, name: str) -> str:
    if a.initial is None:
        contents = "symbolic"
    else:
        contents = "[" + " ".join(str(b) for b in a.initial) + "]"
    return f"array {name}[{a.size}] : w{INDEX_WIDTH} -> w{ELEMENT_WIDTH} = {contents}"


class _QueryWriter:
    """Prints one query, labelling shared expressions and update-list tails."""

    def __init__(self, names: dict[Array, str], roots: list[Expr]) -> None:
        self.names = names
        uses: dict[Expr, int] = {}
        node_uses: dict[UpdateNode, int] = {}
        for r in roots:
            uses[r] = uses.get(r, 0) + 1
        nodes: list[UpdateNode] = []
        for e in postorder(roots):
            if e.op is Op.READ:
                assert e.updates is not None
                uses[e.args[0]] = uses.get(e.args[0], 0) + 1
                head = e.updates.head
                if head is not None:
                    if head not in node_uses:
                        nodes.append(head)
                    node_uses[head] = node_uses.get(head, 0) + 1
            else:
                for c in e.args:
                    uses[c] = uses.get(c, 0) + 1
        # Every write node once, counting how many reads or newer writes lead to it.
        k = 0
        while k < len(nodes):
            node = nodes[k]
            k += 1
            for c in (node.index, node.value):
                uses[c] = uses.get(c, 0) + 1
            nxt = node.next
            if nxt is not None:
                if nxt not in node_uses:
                    nodes.append(nxt)
                node_uses[nxt] = node_uses.get(nxt, 0) + 1
        self.shared = {e for e, n in uses.items() if n > 1 and e.op is not Op.CONST}
        self.shared_nodes = {n for n, c in node_uses.items() if c > 1}
        self.labels: dict[Expr, str] = {}
        self.node_labels: dict[UpdateNode, str] = {}

    def write(self, q: KQuery) -> str:
        parts = ["(query ["]
        parts.append("\n        ".join(self.expr(c) for c in q.constraints))
        parts.append("]\n       ")
        parts.append(self.expr(q.query))
        if q.values or q.arrays:
            parts.append("\n       [")
            parts.append("\n        ".join(self.expr(v) for v in q.values))
            parts.append("]")
        if q.arrays:
            parts.append("\n       [")
            parts.append(" ".join(self.names[a] for a in q.arrays))
            parts.append("]")
        parts.append(")")
        return "".join(parts)

    def expr(self, root: Expr) -> str:
        parts: list[str] = []
        # Pending output: strings verbatim, expressions and (write node, array) versions to
        # expand; pushed in reverse so they pop in text order.
        stack: list[object] = [root]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                parts.append(item)
                continue
            if isinstance(item, tuple):
                self.version(item[0], item[1], parts, stack)
                continue
            assert isinstance(item, Expr)
            e = item
            if e.op is Op.CONST:
                if e.width == 1:
                    parts.append("true" if e.value else "false")
                else:
                    parts.append(f"(w{e.width} {e.value})")
                continue
            label = self.labels.get(e)
            if label is not None:
                parts.append(label)
                continue
            if e in self.shared:
                label = f"N{len(self.labels)}"
                self.labels[e] = label
                parts.append(label + ":")
            op = e.op
            pending: list[object]
            if op is Op.READ:
                assert e.updates is not None
                pending = [
                    f"(Read w{ELEMENT_WIDTH} ", e.args[0], " ",
                    (e.updates.head, e.updates.array), ")",
                ]
            elif op is Op.EXTRACT:
                pending = [f"(Extract w{e.width} {e.value} ", e.args[0], ")"]
            else:
                name = OP_NAMES[op]
                head = f"({name}" if op in _WIDTHLESS else f"({name} w{e.width}"
                pending = [head]
                for c in e.args:
                    pending.append(" ")
                    pending.append(c)
                pending.append(")")
            stack.extend(reversed(pending))
        return "".join(parts)

    def version(
        self, node: UpdateNode | None, array: Array, parts: list[str], stack: list[object]
    ) -> None:
        if node is None:
            parts.append(self.names[array])
            return
        label = self.node_labels.get(node)
        if label is not None:
            parts.append(label)
            return
        if node in self.shared_nodes:
            label = f"U{len(self.node_labels)}"
            self.node_labels[node] = label
            parts.append(label + ":")
        pending: list[object] = ["["]
        current: UpdateNode | None = node
        first = True
        # A segment ends where a shared tail starts, so the tail can get its own label.
        while current is not None and (first or current not in self.shared_nodes):
            if not first:
                pending.append(", ")
            pending += [current.index, "=", current.value]
            first = False
            current = current.next
        pending += ["] @ ", (current, array)]
        stack.extend(reversed(pending))


# As KLEE prints them: comparisons carry no width (it is always 1).
_WIDTHLESS = frozenset({Op.EQ, Op.ULT, Op.ULE, Op.SLT, Op.SLE, Op.FOEQ, Op.FOLT, Op.FOLE})
