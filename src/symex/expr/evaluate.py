"""Concrete evaluation of expressions under an assignment of bytes to symbolic arrays."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from symex.expr.build import BINARY_SEMANTICS, to_signed
from symex.expr.float_build import FLOAT_OPS, node_value
from symex.expr.nodes import Array, Expr, Op, UpdateNode

__all__ = ["Assignment", "apply_node", "evaluate"]

_CONST = Op.CONST
_READ = Op.READ
_SELECT = Op.SELECT
_CONCAT = Op.CONCAT
_EXTRACT = Op.EXTRACT
_ZEXT = Op.ZEXT
_SEXT = Op.SEXT
_NOT = Op.NOT


class Assignment:
    """Bytes for symbolic arrays; evaluates expressions to unsigned ints (memoized).

    Arrays missing from ``values`` and bytes past the end of a given value read as
    ``default``. Constant arrays always read their ``initial`` bytes (0 past their end,
    matching how :func:`symex.expr.read` folds constant indices).
    """

    __slots__ = ("values", "default", "_memo")

    values: dict[Array, bytes]
    default: int

    def __init__(self, values: Mapping[Array, bytes | bytearray], default: int = 0) -> None:
        """Assign ``values[array]`` to each symbolic array; other bytes read as ``default``."""
        if not 0 <= default <= 0xFF:
            raise ValueError(f"default must be a byte value in [0, 255], got {default}")
        self.values = {array: bytes(data) for array, data in values.items()}
        self.default = default
        self._memo: dict[Expr, int] = {}

    @property
    def memo_size(self) -> int:
        """How many subexpression values this assignment remembers."""
        return len(self._memo)

    def forget(self) -> None:
        """Drop the remembered values (they are recomputed when asked again)."""
        self._memo = {}

    def _byte(self, array: Array, i: int) -> int:
        initial = array.initial
        if initial is not None:
            return initial[i] if i < len(initial) else 0
        data = self.values.get(array)
        if data is None or i >= len(data):
            return self.default
        return data[i]

    def evaluate(self, e: Expr) -> int:
        """The value of ``e`` as an unsigned int in ``[0, 2**e.width)``."""
        memo = self._memo
        found = memo.get(e)
        if found is not None:
            return found
        stack: list[Expr] = [e]
        while stack:
            x = stack[-1]
            if x in memo:
                stack.pop()
                continue
            op = x.op
            if op is _CONST:
                memo[x] = x.value
                stack.pop()
                continue
            if op is _SELECT:
                # Only the chosen branch is evaluated.
                cond = x.args[0]
                c = memo.get(cond)
                if c is None:
                    stack.append(cond)
                    continue
                branch = x.args[1] if c else x.args[2]
                v = memo.get(branch)
                if v is None:
                    stack.append(branch)
                    continue
                memo[x] = v
                stack.pop()
                continue
            if op is _READ:
                v = self._read_step(x, memo, stack)
                if v is not None:
                    memo[x] = v
                    stack.pop()
                continue
            args = x.args
            missing = False
            for a in args:
                if a not in memo:
                    stack.append(a)
                    missing = True
            if missing:
                continue
            memo[x] = apply_node(x, [memo[a] for a in args])
            stack.pop()
        return memo[e]

    def _read_step(self, x: Expr, memo: dict[Expr, int], stack: list[Expr]) -> int | None:
        """The READ's value, or None after pushing the operands it still needs."""
        index = x.args[0]
        i = memo.get(index)
        if i is None:
            stack.append(index)
            return None
        updates = x.updates
        assert updates is not None
        node: UpdateNode | None = updates.head
        # Push every unknown write index up to the first known match in one pass, so long
        # update lists are not rescanned once per missing index.
        missing = False
        while node is not None:
            ni = memo.get(node.index)
            if ni is None:
                stack.append(node.index)
                missing = True
            elif ni == i:
                if missing:
                    return None
                v = memo.get(node.value)
                if v is None:
                    stack.append(node.value)
                return v
            node = node.next
        if missing:
            return None
        return self._byte(updates.array, i)

    def evaluate_all(self, es: Iterable[Expr]) -> list[int]:
        """The values of several expressions, sharing the memo."""
        return [self.evaluate(e) for e in es]

    def satisfies(self, constraints: Iterable[Expr]) -> bool:
        """True when every width-1 constraint evaluates to 1."""
        for c in constraints:
            if c.width != 1:
                raise ValueError(f"constraints must be 1-bit expressions, got width {c.width}")
            if self.evaluate(c) != 1:
                return False
        return True


def apply_node(x: Expr, vals: list[int]) -> int:
    """The value of operation node ``x`` (not a constant or a read) for operand values
    ``vals``: the one definition of each operation's semantics on constants."""
    op = x.op
    w = x.width
    if op is _CONCAT:
        return (vals[0] << x.args[1].width) | vals[1]
    if op is _EXTRACT:
        return (vals[0] >> x.value) & ((1 << w) - 1)
    if op is _ZEXT:
        return vals[0]
    if op is _SEXT:
        return to_signed(vals[0], x.args[0].width) & ((1 << w) - 1)
    if op is _NOT:
        return vals[0] ^ ((1 << w) - 1)
    if op in FLOAT_OPS:
        return node_value(op, vals, x.args[0].width, w)
    return BINARY_SEMANTICS[op](vals[0], vals[1], x.args[0].width)


def evaluate(e: Expr, values: Mapping[Array, bytes | bytearray]) -> int:
    """Evaluate one expression under ``values`` (see :class:`Assignment`)."""
    return Assignment(values).evaluate(e)
