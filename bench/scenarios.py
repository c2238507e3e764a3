"""Reliability scenarios: `adwh run` under faults, killed mid-write, run twice at once.

Shared by the tests (short ranges, a few cases each, in `make test`) and by
`python -m bench.soak` (the soak: longer ranges, many seeds and kills, counted in
RELIABILITY.md). Every scenario runs the real command: in process through
`launcher.cli.main` (faults are switched on the embedded sandbox that run uses), or as a
subprocess that can be SIGKILLed. A clean run of the same range, in a home of its own, is what
every outcome is compared with.
"""

import contextlib
import http.server
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from datetime import time as dt_time
from pathlib import Path

import duckdb

# The Dagster partitions of this process start here, read once when the definitions load
# (below): early enough for every range a scenario runs, whatever today's date (by default
# they start 30 days back, which moves past the scenarios' fixed days). The tests set the same.
os.environ.setdefault("ADWH_START_DATE", "2025-10-01")

from bench.deployment import free_port
from bench.lake_reader import WAREHOUSE, partition_digests
from launcher import execute
from launcher.cli import main
from sandbox.embedded import DEFAULT_PRESET, embedded_service
from sandbox.faults import NO_FAULTS, FaultPlan
from sandbox.service import SandboxService
from warehouse.lake import Lake

REPO = Path(__file__).resolve().parents[1]
# The day every scenario runs on (ADWH_TODAY), as the tests fix it.
TODAY = date(2026, 11, 23)
# A short range for the tests' fault runs and kills (~80 partition files, so a kill after 30
# lands mid-write); two extraction windows for the soak's.
SHORT = (date(2026, 11, 20), date(2026, 11, 22))
LONG = (date(2026, 10, 1), date(2026, 11, 4))
# The warehouse's first day (ADWH_START_DATE): every scenario's range starts on or after it.
FIRST_DAY = LONG[0]
# Retries for tests: many attempts (a 50% storm must not exhaust them) and tiny backoffs.
FAST_RETRIES = {
    "retry_attempts": 20,
    "retry_backoff_seconds": 0.001,
    "retry_backoff_max_seconds": 0.02,
}
FEW_RETRIES = {**FAST_RETRIES, "retry_attempts": 3}
SHORT_TIMEOUT = {"timeout_seconds": 0.2}
ENV_NAMES = (
    "ADWH_HOME",
    "ADWH_TODAY",
    "ADWH_START_DATE",
    "ADS_API_BASE_URL",
    "ADS_API_KEY",
    "ADS_ACCOUNT_IDS",
    "DAGSTER_HOME",
)


# ---------------------------------------------------------------------------- faults
@dataclass(frozen=True)
class CountingPlan(FaultPlan):
    """A fault plan that counts what it deals out: a fault kind, or "none", per request."""

    dealt: Counter = field(default_factory=Counter, compare=False, repr=False)

    def pick(self, request_number: int, account: str | None = None) -> str | None:
        fault = super().pick(request_number, account)
        self.dealt[fault or "none"] += 1
        return fault


def counting(plan: FaultPlan) -> CountingPlan:
    fields = {name: getattr(plan, name) for name in plan.__dataclass_fields__}
    return CountingPlan(**fields)


@contextlib.contextmanager
def faults(plan: FaultPlan) -> Iterator[SandboxService]:
    """Switch `plan` on the embedded sandbox that `adwh run` uses, with an empty request log."""
    service = embedded_service(DEFAULT_PRESET, TODAY)
    service.faults = plan
    service.requests.clear()
    try:
        yield service
    finally:
        service.faults = NO_FAULTS


# ---------------------------------------------------------------------------- running adwh
@dataclass
class Outcome:
    code: int
    out: str
    err: str

    @property
    def line(self) -> str:
        return self.err.strip()


def calendar() -> dict[str, str]:
    return {"ADWH_TODAY": TODAY.isoformat(), "ADWH_START_DATE": FIRST_DAY.isoformat()}


@contextlib.contextmanager
def environment(home: Path, **extra: str) -> Iterator[None]:
    """The contract's variables for one run: this home, the fixed reference date, `extra`."""
    saved = {name: os.environ.get(name) for name in (*ENV_NAMES, *extra)}
    for name in ENV_NAMES:
        os.environ.pop(name, None)
    os.environ.update({"ADWH_HOME": str(home), **calendar(), **extra})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def service_config(**config: object) -> Iterator[None]:
    """Dagster resource config for the `service` resource of the runs `adwh run` launches."""
    original = execute.QUIET
    if config:
        execute.QUIET = {**original, "resources": {"service": {"config": config}}}
    try:
        yield
    finally:
        execute.QUIET = original


