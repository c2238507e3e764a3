"""Metrics over any date range: split into capped windows, learning caps from 400s."""

from collections.abc import AsyncIterator
from datetime import date

from pipelines.client.errors import BadRequestError
from pipelines.client.http import ServiceClient
from pipelines.client.paging import METRICS_PAGE, Page, offset_pages
from pipelines.client.windows import WindowCaps, split

Window = tuple[date, date]


async def windowed_pages(
    client: ServiceClient,
    caps: WindowCaps,
    resource: str,
    start: date,
    end: date,
    *,
    granularity: str = "daily",
    params: dict | None = None,
    account: str | None = None,
    page_size: int = METRICS_PAGE,
    path: str | None = None,
) -> AsyncIterator[tuple[Window, Page]]:
    """Every page of `resource` over [start, end], window by window, in date order.

    A window that the service refuses as too large, before any of its rows arrived, is split
    by the limit the service names, and the limit is remembered for the rest of the run.
    `path` (default `/v1/<resource>`) serves resources of one kind at several paths (each
    workflow's performance), which share `resource`'s caps.
    """
    queue = split(start, end, caps.cap(resource, granularity))
    while queue:
        first, last = queue.pop(0)
        query = {
            **(params or {}),
            "start_date": first.isoformat(),
            "end_date": last.isoformat(),
            "granularity": granularity,
        }
        received = False
        try:
            async for page in offset_pages(
                client, path or f"/v1/{resource}", query, account, page_size
            ):
                received = True
                yield (first, last), page
        except BadRequestError as error:
            limit = error.window_limit((last - first).days + 1)
            if received or limit is None:
                raise
            caps.learn(resource, granularity, limit)
            queue[0:0] = split(first, last, limit)
