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
    for module in ["dagster", "dagster._core.events", *above]:
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