def run_args(span: tuple[date, date], *extra: str) -> list[str]:
    return ["run", "--start", span[0].isoformat(), "--end", span[1].isoformat(), *extra]


def adwh(home: Path, argv: list[str], config: dict | None = None, **env: str) -> Outcome:
    """`adwh ARGV` in this process, its stdout and stderr captured."""
    out, err = io.StringIO(), io.StringIO()
    with (
        environment(home, **env),
        service_config(**(config or {})),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        try:
            code = main(argv)
        except SystemExit as exited:
            code = exited.code if isinstance(exited.code, int) else 1
    return Outcome(code, out.getvalue(), err.getvalue())


# Where clean runs are kept: `keep(name, build, *key)` returns the home `build` wrote, built
# once. The soak keeps them per process (below); the tests once per suite, shared by their
# workers (tests/prepared.py).
Keeper = Callable[..., Path]
_CLEAN: dict[tuple[date, date], Path] = {}


def _per_process(name: str, build: Callable[[Path], None], span: tuple[date, date]) -> Path:
    if span not in _CLEAN:
        home = Path(tempfile.mkdtemp(prefix="adwh-clean-")) / "home"
        build(home)
        _CLEAN[span] = home
    return _CLEAN[span]


_keeper: Keeper = _per_process


def keep_clean_runs_with(keeper: Keeper) -> None:
    global _keeper
    _keeper = keeper


def make_clean_run(home: Path, span: tuple[date, date]) -> None:
    """A fault-free run of `span` into `home`."""
    with faults(NO_FAULTS):
        outcome = adwh(home, run_args(span))
    assert outcome.code == 0, outcome.err


def clean_run(span: tuple[date, date]) -> Path:
    """The home of a fault-free run of `span`: made once, never modified."""
    return _keeper("clean-run", lambda home: make_clean_run(home, span), span)


def remove_clean_runs() -> None:
    for home in _CLEAN.values():
        shutil.rmtree(home.parent, ignore_errors=True)
    _CLEAN.clear()


def new_home(path: Path, like: Path) -> Path:
    """An empty home that keeps `like`'s pseudonym key, as a user's home keeps its own."""
    (path / "secrets").mkdir(parents=True)
    shutil.copy2(like / "secrets" / "pseudonym.key", path / "secrets" / "pseudonym.key")
    return path


def copy_home(path: Path, like: Path) -> Path:
    """A copy of a complete home: the previous state a run starts from."""
    shutil.copytree(like, path)
    return path


# ---------------------------------------------------------------------------- what is there
def warehouse_digest(home: Path) -> dict[str, tuple[int, str]]:
    """Every extracted table of warehouse.duckdb: its rows and the md5 of all of them, sorted,
    without `_extracted_at`. Equal digests mean equal tables, row for row."""
    with duckdb.connect(str(home / WAREHOUSE), read_only=True) as con:
        names = [
            row[0]
            for row in con.sql(
                "SELECT table_name FROM information_schema.columns "
                "WHERE column_name = '_extracted_at' ORDER BY 1"
            ).fetchall()
        ]
        return {
            name: con.sql(
                "SELECT count(*), md5(coalesce(string_agg(CAST(t AS VARCHAR), chr(10) "
                "ORDER BY CAST(t AS VARCHAR)), '')) FROM "
                f'(SELECT * EXCLUDE (_extracted_at) FROM "{name}") t'
            ).fetchall()[0]
            for name in names
        }


def lake_digest(home: Path) -> dict[str, tuple[int, str]]:
    """Every lake partition (table/date=…) as the Delta log has it: its rows and the md5 of
    them, sorted, without `_extracted_at`. One query per table."""
    lake, digest = Lake(home / "lake"), {}
    with duckdb.connect() as con:
        for table in lake.tables():
            digest |= {
                f"{table}/date={day}": (rows, md5)
                for day, rows, md5 in partition_digests(con, lake.dataset(table))
            }
    return digest


def file_state(home: Path) -> dict[str, tuple[int, int, int]]:
    """(inode, size, mtime) of every lake file and of the warehouse: equal means untouched."""
    files = [*sorted((home / "lake").rglob("*")), home / WAREHOUSE]
    return {
        str(p.relative_to(home)): (p.stat().st_ino, p.stat().st_size, p.stat().st_mtime_ns)
        for p in files
        if p.exists()
    }


def leftovers(home: Path) -> list[str]:
    """What an interrupted run leaves: staging folders, half-built warehouses, temp pages."""
    found = [
        *home.glob("staging/*"),
        *home.glob(f"{WAREHOUSE}.building-*"),
        *home.glob("raw/**/*.tmp"),
    ]
    return sorted(str(p.relative_to(home)) for p in found)


def one_line(outcome: Outcome) -> bool:
    return len(outcome.line.splitlines()) == 1 and outcome.line.startswith("adwh: ")


# ---------------------------------------------------------------------------- faulty runs
@dataclass
class FaultyRun:
    """One `adwh run` under a fault plan, and which of the two allowed endings it reached."""

    outcome: Outcome
    dealt: Counter
    answered: int  # requests that reached the service's handlers
    identical: bool  # exit 0 and the warehouse of a clean run
    intact: bool  # or: a one-line failure, the lake as before and the warehouse untouched

    @property
    def requests(self) -> int:
        return sum(self.dealt.values())

    @property
    def acceptable(self) -> bool:
        return self.identical or self.intact


def faulty_run(
    home: Path, span: tuple[date, date], plan: FaultPlan, config: dict | None = None
) -> FaultyRun:
    """Run `span` under `plan` from `home`'s current state (an empty or a complete home). A
    new home keeps the clean run's pseudonym key, as a user's home keeps its own: the same
    person is then the same pseudonym in both (the store change log has e-mail actors)."""
    clean = clean_run(span)
    if not home.exists():
        new_home(home, clean)
    before_files = file_state(home)
    before_lake = lake_digest(home) if (home / "lake").exists() else {}
    counted = counting(plan)
    with faults(counted) as service:
        outcome = adwh(home, run_args(span), config)
        answered = len(service.requests)
    identical = outcome.code == 0 and warehouse_digest(home) == warehouse_digest(clean)
    intact = (
        outcome.code != 0
        and one_line(outcome)
        and lake_digest(home) == before_lake
        and {k: v for k, v in file_state(home).items() if k == WAREHOUSE}
        == {k: v for k, v in before_files.items() if k == WAREHOUSE}
    )
    return FaultyRun(outcome, counted.dealt, answered, identical, intact)


@dataclass
class IsolatedRun:
    """A run with one thing failing throughout, then the next daily run without it."""

    outcome: Outcome
    seconds: float  # how long the failing run took to end
    runs: int  # the Dagster runs it started (none when it could not start its work)
    differs: set[str]  # the warehouse's tables that are not a clean run's after the run
    alerts: list[str]  # what the alert sensors sent of the runs it recorded
    refill: Outcome  # the next daily run
    asked_from: dict[str, date]  # the first day it asked each dated path for
    healed: bool  # after it, the warehouse is a clean run's
    lost: set[str]  # the tables that are still not a clean run's after it


Tamper = Callable[[SandboxService], Callable[[], None]]


def isolated_run(
    home: Path,
    span: tuple[date, date],
    plan: FaultPlan = NO_FAULTS,
    config: dict | None = None,
    tamper: Tamper | None = None,
    **env: str,
) -> IsolatedRun:
    """Run `span` (from an empty home whose first day is the span's) under `plan`, `tamper`
    (a change to the sandbox's answers, undone after) and `env`, then the daily job with the
    service healed: what failed must be failed alone, and the next daily run must fetch the
    failed source's days again."""
    clean = clean_run(span)
    new_home(home, clean)
    first_day = {"ADWH_START_DATE": span[0].isoformat()}
    started = time.monotonic()
    with faults(plan) as service:
        undo = tamper(service) if tamper else None
        try:
            outcome = adwh(home, run_args(span), config, **first_day, **env)
        finally:
            if undo:
                undo()
    seconds = time.monotonic() - started
    started_runs = len(recorded_runs(home))
    alerts = alerts_of_runs(home)
    expected = warehouse_digest(clean)

    def differing() -> set[str]:
        held = warehouse_digest(home) if (home / WAREHOUSE).exists() else {}
        return {table for table, digest in expected.items() if held.get(table) != digest}

    differs = differing()
    with faults(NO_FAULTS) as service:
        refill = adwh(home, ["run"], config, **first_day)
        asked: dict[str, date] = {}
        for request in service.requests:
            start = dict(request.query).get("start_date")
            if start is not None:
                day = date.fromisoformat(start)
                asked[request.path] = min(asked.get(request.path, day), day)
    lost = differing()
    healed = refill.code == 0 and not lost
    return IsolatedRun(outcome, seconds, started_runs, differs, alerts, refill, asked, healed, lost)


def tampered(path: str, day: str, change: dict) -> Tamper:
    """A tamper: `path`'s rows of `day` answered with `change` applied (a contract break)."""

    def tamper(service: SandboxService) -> Callable[[], None]:
        original = service.handle

        def handle(method, path_asked, query, headers):
            status, body, extra = original(method, path_asked, query, headers)
            if path_asked == path and body and "data" in body:
                rows = [r | change if r.get("date") == day else r for r in body["data"]]
                body = {**body, "data": rows}
            return status, body, extra

        service.handle = handle
        return lambda: delattr(service, "handle")

    return tamper


# ---------------------------------------------------------------------------- alerts
@contextlib.contextmanager
def webhook() -> Iterator[tuple[str, list[str]]]:
    """A Slack-compatible webhook on 127.0.0.1: its URL, and the texts POSTed to it."""
    received: list[str] = []

    class Hook(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["content-length"]))
            received.append(json.loads(body)["text"])
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/hook", received
    finally:
        server.shutdown()


