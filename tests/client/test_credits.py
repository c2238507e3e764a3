"""Credits (spec 8) against the sandbox: what the priced reads cost, and a budget that is never
passed, however many of its pages are in flight."""

import asyncio

import pytest

from pipelines.client.credits import CreditBudget, CreditBudgetError
from pipelines.client.paging import cursor_pages, offset_pages
from tests.conftest import make_client

YEAR = {"start_date": "2025-11-23", "end_date": "2026-11-22"}
GROUPED = {
    "start_date": "2026-08-24",
    "end_date": "2026-11-22",
    "granularity": "daily",
    "group_by": "account",
}


async def rows_of(pages) -> list[dict]:
    return [row async for page in pages for row in page.rows]


def test_store_changes_cost_a_credit_a_row_and_group_by_a_credit_a_group(sandbox):
    """Ungrouped metrics and every other read are not priced by the spec: they count 0."""

    async def go() -> tuple[int, int, int]:
        async with make_client(sandbox) as client:
            changes = await rows_of(cursor_pages(client, "/v1/platform-changes", YEAR))
            after_changes = client.stats.credits
            groups = await rows_of(offset_pages(client, "/v1/campaign-metrics", GROUPED))
            after_groups = client.stats.credits
            ungrouped = {k: v for k, v in GROUPED.items() if k != "group_by"}
            await rows_of(offset_pages(client, "/v1/campaign-metrics", ungrouped))
            await rows_of(cursor_pages(client, "/v1/campaigns"))
            assert client.stats.credits == after_groups
            return len(changes), after_changes, after_groups - after_changes, len(groups)

    changes, change_credits, group_credits, groups = asyncio.run(go())
    assert change_credits == changes > 100  # more than one page
    assert group_credits == groups > 0


def test_a_budget_asks_only_for_the_rows_it_can_pay_then_stops(sandbox):
    budget = CreditBudget(maximum=130)

    async def go() -> list[dict]:
        rows: list[dict] = []
        async with make_client(sandbox, budget=budget) as client:
            with pytest.raises(CreditBudgetError) as stopped:
                async for page in cursor_pages(client, "/v1/platform-changes", YEAR):
                    rows += page.rows
            assert "ADWH_MAX_CREDITS=130" in str(stopped.value)
            assert "/v1/platform-changes" in str(stopped.value)
            assert client.stats.credits == budget.spent
        return rows

    rows = asyncio.run(go())
    assert len(rows) == budget.spent == 130
    limits = [dict(r.query)["limit"] for r in sandbox.requests if r.path == "/v1/platform-changes"]
    assert limits == ["100", "30"]  # the second page asked only what was left


def test_pages_in_flight_together_never_pass_the_budget(sandbox):
    """Offset pages with a known total fly concurrently: each holds its worst case until it
    is answered, so together they stop exactly at the budget."""
    budget = CreditBudget(maximum=95)

    async def go() -> int:
        async with make_client(sandbox, budget=budget, max_in_flight=8) as client:
            pages = offset_pages(client, "/v1/campaign-metrics", GROUPED, page_size=20)
            with pytest.raises(CreditBudgetError):
                await rows_of(pages)
            return client.stats.credits

    assert asyncio.run(go()) == budget.spent == 95


def test_no_budget_means_no_cap(sandbox):
    budget = CreditBudget()

    async def go() -> int:
        async with make_client(sandbox, budget=budget) as client:
            return len(await rows_of(cursor_pages(client, "/v1/platform-changes", YEAR)))

    assert asyncio.run(go()) == budget.spent > 100
