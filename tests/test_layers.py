"""The house's structure holds (docs/architecture.md, "Layers"): read from the import graph of
``src/symex`` itself, every import points down the layers, and no two modules import each
other, directly or through others. Imports inside functions and under ``TYPE_CHECKING``
count: a lazy import is still a dependency, and one hidden in a function to dodge a loop is
exactly what this test is for."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import symex

SOURCE = Path(symex.__file__).resolve().parent

#: each top-level part of the package and its layer, bottom (0) up; a module may import its
#: own part and any part of a lower layer. Parts on one layer do not import each other.
LAYERS: dict[str, int] = {
    "errors": 0,
    "expr": 1, "symargs": 1, "sandbox": 1, "plugins": 1,
    "encodings": 2,
    "ir": 3, "solvers": 3,
    "core": 4,
    "env": 5,
    "memo": 6, "loading": 6,
    "options": 7, "memory_cap": 7,
    "description": 8,
    "results": 9, "run_limits": 9,
    "exploration": 10,
    "output": 11,
    "parallel": 12,
    "engine": 13,
    "replay": 14,
    "service": 15,
    "cli": 16,
}

#: imports that still point up, each with the step of issue 28 that removes it
PENDING: dict[tuple[str, str], str] = {}


#: import loops that still exist, each with the step of issue 28 that removes it
PENDING_LOOPS: dict[tuple[str, ...], str] = {}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SOURCE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of symex it imports (anywhere in its text)."""
    modules = {module_name(path): path for path in SOURCE.rglob("*.py")}
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                graph[name].update(a.name for a in node.names if a.name in modules)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                for alias in node.names:
                    target = f"{source}.{alias.name}"
                    if target in modules:
                        graph[name].add(target)  # from symex import expr: the module
                    elif source in modules:
                        graph[name].add(source)
        graph[name].discard(name)
    return graph


def part(module: str) -> str | None:
    """The top-level part a module belongs to (None: the package's own facade)."""
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else None


def test_every_part_of_the_package_has_a_layer() -> None:
    parts = {part(m) for m in import_graph()} - {None}
    assert parts - set(LAYERS) == set(), "give each new part a layer here and in the docs"


def test_imports_point_down_the_layers() -> None:
    upward = []
    pending_seen = set()
    for module, targets in sorted(import_graph().items()):
        here = part(module)
        if here is None:
            continue  # symex/__init__.py: the facade names everything, lazily
        for target in sorted(targets):
            there = part(target)
            if there is None or there == here:
                continue
            if LAYERS[there] >= LAYERS[here]:
                key = (module, ".".join(target.split(".")[:2]))
                if key in PENDING:
                    pending_seen.add(key)
                else:
                    upward.append(f"{module} -> {target}")
    assert upward == []
    assert set(PENDING) - pending_seen == set(), "these are gone: take them off PENDING"


def test_no_module_imports_itself_through_others() -> None:
    graph = import_graph()
    # Tarjan's strongly connected components, with an explicit stack
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    loops: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    loops.append(sorted(component))
    assert [loop for loop in loops if tuple(loop) not in PENDING_LOOPS] == []
    assert set(PENDING_LOOPS) - {tuple(loop) for loop in loops} == set(), \
        "these loops are gone: take them off PENDING_LOOPS"


#: the two stack-based IR parsers: one loop over a constant's or a type's text each, whose
#: cases read best side by side
LONG_FUNCTIONS = {("symex.ir.constants", "parse_value"), ("symex.ir.types", "parse_prefix")}
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 120


def test_modules_and_functions_stay_readable() -> None:
    too_long = []
    for path in sorted(SOURCE.rglob("*.py")):
        text = path.read_text()
        name = module_name(path)
        if text.count("\n") > MAX_MODULE_LINES:
            too_long.append(f"{name}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES and (name, node.name) not in LONG_FUNCTIONS:
                    too_long.append(f"{name}.{node.name}: {length} lines")
    assert too_long == []
