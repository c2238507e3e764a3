"""Start-up: what every extraction run's process pays before its first request, beside
`import dagster` alone, each in a fresh interpreter, alternated so both see the same machine.

An extraction run loads the definitions (every asset, check, job and schedule) and resolves
its job; it must not load the warehouse build's code or dbt (`assets/marts.py`). Bytecode is
compiled (as `make` installs it), and the first sample of each is dropped (the file cache).
"""

import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DAGSTER = "import dagster"
EXTRACTION = (
    "from assets.definitions import defs\n"
    "from pipelines.fanout import EXTRACT_JOB\n"
    "defs.resolve_job_def(EXTRACT_JOB)"
)


@dataclass(frozen=True)
class Startup:
    dagster_s: float
    extraction_s: float

    @property
    def ratio(self) -> float:
        return self.extraction_s / self.dagster_s


def _seconds(code: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
    return time.perf_counter() - started


def startup(samples: int = 7) -> Startup:
    """Medians of `samples` alternated starts of each, after one of each to warm the cache."""
    _seconds(DAGSTER)
    _seconds(EXTRACTION)
    dagster, extraction = [], []
    for _ in range(samples):
        dagster.append(_seconds(DAGSTER))
        extraction.append(_seconds(EXTRACTION))
    return Startup(statistics.median(dagster), statistics.median(extraction))


if __name__ == "__main__":
    measured = startup()
    print(
        f"import dagster {measured.dagster_s:.2f} s; an extraction run's code "
        f"{measured.extraction_s:.2f} s ({measured.ratio:.2f} x)"
    )
