"""Date windows that respect the service's caps, known or learned.

The spec names two caps (spec 4.5 and 8: target metrics 93 days total, 31 daily; 4.7: the
optimization history 90), kept in `warehouse/spec.py`; the others are learned from the 400
that names them (spec 7.2), remembered for the run, and never exceeded again. Windows are
contiguous and inclusive, so splitting loses and doubles nothing.
"""

from datetime import date, timedelta

import polars as pl

from warehouse.spec import KNOWN_WINDOW_CAPS, STRICTEST_DAILY_WINDOW_DAYS

# Daily facts are extracted, spooled and published one window at a time, the strictest daily
# cap the spec states: a failure late in a backfill keeps every window published before it.
EXTRACT_WINDOW_DAYS = STRICTEST_DAILY_WINDOW_DAYS


class WindowCaps:
    """Caps per (resource, granularity): the spec's, plus those learned during this run."""

    def __init__(self) -> None:
        self._caps = dict(KNOWN_WINDOW_CAPS)

    def cap(self, resource: str, granularity: str) -> int | None:
        return self._caps.get((resource, granularity))

    def learn(self, resource: str, granularity: str, days: int) -> None:
        known = self._caps.get((resource, granularity))
        self._caps[(resource, granularity)] = min(days, known) if known else days


def split(start: date, end: date, days: int | None) -> list[tuple[date, date]]:
    """Contiguous inclusive windows of at most `days` covering [start, end]."""
    if start > end:
        raise ValueError(f"start {start} is after end {end}")
    if not days:
        return [(start, end)]
    windows = []
    first = start
    while first <= end:
        last = min(end, first + timedelta(days=days - 1))
        windows.append((first, last))
        first = last + timedelta(days=1)
    return windows


def extract_windows(start: date, end: date) -> list[tuple[date, date]]:
    """The windows a dated source is extracted and published in."""
    return split(start, end, EXTRACT_WINDOW_DAYS)


def days_of(start: date, end: date) -> list[date]:
    """Every day of [start, end]."""
    return pl.date_range(start, end, "1d", eager=True).to_list()
