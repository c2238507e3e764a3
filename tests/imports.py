"""The repository's modules and what each imports, for the tests that hold the imports' shape:
no circle anywhere (tests/test_layers.py), and the sandbox's one direction
(tests/sandbox/test_sandbox_imports.py).

A circle hides which module depends on which, and `TYPE_CHECKING` or an import inside a
function only hides it further: every import counts here, wherever it is written.
"""

import ast
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def package_modules(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Every module of `packages` (folders, or single `.py` files, under `root`) by its dotted
    name; a package is named by its `__init__.py`."""
    found = {}
    for package in packages:
        place = root / package
        for path in [place] if place.is_file() else sorted(place.rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported_modules(module: str, path: Path, known: Collection[str]) -> set[str]:
    """The modules of `known` that `module` (the file at `path`) imports.

    Every `import` and `from … import` counts, wherever it is written: at the top, in a
    function, under `if TYPE_CHECKING:`, in a `try`. Relative imports are resolved;
    `from package import name` imports the submodule `package.name` when there is one.
    Importing `a.b.c` runs the packages `a` and `a.b` first, so they count too, except the
    importing module's own packages (Python has run them before it).
    """
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    package_parts = package.split(".") if package else []
    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package_parts[: len(package_parts) - node.level + 1]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            named.add(base)
            named.update(f"{base}.{alias.name}" for alias in node.names)
    reached = set()
    for name in named:
        parts = name.split(".")
        for end in range(1, len(parts) + 1):
            prefix = ".".join(parts[:end])
            if prefix in known and not f"{module}.".startswith(f"{prefix}."):
                reached.add(prefix)
    return reached - {module}


def import_graph(modules: Mapping[str, Path]) -> dict[str, set[str]]:
    """Each module's imports among `modules` (`imported_modules`)."""
    return {name: imported_modules(name, path, modules) for name, path in modules.items()}


def import_cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """One circle per group of modules that import one another, directly or through others,
    written as the path around it (`[a, b, c, a]`: a imports b, b imports c, c imports a);
    empty when imports point one way. The groups are the graph's strongly connected
    components (Tarjan's algorithm, without recursion); a module importing itself is one."""
    edges = {node: sorted(set(targets) & set(graph)) for node, targets in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(edges[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1 or node in edges[node]:
                        groups.append(sorted(group))
            elif target not in index:
                index[target] = low[target] = len(index)
                stack.append(target)
                on_stack.add(target)
                work.append((target, iter(edges[target])))
            elif target in on_stack:
                low[node] = min(low[node], index[target])
    return sorted(_circle(edges, group) for group in groups)


def _circle(edges: Mapping[str, list[str]], group: list[str]) -> list[str]:
    """The shortest path from the group's first module back to itself, within the group."""
    first, members = group[0], set(group)
    came_from: dict[str, str] = {}
    frontier = [first]
    while frontier:
        following = []
        for node in frontier:
            for target in edges[node]:
                if target not in members or target in came_from:
                    continue
                came_from[target] = node
                if target == first:
                    path = [first]
                    while path[-1] != first or len(path) == 1:
                        path.append(came_from[path[-1]])
                    return path[::-1]
                following.append(target)
        frontier = following
    raise AssertionError(f"no circle through {first}")  # a strongly connected group has one


def reaches(graph: Mapping[str, Iterable[str]], module: str) -> set[str]:
    """Every module `module` imports, directly or through others."""
    seen: set[str] = set()
    todo = list(graph[module])
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(graph.get(name, ()))
    return seen
