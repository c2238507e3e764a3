"""`make bench-scale`: an agency's day and history through the production deployment.

An agency key reaching ACCOUNTS accounts of the sandbox (`small`, the first LARGE of them
`large`: `adwh sandbox serve --clients N --large-clients K`, over HTTP on this machine), handed
to the deployment of `deploy/` (`bench/deployment.py`: the machine's PostgreSQL through
PgBouncer, code server, webserver, daemon) in one home, two cases one after the other:

- **backfill**: DAYS days up to the day before yesterday, as `adwh backfill` launches them
  (runs of packed accounts, `pipelines/fanout.py`); the warehouse_refresh sensor builds the
  warehouse after the last run;
- **daily**: the next morning's `daily_schedule`, evaluated as the daemon does at 06:00 (its
  run requests launched through the webserver): yesterday, the lookback and economics pending.

After each, the floor: the same pages (the raw pages the case landed: their paths and queries),
fetched again 8 in flight by one process, each parsed and dropped (`bench/floor.py`).

Per case: runs, wall to the last run and to the fresh warehouse, the floor's wall, CPU by part
(run workers, daemon, webserver, PostgreSQL, PgBouncer, sandbox), each run's peak memory, Delta
commits, Dagster's event rows and the PostgreSQL bytes added, the warehouse build's wall, and the
UI's asset and runs pages' load time (`bench/ui_load.py`). Writes bench/SCALE.md.

Environment: SCALE_ACCOUNTS (1000), SCALE_LARGE (3), SCALE_DAYS (30), SCALE_RUNS (runs at once,
4 as deploy/dagster.yaml), SCALE_FLOOR_CONCURRENCY (8), ADWH_BENCH_POSTGRES_URL (the machine's
server, as the tests use it), SCALE_POOLER ("pgbouncer", as deploy/compose.yaml does, where the
machine has it; "direct" otherwise or to compare).
"""

import asyncio
import os
import platform
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from datetime import time as clock
from pathlib import Path

import dagster as dg
import psutil
import sqlalchemy

from assets.partitions import RANGE_END_TAG, RANGE_START_TAG
from assets.warehouse_definitions import WAREHOUSE_JOB
from bench.__main__ import KEY, REFERENCE, ROOT, Server, serve
from bench.deployment import (
    FINISHED,
    PGBOUNCER,
    deployment,
    fresh_database,
    listens,
    pooler,
    run_worker_pid,
    settled,
    wait_until,
)
from bench.floor import fetch_all, requests_of
from bench.ui_load import page_load_seconds
from launcher.backfill import extract_runs, launch_backfills
from pipelines.fanout import ACCOUNTS_TAG
from pipelines.settings import load_settings
from warehouse.lake import Lake

POSTGRES = os.environ.get(
    "ADWH_BENCH_POSTGRES_URL", "postgresql+psycopg2://postgres@127.0.0.1:5432"
)
POOLER = os.environ.get("SCALE_POOLER", "pgbouncer" if PGBOUNCER else "direct")
ACCOUNTS = int(os.environ.get("SCALE_ACCOUNTS", "1000"))
LARGE = int(os.environ.get("SCALE_LARGE", "3"))
DAYS = int(os.environ.get("SCALE_DAYS", "30"))
RUNS_AT_ONCE = int(os.environ.get("SCALE_RUNS", "4"))
FLOOR_CONCURRENCY = int(os.environ.get("SCALE_FLOOR_CONCURRENCY", "8"))
# Targets of issue 47 on this machine.
DAILY_LIMIT_S = 300
FLOOR_RATIO = 2.0
RUN_RSS_MIB = 600
# Where bench/SCALE.md's hand-kept part begins (earlier designs' figures): kept as it is.
EARLIER = "## Earlier measurements"


def error_chain(error: object) -> list[str]:
    """A step's error and its causes, each by its last line: Dagster's own wrapper says only
    which op failed."""
    lines = []
    while error is not None:
        lines.append(error.message.strip().splitlines()[-1][:300])
        error = error.cause
    return lines


