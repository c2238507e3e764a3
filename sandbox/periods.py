"""Calendar periods of the spec's `granularity`: day, ISO week (Monday), month, quarter, year.

Edge periods are partial: a period is the intersection of the calendar period with the window,
but it is labelled with the calendar period's start, as the service does.
"""

from collections.abc import Iterator
from datetime import date, timedelta


def period_start(day: date, granularity: str) -> date:
    if granularity == "daily":
        return day
    if granularity == "weekly":
        return day - timedelta(days=day.weekday())
    if granularity == "monthly":
        return day.replace(day=1)
    if granularity == "quarterly":
        return day.replace(month=(day.month - 1) // 3 * 3 + 1, day=1)
    if granularity == "yearly":
        return day.replace(month=1, day=1)
    raise ValueError(granularity)


def periods(start: date, end: date, granularity: str) -> Iterator[tuple[date | None, date, date]]:
    """Yield (label, first day, last day) for each period of the window, in date order.

    `label` is None for `total`, whose single period is the whole window.
    """
    if granularity == "total":
        yield None, start, end
        return
    first = start
    while first <= end:
        label = period_start(first, granularity)
        last = first
        while (
            last + timedelta(days=1) <= end
            and period_start(last + timedelta(days=1), granularity) == label
        ):
            last += timedelta(days=1)
        yield label, first, last
        first = last + timedelta(days=1)
