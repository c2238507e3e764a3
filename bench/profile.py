"""Where a run's CPU goes: py-spy samples `adwh run` against the sandbox served over HTTP, and
the frames that hold the most samples (inclusive) are printed, ours and the libraries' alike.

    python -m bench.profile [PRESET] [DAYS] [TABLES]  (make profile; defaults: large, 30, all)

TABLES is `--tables`'s comma-separated list; `metrics` names the seven metrics tables, the
selection the benchmark compares with dlt.

The raw samples stay in bench/profile-<preset>-<days>d.txt (flamegraph.pl reads them).
"""

import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

from bench.__main__ import PEER_TABLES, REFERENCE, ROOT, pipeline_env, serve

SHOWN = 40
LIBRARIES = re.compile(
    r"\((pipelines|transforms|warehouse|assets|dagster|polars|duckdb|httpx|httpcore|pandera)/"
)


def stacks(samples: Path) -> Iterator[tuple[list[str], int]]:
    """Each stack of py-spy's raw output (its frames, root first) and how often it was seen."""
    for line in samples.read_text().splitlines():
        stack, _, number = line.rpartition(" ")
        yield stack.split(";"), int(number)


def inclusive(samples: Path) -> tuple[int, Counter]:
    """Samples per frame (file and function, any line), each frame once per stack."""
    counts: Counter = Counter()
    total = 0
    for frames, number in stacks(samples):
        total += number
        for frame in {re.sub(r":\d+\)", ")", frame) for frame in frames}:
            counts[frame] += number
    return total, counts


def main() -> None:
    preset = sys.argv[1] if len(sys.argv) > 1 else "large"
    days = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    tables = sys.argv[3] if len(sys.argv) > 3 else ""
    selection = ["--tables", PEER_TABLES if tables == "metrics" else tables] if tables else []
    suffix = {"": "", "metrics": "-metrics"}.get(tables, "-tables")
    samples = ROOT / "bench" / f"profile-{preset}-{days}d{suffix}.txt"
    end = REFERENCE - timedelta(days=1)
    server = serve(preset)
    try:
        with tempfile.TemporaryDirectory(prefix="adwh-profile-") as home:
            subprocess.run(
                [
                    str(ROOT / ".venv/bin/py-spy"),
                    "record",
                    "--rate",
                    "50",
                    "--format",
                    "raw",
                    "--output",
                    str(samples),
                    "--",
                    str(ROOT / ".venv/bin/adwh"),
                    "run",
                    "--start",
                    (end - timedelta(days=days - 1)).isoformat(),
                    "--end",
                    end.isoformat(),
                    *selection,
                ],
                env=pipeline_env(server, Path(home), days),
                stdout=subprocess.DEVNULL,
                check=True,
            )
    finally:
        server.stop()
    total, counts = inclusive(samples)
    run = f"`adwh run` ({preset}, {days} days, {tables or 'all'})"
    print(f"{total} samples of {run}; inclusive share per frame:")
    shown = [(f, n) for f, n in counts.most_common() if LIBRARIES.search(f)][:SHOWN]
    for frame, count in shown:
        print(f"{count / total:6.1%}  {frame}")
    print(f"raw samples: {os.path.relpath(samples, ROOT)}")


if __name__ == "__main__":
    main()
