"""Metrics requests: start, end and granularity, with the caps the sandbox keeps where the
spec shows none (see `service.py`), and the offset page over a window's sections of rows."""

from collections.abc import Callable, Iterable
from datetime import date

from sandbox.errors import ApiError, bad_param
from sandbox.metrics import Window
from sandbox.params import Query
from sandbox.periods import periods
from sandbox.spec import GRANULARITIES, METRICS_LIMIT, OFFSET_MAX, TARGET_METRICS_CAPS

Sections = Iterable[tuple[int, Callable[[int, int], list[dict]]]]
PERFORMANCE = "workflow-performance"  # the window caps' name for /v1/workflows/{id}/performance


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


def metrics_request(query: Query, resource: str, reference: date) -> tuple[Window, int, int]:
    """(window, limit, offset) of a metrics request (spec 4.2): its periods checked against the
    cap, in its `order`; the parameters read in that order, so the first bad one is named."""
    start, end, granularity = metrics_window(query, resource)
    low, high, default = METRICS_LIMIT
    limit = query.integer("limit", default, low, high)
    offset = query.integer("offset", 0, 0, OFFSET_MAX)
    window = Window(
        spans=list(periods(start, end, granularity)),
        reference=reference,
        descending=query.choice("order", ("asc", "desc"), "desc") == "desc",
        window_days=(end - start).days + 1 if granularity == "total" else None,
    )
    return window, limit, offset


def offset_page(sections: Sections, query: Query, limit: int, offset: int) -> dict:
    """Rows [offset, offset + limit) of the sections (row count, renderer) in order, rendering
    only those; `total_count` when asked."""
    rows: list[dict] = []
    total = 0
    for count, render in sections:
        if len(rows) < limit and offset < total + count:
            first = max(0, offset - total)
            rows.extend(render(first, first + limit - len(rows)))
        total += count
    page = {"object": "list", "data": rows, "has_more": offset + len(rows) < total}
    if query.flag("include_total"):
        page["total_count"] = total
    return page
