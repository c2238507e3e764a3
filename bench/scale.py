"""`make bench-scale`: how the fan-out scales. An agency key reaching ACCOUNTS accounts of the
sandbox's PRESET, DAYS days, handed to the production deployment (`bench/deployment.py`: the
machine's PostgreSQL, code server, webserver, daemon) by `adwh backfill`, with 1, 2 and 4 runs
at once.

Per setting: the wall time from the launch to the last account's run and to the warehouse
built after them, the requests the runs sent (pages landed) and their rate, each run's peak
memory (its process), the lake commits, how busy the machine's cores were, and which part
of the deployment used that CPU (run workers, daemon, webserver, PostgreSQL, and the sandbox,
which serves on the same machine). Writes bench/SCALE.md. Environment: SCALE_ACCOUNTS (50),
SCALE_DAYS (30), SCALE_RUNS ("1,2,4"), SCALE_PRESET (small), ADWH_BENCH_POSTGRES_URL (the
machine's server, as the tests use it), SCALE_POOLER ("pgbouncer", as deploy/compose.yaml does,
where the machine has it; "direct" otherwise or to compare).
"""

import os
import platform
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import dagster as dg
import psutil

from assets.backfill import launch_backfills
from bench.__main__ import KEY, REFERENCE, ROOT, counts, serve
from bench.deployment import (
    FINISHED,
    PGBOUNCER,
    deployment,
    fresh_database,
    listens,
    pooler,
    run_worker_pid,
    runs_launched,
    settled,
    wait_until,
)
from pipelines.fanout import ACCOUNTS_TAG
from pipelines.settings import load_settings
from warehouse.lake import Lake

POSTGRES = os.environ.get(
    "ADWH_BENCH_POSTGRES_URL", "postgresql+psycopg2://postgres@127.0.0.1:5432"
)
POOLER = os.environ.get("SCALE_POOLER", "pgbouncer" if PGBOUNCER else "direct")


@dataclass
class RunMemory:
    """Samples the resident memory of every started run's worker process twice a second;
    keeps each run's peak."""

    instance: dg.DagsterInstance
    peaks: dict[str, float] = field(default_factory=dict)
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
                    rss = psutil.Process(pid).memory_info().rss / 2**20
                except psutil.Error:
                    continue
                self.peaks[run.run_id] = max(self.peaks.get(run.run_id, 0.0), rss)
            time.sleep(0.5)

    def stop(self) -> None:
        self._stop.set()


@dataclass(frozen=True)
class Scaled:
    runs_at_once: int
    runs: int
    extract_wall: float
    total_wall: float
    requests: int
    rows: int
    median_run_s: float
    peak_run_mib: float
    median_run_mib: float
    busy: float  # share of the machine's cores busy while the account runs ran
    cpu: dict[str, float]  # CPU seconds of each part of the deployment meanwhile
    commits: int  # lake commits (Delta table versions written)
    failed: int


def measure_setting(runs_at_once: int, accounts: int, days: int, preset: str) -> Scaled:
    end = REFERENCE - timedelta(days=1)
    start = end - timedelta(days=days - 1)
    server = serve(preset, clients=accounts)
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
        with deployment(Path(work), env, max_runs=runs_at_once) as deploy:
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
                cpu_before, parts_before = psutil.cpu_times(), cpu_by_part(parts)
                launched = time.time()
                launch_backfills(load_settings(), start, end)
                wait_until(lambda: _settled(instance), "the runs", timeout=7200)
                records = [
                    r for r in instance.get_run_records() if ACCOUNTS_TAG in r.dagster_run.tags
                ]
                extracted = max(r.end_time for r in records)
                cpu_after, parts_after = psutil.cpu_times(), cpu_by_part(parts)
                wait_until(lambda: settled(instance, extracted), "the warehouse", timeout=1800)
                built = max(r.end_time for r in instance.get_run_records() if r.end_time)
                memory.stop()
        rows, pages = counts(home)
        commits = lake_commits(home)
    server.stop()
    wall = extracted - launched
    busy_seconds = _busy(cpu_after) - _busy(cpu_before)
    peaks = [
        memory.peaks[r.dagster_run.run_id] for r in records if r.dagster_run.run_id in memory.peaks
    ]
    return Scaled(
        runs_at_once=runs_at_once,
        runs=len(records),
        extract_wall=wall,
        total_wall=built - launched,
        requests=pages,
        rows=rows,
        median_run_s=statistics.median(r.end_time - r.start_time for r in records),
        peak_run_mib=max(peaks, default=0.0),
        median_run_mib=statistics.median(peaks) if peaks else 0.0,
        busy=busy_seconds / (wall * psutil.cpu_count()),
        cpu={name: parts_after[name] - parts_before[name] for name in parts},
        commits=commits,
        failed=sum(r.dagster_run.status is not dg.DagsterRunStatus.SUCCESS for r in records),
    )


