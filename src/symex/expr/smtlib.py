"""Reading and writing SMT-LIB 2 queries over byte arrays (the QF_ABV subset executors write).

:func:`parse_smtlib` turns a script such as KLEE's ``--use-query-log=solver:smt2`` output into
expressions of :mod:`symex.expr`; :func:`write_smtlib` prints constraints as a script any
SMT-LIB solver accepts. Booleans and 1-bit vectors are both width-1 expressions here, so the
reader maps ``Bool`` terms to width-1 expressions and the writer converts back where SMT-LIB's
sorts require it. Float nodes are written in the floating-point theory, with a line
symex's reader rebuilds them from (:mod:`symex.expr.smtlib_floats`). Parsing, evaluation
and printing use explicit stacks: nesting depth grows with the length of the path that
produced a query.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

import attrs

from symex.errors import QueryFormatError
from symex.expr import build as _b
from symex.expr.float_build import FLOAT_OPS, float_op
from symex.expr.fold import DagFold
from symex.expr.nodes import ELEMENT_WIDTH, INDEX_WIDTH, Array, Expr, Op, UpdateList
from symex.expr.smtlib_floats import (
    FLOAT_HELPERS_INFO,
    FLOAT_NODE_INFO,
    FloatNodeWriter,
    parse_operand_token,
)
from symex.expr.walk import arrays_in

__all__ = ["SmtQuery", "parse_smtlib", "write_smtlib"]


@attrs.frozen
class SmtQuery:
    """The content of one SMT-LIB script: its assertions, the arrays they read and the status."""

    assertions: tuple[Expr, ...]
    """Every ``assert``, in order, as width-1 expressions."""
    arrays: tuple[Array, ...]
    """Every declared array, then one array per declared bit-vector/Bool constant, in order."""
    status: str | None
    """The value of ``(set-info :status ...)`` (``sat``, ``unsat``, ``unknown``) or None."""


# -- tokens and S-expressions ------------------------------------------------------------------

_TOKEN = re.compile(
    r"""\s+|;[^\n]*|(\()|(\))|(\|[^|]*\|)|("(?:[^"]|"")*")|([^\s()|";]+)""",
)

def _sexps(text: str) -> list[object]:
    """The top-level S-expressions of ``text`` as nested lists of atom strings."""
    stack: list[list[object]] = [[]]
    pos = 0
    n = len(text)
    match = _TOKEN.match
    while pos < n:
        m = match(text, pos)
        if m is None:
            raise QueryFormatError(
                f"SMT-LIB text: cannot read the character {text[pos]!r} at offset {pos}; "
                "the reader accepts SMT-LIB 2 scripts only"
            )
        pos = m.end()
        if m.group(1) is not None:
            stack.append([])
        elif m.group(2) is not None:
            if len(stack) == 1:
                raise QueryFormatError(f"SMT-LIB text: unbalanced ')' at offset {m.start()}; check the file")
            done = stack.pop()
            stack[-1].append(done)
        elif m.group(3) is not None:
            # |x| and x denote the same symbol.
            stack[-1].append(m.group(3)[1:-1])
        elif m.group(4) is not None:
            stack[-1].append(m.group(4))
        elif m.group(5) is not None:
            stack[-1].append(m.group(5))
    if len(stack) != 1:
        raise QueryFormatError("SMT-LIB text: a '(' is never closed; the file is probably truncated")
    return stack[0]


# -- evaluation of terms ------------------------------------------------------------------------

def _bv_sort_width(sort: object) -> int | None:
    """The width of ``(_ BitVec W)``, 1 for ``Bool``, None for anything else."""
    if sort == "Bool":
        return 1
    if isinstance(sort, list) and len(sort) == 3 and sort[0] == "_" and sort[1] == "BitVec":
        return int(str(sort[2]))
    return None


def _is_byte_array_sort(sort: object) -> bool:
    return (
        isinstance(sort, list)
        and len(sort) == 3
        and sort[0] == "Array"
        and _bv_sort_width(sort[1]) == INDEX_WIDTH
        and _bv_sort_width(sort[2]) == ELEMENT_WIDTH
        and sort[1] != "Bool"
        and sort[2] != "Bool"
    )


def _fold(f: Callable[[Expr, Expr], Expr]) -> Callable[[list[Expr]], Expr]:
    def apply(args: list[Expr]) -> Expr:
        result = args[0]
        for a in args[1:]:
            result = f(result, a)
        return result

    return apply


def _chain(f: Callable[[Expr, Expr], Expr]) -> Callable[[list[Expr]], Expr]:
    # SMT-LIB's chainable comparisons: (< a b c) means (and (< a b) (< b c)).
    def apply(args: list[Expr]) -> Expr:
        result = _b.TRUE
        for a, b in zip(args, args[1:]):
            result = _b.and_(result, f(a, b))
        return result

    return apply


def _distinct(args: list[Expr]) -> Expr:
    result = _b.TRUE
    for i, a in enumerate(args):
        for b in args[i + 1:]:
            result = _b.and_(result, _b.ne(a, b))
    return result


def _smod(a: Expr, b: Expr) -> Expr:
    # bvsmod: the remainder takes the divisor's sign; srem takes the dividend's.
    w = a.width
    r = _b.srem(a, b)
    zero = _b.const(0, w)
    signs_differ = _b.ne(_b.slt(r, zero), _b.slt(b, zero))
    adjust = _b.and_(_b.ne(r, zero), signs_differ)
    return _b.ite(adjust, _b.add(r, b), r)


def _implies(args: list[Expr]) -> Expr:
    # Right associative: (=> a b c) is (=> a (=> b c)).
    result = args[-1]
    for a in reversed(args[:-1]):
        result = _b.or_(_b.not_(a), result)
    return result


_FUNCTIONS: dict[str, Callable[[list[Expr]], Expr]] = {
    "bvadd": _fold(_b.add),
    "bvsub": _fold(_b.sub),
    "bvmul": _fold(_b.mul),
    "bvudiv": _fold(_b.udiv),
    "bvsdiv": _fold(_b.sdiv),
    "bvurem": _fold(_b.urem),
    "bvsrem": _fold(_b.srem),
    "bvsmod": _fold(_smod),
    "bvand": _fold(_b.and_),
    "bvor": _fold(_b.or_),
    "bvxor": _fold(_b.xor),
    "bvnand": lambda a: _b.not_(_b.and_(a[0], a[1])),
    "bvnor": lambda a: _b.not_(_b.or_(a[0], a[1])),
    "bvxnor": lambda a: _b.not_(_b.xor(a[0], a[1])),
    "bvcomp": lambda a: _b.eq(a[0], a[1]),
    "bvshl": _fold(_b.shl),
    "bvlshr": _fold(_b.lshr),
    "bvashr": _fold(_b.ashr),
    "bvnot": lambda a: _b.not_(a[0]),
    "bvneg": lambda a: _b.neg(a[0]),
    "concat": _fold(_b.concat),
    "bvult": _chain(_b.ult),
    "bvule": _chain(_b.ule),
    "bvugt": _chain(_b.ugt),
    "bvuge": _chain(_b.uge),
    "bvslt": _chain(_b.slt),
    "bvsle": _chain(_b.sle),
    "bvsgt": _chain(_b.sgt),
    "bvsge": _chain(_b.sge),
    "=": _chain(_b.eq),
    "distinct": _distinct,
    "ite": lambda a: _b.ite(a[0], a[1], a[2]),
    "and": lambda a: _fold(_b.and_)(a) if a else _b.TRUE,
    "or": lambda a: _fold(_b.or_)(a) if a else _b.FALSE,
    "xor": _fold(_b.xor),
    "not": lambda a: _b.not_(a[0]),
    "=>": _implies,
}


def _indexed(op: object, arg: Expr) -> Expr:
    """Apply ``(_ name i ...)`` to ``arg``."""
    if not (isinstance(op, list) and len(op) >= 3 and op[0] == "_"):
        raise QueryFormatError(f"SMT-LIB: {op!r} is not a function; only QF_ABV operators are supported")
    name = op[1]
    nums = [int(str(x)) for x in op[2:]]
    if name == "extract":
        hi, lo = nums
        return _b.extract(arg, lo, hi - lo + 1)
    if name == "zero_extend":
        return _b.zext(arg, arg.width + nums[0])
    if name == "sign_extend":
        return _b.sext(arg, arg.width + nums[0])
    if name == "repeat":
        result = arg
        for _ in range(nums[0] - 1):
            result = _b.concat(result, arg)
        return result
    if name in ("rotate_left", "rotate_right"):
        w = arg.width
        k = nums[0] % w
        if name == "rotate_right":
            k = (w - k) % w
        if k == 0:
            return arg
        return _b.concat(_b.extract(arg, 0, w - k), _b.extract(arg, w - k, k))
    raise QueryFormatError(f"SMT-LIB: unsupported indexed operator {name!r}; symex reads QF_ABV only")


# A symbolic index whose value provably stays below this many bytes sizes its array; beyond
# it (a full 32-bit index) the array would be too large to model byte by byte.
_MAX_INFERRED_SIZE = 1 << 16


def _index_bound(index: Expr) -> int | None:
    """One more than the largest value ``index`` can take, if that is small; else None."""
    op = index.op
    if op is Op.CONST:
        return index.value + 1
    significant = index.width
    if op is Op.ZEXT:
        significant = index.args[0].width
    elif op is Op.CONCAT and index.args[0].op is Op.CONST and index.args[0].value == 0:
        significant = index.args[1].width
    bound = 1 << significant
    return bound if bound <= _MAX_INFERRED_SIZE else None


class _Reader:
    """State of one script: declarations, definitions and the constant indices each array is read at."""

    __slots__ = ("symbols", "sizes", "explicit", "arrays", "variables", "assertions", "status",
                 "float_nodes", "float_helpers")

    def __init__(self) -> None:
        self.symbols: dict[str, Expr | UpdateList] = {}
        # Highest concrete index + 1 seen per array: SMT-LIB arrays have no size, symex's do.
        self.sizes: dict[Array, int] = {}
        self.arrays: list[Array] = []
        # Sizes a script states (written by write_smtlib) take precedence over inferred ones.
        self.explicit: dict[Array, int] = {}
        # Arrays standing for declared bit-vector constants: their size is their byte width.
        self.variables: set[Array] = set()
        self.assertions: list[Expr] = []
        self.status: str | None = None
        # float nodes rebuilt from their :symex-float lines, and their helpers' name prefix
        self.float_nodes: set[str] = set()
        self.float_helpers = ""

    def is_float_helper(self, name: str) -> bool:
        return bool(self.float_helpers) and name.startswith(self.float_helpers)

    def mentions_float_helper(self, term: object) -> bool:
        stack = [term]
        while stack:
            t = stack.pop()
            if isinstance(t, list):
                stack.extend(t)
            elif isinstance(t, str) and self.is_float_helper(t):
                return True
        return False

    def float_node(self, line: str) -> None:
        """A float node from its ``:symex-float`` line."""
        name, op_name, width, *operands = line.split()
        try:
            op = Op[op_name]
            args: list[Expr] = []
            for token in operands:
                constant = parse_operand_token(token)
                found = _b.const(*constant) if constant is not None else self.symbols[token]
                if not isinstance(found, Expr):
                    raise QueryFormatError(f"SMT-LIB: float operand {token!r} is an array")
                args.append(found)
            self.symbols[name] = float_op(op, args, int(width))
        except (KeyError, ValueError) as exc:
            raise QueryFormatError(f"SMT-LIB: {FLOAT_NODE_INFO} {line!r} is not a float node "
                                   f"symex can rebuild ({exc})") from None
        self.float_nodes.add(name)

    def note_index(self, updates: UpdateList, index: Expr) -> None:
        bound = _index_bound(index)
        if bound is not None:
            array = updates.array
            if bound > self.sizes.get(array, 0):
                self.sizes[array] = bound

    def constant(self, atom: str) -> Expr | None:
        if atom == "true":
            return _b.TRUE
        if atom == "false":
            return _b.FALSE
        if atom.startswith("#x"):
            return _b.const(int(atom[2:], 16), 4 * (len(atom) - 2))
        if atom.startswith("#b"):
            return _b.const(int(atom[2:], 2), len(atom) - 2)
        return None

    def evaluate(self, term: object) -> Expr | UpdateList:
        """The value of ``term``; iterative, with ``let`` scopes on a stack. ``visible`` holds
        each bound name's values, innermost last, so a lookup does not walk the scopes (a
        20,000-deep let was quadratic)."""
        scopes: list[dict[str, Expr | UpdateList]] = []
        visible: dict[str, list[Expr | UpdateList]] = {}
        values: list[Expr | UpdateList] = []
        # Tasks: (0, term) evaluate; (1, term, n) apply term's head to the last n values;
        # (2, let-term) bind the last values and evaluate the body; (3,) leave a let scope.
        tasks: list[tuple] = [(0, term)]
        while tasks:
            task = tasks.pop()
            kind = task[0]
            if kind == 0:
                t = task[1]
                if isinstance(t, str):
                    shadowing = visible.get(t)
                    values.append(shadowing[-1] if shadowing else self.symbol(t))
                    continue
                if not t:
                    raise QueryFormatError("SMT-LIB: empty application '()'")
                head = t[0]
                if head == "_":
                    name = str(t[1])
                    if name.startswith("bv") and len(t) == 3:
                        values.append(_b.const(int(name[2:]), int(str(t[2]))))
                        continue
                    raise QueryFormatError(f"SMT-LIB: unsupported term {_show(t)}")
                if head == "let":
                    bindings = t[1]
                    tasks.append((2, t))
                    for binding in reversed(bindings):
                        tasks.append((0, binding[1]))
                    continue
                if head == "!":
                    tasks.append((0, t[1]))
                    continue
                tasks.append((1, t, len(t) - 1))
                for arg in reversed(t[1:]):
                    tasks.append((0, arg))
            elif kind == 1:
                t, n = task[1], task[2]
                args = values[len(values) - n:]
                del values[len(values) - n:]
                values.append(self.apply(t[0], args))
            elif kind == 2:
                t = task[1]
                bindings = t[1]
                n = len(bindings)
                bound = values[len(values) - n:]
                del values[len(values) - n:]
                scope = {str(b[0]): v for b, v in zip(bindings, bound)}
                scopes.append(scope)
                for name, value in scope.items():
                    visible.setdefault(name, []).append(value)
                tasks.append((3,))
                tasks.append((0, t[2]))
            else:
                for name in scopes.pop():
                    shadowed = visible[name]
                    shadowed.pop()
                    if not shadowed:
                        del visible[name]
        return values[0]

    def symbol(self, atom: str) -> Expr | UpdateList:
        """The value of a symbol no ``let`` binds: declared, defined, or a constant."""
        found = self.symbols.get(atom)
        if found is not None:
            return found
        c = self.constant(atom)
        if c is not None:
            return c
        if atom.isdigit():
            raise QueryFormatError(f"SMT-LIB: integer literal {atom} outside (_ bv{atom} W); symex reads QF_ABV only")
        raise QueryFormatError(f"SMT-LIB: unknown symbol {atom!r}; declare it with declare-fun first")

    def apply(self, head: object, args: list[Expr | UpdateList]) -> Expr | UpdateList:
        if head == "select":
            updates, index = args
            if not isinstance(updates, UpdateList) or not isinstance(index, Expr):
                raise QueryFormatError("SMT-LIB: select expects an array and an index")
            self.note_index(updates, index)
            return _b.read(updates, index)
        if head == "store":
            updates, index, value = args
            if not isinstance(updates, UpdateList) or not isinstance(index, Expr) or not isinstance(value, Expr):
                raise QueryFormatError("SMT-LIB: store expects an array, an index and a value")
            self.note_index(updates, index)
            return updates.write(index, value)
        exprs: list[Expr] = []
        for a in args:
            if not isinstance(a, Expr):
                raise QueryFormatError(
                    f"SMT-LIB: {_show(head)} applied to an array; symex supports arrays only "
                    "under select and store"
                )
            exprs.append(a)
        if isinstance(head, list):
            if len(exprs) != 1:
                raise QueryFormatError(f"SMT-LIB: {_show(head)} takes one argument")
            return _indexed(head, exprs[0])
        f = _FUNCTIONS.get(str(head))
        if f is None:
            raise QueryFormatError(f"SMT-LIB: unsupported function {head!r}; symex reads QF_ABV only")
        try:
            return f(exprs)
        except (ValueError, IndexError) as error:
            raise QueryFormatError(f"SMT-LIB: ill-sorted application of {head!r}: {error}") from None

    def declare(self, name: str, sort: object) -> None:
        if name in self.symbols:
            raise QueryFormatError(f"SMT-LIB: {name!r} is declared twice")
        if _is_byte_array_sort(sort):
            array = Array(name, 0)
            self.arrays.append(array)
            self.symbols[name] = UpdateList(array)
            return
        width = _bv_sort_width(sort)
        if width is None:
            raise QueryFormatError(
                f"SMT-LIB: {name!r} has sort {_show(sort)}; symex reads (Array (_ BitVec 32) "
                "(_ BitVec 8)), (_ BitVec W) and Bool constants only"
            )
        # A variable becomes the little-endian bytes of a fresh array, as KLEE's ReadLSB.
        nbytes = (width + 7) // 8
        array = Array(name, nbytes)
        self.arrays.append(array)
        self.sizes[array] = nbytes
        self.variables.add(array)
        updates = UpdateList(array)
        value = _b.read(updates, _b.const(0, INDEX_WIDTH))
        for i in range(1, nbytes):
            value = _b.concat(_b.read(updates, _b.const(i, INDEX_WIDTH)), value)
        if width != value.width:
            value = _b.extract(value, 0, width)
        self.symbols[name] = value

    def command(self, cmd: object) -> None:
        if not isinstance(cmd, list) or not cmd:
            raise QueryFormatError(f"SMT-LIB: {cmd!r} is not a command")
        head = cmd[0]
        if head == "assert" and self.float_helpers and self.mentions_float_helper(cmd[1]):
            pass  # pins a float node's bits in the theory
        elif head == "declare-fun" and self.is_float_helper(str(cmd[1])):
            pass
        elif head == "assert":
            value = self.evaluate(cmd[1])
            if not isinstance(value, Expr) or value.width != 1:
                raise QueryFormatError(f"SMT-LIB: an assertion must be Bool, got {_show(cmd[1])[:80]}")
            self.assertions.append(value)
        elif head == "declare-fun":
            if cmd[2]:
                raise QueryFormatError(f"SMT-LIB: {cmd[1]!r} is a function; symex supports constants only")
            self.declare(str(cmd[1]), cmd[3])
        elif head == "declare-const":
            self.declare(str(cmd[1]), cmd[2])
        elif head == "define-fun" and (str(cmd[1]) in self.float_nodes
                                       or self.is_float_helper(str(cmd[1]))):
            pass  # a float node's theory terms: its :symex-float line gave the node
        elif head == "define-fun":
            if cmd[2]:
                raise QueryFormatError(f"SMT-LIB: define-fun {cmd[1]!r} has arguments; only constants are supported")
            self.symbols[str(cmd[1])] = self.evaluate(cmd[4])
        elif head == "set-info":
            if cmd[1] == ":status" and len(cmd) > 2:
                self.status = str(cmd[2])
            elif cmd[1] == FLOAT_HELPERS_INFO:
                self.float_helpers = str(cmd[2]).strip('"')
            elif cmd[1] == FLOAT_NODE_INFO:
                self.float_node(str(cmd[2]).strip('"'))
            elif cmd[1] == _SIZE_INFO:
                for pair in _sexps(str(cmd[2])[1:-1].replace('""', '"')):
                    if not isinstance(pair, list) or len(pair) != 2:
                        raise QueryFormatError(f"SMT-LIB: {_SIZE_INFO} holds {pair!r}, not a "
                                               f"(name size) pair")
                    name, size = pair
                    found = self.symbols.get(str(name))
                    if isinstance(found, UpdateList):
                        self.explicit[found.array] = int(str(size))
        elif head == "get-value":
            # Evaluated only for the indices it reads, which tell the arrays' sizes.
            for t in cmd[1]:
                self.evaluate(t)
        elif head in ("set-logic", "set-option", "check-sat", "exit", "get-model", "get-info",
                      "get-option", "echo", "get-assignment"):
            pass
        else:
            raise QueryFormatError(f"SMT-LIB: unsupported command {head!r}; symex reads single queries")


_SIZE_INFO = ":symex-array-sizes"


def _show(t: object) -> str:
    """Short text of an S-expression for error messages (iterative)."""
    parts: list[str] = []
    stack: list[object] = [t]
    while stack and len(parts) < 60:
        x = stack.pop()
        if isinstance(x, list):
            stack.append(")")
            for i in range(len(x) - 1, -1, -1):
                stack.append(x[i])
                if i:
                    stack.append(" ")
            parts.append("(")
        else:
            parts.append(str(x))
    return "".join(parts)


def parse_smtlib(text: str, *, min_array_size: int = 1) -> SmtQuery:
    """Read one SMT-LIB 2 script in the QF_ABV subset symbolic executors write.

    Supported: ``set-logic``/``set-info``/``set-option``, ``declare-fun``/``declare-const`` of
    byte arrays ``(Array (_ BitVec 32) (_ BitVec 8))`` and of bit-vector/Bool constants (each
    becomes the little-endian bytes of a fresh symbolic array named like it), ``define-fun``
    without arguments, ``assert``, ``check-sat``, ``get-value``, ``exit``; terms with ``let``,
    ``select``, ``store`` and the QF_BV operators. SMT-LIB arrays have no size; an array's size
    is one more than the highest index it is read or written at (at least 1), counting a
    symbolic index such as ``(concat (_ bv0 24) i)`` by its largest possible value when that is
    at most 65536, so models cover every byte the script can read. Arrays read at wider
    symbolic indices (bounded only by the assertions) need ``min_array_size`` bytes to cover
    them; reads past an array's size are outside its model. Raises
    :class:`~symex.errors.QueryFormatError` for anything else.
    """
    reader = _Reader()
    for cmd in _sexps(text):
        reader.command(cmd)
    for array in reader.arrays:
        # Sizes are only known once every read has been seen; nothing outside this call
        # holds the arrays yet, so fixing the size now is safe.
        floor = 1 if array in reader.variables else min_array_size
        explicit = reader.explicit.get(array)
        array.size = explicit if explicit is not None else max(floor, reader.sizes.get(array, 0))
    return SmtQuery(tuple(reader.assertions), tuple(reader.arrays), reader.status)


# -- writing ------------------------------------------------------------------------------------

_SIMPLE_SYMBOL = re.compile(r"[A-Za-z~!@$%^&*_+=<>.?/\-][A-Za-z0-9~!@$%^&*_+=<>.?/\-]*\Z")
_ARRAY_SORT = "(Array (_ BitVec 32) (_ BitVec 8))"
# Width-1 nodes whose natural SMT-LIB sort is Bool; every other node is a bit-vector term.
_BOOL_OPS = frozenset({Op.NOT, Op.AND, Op.OR, Op.XOR, Op.EQ, Op.ULT, Op.ULE, Op.SLT, Op.SLE, Op.SELECT,
                       Op.FOEQ, Op.FOLT, Op.FOLE})
_BV_NAMES: dict[Op, str] = {
    Op.ADD: "bvadd", Op.SUB: "bvsub", Op.MUL: "bvmul", Op.UDIV: "bvudiv", Op.SDIV: "bvsdiv",
    Op.UREM: "bvurem", Op.SREM: "bvsrem", Op.AND: "bvand", Op.OR: "bvor", Op.XOR: "bvxor",
    Op.SHL: "bvshl", Op.LSHR: "bvlshr", Op.ASHR: "bvashr", Op.ULT: "bvult", Op.ULE: "bvule",
    Op.SLT: "bvslt", Op.SLE: "bvsle",
}


def _symbol(name: str) -> str:
    if _SIMPLE_SYMBOL.match(name):
        return name
    if "|" in name or "\\" in name:
        raise ValueError(f"array name {name!r} cannot be written as an SMT-LIB symbol; rename it")
    return f"|{name}|"


def _is_bool(e: Expr) -> bool:
    return e.width == 1 and e.op in _BOOL_OPS


def write_smtlib(constraints: Iterable[Expr], query: Expr | None = None, logic: str = "QF_ABV") -> str:
    """An SMT-LIB 2 script asserting every constraint, then ``query`` if given, then ``check-sat``.

    The script is satisfiable iff the constraints and the query can hold together. Each array
    gets a ``declare-fun``; a constant array's bytes become assertions; every non-constant node
    gets one ``define-fun`` (shared subterms are written once, and nothing is nested deeper than
    one node). Array sizes are recorded with ``(set-info :symex-array-sizes ...)`` so that
    :func:`parse_smtlib` restores them.
    """
    roots: list[Expr] = list(constraints)
    if query is not None:
        roots.append(query)
    for r in roots:
        if r.width != 1:
            raise ValueError(f"write_smtlib: constraints must be 1-bit expressions, got width {r.width}")
    arrays = arrays_in(roots)
    array_names: dict[Array, str] = {}
    used: set[str] = set()
    for array in arrays:
        if array.name in used:
            raise ValueError(f"write_smtlib: two arrays are named {array.name!r}; SMT-LIB needs distinct names")
        used.add(array.name)
        array_names[array] = _symbol(array.name)
    # Term names must not clash with any array name.
    prefix = "e!"
    while any(n.startswith(prefix) for n in used):
        prefix += "!"
    lines: list[str] = [f"(set-logic {logic})"]
    for array in arrays:
        lines.append(f"(declare-fun {array_names[array]} () {_ARRAY_SORT})")
    if arrays:
        # After the declarations: the reader looks the names up.
        # A string value: solvers reject other values for attributes they do not know.
        sizes = " ".join(f"({array_names[a]} {a.size})" for a in arrays).replace('"', '""')
        lines.append(f'(set-info {_SIZE_INFO} "{sizes}")')
    for array in arrays:
        name = array_names[array]
        if array.initial is not None:
            for i, byte in enumerate(array.initial):
                lines.append(f"(assert (= (select {name} (_ bv{i} 32)) (_ bv{byte} 8)))")
    definitions = _Definitions(lines, prefix, array_names)
    for r in roots:
        definitions(r)
    for r in roots:
        lines.append(f"(assert {definitions.ref(r, True)})")
    if definitions.floats.used and logic == "QF_ABV":
        lines[0] = "(set-logic QF_ABVFP)"
    lines.append("(check-sat)")
    lines.append("(exit)")
    return "\n".join(lines) + "\n"


class _Definitions(DagFold[str]):
    """The ``define-fun`` lines of :func:`write_smtlib`, on the fold: each node's value is the
    name of its definition (a constant's, its literal), each update list's the name of the
    array it stores into."""

    __slots__ = ("lines", "prefix", "array_names", "counter", "floats")

    def __init__(self, lines: list[str], prefix: str, array_names: dict[Array, str]) -> None:
        super().__init__()
        self.lines = lines
        self.prefix = prefix
        self.array_names = array_names
        self.counter = 0
        self.floats = FloatNodeWriter(lines, prefix, lambda x: self.ref(x, False),
                                      self.memo)  # type: ignore[arg-type]  # a dict

    def ref(self, e: Expr, want_bool: bool) -> str:
        """How a term uses ``e`` (defined already): as a Bool or as a bit-vector."""
        if e.op is Op.CONST:
            if e.width == 1 and want_bool:
                return "true" if e.value else "false"
            return f"(_ bv{e.value} {e.width})"
        name = self.memo[e]
        native = _is_bool(e)
        if want_bool and not native:
            return f"(= #b1 {name})"
        if native and not want_bool:
            return f"(ite {name} #b1 #b0)"
        return name

    def define(self, sort: str, body: str) -> str:
        """A new ``define-fun`` of ``body``; its name."""
        self.counter += 1
        name = f"{self.prefix}{self.counter}"
        self.lines.append(f"(define-fun {name} () {sort} {body})")
        return name

    def node(self, e: Expr, args: Sequence[str]) -> str:
        op = e.op
        if op is Op.CONST:
            return f"(_ bv{e.value} {e.width})"
        ref = self.ref
        operands = e.args
        # an operand wider than 1 bit is a bit-vector whatever it is: its value is its term
        # (only 1-bit operands may need a Bool or a bit-vector made of the other)
        first = args[0] if operands[0].width != 1 else ref(operands[0], False)
        if op is Op.SELECT:
            b = e.width == 1
            body = f"(ite {ref(operands[0], True)} {ref(operands[1], b)} {ref(operands[2], b)})"
        elif op is Op.CONCAT:
            second = args[1] if operands[1].width != 1 else ref(operands[1], False)
            body = f"(concat {first} {second})"
        elif op is Op.EXTRACT:
            body = f"((_ extract {e.value + e.width - 1} {e.value}) {first})"
        elif op is Op.ZEXT or op is Op.SEXT:
            kind = "zero_extend" if op is Op.ZEXT else "sign_extend"
            body = f"((_ {kind} {e.width - operands[0].width}) {first})"
        elif op is Op.NOT:
            body = f"(not {ref(operands[0], True)})" if e.width == 1 else f"(bvnot {first})"
        elif e.width == 1 and op in (Op.AND, Op.OR, Op.XOR):
            word = {Op.AND: "and", Op.OR: "or", Op.XOR: "xor"}[op]
            body = f"({word} {ref(operands[0], True)} {ref(operands[1], True)})"
        elif op in FLOAT_OPS:
            body = self.floats.body(e, f"{self.prefix}{self.counter + 1}")
        elif operands[0].width == 1:
            b = op is Op.EQ
            body = (f"({'=' if b else _BV_NAMES[op]} {ref(operands[0], b)} "
                    f"{ref(operands[1], b)})")
        else:
            body = f"({'=' if op is Op.EQ else _BV_NAMES[op]} {first} {args[1]})"
        return self.define("Bool" if _is_bool(e) else f"(_ BitVec {e.width})", body)

    def array(self, array: Array) -> str:
        return self.array_names[array]

    def write(self, before: str, index: str, value: str) -> str:
        # an index (32 bits) and a value (8) are never Bool: their names are their terms
        return self.define(_ARRAY_SORT, f"(store {before} {index} {value})")

    def read(self, e: Expr, updates: str, index: str) -> str:
        return self.define(f"(_ BitVec {e.width})", f"(select {updates} {index})")
