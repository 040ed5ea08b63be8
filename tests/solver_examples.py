"""The shared corpus of solver example queries (in the style of pySMT's test/examples.py).

Each :class:`Example` is a path condition, a width-1 query and two hand-derived answers:
``satisfiable`` (constraints and query can hold together) and ``valid`` (the constraints
imply the query). Every solver configuration must give exactly these answers; the reasoning
behind each is in its comment. Reads always stay inside their array (the engine checks
bounds before it reads), because out-of-range bytes are unconstrained for the solver but
read as 0 by the evaluator.
"""

from __future__ import annotations

from dataclasses import dataclass

from symex import expr as E
from symex.expr import Array, Expr, UpdateList


@dataclass(frozen=True)
class Example:
    """One query with its expected answers."""

    name: str
    constraints: tuple[Expr, ...]
    query: Expr
    satisfiable: bool
    """constraints AND query is satisfiable."""
    valid: bool
    """constraints imply query (vacuously true when the constraints are unsatisfiable)."""
    arrays: tuple[Array, ...]
    """The arrays a model is asked for (symbolic and constant)."""


def c8(v: int) -> Expr:
    return E.const(v, 8)


def c32(v: int) -> Expr:
    return E.const(v, 32)


def rd(updates: UpdateList | Array, index: Expr | int) -> Expr:
    """A byte read; plain ints are concrete indices."""
    if isinstance(updates, Array):
        updates = UpdateList(updates)
    if isinstance(index, int):
        index = c32(index)
    return E.read(updates, index)


