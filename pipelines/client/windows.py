"""Date windows that respect the service's caps, known or learned.

The spec names two caps (spec 4.5 and 8: target metrics 93 days total, 31 daily; 4.7: the
optimization history 90), kept in `warehouse/spec.py`; the others are learned from the 400
that names them (spec 7.2), remembered for the run, and never exceeded again. Windows are
contiguous and inclusive, so splitting loses and doubles nothing.
"""

from datetime import date, timedelta

from warehouse.spec import KNOWN_WINDOW_CAPS


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
