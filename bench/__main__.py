"""`make bench`: serve the sandbox over HTTP and measure, per preset, in one run:

- the floor: the pages our run fetched, fetched again with the same concurrency, each parsed
  and dropped;
- ads-warehouse: full extractions of 30, 90 and 365 days, and after each the daily job three
  times (what a daily run costs with that much held: the first after a backfill builds with
  dbt, the third is the steady state), beside the re-fetch of the steady run's own pages;
- the warehouse step of a daily change over the 90-day lake and over one ten times larger
  (bench/warehouse_step.py);
- the lake: files per table and their median size before and after compaction;
- dlt (rest_api → DuckDB, Parquet loader files) on the seven metrics endpoints, beside our run
  restricted to the same tables and the floor of that run's pages: the three tools side by
  side, for like-for-like ratios;
- DuckDB: each example query of the docs over the warehouse of the longest window;
- start-up: an extraction run's code loaded, beside `import dagster` (bench/startup.py).

Writes bench/RESULTS.md. Environment: BENCH_PRESETS (default "medium,large"), BENCH_DAYS
(default "30,90,365"), BENCH_CONCURRENCY (default 8).
"""

import gzip
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

import duckdb
import httpx
import orjson
import psutil

from bench.deployment import free_port
from bench.measure import Measured, measure
from bench.startup import startup
from bench.warehouse_step import Step, steady_step, step_seconds, ten_times
from pipelines.sources import METRICS
from warehouse.spec import STRICTEST_DAILY_WINDOW_DAYS

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = date(2026, 11, 23)
KEY = "bench-key"
# The warehouse's first day of a run that does not say (`pipelines/settings.py`): a year back.
MAX_HELD_DAYS = 366
# The metrics tables compared with dlt (all seven), and their endpoints with the window each
# tool fetches: ours cuts every daily range into windows of the strictest daily cap.
PEER_TABLES = ",".join(source.name for source in METRICS)
PEER_RESOURCES = tuple(
    f"{source.outputs[0].schema.resource}:{STRICTEST_DAILY_WINDOW_DAYS}" for source in METRICS
)


@dataclass
class Server:
    preset: str
    process: subprocess.Popen
    url: str
    peak_rss_mib: float = 0.0
    _stop: threading.Event = field(default_factory=threading.Event)

    def watch(self) -> None:
        proc = psutil.Process(self.process.pid)
        while not self._stop.is_set():
            try:
                self.peak_rss_mib = max(self.peak_rss_mib, proc.memory_info().rss / 2**20)
            except psutil.Error:
                return
            time.sleep(0.2)

    def stop(self) -> None:
        self._stop.set()
        self.process.terminate()
        self.process.wait(10)