def lake_commits(home: Path) -> int:
    """The commits the runs wrote into the lake's tables (not the housekeeping's)."""
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
    import sqlalchemy

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


def _settled(instance: dg.DagsterInstance) -> bool:
    """Every account's run finished; the warehouse's run may have started."""
    if not runs_launched(instance):
        return False
    runs = [r for r in instance.get_runs() if ACCOUNTS_TAG in r.tags]
    return bool(runs) and all(r.status in FINISHED for r in runs)


def table(results: list[Scaled], accounts: int, days: int, preset: str) -> list[str]:
    lines = [
        "# Scale-out results",
        "",
        f"Produced by `make bench-scale` (`python -m bench.scale`) on {time.strftime('%Y-%m-%d')}: "
        f"{platform.platform()}, Python {platform.python_version()}, "
        f"{psutil.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.0f} GiB.",
        f"An agency key reaching {accounts} accounts of the sandbox's `{preset}` preset, "
        f"{days} days, handed to the deployment of `deploy/` (PostgreSQL "
        f"{'through PgBouncer' if POOLER != 'direct' else 'directly'}, the queued run "
        "coordinator, code server, webserver, daemon on this machine) by `adwh backfill`: one "
        "backfill per pack of accounts (`pipelines/fanout.py`), each a run of the days (at most "
        "31) and a run of current state. The sandbox "
        "serves over HTTP on the same machine. Wall times in seconds from the launch; memory is "
        "each run's process, in MiB; commits are the runs' Delta commits.",
        "",
        "| runs at once | runs | wall to the last run | wall to the warehouse | requests | "
        "req/s | rows | rows/s | commits | one run's wall (median) | "
        "peak RSS per run (max / median) | cores busy | failed |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r.runs_at_once} | {r.runs} | {r.extract_wall:.0f} | {r.total_wall:.0f} | "
            f"{r.requests:,} | {r.requests / r.extract_wall:.1f} | {r.rows:,} | "
            f"{r.rows / r.extract_wall:,.0f} | {r.commits:,} | {r.median_run_s:.1f} | "
            f"{r.peak_run_mib:.0f} / {r.median_run_mib:.0f} | {r.busy:.0%} | {r.failed} |"
        )
    parts = list(results[0].cpu) if results else []
    lines += [
        "",
        "Where the CPU went from the launch to the last run, in CPU seconds (share of all the "
        "parts' CPU). The code server's figure holds its run workers.",
        "",
        "| runs at once | " + " | ".join(parts) + " |",
        "|---|" + "---|" * len(parts),
    ]
    for r in results:
        total = sum(r.cpu.values()) or 1.0
        cells = [f"{r.cpu[part]:.0f} ({r.cpu[part] / total:.0%})" for part in parts]
        lines.append(f"| {r.runs_at_once} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    accounts = int(os.environ.get("SCALE_ACCOUNTS", "50"))
    days = int(os.environ.get("SCALE_DAYS", "30"))
    preset = os.environ.get("SCALE_PRESET", "small")
    settings = [int(n) for n in os.environ.get("SCALE_RUNS", "1,2,4").split(",")]
    results = []
    for runs_at_once in settings:
        results.append(measure_setting(runs_at_once, accounts, days, preset))
        lines = table(results, accounts, days, preset)
        print(results[-1], flush=True)
        (ROOT / "bench" / "SCALE.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
