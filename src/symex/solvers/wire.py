"""The wire format that carries solver queries to portfolio worker processes.

A query is ``(constraints, exprs, arrays)``: the path condition, the expressions the question is
about (the extra condition of a check, or the expressions whose values a model must give) and
the arrays whose contents are wanted. It is flattened into one postorder node table -- children
before parents, each shared node once -- and serialised with :mod:`marshal`, which is fast and
exact for the plain ints, strings and bytes the table holds (sender and receiver always run the
same interpreter, so marshal's version dependence does not matter).

Layout of the encoded tuple ``(arrays, nodes, constraints, exprs, wanted)``:

* ``arrays``: ``(key, name, size, initial-or-None)`` for every array the query mentions, where
  ``key`` is a number the :class:`QueryEncoder` gives each distinct :class:`~symex.expr.Array`
  object for its whole life;
* ``nodes``: a flat int/record stream. Each record starts with a tag: an :class:`~symex.expr.Op`
  value for an expression (operands are indices of earlier expressions; a floating-point
  node's width comes before them, as its operands' widths need not be its own), or ``UPDATE`` for a
  write ``(index, value, older-write-or--1)`` of an update list (indices of earlier writes);
* ``constraints``/``exprs``: expression indices; ``wanted``: indices into ``arrays``.

The :class:`QueryDecoder` rebuilds expressions with the smart constructors, so they are interned
in the receiving process like any others. It keeps arrays and update-list writes alive between
queries: a worker's incremental session recognises the constraints of the previous query by
identity, which only works when the same array (and the same write) decodes to the same object.
"""

from __future__ import annotations

import itertools
import marshal
import weakref
from collections.abc import Callable, Sequence

from symex import expr as _expr
from symex.errors import SolverError
from symex.expr import FLOAT_OPS, Array, Expr, Op, UpdateList, UpdateNode, float_op
from symex.expr.float_build import FLOAT_ARITY

__all__ = ["UPDATE", "QueryDecoder", "QueryEncoder", "WireQuery"]

UPDATE = 255
"""Record tag of an update-list write in the node stream (not an :class:`Op` value)."""

_CONST = Op.CONST
_READ = Op.READ
_SELECT = Op.SELECT
_CONCAT = Op.CONCAT
_EXTRACT = Op.EXTRACT
_ZEXT = Op.ZEXT
_SEXT = Op.SEXT
_NOT = Op.NOT
_FLOAT_OPS = FLOAT_OPS
# marshal refuses int subclasses such as IntEnum members, so the stream holds plain ints.
_CONST_TAG = Op.CONST.value
_READ_TAG = Op.READ.value
_EXTRACT_TAG = Op.EXTRACT.value

# Above this many remembered writes the decoder forgets them: identity of writes only speeds
# up the receiving session (its translation cache), it never changes an answer.
_WRITE_MEMO_LIMIT = 200_000

WireQuery = tuple[tuple[Expr, ...], tuple[Expr, ...], tuple[Array, ...]]
"""A decoded query: ``(constraints, exprs, arrays)``."""


class QueryEncoder:
    """Serialises queries; one encoder per receiving process keeps array keys stable."""

    __slots__ = ("_keys", "_counter")

    def __init__(self) -> None:
        """Start with no arrays numbered."""
        # Weak keys: a numbered array must not be kept alive by the encoder, and a dead array's
        # key is never handed out again (the counter only grows), so keys cannot be confused.
        self._keys: weakref.WeakKeyDictionary[Array, int] = weakref.WeakKeyDictionary()
        self._counter = itertools.count()

    def _key(self, array: Array) -> int:
        key = self._keys.get(array)
        if key is None:
            key = next(self._counter)
            self._keys[array] = key
        return key

    def encode(
        self, constraints: Sequence[Expr], exprs: Sequence[Expr], arrays: Sequence[Array]
    ) -> bytes:
        """The wire bytes of one query (see the module docstring for the layout)."""
        order = _expr.postorder([*constraints, *exprs])
        index_of: dict[Expr, int] = {}
        write_index: dict[UpdateNode, int] = {}
        array_index: dict[Array, int] = {}
        array_table: list[tuple[int, str, int, bytes | None]] = []

        def array_slot(array: Array) -> int:
            slot = array_index.get(array)
            if slot is None:
                slot = len(array_table)
                array_index[array] = slot
                array_table.append((self._key(array), array.name, array.size, array.initial))
            return slot

        nodes: list[int] = []
        append = nodes.append
        extend = nodes.extend
        for e in order:
            op = e.op
            args = e.args
            if op is _CONST:
                extend((_CONST_TAG, e.width, e.value))
            elif op is _READ:
                updates = e.updates
                assert updates is not None
                # postorder emitted every write's index and value already; the writes not yet
                # in the table are emitted oldest first so each refers to an earlier one.
                fresh: list[UpdateNode] = []
                node = updates.head
                while node is not None and node not in write_index:
                    fresh.append(node)
                    node = node.next
                for node in reversed(fresh):
                    older = node.next
                    write_index[node] = len(write_index)
                    extend((
                        UPDATE,
                        index_of[node.index],
                        index_of[node.value],
                        -1 if older is None else write_index[older],
                    ))
                head = updates.head
                extend((
                    _READ_TAG,
                    array_slot(updates.array),
                    -1 if head is None else write_index[head],
                    index_of[args[0]],
                ))
            elif op is _EXTRACT:
                extend((_EXTRACT_TAG, e.width, e.value, index_of[args[0]]))
            elif op is _ZEXT or op is _SEXT:
                extend((op.value, e.width, index_of[args[0]]))
            elif op in _FLOAT_OPS:
                extend((op.value, e.width))
                for a in args:
                    append(index_of[a])
            else:
                append(op.value)
                for a in args:
                    append(index_of[a])
            index_of[e] = len(index_of)
        wanted = [array_slot(a) for a in arrays]
        return marshal.dumps((
            array_table,
            nodes,
            [index_of[c] for c in constraints],
            [index_of[x] for x in exprs],
            wanted,
        ))