def evaluate_alert_sensor(run_id: str) -> object:
    """The run status sensor that watches `run_id`'s status, evaluated on it as the daemon
    does, in the instance of the current `ADWH_HOME`: None once it sent, else its SkipReason."""
    import dagster as dg

    from assets.definitions import defs
    from assets.instance import open_instance
    from assets.resources import WarehouseResource

    with open_instance() as instance:
        run = instance.get_run_by_id(run_id)
        failed = run.status is dg.DagsterRunStatus.FAILURE
        kind = dg.DagsterEventType.RUN_FAILURE if failed else dg.DagsterEventType.RUN_SUCCESS
        (record,) = instance.get_records_for_run(run_id, of_type=kind).records
        name = "alert_on_failure" if failed else "alert_on_success"
        context = dg.build_run_status_sensor_context(
            sensor_name=name,
            dagster_event=record.event_log_entry.dagster_event,
            dagster_instance=instance,
            dagster_run=run,
            resources={"warehouse": WarehouseResource()},
        )
        sensor = defs.resolve_sensor_def(name)
        return sensor(context.for_run_failure() if failed else context)


def recorded_runs(home: Path) -> list[str]:
    """The ids of the runs `home`'s instance holds, oldest first."""
    from assets.instance import open_instance

    with environment(home), open_instance() as instance:
        return [run.run_id for run in reversed(instance.get_runs())]


