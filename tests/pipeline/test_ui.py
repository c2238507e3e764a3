"""`adwh ui` (`make dagster`): Dagster's `dg dev`, as its docs run a project locally, over the
instance `adwh` records to, saying nothing that contradicts the README (no temporary home, no
superseded command), and quiet while nothing changes (no line per sensor tick)."""

import re

import httpx
import pytest
from rich.text import Text

from assets.instance import dagster_dir
from bench.deployment import local_ui, wait_until

TICKS = """
{ sensorOrError(sensorSelector: {repositoryLocationName: "pipelines.definitions",
    repositoryName: "__repository__", sensorName: "warehouse_refresh"}) {
  ... on Sensor { sensorState { status ticks(limit: 5) { status skipReason } } } } }
"""
# A line of Dagster's log at warning level: `<date> <time> <zone> - <logger> - WARNING - …`.
LOG_LINE = re.compile(r"^\S+ \S+ \S+ - [\w.]+ - (?P<level>[A-Z]+) - ")
JOBS = "{ repositoriesOrError { ... on RepositoryConnection { nodes { jobs { name } } } } }"


def log_blocks(lines: list[str]) -> list[list[str]]:
    """Dagster's log lines, each with the lines that follow it (a traceback); a line before
    any is a block of its own."""
    blocks: list[list[str]] = []
    for line in lines:
        if LOG_LINE.match(line) or not blocks:
            blocks.append([line])
        else:
            blocks[-1].append(line)
    return blocks


def of_dagsters_processes(block: list[str]) -> bool:
    """A warning of Dagster's, or a sensor tick that could not reach the code server while it
    restarted."""
    header = LOG_LINE.match(block[0])
    if header is None:
        return False
    unreachable = any("DagsterUserCodeUnreachableError" in line for line in block)
    return header["level"] == "WARNING" or (header["level"] == "ERROR" and unreachable)


def graphql(url: str, query: str) -> dict:
    return httpx.post(f"{url}/graphql", json={"query": query}, timeout=30).json()["data"]


@pytest.mark.slow(seconds=50)
def test_the_ui_runs_on_the_homes_instance_and_says_nothing_while_sensors_skip(home, tmp_path):
    log = tmp_path / "ui.log"
    with local_ui(home, log) as url:
        ticks = wait_until(  # a tick that ended: the newest may still be STARTED
            lambda: [
                tick
                for tick in graphql(url, TICKS)["sensorOrError"]["sensorState"]["ticks"]
                if tick["status"] != "STARTED"
            ],
            "an ended tick of the warehouse_refresh sensor",
            timeout=180,
            every=1,
        )
        jobs = {
            j["name"] for n in graphql(url, JOBS)["repositoriesOrError"]["nodes"] for j in n["jobs"]
        }
    assert ticks[0]["status"] == "SKIPPED" and ticks[0]["skipReason"]
    assert {"daily", "extract", "warehouse", "reconcile", "housekeeping"} <= jobs
    said = Text.from_ansi(log.read_text()).plain.splitlines()
    assert said[0] == f"adwh: the Dagster UI at {url}, its instance in {dagster_dir()}", said
    assert said[1] == "All component YAML validated successfully.", said
    # Nothing per tick (the daemon's two INFO lines), nothing contradicting the README. Dagster
    # may tell of its own processes: a code server that missed its heartbeats on a loaded
    # machine exits and is restarted ("Code server process has exited … Restarting", a
    # WARNING), and a sensor tick in between cannot reach it (an ERROR whose traceback holds
    # DagsterUserCodeUnreachableError: "will resume once the server is available").
    # The test stops `dg dev` with SIGTERM; click then prints "Aborted!" as it exits.
    told = [line for line in said[2:] if line.strip() and line != "Aborted!"]
    assert [block for block in log_blocks(told) if not of_dagsters_processes(block)] == []
    assert not any("temporary" in line or "Supersession" in line for line in said), said
    assert (dagster_dir() / "dagster.yaml").exists()