@dataclass
class RunMemory:
    """Samples the resident memory and CPU time of every started run's worker process twice a
    second; keeps each run's peak memory and its last CPU time (its whole, within half a
    second)."""

    instance: dg.DagsterInstance
    peaks: dict[str, float] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)
    _pids: dict[str, int] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)

    def watch(self) -> None:
        started = dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED])
        while not self._stop.is_set():
            for run in self.instance.get_runs(started):
                pid = self._pids.get(run.run_id) or run_worker_pid(self.instance, run.run_id)
                if pid is None:
                    continue
                self._pids[run.run_id] = pid
                try:
                    process = psutil.Process(pid)
                    rss = process.memory_info().rss / 2**20
                    times = process.cpu_times()
                except psutil.Error:
                    continue
                self.peaks[run.run_id] = max(self.peaks.get(run.run_id, 0.0), rss)
                self.cpu[run.run_id] = times.user + times.system
            time.sleep(0.5)

    def stop(self) -> None:
        self._stop.set()


@dataclass(frozen=True)
class Case:
    name: str
    account_days: int  # accounts by days the case asked for
    runs: int
    run_wall: float  # from the launch to the last run's end
    warehouse_wall: float  # from the launch to the fresh warehouse
    build_wall: float  # the warehouse run's own wall
    requests: int  # pages landed
    floor_wall: float  # the same pages, fetched again by the floor
    floor_cpu: float
    cpu: dict[str, float]  # CPU seconds of each part from the launch to the fresh warehouse
    busy: float  # share of the machine's cores busy meanwhile
    peak_run_mib: float
    median_run_mib: float
    # Median CPU seconds per account of a run, over the first and the last quarter of the runs
    # (by start): what grows with what the lake already holds shows as the second above the first.
    cpu_per_account: tuple[float, float]
    commits: int  # Delta commits the runs and the build wrote
    event_rows: int  # Dagster event log rows added
    database_bytes: int  # PostgreSQL database size added
    pages_s: dict[str, float | None]  # the UI's pages' load time after the case
    failed: int