class QueryDecoder:
    """Rebuilds queries from wire bytes; one decoder per sending encoder.

    Arrays are remembered by key for the decoder's life, so the same sender-side array always
    decodes to the same :class:`~symex.expr.Array` object.
    """

    __slots__ = ("_arrays", "_writes", "_array_of")

    def __init__(self, array_of: Callable[[str, int, bytes | None], Array] | None = None) -> None:
        """Start with no arrays or writes known. ``array_of`` (name, size, initial contents)
        gives the receiver's own array for a sender's (a parallel worker's input arrays, one
        per name); without it every array the sender numbered is made anew."""
        self._array_of = array_of
        self._arrays: dict[int, Array] = {}
        self._writes: dict[tuple[Expr, Expr, UpdateNode | None], UpdateNode] = {}

    def _array(self, key: int, name: str, size: int, initial: bytes | None) -> Array:
        array = self._arrays.get(key)
        if array is None:
            array = (Array(name, size, initial) if self._array_of is None
                     else self._array_of(name, size, initial))
            self._arrays[key] = array
        return array

    def decode(self, data: bytes) -> WireQuery:
        """The ``(constraints, exprs, arrays)`` the bytes were encoded from."""
        try:
            array_table, nodes, constraint_ix, expr_ix, wanted = marshal.loads(data)
        except (ValueError, EOFError, TypeError) as exc:
            raise SolverError(f"malformed solver query on the wire ({exc}); report this bug") from None
        arrays = [self._array(*row) for row in array_table]
        if len(self._writes) > _WRITE_MEMO_LIMIT:
            self._writes.clear()
        writes_memo = self._writes
        exprs: list[Expr] = []
        push = exprs.append
        writes: list[UpdateNode] = []
        binary = _expr.binary
        i = 0
        n = len(nodes)
        while i < n:
            tag = nodes[i]
            if tag == UPDATE:
                index = exprs[nodes[i + 1]]
                value = exprs[nodes[i + 2]]
                older_ix = nodes[i + 3]
                older = None if older_ix < 0 else writes[older_ix]
                memo_key = (index, value, older)
                node = writes_memo.get(memo_key)
                if node is None:
                    node = UpdateNode(index, value, older)
                    writes_memo[memo_key] = node
                writes.append(node)
                i += 4
                continue
            op = Op(tag)
            if op is _CONST:
                push(_expr.const(nodes[i + 2], nodes[i + 1]))
                i += 3
            elif op is _READ:
                head_ix = nodes[i + 2]
                updates = UpdateList(arrays[nodes[i + 1]], None if head_ix < 0 else writes[head_ix])
                push(_expr.read(updates, exprs[nodes[i + 3]]))
                i += 4
            elif op is _EXTRACT:
                push(_expr.extract(exprs[nodes[i + 3]], nodes[i + 2], nodes[i + 1]))
                i += 4
            elif op is _ZEXT:
                push(_expr.zext(exprs[nodes[i + 2]], nodes[i + 1]))
                i += 3
            elif op is _SEXT:
                push(_expr.sext(exprs[nodes[i + 2]], nodes[i + 1]))
                i += 3
            elif op is _NOT:
                push(_expr.not_(exprs[nodes[i + 1]]))
                i += 2
            elif op is _SELECT:
                push(_expr.ite(exprs[nodes[i + 1]], exprs[nodes[i + 2]], exprs[nodes[i + 3]]))
                i += 4
            elif op is _CONCAT:
                push(_expr.concat(exprs[nodes[i + 1]], exprs[nodes[i + 2]]))
                i += 3
            elif op in _FLOAT_OPS:
                arity = FLOAT_ARITY[op]
                push(float_op(op, [exprs[k] for k in nodes[i + 2:i + 2 + arity]], nodes[i + 1]))
                i += 2 + arity
            else:
                push(binary(op, exprs[nodes[i + 1]], exprs[nodes[i + 2]]))
                i += 3
        return (
            tuple(exprs[k] for k in constraint_ix),
            tuple(exprs[k] for k in expr_ix),
            tuple(arrays[k] for k in wanted),
        )

