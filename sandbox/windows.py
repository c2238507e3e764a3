"""Metrics windows: start, end and granularity of a request, and the caps the sandbox keeps
where the spec shows none (see `service.py`)."""

from datetime import date

from sandbox.errors import ApiError, bad_param
from sandbox.params import Query
from warehouse.spec import GRANULARITIES, TARGET_METRICS_CAPS


def window_cap(resource: str, granularity: str) -> int:
    """The longest window (days, both ends included) the sandbox accepts."""
    strict = resource in ("target-metrics", "search-term-metrics")
    if granularity == "daily":
        return TARGET_METRICS_CAPS["daily"] if strict else 92
    return TARGET_METRICS_CAPS["total"] if strict else 366


def metrics_window(query: Query, resource: str) -> tuple[date, date, str]:
    """start_date, end_date and granularity, with the window cap checked (400 naming it)."""
    start, end = query.day("start_date"), query.day("end_date")
    if start > end:
        raise bad_param("start_date", "start_date must not be after end_date.")
    granularity = query.choice("granularity", GRANULARITIES, "total")
    cap = window_cap(resource, granularity)
    days = (end - start).days + 1
    if days > cap:
        raise ApiError(
            400,
            f"The window of {days} days exceeds the limit of {cap} days for "
            f"{resource} with granularity {granularity}.",
            code="window_too_large",
            param="end_date",
        )
    return start, end, granularity