@dataclass
class Bench:
    """One deployment, one home: what a case needs to launch and observe."""

    home: Path
    server: Server
    instance: dg.DagsterInstance
    memory: RunMemory
    parts: dict[str, int | None]
    database: str  # the instance's database, reached directly (not through PgBouncer)
    ui: str

    def case(self, name: str, launch: Callable[[], int]) -> Case:
        """`launch()` starts the case's runs and says how many account-days they ask for."""
        commits_before, size_before = lake_commits(self.home), self.storage()
        cpu_before, parts_before = psutil.cpu_times(), cpu_by_part(self.parts)
        launched = time.time()
        account_days = launch()
        wait_until(lambda: accounts_settled(self.instance), f"{name}: the runs", timeout=14400)
        records = [
            r
            for r in self.instance.get_run_records()
            if ACCOUNTS_TAG in r.dagster_run.tags and r.create_timestamp.timestamp() >= launched
        ]
        extracted = max(r.end_time for r in records)
        wait_until(
            lambda: settled(self.instance, extracted), f"{name}: the warehouse", timeout=3600
        )
        build = max(
            (r for r in self.instance.get_run_records() if r.dagster_run.job_name == WAREHOUSE_JOB),
            key=lambda r: r.end_time or 0,
        )
        cpu_after, parts_after = psutil.cpu_times(), cpu_by_part(self.parts)
        wall = build.end_time - launched
        commits_after, size_after = lake_commits(self.home), self.storage()
        floor_wall, floor_cpu, requests = self.floor(launched)
        peaks = [self.memory.peaks[r.dagster_run.run_id] for r in records]
        self.show_heaviest(records)
        self.show_failed(records)
        return Case(
            name=name,
            account_days=account_days,
            runs=len(records),
            run_wall=extracted - launched,
            warehouse_wall=wall,
            build_wall=build.end_time - build.start_time,
            requests=requests,
            floor_wall=floor_wall,
            floor_cpu=floor_cpu,
            cpu={part: parts_after[part] - parts_before[part] for part in self.parts},
            busy=(_busy(cpu_after) - _busy(cpu_before)) / (wall * psutil.cpu_count()),
            peak_run_mib=max(peaks, default=0.0),
            median_run_mib=statistics.median(peaks) if peaks else 0.0,
            cpu_per_account=self.cpu_per_account(records),
            commits=commits_after - commits_before,
            event_rows=size_after[0] - size_before[0],
            database_bytes=size_after[1] - size_before[1],
            pages_s=page_load_seconds(self.ui),
            failed=sum(r.dagster_run.status is not dg.DagsterRunStatus.SUCCESS for r in records),
        )

    def show_heaviest(self, records: list[dg.RunRecord], count: int = 5) -> None:
        """Print the runs of the highest memory peaks (their accounts, partitions, CPU): where
        a memory target is missed, which runs miss it."""
        for record in sorted(
            records, key=lambda r: -self.memory.peaks.get(r.dagster_run.run_id, 0.0)
        )[:count]:
            run = record.dagster_run
            accounts = run.tags[ACCOUNTS_TAG].split(",")
            print(
                f"run {run.run_id[:8]}: {self.memory.peaks.get(run.run_id, 0.0):.0f} MiB, "
                f"{self.memory.cpu.get(run.run_id, 0.0):.0f} CPU-s, {len(accounts)} accounts "
                f"from {accounts[0]}, {run.tags.get(RANGE_START_TAG, 'current state')}"
                f"..{run.tags.get(RANGE_END_TAG, '')}",
                flush=True,
            )

    def show_failed(self, records: list[dg.RunRecord]) -> None:
        """Print why each run that did not succeed failed (its steps' errors, one line each):
        a failed run counted in the table must be explained."""
        for record in records:
            run = record.dagster_run
            if run.status is dg.DagsterRunStatus.SUCCESS:
                continue
            failures = self.instance.get_records_for_run(
                run.run_id, of_type=dg.DagsterEventType.STEP_FAILURE
            ).records
            causes = [
                " <- ".join(error_chain(r.event_log_entry.dagster_event.step_failure_data.error))
                for r in failures
            ] or [str(run.status)]
            for cause in causes:
                print(f"run {run.run_id[:8]} failed: {cause[:300]}", flush=True)

    def cpu_per_account(self, records: list[dg.RunRecord]) -> tuple[float, float]:
        """The median CPU seconds per account of the first and of the last quarter of
        `records`' runs, by start."""
        started = sorted(records, key=lambda r: r.start_time or 0)
        per_account = [
            self.memory.cpu.get(r.dagster_run.run_id, 0.0)
            / len(r.dagster_run.tags[ACCOUNTS_TAG].split(","))
            for r in started
        ]
        if not per_account:
            return 0.0, 0.0
        quarter = max(len(per_account) // 4, 1)
        return statistics.median(per_account[:quarter]), statistics.median(per_account[-quarter:])

    def floor(self, since: float) -> tuple[float, float, int]:
        """The pages landed since `since`, fetched again: (wall, CPU seconds, pages)."""
        requests = requests_of(self.home / "raw", since)
        started, cpu = time.perf_counter(), time.process_time()
        asyncio.run(fetch_all(requests, self.server.url, KEY, FLOOR_CONCURRENCY, agency=True))
        return time.perf_counter() - started, time.process_time() - cpu, len(requests)

    def storage(self) -> tuple[int, int]:
        """(Dagster's event log rows, the database's bytes)."""
        engine = sqlalchemy.create_engine(self.database, poolclass=sqlalchemy.pool.NullPool)
        with engine.connect() as con:
            rows = con.execute(sqlalchemy.text("SELECT count(*) FROM event_logs")).scalar_one()
            size = con.execute(
                sqlalchemy.text("SELECT pg_database_size(current_database())")
            ).scalar_one()
        return rows, size


def measure() -> list[Case]:
    end = REFERENCE - timedelta(days=2)  # the daily case then reads yesterday
    start = end - timedelta(days=DAYS - 1)
    server = serve("small", clients=ACCOUNTS, large_clients=LARGE)
    with (
        tempfile.TemporaryDirectory(prefix="adwh-scale-") as work,
        fresh_database(POSTGRES) as database,
        reached(database, Path(work)) as db,
    ):
        home = Path(work) / "home"
        env = {
            "ADS_API_BASE_URL": server.url,
            "ADS_API_KEY": KEY,
            "ADWH_HOME": str(home),
            "ADWH_TODAY": REFERENCE.isoformat(),
            "ADWH_START_DATE": start.isoformat(),
            "ADWH_DAGSTER_PG_URL": db,
        }
        os.environ.update(env)
        with deployment(Path(work), env, max_runs=RUNS_AT_ONCE) as deploy:
            os.environ["ADWH_DAGSTER_URL"] = deploy.url
            with deploy.instance() as instance, deploy.instance() as watched:
                memory = RunMemory(watched)
                threading.Thread(target=memory.watch, daemon=True).start()
                parts = {
                    "runs (code server)": deploy.pids["code"],
                    "daemon": deploy.pids["daemon"],
                    "webserver": deploy.pids["webserver"],
                    "sandbox": server.process.pid,
                    "PostgreSQL": postmaster(),
                    "PgBouncer": pgbouncer_pid(db),
                }
                bench = Bench(home, server, instance, memory, parts, database, deploy.url)
                settings = load_settings()

                def backfill() -> int:
                    launched = launch_backfills(settings, start, end)
                    return sum(len(pack.accounts) for pack in launched) * DAYS

                cases = [bench.case(f"{DAYS}-day backfill", backfill)]
                print(cases[-1], flush=True)
                cases.append(bench.case("daily job", lambda: launch_daily(instance)))
                print(cases[-1], flush=True)
                memory.stop()
    server.stop()
    return cases


def launch_daily(instance: dg.DagsterInstance) -> int:
    """The daily schedule's run requests at 06:00 UTC of REFERENCE, evaluated as the daemon
    does, launched through the webserver as the daemon would; the account-days they ask."""
    from assets.definitions import daily_schedule
    from assets.resources import ServiceResource, WarehouseResource

    at = datetime.combine(REFERENCE, clock(6), tzinfo=UTC)
    resources = {"service": ServiceResource(), "warehouse": WarehouseResource()}
    with dg.build_schedule_context(
        instance=instance, scheduled_execution_time=at, resources=resources
    ) as context:
        requests = daily_schedule(context)
    with extract_runs(load_settings()) as launch:
        for request in requests:
            launch(dict(request.tags))
    return sum(
        len(request.tags[ACCOUNTS_TAG].split(","))
        * (
            (
                date.fromisoformat(request.tags[RANGE_END_TAG])
                - date.fromisoformat(request.tags[RANGE_START_TAG])
            ).days
            + 1
        )
        for request in requests
    )


def lake_commits(home: Path) -> int:
    """The commits written into the lake's tables (not the housekeeping's)."""
    if not (home / "lake").exists():
        return 0
    lake = Lake(home / "lake")
    return sum(
        v.operation not in ("VACUUM START", "VACUUM END", "OPTIMIZE")
        for name in lake.every_table()
        for v in lake.history(name)
    )


def tree_cpu(pid: int) -> float:
    """CPU seconds of a process and its descendants: the living ones, and those that ended
    and were reaped (counted in their parent's children times)."""
    try:
        root = psutil.Process(pid)
        family = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0.0
    for process in family:
        try:
            times = process.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


@contextmanager
def reached(database: str, work: Path) -> Iterator[str]:
    """The URL the instance reaches `database` by: through PgBouncer, or directly
    (SCALE_POOLER)."""
    if POOLER == "direct":
        yield database
    else:
        with pooler(database, work / "pgbouncer") as url:
            yield url


def pgbouncer_pid(url: str) -> int | None:
    """The PgBouncer serving `url` (not another one the machine runs), or None (direct)."""
    port = sqlalchemy.engine.make_url(url).port
    for process in psutil.process_iter(["name"]):
        if process.info["name"] == "pgbouncer" and listens(process.pid, port):
            return process.pid
    return None


def postmaster() -> int | None:
    """The PostgreSQL server's main process on this machine (its backends are its children)."""
    for process in psutil.process_iter(["name", "ppid"]):
        if process.info["name"] == "postgres":
            parent = psutil.Process(process.info["ppid"])
            if parent.name() != "postgres":
                return process.pid
    return None


def cpu_by_part(parts: dict[str, int | None]) -> dict[str, float]:
    return {name: tree_cpu(pid) if pid else 0.0 for name, pid in parts.items()}


def _busy(times: tuple) -> float:
    """Seconds the cores spent working (psutil.cpu_times(): all but idle and I/O wait)."""
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


def accounts_settled(instance: dg.DagsterInstance) -> bool:
    """Every account run launched so far has finished (the warehouse's may have started)."""
    runs = [r for r in instance.get_runs() if ACCOUNTS_TAG in r.tags]
    return bool(runs) and all(r.status in FINISHED for r in runs)


def report(cases: list[Case]) -> list[str]:
    lines = [
        "# Scale results: an agency's day and history",
        "",
        f"Produced by `make bench-scale` (`python -m bench.scale`) on {time.strftime('%Y-%m-%d')}: "
        f"{platform.platform()}, Python {platform.python_version()}, "
        f"{psutil.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.0f} GiB.",
        f"An agency key reaching {ACCOUNTS:,} accounts of the sandbox (`small`, {LARGE} of them "
        f"`large`), served over HTTP on this machine, handed to the deployment of `deploy/` "
        f"(PostgreSQL {'through PgBouncer' if POOLER != 'direct' else 'directly'}, the queued "
        f"run coordinator with {RUNS_AT_ONCE} runs at once, code server, webserver, daemon on "
        "this machine), one home: first a backfill as `adwh backfill` launches it, then the "
        "next morning's daily schedule. The floor fetched the same pages again, "
        f"{FLOOR_CONCURRENCY} in flight, each parsed and dropped. Wall and CPU in seconds from "
        "the launch; memory is each run's process.",
        "",
        "| case | account-days | runs | to the last run | to the fresh warehouse | floor | "
        "ours / floor | build | requests | commits | peak RSS per run (max / median MiB) | "
        "run CPU-s per account (first / last quarter) | cores busy | failed |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in cases:
        lines.append(
            f"| {c.name} | {c.account_days:,} | {c.runs} | {c.run_wall:.0f} | "
            f"{c.warehouse_wall:.0f} | {c.floor_wall:.0f} | "
            f"{c.warehouse_wall / c.floor_wall:.2f} | {c.build_wall:.0f} | {c.requests:,} | "
            f"{c.commits:,} | {c.peak_run_mib:.0f} / {c.median_run_mib:.0f} | "
            f"{c.cpu_per_account[0]:.1f} / {c.cpu_per_account[1]:.1f} | {c.busy:.0%} | "
            f"{c.failed} |"
        )
    parts = list(cases[0].cpu) if cases else []
    lines += [
        "",
        "Where the CPU went from the launch to the fresh warehouse, in CPU seconds (share). The "
        "code server's figure holds its run workers; the floor is one process of its own.",
        "",
        "| case | " + " | ".join(parts) + " | floor |",
        "|---|" + "---|" * (len(parts) + 1),
    ]
    for c in cases:
        total = sum(c.cpu.values()) or 1.0
        cells = [f"{c.cpu[part]:.0f} ({c.cpu[part] / total:.0%})" for part in parts]
        lines.append(f"| {c.name} | " + " | ".join(cells) + f" | {c.floor_cpu:.0f} |")
    pages = list(cases[0].pages_s) if cases else []
    lines += [
        "",
        "Dagster's storage the case added in PostgreSQL, and the UI's pages after it (seconds "
        "to their content, headless Chromium, warm).",
        "",
        "| case | event rows | per account-day | database bytes | per account-day | "
        + " | ".join(pages)
        + " |",
        "|---|---|---|---|---|" + "---|" * len(pages),
    ]
    for c in cases:
        shown = [f"{s:.1f}" if s is not None else "not measured" for s in c.pages_s.values()]
        lines.append(
            f"| {c.name} | {c.event_rows:,} | {c.event_rows / c.account_days:.1f} | "
            f"{c.database_bytes / 2**20:,.0f} MiB | {c.database_bytes / c.account_days:,.0f} | "
            + " | ".join(shown)
            + " |"
        )
    lines += ["", "## Targets", "", "| target | figure | |", "|---|---|---|"]
    lines += targets(cases)
    return lines


def targets(cases: list[Case]) -> list[str]:
    def row(target: str, figure: str, met: bool) -> str:
        return f"| {target} | {figure} | {'met' if met else 'missed'} |"

    rows = []
    for c in cases:
        ratio = c.warehouse_wall / c.floor_wall
        if c.name == "daily job":
            rows.append(
                row(
                    f"daily job, {ACCOUNTS:,} accounts: fresh warehouse <= {DAILY_LIMIT_S} s",
                    f"{c.warehouse_wall:.0f} s",
                    c.warehouse_wall <= DAILY_LIMIT_S,
                )
            )
        rows.append(
            row(f"{c.name}: <= {FLOOR_RATIO:g} x the floor", f"{ratio:.2f} x", ratio <= FLOOR_RATIO)
        )
        rows.append(
            row(
                f"{c.name}: each run's peak RSS <= {RUN_RSS_MIB} MiB",
                f"{c.peak_run_mib:.0f} MiB",
                c.peak_run_mib <= RUN_RSS_MIB,
            )
        )
    return rows


def main() -> None:
    cases = measure()
    results = ROOT / "bench" / "SCALE.md"
    kept = results.read_text() if results.exists() else ""
    earlier = kept[kept.index(EARLIER) :] if EARLIER in kept else ""
    results.write_text("\n".join(report(cases)) + "\n\n" + earlier)


if __name__ == "__main__":
    main()
