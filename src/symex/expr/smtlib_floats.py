"""Floating-point nodes in written SMT-LIB scripts (:func:`symex.expr.smtlib.write_smtlib`).

A script says a float node's meaning twice. For the solvers, in the standard theory: the
node's terms as :class:`~symex.expr.float_theory.FloatTerms` builds them for the backends
(every term a ``define-fun`` of its own, so shared terms are written once; the bits of a
float result a declared constant pinned by one assertion), under the logic ``QF_ABVFP``.
For symex's reader, which has no floating-point theory of its own: a
``(set-info :symex-float "NAME OP WIDTH OPERAND...")`` line before the node's definition,
from which :func:`symex.expr.smtlib.parse_smtlib` rebuilds the node itself, skipping the
helper terms (their names start with the prefix ``:symex-float-helpers`` states).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from symex.expr.float_theory import FloatKind, FloatTerms, FloatTest
from symex.expr.nodes import Expr, Op

__all__ = ["FLOAT_HELPERS_INFO", "FLOAT_NODE_INFO", "FloatNodeWriter", "SmtlibFloatText",
           "operand_token", "parse_operand_token"]

FLOAT_NODE_INFO = ":symex-float"
"""The ``set-info`` attribute naming a float node: ``"NAME OP WIDTH OPERAND..."``."""

FLOAT_HELPERS_INFO = ":symex-float-helpers"
"""The ``set-info`` attribute giving the prefix of the float nodes' helper terms."""

_ROUNDED = frozenset({FloatKind.ADD, FloatKind.SUB, FloatKind.MUL, FloatKind.DIV,
                      FloatKind.SQRT, FloatKind.FMA})


def _fp_sort(width: int) -> str:
    return "(_ FloatingPoint 8 24)" if width == 32 else "(_ FloatingPoint 11 53)"


def _to_fp(width: int) -> str:
    return "(_ to_fp 8 24)" if width == 32 else "(_ to_fp 11 53)"


class SmtlibFloatText:
    """A :class:`~symex.expr.float_theory.FloatTermBuilder` (and its naming) whose terms
    are names of ``define-fun``\\ s appended to ``lines``."""

    __slots__ = ("lines", "prefix", "count")

    def __init__(self, lines: list[str], prefix: str) -> None:
        """Append definitions to ``lines``, naming them ``prefix`` and a number."""
        self.lines = lines
        self.prefix = prefix
        self.count = 0

    def _define(self, sort: str, body: str) -> str:
        self.count += 1
        name = f"{self.prefix}{self.count}"
        self.lines.append(f"(define-fun {name} () {sort} {body})")
        return name

    def bv_var(self, name: str, width: int) -> str:
        """A fresh bit-vector constant (the bits of a float result)."""
        self.count += 1
        fresh = f"{self.prefix}{self.count}"
        self.lines.append(f"(declare-fun {fresh} () (_ BitVec {width}))")
        return fresh

    def bv_const(self, value: int, width: int) -> str:
        """A bit-vector literal."""
        return f"(_ bv{value} {width})"

    def bv_op(self, op: Op, args: Sequence[Any], width: int, offset: int = 0) -> str:
        """``ite`` over bit-vectors (the only bit-vector operation FloatTerms builds)."""
        if op is not Op.SELECT:
            raise ValueError(f"SmtlibFloatText: no bit-vector operation {op.name}")
        return self._define(f"(_ BitVec {width})", f"(ite {args[0]} {args[1]} {args[2]})")

    def bool_op(self, op: Op, args: Sequence[Any]) -> str:
        """``and`` or ``=`` of two booleans."""
        word = {Op.AND: "and", Op.EQ: "=", Op.OR: "or"}[op]
        return self._define("Bool", f"({word} {args[0]} {args[1]})")

    def fp_from_bits(self, bits: Any, width: int) -> str:
        """The float with IEEE bits ``bits``."""
        return self._define(_fp_sort(width), f"({_to_fp(width)} {bits})")

    def fp_term(self, kind: FloatKind, args: Sequence[Any], width: int) -> str:
        """An operation of the theory (arithmetic rounds to nearest even)."""
        mode = "RNE " if kind in _ROUNDED else ""
        return self._define(_fp_sort(width), f"({kind.value} {mode}{' '.join(args)})")

    def fp_test(self, kind: FloatTest, args: Sequence[Any]) -> str:
        """A predicate of the theory."""
        return self._define("Bool", f"({kind.value} {' '.join(args)})")

    def fp_convert(self, term: Any, width: int) -> str:
        """``term`` rounded (or widened) to ``width`` bits."""
        return self._define(_fp_sort(width), f"({_to_fp(width)} RNE {term})")

    def fp_from_integer(self, bits: Any, width: int, signed: bool) -> str:
        """The integer ``bits`` rounded to a float."""
        convert = _to_fp(width) if signed else _to_fp(width).replace("to_fp", "to_fp_unsigned")
        return self._define(_fp_sort(width), f"({convert} RNE {bits})")

    def fp_to_signed(self, term: Any, width: int) -> str:
        """``term`` truncated to a signed integer."""
        return self._define(f"(_ BitVec {width})", f"((_ fp.to_sbv {width}) RTZ {term})")


def operand_token(e: Expr, names: dict[Expr, str]) -> str:
    """A float node's operand in its ``:symex-float`` line: a name, or ``bvVALUE.WIDTH``."""
    if e.op is Op.CONST:
        return f"bv{e.value}.{e.width}"
    return names[e]


def parse_operand_token(token: str) -> tuple[int, int] | None:
    """``(value, width)`` of a constant operand token, None for a name."""
    if token.startswith("bv") and "." in token:
        value, _, width = token[2:].partition(".")
        if value.isdigit() and width.isdigit():
            return int(value), int(width)
    return None


class FloatNodeWriter:
    """Writes the float nodes of one script into ``lines``: their helper terms, the set-up
    assertions, and the ``:symex-float`` line; :meth:`body` gives the node's own term."""

    __slots__ = ("lines", "prefix", "ref", "names", "terms", "setup")

    def __init__(self, lines: list[str], prefix: str, ref: Callable[[Expr], str],
                 names: dict[Expr, str]) -> None:
        """Write into ``lines``; helpers are named ``prefix`` + ``f`` + a number; ``ref`` is
        an operand's bit-vector term, ``names`` the nodes' names so far."""
        self.lines = lines
        self.prefix = prefix
        self.ref = ref
        self.names = names
        self.terms: FloatTerms | None = None
        self.setup: list[str] = []

    @property
    def used(self) -> bool:
        """Whether the script has a float node (its logic needs ``FP``)."""
        return self.terms is not None

    def body(self, e: Expr, name: str) -> str:
        """The term defining float node ``e``, which the script names ``name``."""
        if self.terms is None:
            self.lines.append(f'(set-info {FLOAT_HELPERS_INFO} "{self.prefix}f")')
            text = SmtlibFloatText(self.lines, f"{self.prefix}f")
            self.terms = FloatTerms(text, text, {}, self.ref, self.setup)
        term = self.terms.translate(e)
        self.lines.extend(f"(assert {setup})" for setup in self.setup)
        self.setup.clear()
        operands = " ".join(operand_token(a, self.names) for a in e.args)
        self.lines.append(f'(set-info {FLOAT_NODE_INFO} "{name} {e.op.name} {e.width} '
                          f'{operands}")')
        return str(term)
