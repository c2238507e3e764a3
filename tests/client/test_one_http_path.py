"""Only the client talks to the network (ARCHITECTURE.md): ruff bans what sends a request
everywhere else, but on the two lines that name their exception, and the client keeps its
layer's other bans. httpx's types send nothing, and configure the client from outside it."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUFF = Path(sys.executable).with_name("ruff")
SENDS = [
    "import aiohttp",
    "from httpx_aiohttp import HttpxAiohttpClient",
    "import requests",
    "from urllib.request import urlopen",
    "import http.client",
    "import httpx\nhttpx.AsyncClient()",
    "import httpx\nhttpx.Client()",
    "import httpx\nhttpx.post('https://example.invalid')",
    "from httpx import get",
]
TYPES = "import httpx\ntimeout = httpx.Timeout(60.0, connect=10.0)\nt: httpx.AsyncBaseTransport"


def banned(path: str, source: str) -> list[str]:
    """The banned-import findings ruff reports for `source` as the file `path`."""
    probe = ["--no-cache", "--output-format", "concise", "--stdin-filename", path, "-"]
    found = subprocess.run(
        [RUFF, "check", "--select", "TID251", *probe],
        input=source + "\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    return [line for line in found.stdout.splitlines() if "TID251" in line]


@pytest.mark.parametrize("folder", ["launcher", "assets", "pipelines", "transforms", "warehouse"])
def test_nothing_outside_the_client_sends_a_request(folder):
    for source in SENDS:
        findings = banned(f"{folder}/probe.py", source)
        assert len(findings) == 1 and "Only pipelines.client" in findings[0], (source, findings)
    assert banned(f"{folder}/probe.py", TYPES) == []


def test_the_sandbox_sends_none_and_answers_through_httpx_types():
    for source in SENDS:
        assert len(banned("sandbox/probe.py", source)) == 1, source
    assert banned("sandbox/probe.py", TYPES) == []


def test_the_client_sends_with_httpx_over_aiohttp_and_keeps_its_layers_bans():
    assert banned("pipelines/client/probe.py", "\n".join(SENDS[:2] + SENDS[5:])) == []
    for source in ["import requests", "import dagster", "import assets", "import sandbox"]:
        assert len(banned("pipelines/client/probe.py", source)) == 1, source


@pytest.mark.parametrize("path", ["pipelines/notify.py", "launcher/backfill.py"])
def test_the_two_calls_that_are_not_the_services_are_named_at_their_line(path):
    """The alerts' webhook and the launcher's GraphQL to Dagster: one line each says so; any
    other request in those files is banned, and so is what their layer bans."""
    source = (ROOT / path).read_text()
    assert source.count("# noqa: TID251") == 1
    assert banned(path, source) == []
    assert len(banned(path, f"{source}\nhttpx.post('https://example.invalid')")) == 1
    assert len(banned(path, f"{source}\nimport sandbox")) == 1
