"""Accounting of one run's traffic, surfaced as Dagster metadata and in the CLI summary."""

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass
class RunStats:
    """Counters of what a run asked the service for and what came back."""

    requests: int = 0
    pages: int = 0
    rows: int = 0
    bytes: int = 0
    retries: int = 0
    rate_limited: int = 0
    credits: int = 0  # what the reads cost where the spec prices them (client/credits.py)
    started: float = field(default_factory=time.monotonic)
    on_page: Callable[["RunStats"], None] | None = field(default=None, repr=False)

    def page_received(self, rows: int) -> None:
        self.pages += 1
        self.rows += rows
        if self.on_page is not None:
            self.on_page(self)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def as_metadata(self) -> dict[str, int | float]:
        return {
            "requests": self.requests,
            "pages": self.pages,
            "rows_received": self.rows,
            "bytes": self.bytes,
            "retries": self.retries,
            "rate_limited": self.rate_limited,
            "credits": self.credits,
            "elapsed_s": round(self.elapsed, 3),
        }


# Sources extracted side by side share one client; each counts its own traffic in the task
# that extracts it (and the tasks it starts, which inherit the variable).
_current: ContextVar[RunStats | None] = ContextVar("run_stats", default=None)


@contextmanager
def counting(stats: RunStats) -> Iterator[RunStats]:
    """Count the requests made in this task (and its children) into `stats`."""
    token = _current.set(stats)
    try:
        yield stats
    finally:
        _current.reset(token)


def current_stats() -> RunStats | None:
    return _current.get()
