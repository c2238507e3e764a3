"""Where a packed run's CPU goes: py-spy samples one `extract` run of a pack of agency accounts
(the run the daily schedule and `adwh backfill` launch, executed in process on an ephemeral
instance) against the sandbox's agency served over HTTP, and prints the share of each part of
the work: the figures behind the 1,000-account targets of bench/SCALE.md.

    python -m bench.profile_pack [ACCOUNTS] [DAYS]  (make profile-pack; defaults: 80, 3)

The pack is ACCOUNTS `small` accounts of a 1,000-account agency (its `large` ones left out: a
pack of those is a memory question), over the DAYS before the reference date, into an empty
home. Only the thread holding the GIL is sampled (`--gil`), so the shares are of the Python
work that serialises a run; polars, delta-rs and gzip release the GIL and count only while
they hold it. Each sample goes to the deepest frame that names a part of the work below.

The raw samples stay in bench/profile-pack-<accounts>x<days>d.txt (flamegraph.pl reads them).
"""

import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path

from bench.__main__ import REFERENCE, ROOT, pipeline_env, serve
from bench.profile import stacks
from pipelines.fanout import account_ids
from pipelines.settings import load_settings

AGENCY = 1_000
LARGE = 3
# Parts of the work, by a frame's file; the first that matches a frame wins, read from the
# leaf up. Frames of the libraries everything runs through (polars, asyncio, thread pools,
# retries) are passed over, so their time goes to the part of ours that called them.
PARTS = (
    ("Dagster's event storage", r"store_event|handle_new_event|report_dagster_event"),
    ("raw pages (gzip, write)", r"\(warehouse/raw\.py|\(gzip\.py|zlib"),
    ("Pandera contracts", r"pandera/|\(warehouse/contracts"),
    ("spool (Parquet out and back)", r"\(warehouse/spool\.py"),
    ("lake (Delta writes, commits)", r"deltalake/|\(warehouse/lake\.py"),
    ("records to typed frames", r"\(transforms/records\.py"),
    ("other transforms", r"\(transforms/"),
    ("HTTP (our client, httpx)", r"\(pipelines/client/|httpx/|httpcore/|h11/|anyio/"),
    ("imports", r"<frozen importlib|<module>"),
    ("other pipelines/ stages", r"\(pipelines/"),
    ("assets/ (Dagster layer)", r"\(assets/"),
    ("other warehouse/", r"\(warehouse/"),
    ("Dagster, other", r"dagster/"),
)
PASSED_OVER = re.compile(
    r"polars/|asyncio/|concurrent/|threading\.py|tenacity/|functools\.py|contextlib\.py|selectors"
)


def part_of(stack: list[str]) -> str:
    """The part of the work a sampled stack (root first) belongs to."""
    for frame in reversed(stack):
        if PASSED_OVER.search(frame):
            continue
        for name, pattern in PARTS:
            if re.search(pattern, frame):
                return name
    return "other"


def shares(samples: Path) -> tuple[int, Counter]:
    counts: Counter = Counter()
    for frames, number in stacks(samples):
        counts[part_of(frames)] += number
    return counts.total(), counts


def run_pack(accounts: list[str], days: int) -> None:
    """The sampled process: one `extract` run of `accounts` over `days`, as a pack's run.
    Dagster and the definitions are imported here, in the sampled process only."""
    import dagster as dg

    from assets.definitions import defs
    from assets.partitions import range_tags
    from pipelines.catch_up import CATCH_UP_TAG
    from pipelines.fanout import ACCOUNTS_TAG, EXTRACT_JOB

    end = REFERENCE - timedelta(days=1)
    tags = {
        **range_tags(end - timedelta(days=days - 1), end),
        ACCOUNTS_TAG: ",".join(accounts),
        CATCH_UP_TAG: "1",
    }
    started, cpu = time.monotonic(), time.process_time()
    result = defs.resolve_job_def(EXTRACT_JOB).execute_in_process(
        instance=dg.DagsterInstance.ephemeral(), tags=tags, raise_on_error=False
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"run {'succeeded' if result.success else 'FAILED'}: {time.monotonic() - started:.1f} s,"
        f" {time.process_time() - cpu:.1f} CPU-s, peak RSS {peak:.0f} MiB",
        flush=True,
    )


def main() -> None:
    if sys.argv[1:2] == ["--run"]:
        run_pack(sys.argv[3].split(","), int(sys.argv[2]))
        return
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 80
    days = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    samples = ROOT / "bench" / f"profile-pack-{size}x{days}d.txt"
    server = serve("small", clients=AGENCY, large_clients=LARGE)
    try:
        with tempfile.TemporaryDirectory(prefix="adwh-profile-pack-") as home:
            env = pipeline_env(server, Path(home), days)
            os.environ.update(env)  # the settings the sampled run reads, to list its accounts
            accounts = account_ids(load_settings())[LARGE : LARGE + size]
            sampled = subprocess.run(
                [
                    str(ROOT / ".venv/bin/py-spy"),
                    "record",
                    "--gil",
                    "--rate",
                    "100",
                    "--format",
                    "raw",
                    "--output",
                    str(samples),
                    "--",
                    sys.executable,
                    "-m",
                    "bench.profile_pack",
                    "--run",
                    str(days),
                    ",".join(accounts),
                ],
                env=env,
                cwd=str(ROOT),
                stderr=subprocess.PIPE,
                text=True,
            )
            if sampled.returncode:
                sys.exit(f"the sampled run failed:\n{sampled.stderr[-3000:]}")
            pages = sum(1 for _ in Path(home, "raw").rglob("page-*.json.gz"))
    finally:
        server.stop()
    total, counts = shares(samples)
    print(f"{total} samples holding the GIL, {pages:,} pages; share per part of the work:")
    for part, count in counts.most_common():
        print(f"{count / total:6.1%}  {part}")
    print(f"raw samples: {os.path.relpath(samples, ROOT)}")


if __name__ == "__main__":
    main()