def serve(
    preset: str,
    clients: int = 0,
    large_clients: int = 0,
    reference: date = REFERENCE,
    restate_days: int = 0,
) -> Server:
    """The sandbox over HTTP in its own process, as of `reference`; `clients` N > 0: an agency
    key reaching N accounts of `preset`, the first `large_clients` of them `large`;
    `restate_days` N > 0: its N latest days still revised (sandbox/restating.py)."""
    port = free_port()
    env = {**os.environ, "ADWH_TODAY": reference.isoformat()}
    process = subprocess.Popen(
        [
            str(ROOT / ".venv/bin/adwh"),
            "sandbox",
            "serve",
            "--preset",
            preset,
            "--port",
            str(port),
            "--key",
            KEY,
            "--clients",
            str(clients),
            "--large-clients",
            str(large_clients),
            "--restate-days",
            str(restate_days),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.1)
    server = Server(preset, process, url)
    threading.Thread(target=server.watch, daemon=True).start()
    return server


def pipeline_env(server: Server, home: Path, held_days: int = MAX_HELD_DAYS) -> dict[str, str]:
    """The runs' environment; the warehouse's first day `held_days` back: a home built with
    that many days holds every day from its first, so its daily run catches up nothing."""
    return {
        **os.environ,
        "ADS_API_BASE_URL": server.url,
        "ADS_API_KEY": KEY,
        "ADWH_TODAY": REFERENCE.isoformat(),
        "ADWH_START_DATE": (REFERENCE - timedelta(days=held_days)).isoformat(),
        "ADWH_HOME": str(home),
    }


def counts(home: Path) -> tuple[int, int]:
    """(rows of the tables extracted from the service, pages landed in raw). The marts' own
    tables (int_product_daily) and the build's bookkeeping are not rows the run extracted."""
    pages = sum(1 for _ in (home / "raw").rglob("page-*.json.gz"))
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        tables = [
            r[0]
            for r in con.sql(
                "SELECT table_name FROM information_schema.columns "
                "WHERE column_name = '_extracted_at'"
            ).fetchall()
        ]
        rows = sum(con.sql(f'SELECT count(*) FROM "{t}"').fetchall()[0][0] for t in tables)
    return rows, pages


def pages_since(home: Path, started: float) -> tuple[int, int]:
    """(rows, pages) of the raw pages a run landed after `started` (a wall-clock time)."""
    rows = pages = 0
    for page in (home / "raw").rglob("page-*.json.gz"):
        if page.stat().st_mtime >= started:
            pages += 1
            rows += len(orjson.loads(gzip.decompress(page.read_bytes()))["response"]["data"])
    return rows, pages


def with_counts(m: Measured, rows: int, requests: int) -> Measured:
    return Measured(m.label, m.wall_s, m.cpu_s, m.peak_rss_mib, m.returncode, rows, requests)


def run_ours(server: Server, home: Path, days: int, tables: str = "") -> Measured:
    end = REFERENCE - timedelta(days=1)
    argv = [
        str(ROOT / ".venv/bin/adwh"),
        "run",
        "--start",
        (end - timedelta(days=days - 1)).isoformat(),
        "--end",
        end.isoformat(),
    ]
    if tables:
        argv += ["--tables", tables]
    label = f"ads-warehouse {days}d" + (" (metrics only)" if tables else "")
    m = measure(label, argv, pipeline_env(server, home, days))
    rows, pages = counts(home)
    return with_counts(m, rows, pages)


def run_floor(
    server: Server,
    home: Path,
    days: int,
    concurrency: int,
    label: str = "",
    client: str = "aiohttp",
) -> Measured:
    """The pages of the run in `home`, fetched again and parsed, nothing kept: the rows are the
    run's (the same pages), so rows per CPU-second compare. `client`: bench/floor.py's."""
    m = measure(
        f"floor {days}d{label}",
        [
            sys.executable, "-m", "bench.floor", str(home / "raw"), server.url, KEY,
            str(concurrency), "--client", client,
        ],
        {**os.environ},
        cwd=str(ROOT),
    )  # fmt: skip
    rows, pages = counts(home)
    return with_counts(m, rows, pages)


def run_peer(
    server: Server, work: Path, days: int, concurrency: int, peer: str = "bench.peer_dlt"
) -> Measured:
    """dlt's load of the seven metrics tables: `peer` is plain dlt (bench/peer_dlt.py) or dlt
    as a Dagster user runs it (bench/peer_dagster_dlt.py)."""
    end = REFERENCE - timedelta(days=1)
    argv = [
        sys.executable,
        "-m",
        peer,
        server.url,
        KEY,
        (end - timedelta(days=days - 1)).isoformat(),
        end.isoformat(),
        str(work),
        str(concurrency),
        *PEER_RESOURCES,
    ]
    name = "dagster-dlt" if "dagster" in peer else "dlt"
    m = measure(f"{name} {days}d (metrics only)", argv, {**os.environ}, cwd=str(ROOT))
    rows = 0
    loaded = work / "dlt_peer.duckdb"
    if loaded.exists():
        with duckdb.connect(str(loaded), read_only=True) as con:
            tables = con.sql(
                "SELECT table_schema, table_name FROM information_schema.tables "
                "WHERE table_name IN ?",
                params=[PEER_TABLES.split(",")],
            ).fetchall()
            for schema, table in tables:
                rows += con.sql(f'SELECT count(*) FROM "{schema}"."{table}"').fetchall()[0][0]
    return with_counts(m, rows, 0)


@dataclass(frozen=True)
class Daily:
    """The daily job on a home holding some days: the first run after the backfill (dbt builds
    the marts: a new warehouse's first builds do), the third (steady: dbt builds what changed), the
    steady run's pages fetched again (its floor), and its warehouse step (Dagster's record)."""

    first: Measured
    steady: Measured
    floor: Measured
    warehouse_step_s: float


def run_daily(server: Server, home: Path, held: int, concurrency: int) -> Daily:
    """The daily job (`adwh run`) three times on a home holding `held` days."""
    runs = []
    for n in range(3):
        started = time.time()
        daily = measure(
            f"ads-warehouse daily run, {held}d held ({('first', 'second', 'third')[n]})",
            [str(ROOT / ".venv/bin/adwh"), "run"],
            pipeline_env(server, home, held),
        )
        runs.append((with_counts(daily, *pages_since(home, started)), started))
    (first, _), (steady, started) = runs[0], runs[-1]
    argv = [sys.executable, "-m", "bench.floor", str(home / "raw"), server.url, KEY]
    floor = measure(
        f"floor of the daily run, {held}d held",
        [*argv, str(concurrency), str(started)],
        {**os.environ},
        cwd=str(ROOT),
    )
    return Daily(
        first, steady, with_counts(floor, steady.rows, steady.requests), step_seconds(home)
    )


def compaction(server: Server, home: Path) -> list[str]:
    """Files per lake table and their median size, before and after `adwh lake optimize`
    and `adwh lake vacuum`."""
    from warehouse.lake import Lake

    lake = Lake(home / "lake")
    before = {name: lake.file_stats(name) for name in lake.every_table()}
    for command in (["optimize"], ["vacuum"]):
        measure("housekeeping", [str(ROOT / ".venv/bin/adwh"), "lake", *command],
                pipeline_env(server, home))  # fmt: skip
    after = {name: lake.file_stats(name) for name in lake.every_table()}
    lines = [
        "| lake table | files before | median KiB before | files after | median KiB after |",
        "|---|---|---|---|---|",
    ]
    for name, old in sorted(before.items(), key=lambda item: -item[1].files):
        new = after[name]
        lines.append(
            f"| {name} | {old.files:,} | {old.median_bytes / 1024:.1f} | {new.files:,} | "
            f"{new.median_bytes / 1024:.1f} |"
        )
    return [*lines, ""]


def warehouse_builds(home: Path) -> list[str]:
    """The warehouse step alone over the longest lake: built from nothing (what every run
    paid before the incremental load), and brought up to date after the last daily run."""
    from warehouse.build import build_warehouse
    from warehouse.lake import Lake
    from warehouse.schema_log import SchemaLog
    from warehouse.schemas import TABLES

    lake, log = Lake(home / "lake"), SchemaLog(home)
    tables = [log.schema(t) for t in TABLES.values()]
    fresh = home.parent / f"{home.name}-fresh"
    fresh.mkdir()
    started = time.perf_counter()
    build_warehouse(fresh, lake, tables)
    full = time.perf_counter() - started
    started = time.perf_counter()
    built = build_warehouse(home, lake, tables)
    incremental = time.perf_counter() - started
    dbt = sum(result.seconds for result in built.results)
    size = (home / "warehouse.duckdb").stat().st_size / 2**20
    shutil.rmtree(fresh, ignore_errors=True)
    return [
        f"Warehouse step over this lake ({size:,.0f} MiB file): built from nothing "
        f"{full:.1f} s; brought up to date after the last daily run {incremental:.1f} s (the "
        f"previous generation reads the days of the last two builds; "
        f"{'dbt' if built.by_dbt else 'nothing for dbt'}, models and tests {dbt:.1f} s of node "
        "time, summed over its threads).",
        "",
    ]


def warehouse_steps(home: Path, work: Path) -> dict[str, Step]:
    """The warehouse step over a window's lake, and over one ten times larger (its history
    ten times: 900 days of a 90-day lake)."""
    same, larger = work / "step-same", work / "step-ten-times"
    shutil.copytree(home / "lake", same / "lake")
    ten_times(home, larger)
    if (home / "schema").exists():  # the columns the service added
        for root in (same, larger):
            shutil.copytree(home / "schema", root / "schema")
    return {
        f"{home.name.removeprefix('ours-')} days' lake": steady_step(same),
        "that lake ten times (its history)": steady_step(larger),
    }


def example_queries() -> list[str]:
    """The mart queries of the docs: the README and its pages under docs/ (the marts' are in
    docs/analysts.md)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    text = "\n".join(page.read_text() for page in pages)
    return [q.strip() for q in re.findall(r"```sql\n(.*?)```", text, flags=re.S) if "mart_" in q]


def time_queries(home: Path) -> list[tuple[str, float]]:
    out = []
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        for query in example_queries():
            for statement in [s for s in query.split(";") if s.strip()]:
                timings = []
                for _ in range(3):
                    started = time.perf_counter()
                    con.sql(statement).fetchall()
                    timings.append(time.perf_counter() - started)
                name = re.search(r"mart_\w+", statement)
                out.append((name.group(0) if name else statement[:40], sorted(timings)[1]))
    return out


def row(m: Measured, floor: Measured | None = None, peer: Measured | None = None) -> str:
    ratio_floor = f"{m.wall_s / floor.wall_s:.2f}" if floor and floor.wall_s else ""
    ratio_peer = f"{peer.wall_s / m.wall_s:.2f}x faster" if peer and m.wall_s else ""
    return (
        f"| {m.label} | {m.wall_s:.1f} | {m.cpu_s:.1f} | {m.peak_rss_mib:.0f} | "
        f"{m.rows:,} | {m.rows_per_s:,.0f} | {m.rows_per_cpu_s:,.0f} | {m.requests:,} | "
        f"{m.requests_per_s:,.1f} | {ratio_floor} | {ratio_peer} |"
    )


def verdict(met: bool) -> str:
    return "met" if met else "**missed**"


def targets(
    runs: dict[int, tuple[Measured, Measured]],
    dailies: dict[int, Daily],
    steps: dict[str, Step],
    side_by_side: tuple[Measured, Measured, Measured],
    queries: list[tuple[str, float]],
) -> list[str]:
    """The issues' targets, each with its figures and whether this run met it. Issue 16 sets
    the metrics-only ones on `medium` and the full extractions' on `large`; both are checked
    on every preset, as regressions show on either."""
    ours, floor, peer = side_by_side
    lines = ["| target | figures | |", "|---|---|---|"]
    if len(dailies) > 1:
        fewest, most = min(dailies), max(dailies)
        few, many = dailies[fewest].steady.wall_s, dailies[most].steady.wall_s
        lines.append(
            f"| daily run with {most}d held within 20% of {fewest}d held | "
            f"{few:.1f} s vs {many:.1f} s ({many / few:.2f}) | {verdict(many / few <= 1.2)} |"
        )
    for held, daily in dailies.items():
        ratio = daily.steady.wall_s / daily.floor.wall_s if daily.floor.wall_s else float("inf")
        lines += [
            f"| daily run, {held}d held: wall <= 4 x the re-fetch of its pages | "
            f"{daily.steady.wall_s:.1f} vs {daily.floor.wall_s:.2f} s ({ratio:.1f}) | "
            f"{verdict(ratio <= 4)} |",
            f"| daily run, {held}d held: warehouse step <= 1 s | "
            f"{daily.warehouse_step_s:.2f} s | {verdict(daily.warehouse_step_s <= 1)} |",
        ]
    for name, step in steps.items():
        lines.append(
            f"| warehouse step <= 1 s, {name} | {step.seconds:.2f} s "
            f"({'dbt' if step.by_dbt else 'no dbt'}) | {verdict(step.seconds <= 1)} |"
        )
    if runs:
        worst = max(o.wall_s / f.wall_s for o, f in runs.values())
        ratios = ", ".join(f"{d}d {o.wall_s / f.wall_s:.2f}" for d, (o, f) in runs.items())
        lines.append(f"| full extraction <= 1.15 x floor | {ratios} | {verdict(worst <= 1.15)} |")
        peaks = [o.peak_rss_mib for o, _ in runs.values()]
        flat = max(peaks) <= 1.25 * min(peaks)
        lines.append(
            f"| peak RSS < 1 GiB, flat as the window grows | "
            f"{', '.join(f'{d}d {o.peak_rss_mib:.0f} MiB' for d, (o, _) in runs.items())} | "
            f"{verdict(max(peaks) < 1024 and flat)} |"
        )
    to_floor = ours.wall_s / floor.wall_s if floor.wall_s else float("inf")
    speedup = peer.wall_s / ours.wall_s if ours.wall_s else 0.0
    memory = ours.peak_rss_mib / peer.peak_rss_mib if peer.peak_rss_mib else float("inf")
    lines += [
        f"| metrics only: wall <= 1.5 x floor | {ours.wall_s:.1f} vs {floor.wall_s:.1f} s "
        f"({to_floor:.2f}) | {verdict(to_floor <= 1.5)} |",
        f"| metrics only: >= 60,000 rows per CPU-second | {ours.rows_per_cpu_s:,.0f} (floor "
        f"{floor.rows_per_cpu_s:,.0f}, dlt {peer.rows_per_cpu_s:,.0f}) | "
        f"{verdict(ours.rows_per_cpu_s >= 60_000)} |",
        f"| metrics only: >= 3 x faster than dlt | {speedup:.2f} x | {verdict(speedup >= 3)} |",
        f"| metrics only: <= 1/2 of dlt's peak memory | {ours.peak_rss_mib:.0f} vs "
        f"{peer.peak_rss_mib:.0f} MiB ({memory:.2f}) | {verdict(memory <= 1 / 2)} |",
    ]
    if queries:
        slowest = max(queries, key=lambda q: q[1])
        lines.append(
            f"| every mart example < 1 s | slowest {slowest[0]} {slowest[1] * 1000:.0f} ms | "
            f"{verdict(slowest[1] < 1)} |"
        )
    return [*lines, ""]


def startup_lines() -> list[str]:
    """What an extraction run's process pays before its first request (bench/startup.py)."""
    boot = startup()
    return [
        "## Start-up",
        "",
        "| fresh interpreter, median of 7 alternated | seconds |",
        "|---|---|",
        f"| `import dagster` alone | {boot.dagster_s:.2f} |",
        f"| an extraction run's code: the definitions loaded, the extract job resolved | "
        f"{boot.extraction_s:.2f} |",
        "",
        "| target | figures | |",
        "|---|---|---|",
        f"| an extraction run's code <= 1.3 x `import dagster` | {boot.ratio:.2f} x | "
        f"{verdict(boot.ratio <= 1.3)} |",
        "",
    ]


def main() -> None:
    presets = os.environ.get("BENCH_PRESETS", "medium,large").split(",")
    windows = [int(d) for d in os.environ.get("BENCH_DAYS", "30,90,365").split(",")]
    concurrency = int(os.environ.get("BENCH_CONCURRENCY", "8"))
    lines = [
        "# Benchmark results",
        "",
        f"Produced by `make bench` (`python -m bench`) on {date.today()}: "
        f"{platform.platform()}, Python {platform.python_version()}, "
        f"{os.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.0f} GiB.",
        f"Sandbox served over HTTP on 127.0.0.1 (reference date {REFERENCE}); concurrency "
        f"{concurrency} for every fetcher. Wall and CPU in seconds, peak RSS in MiB "
        "(the measured process and its children). Where each run's time goes, for every "
        "target below that is missed, and what was tried: bench/SPEED.md.",
        "",
        *startup_lines(),
    ]
    for preset in presets:
        server = serve(preset)
        work = Path(tempfile.mkdtemp(prefix=f"adwh-bench-{preset}-"))
        try:
            lines += [
                f"## Preset `{preset}`",
                "",
                "| run | wall | cpu | peak RSS | rows | rows/s | rows/CPU-s | requests | req/s | "
                "ours / floor | vs dlt |",
                "|---|---|---|---|---|---|---|---|---|---|---|",
            ]
            longest = None
            runs: dict[int, tuple[Measured, Measured]] = {}
            dailies: dict[int, Measured] = {}
            for days in windows:
                home = work / f"ours-{days}"
                ours = run_ours(server, home, days)
                floor = run_floor(server, home, days, concurrency)
                dailies[days] = daily = run_daily(server, home, days, concurrency)
                lines += [row(ours, floor), row(floor), row(daily.first)]
                lines += [row(daily.steady, daily.floor), row(daily.floor)]
                runs[days] = (ours, floor)
                longest = home
                print(
                    f"[bench] {preset} {days}d: ours {ours.wall_s:.1f}s floor {floor.wall_s:.1f}s"
                    f" daily {daily.steady.wall_s:.1f}s",
                    flush=True,
                )
            peer_days = 90 if 90 in windows else windows[-1]
            restricted = run_ours(server, work / "ours-restricted", peer_days, PEER_TABLES)
            restricted_floor = run_floor(
                server, work / "ours-restricted", peer_days, concurrency, " (metrics only)"
            )
            peer = run_peer(server, work / "peer", peer_days, concurrency)
            lines += [row(restricted, restricted_floor, peer), row(restricted_floor), row(peer)]
            fastest = max((floor.requests_per_s for _, floor in runs.values()), default=0.0)
            lines += [
                "",
                f"Sandbox server (one process): peak RSS {server.peak_rss_mib:.0f} MiB; it served "
                f"the floor's pages at up to {fastest:,.0f} requests/s.",
                "",
            ]
            steps: dict[str, Step] = {}
            if longest is not None:
                lines += compaction(server, longest)
                lines += warehouse_builds(longest)
                steps = warehouse_steps(work / "ours-90" if 90 in windows else longest, work)
                lines += [
                    "| warehouse step after a daily change (vacuum and build, the third) | "
                    "rows in the lake | file | seconds |",
                    "|---|---|---|---|",
                    *(
                        f"| {name} | {s.rows:,} | {s.file_mib:,.0f} MiB | {s.seconds:.2f} |"
                        for name, s in steps.items()
                    ),
                    "",
                ]
            queries = time_queries(longest) if longest is not None else []
            if queries:
                lines += ["| mart query (README example) | median of 3, ms |", "|---|---|"]
                lines += [f"| {name} | {seconds * 1000:.1f} |" for name, seconds in queries]
                lines.append("")
            lines += targets(runs, dailies, steps, (restricted, restricted_floor, peer), queries)
        finally:
            server.stop()
            shutil.rmtree(work, ignore_errors=True)
        (ROOT / "bench" / "RESULTS.md").write_text(  # after each preset
            "\n".join([*lines, *kept_sections(presets)]) + "\n"
        )
    print("\n".join(lines))


def kept_sections(presets: list[str]) -> list[str]:
    """The sections of presets not run this time (BENCH_PRESETS), as the last RESULTS.md had
    them and marked so: a run of `medium` alone does not erase what `large` last measured."""
    results = ROOT / "bench" / "RESULTS.md"
    if not results.exists():
        return []
    text = results.read_text()
    produced = re.search(r"^Produced by .*? on (\S+?):", text, flags=re.M)
    when = produced.group(1) if produced else "an earlier run"
    kept = []
    for section in re.split(r"^(?=## Preset )", text, flags=re.M)[1:]:
        name = re.match(r"## Preset `(\w+)`", section)
        if name is None or name.group(1) in presets:
            continue
        if "not run this time" not in section:
            heading, _, body = section.partition("\n")
            section = f"{heading}\n\nKept from the run of {when}: not run this time.\n{body}"
        kept.append(section.rstrip("\n") + "\n")
    return kept


if __name__ == "__main__":
    main()
