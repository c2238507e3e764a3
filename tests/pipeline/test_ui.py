"""`adwh ui` (`make dagster`): Dagster's `dg dev` on the repository's two code locations, over
the instance `adwh` records to, saying nothing that contradicts the README (no temporary home, no
superseded command), and only warnings: no line per sensor tick, none per event of a run. It
stops when asked, however it was started, and leaves no process behind."""

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import httpx
import psutil
import pytest
from rich.text import Text

from assets.instance import dagster_dir
from bench.deployment import free_port, listens, wait_until
from launcher.ui import GRACE, shown

TICKS = """
{ sensorOrError(sensorSelector: {repositoryLocationName: "warehouse",
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
LOADED = (
    "{ workspaceOrError { ... on Workspace { locationEntries "
    "{ locationOrLoadError { __typename } } } } }"
)
# As a user's script starts it: in the background of a non-interactive shell, which starts it
# with SIGINT ignored (POSIX: no job control, so a Ctrl-C meant for the script's foreground
# command must spare it), its output in a file; the shell says its process id.
IN_THE_BACKGROUND = '"$0" ui --port "$1" > "$2" 2>&1 & echo $!'
ADWH = str(Path(sys.executable).parent / "adwh")


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


@pytest.fixture
def ui_started_by_a_script(home: Path, tmp_path: Path) -> Iterator[tuple[str, int, Path]]:
    """`adwh ui &` from a non-interactive shell, on `home`: its URL once its code location is
    loaded, its process id, and the file of its output. Another port is tried if the free one
    was taken before `dg dev` bound it. Whatever is left of its processes at the end is killed
    (before issue 70 it ignored SIGTERM)."""
    log = tmp_path / "ui.log"
    for _ in range(3):
        port = free_port()
        root = in_the_background(port, log)
        if root is not None:
            break
    else:
        raise RuntimeError(f"adwh ui ended before listening, 3 times; see {log}")
    url = f"http://127.0.0.1:{port}"
    listed = family(root)
    try:
        wait_until(lambda: loaded(url), "the UI's code location loaded", timeout=180, every=1)
        listed = family(root)
        yield url, root.pid, log
    finally:
        for process in {*listed, *family(root)}:
            with suppress(psutil.Error):
                process.kill()


def in_the_background(port: int, log: Path) -> psutil.Process | None:
    """`adwh ui --port port &` from a non-interactive shell, once it listens; None if it ended
    first (the port was taken)."""
    shell = subprocess.Popen(  # a session of its own, as a terminal gives a script
        ["bash", "-c", IN_THE_BACKGROUND, ADWH, str(port), str(log)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    root = psutil.Process(int(shell.communicate(timeout=30)[0]))
    wait_until(
        lambda: listens(root.pid, port) or not running(root), "adwh ui to listen", 180, every=0.5
    )
    return root if running(root) else None


def loaded(url: str) -> bool:
    try:
        entries = graphql(url, LOADED)["workspaceOrError"]["locationEntries"]
    except (httpx.TransportError, KeyError, TypeError, ValueError):
        return False
    kinds = [entry["locationOrLoadError"]["__typename"] for entry in entries]
    return bool(kinds) and all(kind == "RepositoryLocation" for kind in kinds)


def family(root: psutil.Process) -> list[psutil.Process]:
    """`root` and every process it started, while they run."""
    try:
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def running(process: psutil.Process) -> bool:
    """Not ended: a zombie, ended but not yet reaped by its new parent, is not running."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def sigint_ignored(pid: int) -> bool:
    """Linux's record of the signals process `pid` ignores (a mask: bit n - 1 for signal n)."""
    status = Path(f"/proc/{pid}/status").read_text()
    ignored = int(re.search(r"^SigIgn:\s*([0-9a-f]+)$", status, re.MULTILINE)[1], 16)
    return bool(ignored & 1 << (signal.SIGINT - 1))


def what(process: psutil.Process) -> str:
    with suppress(psutil.Error):
        return " ".join(process.cmdline())[:160]
    return str(process.pid)


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
def test_the_ui_runs_on_the_homes_instance_says_only_warnings_and_stops_when_asked(
    ui_started_by_a_script,
):
    url, pid, log = ui_started_by_a_script
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
    # Asked to stop, as a script or an operator does (`kill PID`): within the time its
    # processes are given to stop on their own, it has stopped them all: its webserver, its
    # daemon, its code servers, listed before the signal (issue 70: `dg dev` took SIGTERM
    # for a SIGINT, ignored as the shell started it, and six processes stayed).
    assert sigint_ignored(pid)
    processes = family(psutil.Process(pid))
    started = " ".join(what(process) for process in processes)
    assert all(
        part in started for part in ("dagster_webserver", "_daemon", "code-server", "api grpc")
    )
    os.kill(pid, signal.SIGTERM)
    psutil.wait_procs(processes, timeout=GRACE + 5)
    assert [what(process) for process in processes if running(process)] == []
    assert ticks[0]["status"] == "SKIPPED" and ticks[0]["skipReason"]
    assert {"daily", "extract", "warehouse", "reconcile", "housekeeping"} <= jobs
    said = Text.from_ansi(log.read_text()).plain.splitlines()
    assert said[0] == f"adwh: the Dagster UI at {url}, its instance in {dagster_dir()}", said
    # Nothing per tick (the daemon's two INFO lines), nothing per event of the run (its
    # worker's console logger is at DEBUG), nothing contradicting the README. Dagster
    # may tell of its own processes: a code server that missed its heartbeats on a loaded
    # machine exits and is restarted ("Code server process has exited … Restarting", a
    # WARNING), and a sensor tick in between cannot reach it (an ERROR whose traceback holds
    # DagsterUserCodeUnreachableError: "will resume once the server is available").
    # Stopped, `dg dev` may print click's "Aborted!" as it exits.
    told = [line for line in said[1:] if line.strip() and line != "Aborted!"]
    assert [block for block in log_blocks(told) if not of_dagsters_processes(block)] == []
    assert not any("temporary" in line or "Supersession" in line for line in said), said
    assert (dagster_dir() / "dagster.yaml").exists()