def alerts_of_runs(home: Path) -> list[str]:
    """What the alert sensors send of every run `home`'s instance holds, to a local webhook."""
    runs = recorded_runs(home)
    with webhook() as (url, received), environment(home, ADWH_ALERT_WEBHOOK_URL=url):
        for run_id in runs:
            evaluate_alert_sensor(run_id)
    return received


def scheduled_day(home: Path, **env: str) -> tuple[int, list[str]]:
    """The daily schedule's tick at 06:00 of TODAY, its runs executed in process: how many
    runs it started, and what the alert sensors sent of them."""
    import dagster as dg

    from assets.definitions import daily_schedule, defs
    from assets.instance import open_instance
    from assets.resources import ServiceResource, WarehouseResource

    resources = {"service": ServiceResource(), "warehouse": WarehouseResource()}
    when = datetime.combine(TODAY, dt_time(6), UTC)
    with (
        environment(home, **env),
        dg.build_schedule_context(scheduled_execution_time=when, resources=resources) as context,
    ):
        requests = daily_schedule.evaluate_tick(context).run_requests
        with open_instance() as instance:
            for request in requests:
                defs.resolve_job_def("extract").execute_in_process(
                    instance=instance,
                    run_config=execute.QUIET,
                    tags=request.tags,
                    asset_selection=request.asset_selection,
                    raise_on_error=False,
                )
    return len(requests), alerts_of_runs(home)


# ---------------------------------------------------------------------------- subprocesses
def subprocess_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ENV_NAMES}
    return env | {"ADWH_HOME": str(home), **calendar()}


def spawn(home: Path, argv: list[str], log: Path) -> subprocess.Popen:
    """`adwh ARGV` as a process of its own, as cron or a shell would start it."""
    with log.open("ab") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", "launcher.cli", *argv],
            cwd=REPO,
            env=subprocess_env(home),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=sink,
            start_new_session=True,
        )


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.kill()
    process.wait(30)


