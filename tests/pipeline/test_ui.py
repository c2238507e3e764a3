"""`adwh ui` (`make dagster`): Dagster's `dg dev`, as its docs run a project locally, over the
instance `adwh` records to, saying nothing that contradicts the README (no temporary home, no
superseded command), and only warnings: no line per sensor tick, none per event of a run."""

import re

import httpx
import pytest
from rich.text import Text

from assets.instance import dagster_dir
from assets.ui import shown
from bench.deployment import local_ui, wait_until

TICKS = """
{ sensorOrError(sensorSelector: {repositoryLocationName: "pipelines.definitions",
    repositoryName: "__repository__", sensorName: "warehouse_refresh"}) {
  ... on Sensor { sensorState { status ticks(limit: 5) { status skipReason } } } } }
"""
# A line of Dagster's log at warning level: `<date> <time> <zone> - <logger> - WARNING - …`.
LOG_LINE = re.compile(r"^\S+ \S+ \S+ - [\w.]+ - (?P<level>[A-Z]+) - ")
JOBS = "{ repositoriesOrError { ... on RepositoryConnection { nodes { jobs { name } } } } }"
# A run as the UI's "Materialize" launches it (Dagster's implicit asset job, no run config), of
# an asset the warehouse_refresh sensor does not wait for: its ticks stay skipped.
MATERIALIZE_HOUSEKEEPING = """
mutation { launchRun(executionParams: {selector: {repositoryLocationName: "pipelines.definitions",
    repositoryName: "__repository__", jobName: "__ASSET_JOB",
    assetSelection: [{path: ["lake_housekeeping"]}]}}) {
  ... on LaunchRunSuccess { run { runId } } } }
"""
RUN_STATUS = '{ runOrError(runId: "%s") { ... on Run { status } } }'


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


def test_only_warnings_and_what_is_not_dagsters_log_are_shown():
    said = [
        "All component YAML validated successfully.\n",
        "\x1b[32m2026-11-29 00:12:44 +0000\x1b[0m - dagster - \x1b[34mWARNING\x1b[0m - a\n",
        "2026-11-29 00:14:29 +0000 - dagster - DEBUG - warehouse - 2205 - STEP_START - b\n",
        "2026-11-29 00:14:29 +0000 - dagster - INFO - warehouse - 2205 - marts - loaded\n",
        "  a line that goes with the INFO line\n",
        "2026-11-29 00:14:30 +0000 - dagster.daemon.SensorDaemon - ERROR - failed\n",
        "Traceback (most recent call last):\n",
    ]
    assert list(shown(said)) == [said[0], said[1], said[5], said[6]]


@pytest.mark.slow(seconds=60)
def test_the_ui_runs_on_the_homes_instance_and_says_only_warnings(home, tmp_path):
    log = tmp_path / "ui.log"
    with local_ui(home, log) as url:
        run_id = graphql(url, MATERIALIZE_HOUSEKEEPING)["launchRun"]["run"]["runId"]
        wait_until(
            lambda: graphql(url, RUN_STATUS % run_id)["runOrError"]["status"] == "SUCCESS",
            "the run the UI launched to succeed",
            timeout=180,
            every=1,
        )
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
    # Nothing per tick (the daemon's two INFO lines), nothing per event of the run (its
    # worker's console logger is at DEBUG), nothing contradicting the README. Dagster
    # may tell of its own processes: a code server that missed its heartbeats on a loaded
    # machine exits and is restarted ("Code server process has exited … Restarting", a
    # WARNING), and a sensor tick in between cannot reach it (an ERROR whose traceback holds
    # DagsterUserCodeUnreachableError: "will resume once the server is available").
    # The test stops `dg dev` with SIGTERM; click then prints "Aborted!" as it exits.
    told = [line for line in said[2:] if line.strip() and line != "Aborted!"]
    assert [block for block in log_blocks(told) if not of_dagsters_processes(block)] == []
    assert not any("temporary" in line or "Supersession" in line for line in said), said
    assert (dagster_dir() / "dagster.yaml").exists()
