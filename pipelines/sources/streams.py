"""How each kind of source is paged from the service, for one account and date window."""

import asyncio
from collections.abc import AsyncIterator
from datetime import date

from pipelines.client.accounts import AccountRef
from pipelines.client.errors import NotFoundError
from pipelines.client.paging import HISTORY_PAGE, Page, cursor_pages, offset_pages
from pipelines.client.windowed import windowed_pages
from pipelines.client.windows import days_of
from pipelines.session import Session
from pipelines.sources.model import PageStream

WORKFLOWS = "/v1/workflows"
WORKFLOW_PERFORMANCE = "workflow-performance"  # its window caps' name, as a resource's


def cursor_list(path: str, params: dict | None = None, dated: bool = False) -> PageStream:
    """Every record of a cursor list; `dated` adds the window as start_date/end_date."""

    async def stream(
        session: Session, account: AccountRef, first: date, last: date
    ) -> AsyncIterator[tuple[str, Page]]:
        query = dict(params or {})
        if dated:
            query |= {"start_date": first.isoformat(), "end_date": last.isoformat()}
        async for page in cursor_pages(session.client, path, query, account.header):
            yield path, page

    return stream


def listing_page() -> PageStream:
    """The page of `GET /v1/accounts` that listed the account, as the session received it:
    the listing answers alike whichever account is chosen (spec 5, rule 7), so it is asked
    for once a run, not once an account (`AccountRef.listed_on`)."""

    async def stream(
        session: Session, account: AccountRef, first: date, last: date
    ) -> AsyncIterator[tuple[str, Page]]:
        yield account.listed_on.path, account.listed_on

    return stream


async def _listed_ids(session: Session, account: AccountRef, path: str) -> list[str]:
    return [
        row["id"]
        async for page in cursor_pages(session.client, path, None, account.header)
        for row in page.rows
    ]


def workflows_and_campaigns() -> PageStream:
    """The account's workflows, then the campaigns each one really processes (spec 4.9)."""

    async def stream(
        session: Session, account: AccountRef, first: date, last: date
    ) -> AsyncIterator[tuple[str, Page]]:
        ids = []
        async for page in cursor_pages(session.client, WORKFLOWS, None, account.header):
            ids += [row["id"] for row in page.rows]
            yield WORKFLOWS, page
        for workflow in ids:
            path = f"{WORKFLOWS}/{workflow}/campaigns"
            async for page in cursor_pages(session.client, path, None, account.header):
                yield path, page

    return stream


def workflow_performance() -> PageStream:
    """Each workflow's daily performance, in windows that respect the resource's cap (learned
    once for every workflow: they are one resource at several paths)."""

    async def stream(
        session: Session, account: AccountRef, first: date, last: date
    ) -> AsyncIterator[tuple[str, Page]]:
        for workflow in await _listed_ids(session, account, WORKFLOWS):
            async for (w_first, w_last), page in windowed_pages(
                session.client,
                session.caps,
                WORKFLOW_PERFORMANCE,
                first,
                last,
                account=account.header,
                path=f"{WORKFLOWS}/{workflow}/performance",
            ):
                yield f"performance of workflow {workflow} window {w_first}..{w_last}", page

    return stream


def daily_metrics(resource: str) -> PageStream:
    """A metrics resource at daily grain, in windows that respect its cap."""

    async def stream(
        session: Session, account: AccountRef, first: date, last: date
    ) -> AsyncIterator[tuple[str, Page]]:
        async for (w_first, w_last), page in windowed_pages(
            session.client, session.caps, resource, first, last, account=account.header
        ):
            yield f"{resource} window {w_first}..{w_last}", page

    return stream


async def _campaigns_with_history(session: Session, account: AccountRef) -> list[str]:
    """Campaigns the optimizer has a configuration for: the only ones with a history."""
    ids = []
    query = {"expand[]": "optimizationConfig"}
    async for page in cursor_pages(session.client, "/v1/campaigns", query, account.header):
        ids += [row["id"] for row in page.rows if row.get("optimizationConfig")]
    return ids


def optimization_history() -> PageStream:
    """Each configured campaign's history, one day per request so each row has its day.

    The service aggregates history rows to the net effect over the requested window; asking
    day by day keeps a daily grain that later windows can re-aggregate. A campaign that is gone
    (404) is skipped with a warning, not a failed run.
    """

    async def stream(
        session: Session, account: AccountRef, first: date, last: date
    ) -> AsyncIterator[tuple[str, Page]]:
        campaigns = await _campaigns_with_history(session, account)

        async def one(campaign: str, day: date) -> list[Page]:
            path = f"/v1/campaigns/{campaign}/optimization-history"
            query = {"start_date": day.isoformat(), "end_date": day.isoformat(), "order": "asc"}
            try:
                return [
                    page
                    async for page in offset_pages(
                        session.client, path, query, account.header, page_size=HISTORY_PAGE
                    )
                ]
            except NotFoundError as error:
                session.warnings.append(f"skipped a campaign that is gone: {error}")
                return []

        for day in days_of(first, last):
            results = await asyncio.gather(*(one(c, day) for c in campaigns))
            for campaign, pages in zip(campaigns, results, strict=True):
                for page in pages:
                    yield f"history of {campaign} on {day}", page

    return stream