Trigger = Callable[[Path], bool]


def pages_landed(home: Path) -> bool:
    """The run is extracting: raw pages are being written."""
    return any((home / "raw").glob("*/account=*/*/page-*"))


def partitions_published(count: int) -> Trigger:
    """The run has written `count` partition files into the lake (newer than its start)."""
    since: list[int] = []

    def trigger(home: Path) -> bool:
        if not since:
            since.append(time.time_ns())
        files = (home / "lake").glob("*/date=*/**/*.parquet")
        return sum(1 for p in files if p.stat().st_mtime_ns > since[0]) >= count

    return trigger


def building(home: Path) -> bool:
    """The run is building warehouse.duckdb beside the old one."""
    return any(home.glob(f"{WAREHOUSE}.building-*"))


def after(seconds: float) -> Trigger:
    started = time.monotonic()
    return lambda home: time.monotonic() - started >= seconds


@dataclass
class Kill:
    trigger: str
    killed: bool  # False: the run ended before the trigger fired
    seconds: float
    code: int | None


def run_killed(
    home: Path, argv: list[str], trigger: Trigger, name: str, log: Path, timeout: float = 120
) -> Kill:
    """Start `adwh ARGV`, SIGKILL it the moment `trigger(home)` holds."""
    started = time.monotonic()
    process = spawn(home, argv, log)
    try:
        while process.poll() is None and time.monotonic() - started < timeout:
            if trigger(home):
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(30)
                return Kill(name, True, time.monotonic() - started, process.returncode)
            # Each look globs the lake: every 2 ms it took a core from the run it watched
            # (on 2 cores); a write of a partition takes longer than 20 ms, so a kill still
            # lands within one.
            time.sleep(0.02)
        return Kill(name, False, time.monotonic() - started, process.poll())
    finally:
        stop(process)


@dataclass
class Sightings:
    """What the reader process saw."""

    reads: int = 0
    warehouse_reads: int = 0
    partitions_seen: int = 0
    problems: list[str] = field(default_factory=list)
    problem_count: int = 0


@contextlib.contextmanager
def reader(home: Path, clean: Path, scratch: Path) -> Iterator[Sightings]:
    """A process reading the lake and the warehouse throughout the block; filled in after."""
    stop_file, report = scratch / "reader.stop", scratch / "reader.json"
    sightings = Sightings()
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.lake_reader", str(home), str(clean), stop_file, report],
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not report.exists() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.01)
        assert report.exists(), "the reader did not start"
        yield sightings
        stop_file.touch()
        process.wait(60)
        seen = json.loads(report.read_text())
        for name in ("reads", "warehouse_reads", "partitions_seen", "problems", "problem_count"):
            setattr(sightings, name, seen.get(name, getattr(sightings, name)))
    finally:
        stop(process)


def kill_and_recover(
    home: Path,
    span: tuple[date, date],
    triggers: list[tuple[str, Trigger]],
    scratch: Path,
    between: Callable[[], bool] | None = None,
    extra: tuple[str, ...] = (),
) -> tuple[list[Kill], list[str], Outcome]:
    """Kill one run of `span` (with the options `extra`) per trigger, then run it to the end.
    After each kill, every partition in the lake must be a clean run's and none published
    before may be missing (a crash loses nothing), the warehouse, if any, must be a clean
    run's, and `between` (a test's own check of the state a kill leaves) must hold."""
    clean = clean_run(span)
    expected_lake, expected_warehouse = lake_digest(clean), warehouse_digest(clean)
    before = set(lake_digest(home)) if (home / "lake").exists() else set()
    kills, damage = [], []
    for name, trigger in triggers:
        kill = run_killed(home, run_args(span, *extra), trigger, name, scratch / "killed.log")
        kills.append(kill)
        now = lake_digest(home) if (home / "lake").exists() else {}
        damage += [
            f"after the kill at {name}: {k} differs" for k in now if now[k] != expected_lake.get(k)
        ]
        damage += [f"after the kill at {name}: {k} is gone" for k in sorted(before - set(now))]
        before |= set(now)
        if (home / WAREHOUSE).exists() and warehouse_digest(home) != expected_warehouse:
            damage.append(f"after the kill at {name}: the warehouse is not a clean run's")
        if between is not None and not between():
            damage.append(f"after the kill at {name}: the test's own check failed")
    outcome = adwh(home, run_args(span, *extra))
    return kills, damage, outcome
