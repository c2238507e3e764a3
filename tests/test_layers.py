"""The layers point one way (ARCHITECTURE.md): the `adwh` launcher (`launcher/`) on top, the
Dagster layer (`assets/`) beneath it, the library beneath that (`pipelines/`), then
`transforms/`, then `warehouse/`. ruff's banned-import rule holds it: each lower layer's
configuration bans every layer above it (and, beneath the Dagster layer, Dagster), and keeps
the project-wide bans its nested configuration had to repeat. The sandbox, the tests' oracle,
stands outside the layers and imports none of them: it keeps its own reading of the spec."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.imports import ROOT, import_cycles, import_graph, package_modules

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


PACKAGES = [*LAYERS, "sandbox", "bench", "tests"]


def test_no_module_imports_one_that_imports_it_back():
    """Anywhere in the repository, every import counted wherever it is written."""
    assert import_cycles(import_graph(package_modules(ROOT, PACKAGES))) == []


def write(root: Path, sources: dict[str, str]) -> None:
    for name, text in sources.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_a_circle_is_found_wherever_its_imports_are_written(tmp_path):
    write(
        tmp_path / "pkg",
        {
            "__init__.py": "",
            "a.py": "from pkg import b\n",
            "b.py": "def later():\n    from pkg.sub import c\n",
            "sub/__init__.py": "",
            "sub/c.py": "import typing\nif typing.TYPE_CHECKING:\n    from .. import a\n",
            "d.py": "import json\nfrom pkg.a import something\nfrom . import d\n",
        },
    )
    graph = import_graph(package_modules(tmp_path, ["pkg"]))
    assert graph["pkg.a"] == {"pkg.b"}
    assert graph["pkg.b"] == {"pkg.sub", "pkg.sub.c"}
    assert graph["pkg.sub.c"] == {"pkg.a"}
    assert graph["pkg.d"] == {"pkg.a"}  # importing itself is no import
    assert import_cycles(graph) == [["pkg.a", "pkg.b", "pkg.sub.c", "pkg.a"]]


def test_a_package_run_on_the_way_to_its_submodule_counts():
    """Importing `lib.util` runs `lib/__init__.py` first: if that imports the importer back,
    it is a circle; the package's own modules import its other modules freely."""
    graph = {"app": {"lib", "lib.util"}, "lib": {"app"}, "lib.util": set(), "lib.x": {"lib.util"}}
    assert import_cycles(graph) == [["app", "lib", "app"]]
    assert import_cycles({**graph, "lib": set()}) == []


def test_a_package_is_an_import_of_every_module_outside_it(tmp_path):
    write(
        tmp_path,
        {
            "app.py": "import lib.util\n",
            "lib/__init__.py": "",
            "lib/util.py": "from lib import other\n",
            "lib/other.py": "",
        },
    )
    graph = import_graph(package_modules(tmp_path, ["app.py", "lib"]))
    assert graph == {
        "app": {"lib", "lib.util"},
        "lib": set(),
        "lib.util": {"lib.other"},
        "lib.other": set(),
    }
