"""The spec's pagination styles, with guards against a service that misbehaves.

- cursor lists: `limit` up to 100, `starting_after` the last id, until `has_more` is false;
- offset lists (metrics, up to 1000) and optimization history (up to 500): `limit`/`offset`.
  When the first page carries a number in `total_count`, the remaining pages are fetched
  concurrently; a `null` total means "unknown" and the list is walked page by page.
"""

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from decimal import Decimal

import orjson

from pipelines.client.errors import PaginationError, describe
from pipelines.client.http import Response, ServiceClient
from warehouse.spec import CURSOR_LIMIT, HISTORY_LIMIT, METRICS_LIMIT, OFFSET_MAX

# The largest page each kind of list allows (spec 4.1, 4.2, 4.7): fewer requests, fewer credits.
CURSOR_PAGE = CURSOR_LIMIT[1]
METRICS_PAGE = METRICS_LIMIT[1]
HISTORY_PAGE = HISTORY_LIMIT[1]


@dataclass(frozen=True)
class Page:
    """One page as received: the decoded body, and its bytes as they came for landing and
    for reading JSON numbers exactly."""

    path: str
    params: dict
    body: dict
    content: bytes = b""

    @property
    def rows(self) -> list[dict]:
        data = self.body.get("data")
        return data if isinstance(data, list) else []

    def exact(self) -> "Page":
        """The same page with every non-integer JSON number read as a `Decimal` from its
        digits. Spec 1 sends money as strings, yet 2.2 shows `budget.amount` as a number:
        a binary float would change the 16th digit, the text never does."""
        content = self.content or orjson.dumps(self.body)  # a page made in code, not received
        return Page(self.path, self.params, json.loads(content, parse_float=Decimal), content)


def _page(client: ServiceClient, path: str, params: dict, response: Response) -> Page:
    page = Page(path, response.params or params, response.body, response.content)
    client.stats.page_received(len(page.rows))
    if "data" not in response.body or not isinstance(response.body["data"], list):
        raise PaginationError(describe("GET", path, params), 200, "the page has no data list")
    return page


async def cursor_pages(
    client: ServiceClient, path: str, params: dict | None = None, account: str | None = None
) -> AsyncIterator[Page]:
    """Every page of a cursor list, in order."""
    query = {**(params or {}), "limit": CURSOR_PAGE}
    seen_last: str | None = None
    while True:
        response = await client.get(path, query, account)
        page = _page(client, path, dict(query), response)
        yield page
        if not page.body.get("has_more"):
            return
        where = describe("GET", path, query)
        if not page.rows:
            raise PaginationError(where, 200, "has_more is true but the page is empty")
        last = page.rows[-1].get("id")
        if not last or last == seen_last:
            raise PaginationError(where, 200, f"the cursor does not advance (last id {last!r})")
        seen_last = last
        query["starting_after"] = last


async def offset_pages(
    client: ServiceClient,
    path: str,
    params: dict,
    account: str | None = None,
    page_size: int = METRICS_PAGE,
) -> AsyncIterator[Page]:
    """Every page of an offset list, in order; concurrent when the total is known."""
    first_query = {**params, "limit": page_size, "offset": 0, "include_total": "true"}
    first = _page(client, path, first_query, await client.get(path, first_query, account))
    yield first
    if not first.body.get("has_more"):
        return
    if not first.rows:
        raise PaginationError(
            describe("GET", path, first_query), 200, "has_more is true but the page is empty"
        )
    total = first.body.get("total_count")
    if isinstance(total, int) and total >= 0:
        async for page in _known_total(
            client, path, params, account, page_size, total, len(first.rows)
        ):
            yield page
    else:
        async for page in _walk(client, path, params, account, page_size, len(first.rows)):
            yield page


async def _known_total(client, path, params, account, page_size, total, offset):
    """Fetch the remaining offsets concurrently (the client bounds how many fly), in order.

    A page may hold fewer rows than asked while more remain (spec 4.2 promises no full
    pages); the rows it left out are walked before the next page is handed on, so nothing is
    skipped whatever the service's page length."""
    offsets = list(range(offset, total, page_size))

    async def fetch(at: int) -> Page:
        query = {**params, "limit": page_size, "offset": at}
        return _page(client, path, query, await client.get(path, query, account))

    window = max(1, client.limiter.maximum * 2)
    pending = [asyncio.ensure_future(fetch(at)) for at in offsets[:window]]
    next_index = len(pending)
    try:
        for position, at in enumerate(offsets):
            page = await pending.pop(0)
            if next_index < len(offsets):
                pending.append(asyncio.ensure_future(fetch(offsets[next_index])))
                next_index += 1
            if not page.rows and page.body.get("has_more"):
                raise PaginationError(
                    describe("GET", path, page.params),
                    200,
                    "has_more is true but the page is empty",
                )
            yield page
            reached = at + len(page.rows)
            following = offsets[position + 1] if position + 1 < len(offsets) else None
            if page.body.get("has_more") and (following is None or reached < following):
                async for gap in _walk(
                    client, path, params, account, page_size, reached, following
                ):
                    yield gap
            if not page.body.get("has_more") and following is None:
                return
    finally:
        for task in pending:
            task.cancel()


async def _walk(client, path, params, account, page_size, offset, stop=None):
    """Page by page from `offset` until `has_more` is false (or `stop` is reached), refusing
    lists that cannot end."""
    while stop is None or offset < stop:
        if offset > OFFSET_MAX:
            raise PaginationError(
                describe("GET", path, params), 200, "the offset list does not end"
            )
        limit = page_size if stop is None else min(page_size, stop - offset)
        query = {**params, "limit": limit, "offset": offset}
        page = _page(client, path, query, await client.get(path, query, account))
        yield page
        if not page.body.get("has_more"):
            return
        if not page.rows:
            raise PaginationError(
                describe("GET", path, query), 200, "has_more is true but the page is empty"
            )
        offset += len(page.rows)
