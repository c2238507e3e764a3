"""The layers point one way (ARCHITECTURE.md): the `adwh` launcher (`launcher/`) on top, the
Dagster layer (`assets/`) beneath it, the library beneath that (`pipelines/`), then
`transforms/`, then `warehouse/`. ruff's banned-import rule holds it: each lower layer's
configuration bans every layer above it (and, beneath the Dagster layer, Dagster), and keeps
the project-wide bans its nested configuration had to repeat. The sandbox, the tests' oracle,
stands outside the layers and imports none of them: it keeps its own reading of the spec."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["launcher", "assets", "pipelines", "transforms", "warehouse"]  # top to bottom
BENEATH_DAGSTER = LAYERS[2:]
SANDBOX_MAY_IMPORT = ["sandbox.spec", "httpx", "numpy", "uvicorn"]
RUFF = Path(sys.executable).with_name("ruff")


def banned(layer: str, source: str) -> list[str]:
    """The banned-import findings ruff reports for `source` as a module of `layer`."""
    probe = ["--stdin-filename", f"{layer}/probe.py", "-"]
    found = subprocess.run(
        [RUFF, "check", "--select", "TID251", "--output-format", "concise", *probe],
        input=source + "\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    return [line for line in found.stdout.splitlines() if "TID251" in line]


@pytest.mark.parametrize("layer", BENEATH_DAGSTER)
def test_dagster_and_every_layer_above_are_banned_beneath_the_dagster_layer(layer):
    above = LAYERS[: LAYERS.index(layer)]
    for module in ["dagster", "dagster._core.events", "dagster_dbt", *above]:
        findings = banned(layer, f"import {module}")
        assert len(findings) == 1 and "is banned" in findings[0], (layer, module, findings)
    assert len(banned(layer, "from dagster import asset")) == 1


def test_the_dagster_layer_imports_nothing_of_the_launcher_above_it():
    for source in ["import launcher", "from launcher.cli import main"]:
        findings = banned("assets", source)
        assert len(findings) == 1 and "is banned" in findings[0], (source, findings)


@pytest.mark.parametrize("layer", LAYERS)
def test_every_layer_may_import_the_layers_beneath_it_and_not_the_project_wide_bans(layer):
    beneath = LAYERS[LAYERS.index(layer) + 1 :]
    assert banned(layer, "\n".join(f"import {module}" for module in beneath)) == []
    for module in ["requests", "urllib.request", "sandbox"]:
        assert len(banned(layer, f"import {module}")) == 1, (layer, module)


def test_the_launcher_and_the_dagster_layer_import_dagster():
    assert banned("launcher", "import dagster") == []
    assert banned("assets", "import dagster") == []


def test_the_sandbox_imports_nothing_of_the_product():
    for module in ["dagster", *LAYERS, "warehouse.spec", "requests", "urllib.request"]:
        findings = banned("sandbox", f"import {module}")
        assert len(findings) == 1 and "is banned" in findings[0], (module, findings)
    assert banned("sandbox", "\n".join(f"import {m}" for m in SANDBOX_MAY_IMPORT)) == []


PACKAGES = [*LAYERS, "sandbox", "bench"]


def modules(packages: list[str]) -> dict[str, Path]:
    """Every module of `packages` by its dotted name (a package by its own: `__init__.py`)."""
    found = {}
    for package in packages:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(known: dict[str, Path]) -> dict[str, set[str]]:
    """What each module imports of `known`: every `import`, at the top, inside a function or
    under `TYPE_CHECKING`, and the packages Python runs on the way to a submodule."""
    graph: dict[str, set[str]] = {}
    for module, path in known.items():
        named = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                named.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                named.add(node.module)
                named.update(f"{node.module}.{alias.name}" for alias in node.names)
        reached = set()
        for name in named:
            parts = name.split(".")
            prefixes = {".".join(parts[:n]) for n in range(1, len(parts) + 1)}
            reached.update(
                p for p in prefixes if p in known and not f"{module}.".startswith(f"{p}.")
            )
        graph[module] = reached - {module}
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each group of modules that import one another, directly or through others (the strongly
    connected components of more than one module, Tarjan's algorithm), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in sorted(graph[module]):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while (member := stack.pop()) != module:
                group.append(member)
            if group:
                circles.append(sorted([module, *group]))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(circles)


def test_no_module_imports_one_that_imports_it_back():
    """A circle hides the order modules depend on, and `TYPE_CHECKING` or an import inside a
    function only hides it further: none, anywhere."""
    assert import_circles(imports(modules(PACKAGES))) == []


def test_a_circle_is_found_however_it_is_hidden():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert import_circles(graph) == [["a", "b", "c"]]