def word(array: Array, width: int, offset: int = 0) -> Expr:
    """Little-endian ``width``-bit value of ``width // 8`` bytes of ``array`` from ``offset``."""
    value = rd(array, offset)
    for k in range(1, width // 8):
        value = E.concat(rd(array, offset + k), value)
    return value


def word32(array: Array, offset: int = 0) -> Expr:
    """Little-endian 32-bit value of four bytes of ``array``."""
    return word(array, 32, offset)


def word16(array: Array, offset: int = 0) -> Expr:
    """Little-endian 16-bit value of two bytes of ``array``."""
    return word(array, 16, offset)


def _build() -> list[Example]:
    ex: list[Example] = []

    def add(name: str, constraints: tuple[Expr, ...], query: Expr, satisfiable: bool,
            valid: bool, arrays: tuple[Array, ...]) -> None:
        ex.append(Example(name, constraints, query, satisfiable, valid, arrays))

    # -- plain bit-vectors ---------------------------------------------------------------
    a = Array("x", 1)
    x = rd(a, 0)
    # x > 5 leaves 6..255: all of them exceed 3; 11 exceeds 10 but 6 does not; none is < 2.
    add("bound-implied", (E.ugt(x, c8(5)),), E.ugt(x, c8(3)), True, True, (a,))
    add("bound-open", (E.ugt(x, c8(5)),), E.ugt(x, c8(10)), True, False, (a,))
    add("bound-contradicts", (E.ugt(x, c8(5)),), E.ult(x, c8(2)), False, False, (a,))
    # x + 1 = x has no solution modulo 256.
    add("add-one-never-equal", (), E.eq(E.add(x, c8(1)), x), False, False, (a,))
    # x != k for every k except 255 pins x to 255 (a long path: 255 constraints).
    pinned = tuple(E.ne(x, c8(k)) for k in range(255))
    add("long-path-pins-value", pinned, E.eq(x, c8(255)), True, True, (a,))

    # unsatisfiable path condition: every query is vacuously valid, none satisfiable
    add("unsat-path", (E.ugt(x, c8(200)), E.ult(x, c8(100))), E.eq(x, c8(150)), False, True,
        (a,))

    w = Array("w", 4)
    word = word32(w)
    # The low byte of a little-endian word is byte 0.
    add("word-low-byte", (E.eq(word, c32(0x12345678)),), E.eq(rd(w, 0), c8(0x78)), True, True,
        (w,))
    # Byte 3 is the top byte: 0x12, so it cannot be 0x78.
    add("word-high-byte", (E.eq(word, c32(0x12345678)),), E.eq(rd(w, 3), c8(0x78)), False,
        False, (w,))
    # Signed: word < 0 iff the top bit (bit 7 of byte 3) is set.
    add("signed-word-top-bit", (E.slt(word, c32(0)),),
        E.uge(rd(w, 3), c8(0x80)), True, True, (w,))

    # -- division and shifts (SMT-LIB semantics) ----------------------------------------
    d = Array("d", 2)
    p, q = rd(d, 0), rd(d, 1)
    # q = 0: bvudiv gives all ones, bvurem gives the dividend, bvsrem too.
    zero = (E.eq(q, c8(0)),)
    add("udiv-by-zero", zero, E.eq(E.udiv(p, q), c8(0xFF)), True, True, (d,))
    add("urem-by-zero", zero, E.eq(E.urem(p, q), p), True, True, (d,))
    add("srem-by-zero", zero, E.eq(E.srem(p, q), p), True, True, (d,))
    # -128 / -1 overflows back to -128 (0x80) in 8 bits.
    add("sdiv-overflow", (E.eq(p, c8(0x80)), E.eq(q, c8(0xFF))),
        E.eq(E.sdiv(p, q), c8(0x80)), True, True, (d,))
    # sdiv truncates towards zero: -7 / 2 = -3 (0xFD); srem takes the dividend's sign: -1.
    add("sdiv-truncates", (E.eq(p, c8(0xF9)), E.eq(q, c8(2))),
        E.bool_and(E.eq(E.sdiv(p, q), c8(0xFD)), E.eq(E.srem(p, q), c8(0xFF))), True, True,
        (d,))
    # Shifting by 8 or more clears (shl, lshr) or fills with the sign (ashr).
    big_shift = (E.uge(q, c8(8)), E.slt(p, c8(0)))
    add("shl-past-width", big_shift, E.eq(E.shl(p, q), c8(0)), True, True, (d,))
    add("lshr-past-width", big_shift, E.eq(E.lshr(p, q), c8(0)), True, True, (d,))
    add("ashr-past-width", big_shift, E.eq(E.ashr(p, q), c8(0xFF)), True, True, (d,))

    # -- extensions, extraction, ite --------------------------------------------------------
    # zext of a byte stays below 256; sext of a negative byte has all-ones high bits.
    add("zext-bounded", (), E.ult(E.zext(p, 32), c32(256)), True, True, (d,))
    add("sext-negative-high-bits", (E.slt(p, c8(0)),),
        E.eq(E.extract(E.sext(p, 32), 8, 24), E.const(0xFFFFFF, 24)), True, True, (d,))
    # max(p, q) via ite is >= both.
    biggest = E.ite(E.ugt(p, q), p, q)
    add("ite-max", (), E.bool_and(E.uge(biggest, p), E.uge(biggest, q)), True, True, (d,))
    # booleans as bits: zext(p < q) + zext(p >= q) is always 1
    flags = E.add(E.zext(E.ult(p, q), 8), E.zext(E.uge(p, q), 8))
    add("bool-to-bits", (), E.eq(flags, c8(1)), True, True, (d,))
    # iff between booleans: (p = 3) = (q = 3) with p = 3 forces q = 3.
    add("bool-iff", (E.eq(E.eq(p, c8(3)), E.eq(q, c8(3))), E.eq(p, c8(3))),
        E.eq(q, c8(3)), True, True, (d,))

    # -- multiplication: factoring a small number -------------------------------------------
    f = Array("f", 4)
    fx, fy = word16(f, 0), word16(f, 2)
    k16 = lambda v: E.const(v, 16)  # noqa: E731
    # 1 < x, y < 143 keeps x*y < 2^16, so x*y = 143 = 11*13 exactly: x is 11 or 13.
    factors = (E.eq(E.mul(fx, fy), k16(143)), E.ugt(fx, k16(1)), E.ult(fx, k16(143)),
               E.ugt(fy, k16(1)), E.ult(fy, k16(143)))
    add("factor-143", factors, E.bool_or(E.eq(fx, k16(11)), E.eq(fx, k16(13))), True, True,
        (f,))
    add("factor-143-not-7", factors, E.eq(fx, k16(7)), False, False, (f,))

    # -- symbolic index reads -----------------------------------------------------------------
    s = Array("s", 4)
    ia = Array("i", 4)
    i = word32(ia)
    in_bounds = E.ult(i, c32(4))
    not7 = tuple(E.ne(rd(s, k), c8(7)) for k in range(3))
    # s[i] = 7 while s[0..2] != 7 and i < 4: i must be 3.
    add("symbolic-read-finds-index", (in_bounds, *not7, E.eq(rd(s, i), c8(7))),
        E.eq(i, c32(3)), True, True, (s, ia))
    # ... and then s[3] is 7.
    add("symbolic-read-fixes-byte", (in_bounds, *not7, E.eq(rd(s, i), c8(7))),
        E.eq(rd(s, 3), c8(7)), True, True, (s, ia))

    # constant array read at a symbolic index
    table = Array("table", 4, bytes([1, 2, 3, 4]))
    add("constant-array-lookup", (in_bounds, E.eq(rd(table, i), c8(3))), E.eq(i, c32(2)),
        True, True, (table, ia))
    add("constant-array-no-such-value", (in_bounds,), E.eq(rd(table, i), c8(9)), False, False,
        (table, ia))
    # a constant array read only by the query still has its contents
    add("constant-array-only-in-query", (E.eq(i, c32(1)),), E.eq(rd(table, i), c8(2)), True,
        True, (table, ia))

    # -- writes at symbolic indices ----------------------------------------------------------
    # s with s[i] := 42 (i < 4); reading index 2 gives 42 while s[2] is 0 only if i = 2.
    written = UpdateList(s).write(i, c8(42))
    add("symbolic-write-located", (in_bounds, E.eq(rd(written, 2), c8(42)),
                                   E.eq(rd(s, 2), c8(0))), E.eq(i, c32(2)), True, True, (s, ia))
    # reading back at the written index always gives the written value
    add("symbolic-write-read-back", (in_bounds,), E.eq(rd(written, i), c8(42)), True, True,
        (s, ia))

    # a constant array with a symbolic write: only index i holds 99, no original byte is 99.
    ja = Array("j", 1)
    j = E.zext(E.and_(rd(ja, 0), c8(3)), 32)
    table_w = UpdateList(table).write(i, c8(99))
    add("constant-array-symbolic-write", (in_bounds, E.eq(rd(table_w, j), c8(99))),
        E.eq(j, i), True, True, (table, ia, ja))
    add("constant-array-symbolic-write-elsewhere", (in_bounds, E.ne(j, i)),
        E.eq(rd(table_w, j), c8(99)), False, False, (table, ia, ja))

    # -- nested updates -----------------------------------------------------------------------
    # b[0] := 1; b[j] := 2; b[0] := 3: index 0 reads 3 (newest write) whatever j is; index j
    # reads 2 unless j = 0; with j = 1, index 1 reads 2.
    b = Array("b", 4)
    nested = UpdateList(b).write(c32(0), c8(1)).write(j, c8(2)).write(c32(0), c8(3))
    add("nested-newest-wins", (), E.eq(rd(nested, c32(0)), c8(3)), True, True, (b, ja))
    add("nested-middle-write", (E.eq(j, c32(1)),), E.eq(rd(nested, j), c8(2)), True, True,
        (b, ja))
    add("nested-overwritten", (E.eq(j, c32(0)),), E.eq(rd(nested, j), c8(2)), False, False,
        (b, ja))
    # a read at a symbolic index k over the nested writes: 3 at 0, 2 at j, else b[k]
    ka = Array("k", 1)
    k = E.zext(E.and_(rd(ka, 0), c8(3)), 32)
    add("nested-symbolic-read", (E.eq(j, c32(2)), E.eq(rd(b, 1), c8(5)), E.eq(k, c32(1))),
        E.eq(rd(nested, k), c8(5)), True, True, (b, ja, ka))
    # two arrays related: a0 = b0 + 1 and b0 = 255 gives a0 = 0
    add("two-arrays", (E.eq(rd(s, 0), E.add(rd(b, 0), c8(1))), E.eq(rd(b, 0), c8(255))),
        E.eq(rd(s, 0), c8(0)), True, True, (s, b))

    # -- deep expressions ----------------------------------------------------------------------
    # 2,000 xors over 4 bytes, each byte 500 times: every byte cancels out, the value is 0.
    deep = rd(w, 0)
    for n in range(1, 2000):
        deep = E.xor(deep, rd(w, n % 4))
    add("deep-xor-cancels", (), E.eq(deep, c8(0)), True, True, (w,))
    # one more xor leaves byte 0 alone
    deeper = E.xor(deep, rd(w, 0))
    add("deep-xor-leaves-one", (E.eq(rd(w, 0), c8(9)),), E.eq(deeper, c8(9)), True, True, (w,))
    add("deep-xor-not-one", (E.eq(rd(w, 0), c8(9)),), E.eq(deeper, c8(8)), False, False, (w,))
    return ex


#: The corpus. Built once: expressions are interned, so identical constraints across examples
#: are the same objects (push/pop sessions share their prefixes).
EXAMPLES: list[Example] = _build()

#: A path growing one constraint at a time and branching, the way the engine queries:
#: (constraints, query, satisfiable). x ranges over bytes; each step narrows it.
_px = rd(Array("path", 1), 0)
PATH_STEPS: list[tuple[tuple[Expr, ...], Expr, bool]] = []
_pc: tuple[Expr, ...] = ()
for _lo in range(0, 120, 8):
    PATH_STEPS.append((_pc, E.uge(_px, c8(_lo)), True))
    # a sibling branch: the negation is infeasible once x >= previous bound forces it
    PATH_STEPS.append((_pc, E.ult(_px, c8(_lo - 8 if _lo >= 8 else 0)), False))
    _pc = (*_pc, E.uge(_px, c8(_lo)))
# a different branch sharing only a prefix
PATH_STEPS.append((_pc[:3] + (E.ult(_px, c8(20)),), E.eq(_px, c8(17)), True))
PATH_STEPS.append((_pc[:3] + (E.ult(_px, c8(20)),), E.eq(_px, c8(15)), False))
PATH_STEPS.append((_pc, E.eq(_px, c8(255)), True))
