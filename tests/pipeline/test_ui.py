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
LOG_LEVEL = re.compile(r"^\S+ \S+ \S+ - [\w.]+ - WARNING - ")
JOBS = "{ repositoriesOrError { ... on RepositoryConnection { nodes { jobs { name } } } } }"


def graphql(url: str, query: str) -> dict:
    return httpx.post(f"{url}/graphql", json={"query": query}, timeout=30).json()["data"]


@pytest.mark.slow(seconds=50)
def test_the_ui_runs_on_the_homes_instance_and_says_nothing_while_sensors_skip(home, tmp_path):
    log = tmp_path / "ui.log"
    with local_ui(home, log) as url:
        ticks = wait_until(
            lambda: graphql(url, TICKS)["sensorOrError"]["sensorState"]["ticks"],
            "a tick of the warehouse_refresh sensor",
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
    # may warn of its own processes: a code server that missed its heartbeats on a loaded
    # machine exits and is restarted ("Code server process has exited … Restarting").
    assert [line for line in said[2:] if LOG_LEVEL.match(line) is None] == [], said
    assert not any("temporary" in line or "Supersession" in line for line in said), said
    assert (dagster_dir() / "dagster.yaml").exists()
