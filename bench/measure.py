"""Run a command as a child process and measure it: wall time, CPU time, peak resident memory."""

import os
import subprocess
import tempfile
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Measured:
    label: str
    wall_s: float
    cpu_s: float
    peak_rss_mib: float
    returncode: int
    rows: int = 0
    requests: int = 0

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.wall_s if self.wall_s else 0.0

    @property
    def rows_per_cpu_s(self) -> float:
        return self.rows / self.cpu_s if self.cpu_s else 0.0

    @property
    def requests_per_s(self) -> float:
        return self.requests / self.wall_s if self.wall_s else 0.0


def measure(
    label: str, argv: list[str], env: dict[str, str], *, cwd: str | None = None
) -> Measured:
    """Run `argv` to completion; CPU and peak RSS come from the kernel's rusage of the child.

    Its stderr goes to a file, not a pipe: a child that logs more than a pipe holds (Dagster's
    CLI does) would block on it while we wait for it to end."""
    with tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        child = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        errors.seek(0)
        stderr = errors.read().decode(errors="replace")
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        print(f"[bench] {label} failed ({child.returncode}): {stderr.strip()[-500:]}")
    return Measured(
        label, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, child.returncode
    )
