"""Which days a run may cover, by the warehouse's and the spec's rules: checked before the run
starts, so a range no run can serve is refused in one line and nothing is written.

The daily job's own range is planned per account and source in `pipelines/catch_up.py`; the
rules here are those of a range a person gives (`adwh run`, `backfill`, `rebuild`).
"""

from collections.abc import Iterable
from datetime import date, timedelta

from pipelines.settings import Settings


class RangeError(ValueError):
    """A range no run can cover, named with the bound it breaks and how to reach further."""


def check_range(settings: Settings, start: date, end: date) -> None:
    """A range of finished days from the warehouse's first day on: today's figures are not
    final, and days before the first day have no partition."""
    if start > end:
        raise RangeError(f"--start {start} is after --end {end}")
    yesterday = settings.today - timedelta(days=1)
    if end > yesterday:
        raise RangeError(
            f"--end {end} is after yesterday ({yesterday}, from {settings.today_source})"
        )
    check_first_day(settings, start)


def check_first_day(settings: Settings, start: date) -> None:
    """Refuse a range before the warehouse's first day: it has no Dagster partition."""
    if start < settings.first_day:
        raise RangeError(
            f"--start {start} is before the warehouse's first day ({settings.first_day}); "
            "set ADWH_START_DATE to reach further back"
        )


def check_retention(settings: Settings, end: date, tables: Iterable[str]) -> None:
    """Refuse a range the service no longer answers for a table the user named.

    The spec keeps the optimization history 90 days and the change log 12 months. A run of
    every table still fetches the others and keeps what the warehouse holds for those two
    (a warning), but naming one of them for a range wholly before its retention can only
    fetch nothing, so it is refused before anything is written. The spec states no retention
    for metrics or current state; those are not refused."""
    from pipelines.sources import SOURCES  # polars and the schemas: only when a run is asked

    tables = set(tables)
    for source in SOURCES:
        named = [o.schema.name for o in source.outputs if o.schema.name in tables]
        oldest = source.oldest_answered(settings.today)
        if oldest is not None and named and end < oldest:
            raise RangeError(
                f"{', '.join(named)}: the service keeps {source.retention_days} days, back to "
                f"{oldest} (from {settings.today_source} {settings.today}); --end {end} is "
                "before that"
            )
