"""A range run and the daily job after it: this checkout beside an earlier commit.

    python -m bench.restated_daily --before <commit> [--rounds 3] [--preset medium] [--days 30]

Two sandboxes restate their three latest days (`--restate-days 3`), one on the reference date
before REFERENCE and one on it. For each round and each version (this checkout, and the commit
`--before` checked out in a temporary worktree, run with the same environment), a fresh home
gets `--days` days from the first, then the daily job (`adwh run`) from the second: it re-reads
the lookback days the service has revised since, and replaces them. Both are timed, the two
versions alternating. Prints a Markdown table of medians and ranges for each.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

import polars as pl

from bench.__main__ import KEY, REFERENCE, ROOT, Server, serve
from bench.measure import Measured, measure
from bench.one_account import spread

RESTATE_DAYS = 3


# `adwh` of the checkout its PYTHONPATH names, with this checkout's environment (.venv).
ADWH = [sys.executable, "-c", "import sys; from launcher.cli import main; sys.exit(main())"]


def environment(source: Path, server: Server, home: Path, today: str, days: int) -> dict:
    return {
        **os.environ,
        "PYTHONPATH": str(source),
        "ADS_API_BASE_URL": server.url,
        "ADS_API_KEY": KEY,
        "ADWH_TODAY": today,
        "ADWH_START_DATE": (REFERENCE - timedelta(days=days + 1)).isoformat(),
        "ADWH_HOME": str(home),
    }


def daily_job(
    source: Path, servers: tuple[Server, Server], home: Path, days: int
) -> tuple[Measured, Measured]:
    """A fresh home of `days` days as of the day before (a range run), then the daily job,
    each timed."""
    shutil.rmtree(home, ignore_errors=True)
    before, today = (REFERENCE - timedelta(days=1)).isoformat(), REFERENCE.isoformat()
    end = (REFERENCE - timedelta(days=2)).isoformat()
    start = (REFERENCE - timedelta(days=days + 1)).isoformat()
    first = measure(
        "history",
        [*ADWH, "run", "--start", start, "--end", end],
        environment(source, servers[0], home, before, days),
        cwd=str(source),
    )
    if first.returncode != 0:
        raise SystemExit(f"the history of {source} failed")
    if (home / "service.json").exists():  # the same service, served for the next morning
        subprocess.run(
            [*ADWH, "home", "move", "--to", servers[1].url],
            env=environment(source, servers[1], home, today, days),
            cwd=str(source),
            check=True,
            capture_output=True,
        )
    daily = measure(
        f"daily job ({source.name})",
        [*ADWH, "run"],
        environment(source, servers[1], home, today, days),
        cwd=str(source),
    )
    restated = home / "lake" / "restatements"
    cells = pl.read_delta(str(restated)).height if restated.exists() else 0
    print(f"[restated daily] {source.name}: {cells:,} cells restated", flush=True)
    return first, daily


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.restated_daily")
    parser.add_argument("--before", required=True, help="the commit to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--preset", default="medium")
    parser.add_argument("--days", type=int, default=30)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="adwh-restated-daily-"))
    old = work / "before"
    subprocess.run(["git", "worktree", "add", "--detach", str(old), args.before], check=True)
    servers = (
        serve(args.preset, reference=REFERENCE - timedelta(days=1), restate_days=RESTATE_DAYS),
        serve(args.preset, reference=REFERENCE, restate_days=RESTATE_DAYS),
    )
    versions = {f"before ({args.before[:7]})": old, "now": ROOT}
    ranged: dict[str, list[Measured]] = {name: [] for name in versions}
    measured: dict[str, list[Measured]] = {name: [] for name in versions}
    try:
        for round_ in range(args.rounds):
            for name, source in versions.items():
                first, m = daily_job(source, servers, work / "home", args.days)
                if m.returncode != 0:
                    raise SystemExit(f"{name}: the daily job failed")
                ranged[name].append(first)
                measured[name].append(m)
                print(
                    f"[restated daily] round {round_ + 1} {name}: range {first.wall_s:.1f} s, "
                    f"daily {m.wall_s:.1f} s",
                    flush=True,
                )
    finally:
        for server in servers:
            server.stop()
        subprocess.run(["git", "worktree", "remove", "--force", str(old)], check=False)
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n`{args.preset}`: the range run of {args.days} days into a fresh home, then the")
    print(f"daily job while the service restates its {RESTATE_DAYS} latest days; medians of")
    print(f"{args.rounds} (range):\n")
    print("| run | version | wall s | CPU s | peak RSS MiB |\n|---|---|---|---|---|")
    for run, table in (("range", ranged), ("daily job", measured)):
        for name, runs in table.items():
            print(
                f"| {run} | {name} | {spread([m.wall_s for m in runs])} "
                f"| {spread([m.cpu_s for m in runs])} | {spread([m.peak_rss_mib for m in runs])} |"
            )
        then, now = (statistics.median(m.wall_s for m in runs) for runs in table.values())
        print(f"| {run} | now / before | {now / then:.2f} | | |")


if __name__ == "__main__":
    main()
