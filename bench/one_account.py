"""One account's load against dlt, plain and as a Dagster user runs it (issue 59's target).

    python -m bench.one_account [--rounds 3] [--days 90] [--preset medium]

The seven metrics tables of one `medium` account over 90 days, each tool into a fresh home
against one sandbox served over HTTP: `adwh run --tables …` on the embedded default (SQLite
storage), plain dlt (bench/peer_dlt.py), dlt through dagster-dlt (bench/peer_dagster_dlt.py),
and our run's pages fetched again by the floor (aiohttp; httpx beside it, the floor before
issue 59). The tools alternate round after round; the table gives medians and ranges, and the
ratios the targets name. Prints a Markdown table for bench/SCALE.md.
"""

import argparse
import shutil
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench.__main__ import PEER_TABLES, Server, run_floor, run_ours, run_peer, serve
from bench.measure import Measured

CONCURRENCY = 8


def tools(server: Server, work: Path, days: int) -> dict[str, Callable[[], Measured]]:
    ours = work / "ours"

    def fresh(path: Path) -> Path:
        shutil.rmtree(path, ignore_errors=True)
        return path

    return {
        "ads-warehouse": lambda: run_ours(server, fresh(ours), days, PEER_TABLES),
        "floor (aiohttp)": lambda: run_floor(server, ours, days, CONCURRENCY),
        "floor (httpx, before issue 59)": lambda: run_floor(
            server, ours, days, CONCURRENCY, client="httpx"
        ),
        "dlt": lambda: run_peer(server, fresh(work / "dlt"), days, CONCURRENCY),
        "dagster-dlt": lambda: run_peer(
            server, fresh(work / "dagster-dlt"), days, CONCURRENCY, "bench.peer_dagster_dlt"
        ),
    }


def spread(values: list[float], digits: int = 1) -> str:
    median = statistics.median(values)
    return f"{median:.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.one_account")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--preset", default="medium")
    args = parser.parse_args()
    server = serve(args.preset)
    work = Path(tempfile.mkdtemp(prefix="adwh-one-account-"))
    measured: dict[str, list[Measured]] = {}
    try:
        for round_ in range(args.rounds):
            for name, run in tools(server, work, args.days).items():
                m = run()
                if m.returncode != 0:
                    raise SystemExit(f"{name} failed in round {round_ + 1}")
                measured.setdefault(name, []).append(m)
                print(f"[one account] round {round_ + 1} {name}: {m.wall_s:.1f} s", flush=True)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"\n`{args.preset}`, {args.days} days, the seven metrics tables, medians of "
        f"{args.rounds} (range):\n"
    )
    print("| tool | wall s | CPU s | peak RSS MiB |\n|---|---|---|---|")
    for name, runs in measured.items():
        print(
            f"| {name} | {spread([m.wall_s for m in runs])} | "
            f"{spread([m.cpu_s for m in runs])} | {spread([m.peak_rss_mib for m in runs], 0)} |"
        )
    wall = {name: statistics.median(m.wall_s for m in runs) for name, runs in measured.items()}
    ours = wall["ads-warehouse"]
    print(
        f"\nours / dagster-dlt {ours / wall['dagster-dlt']:.2f} (target <= 0.8); "
        f"ours / dlt {ours / wall['dlt']:.2f} (target <= 1.5); "
        f"ours / floor {ours / wall['floor (aiohttp)']:.2f} "
        f"(/ the httpx floor {ours / wall['floor (httpx, before issue 59)']:.2f})"
    )


if __name__ == "__main__":
    main()
