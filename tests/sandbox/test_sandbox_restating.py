"""The sandbox restating recent days (`Restating`): attributed figures move between reference
dates within the window, every endpoint and its totals agree, and older days never move."""

from collections import defaultdict
from datetime import date, timedelta
from decimal import Decimal

import pytest

from sandbox.restating import ATTRIBUTED, Restating, from_environment
from sandbox.service import SandboxService
from tests.sandbox.conftest import TODAY, every_row

WINDOW = 3
TOMORROW = TODAY + timedelta(days=1)
FIRST, LAST = TODAY - timedelta(days=6), TODAY - timedelta(days=1)
MONEY = ("sales", "new_to_brand_sales")


def by_key(rows: list[dict], key: str) -> dict[tuple, dict]:
    return {(row[key], row["ad_product"], row["currency"], row["date"]): row for row in rows}


@pytest.fixture(scope="module")
def campaign_days() -> dict[date, dict[tuple, dict]]:
    """Campaign metrics of the same six days, as the service answers on two reference dates."""
    answers = {}
    for reference in (TODAY, TOMORROW):
        service = SandboxService("small", reference, restating=Restating(WINDOW))
        rows = every_row(
            service,
            "/v1/campaign-metrics",
            start_date=FIRST.isoformat(),
            end_date=LAST.isoformat(),
            granularity="daily",
        )
        answers[reference] = by_key(rows, "campaign")
    return answers


def test_days_within_the_window_move_and_older_days_do_not(campaign_days):
    before, after = campaign_days[TODAY], campaign_days[TOMORROW]
    assert before.keys() == after.keys()  # rows do not come and go: their figures move
    moved = defaultdict(set)
    for key, row in before.items():
        for name in ("impressions", "clicks", "cost", "orders", "units", "sales"):
            if row[name] != after[key][name]:
                moved[date.fromisoformat(key[3])].add(name)
    # On TOMORROW, days 1-3 old are TODAY - 2 .. TODAY; TODAY - 3 was 3 old yesterday and is 4
    # now (final); older days were final on both.
    assert set(moved) <= {TODAY - timedelta(days=d) for d in (1, 2, 3)}
    assert moved, "no figure moved within the attribution window"
    assert all(names <= set(ATTRIBUTED) for names in moved.values())


def test_revised_figures_only_grow_towards_their_final_value(campaign_days):
    before, after = campaign_days[TODAY], campaign_days[TOMORROW]
    for key, row in before.items():
        for name in ("orders", "units", *MONEY):
            if row[name] is not None:
                assert Decimal(str(after[key][name])) >= Decimal(str(row[name])), (key, name)


def test_totals_agree_with_the_days_they_sum_on_the_restated_reference():
    service = SandboxService("small", TOMORROW, restating=Restating(WINDOW))
    window = {"start_date": FIRST.isoformat(), "end_date": LAST.isoformat()}
    daily = every_row(service, "/v1/campaign-metrics", granularity="daily", **window)
    total = every_row(service, "/v1/campaign-metrics", granularity="total", **window)
    summed: dict[tuple, Decimal] = defaultdict(Decimal)
    for row in daily:
        summed[(row["campaign"], row["ad_product"], row["currency"])] += Decimal(row["sales"])
    assert {
        (row["campaign"], row["ad_product"], row["currency"]): Decimal(row["sales"])
        for row in total
    } == summed


def test_seller_sales_restate_too_and_the_economics_keep_their_own_lag():
    day = TODAY - timedelta(days=1)
    answers = [
        every_row(
            SandboxService("small", reference, restating=Restating(WINDOW)),
            "/v1/seller-product-metrics",
            start_date=day.isoformat(),
            end_date=day.isoformat(),
            granularity="daily",
        )
        for reference in (TODAY, TOMORROW)
    ]
    sales = [sum(Decimal(row["sales"]) for row in rows) for rows in answers]
    assert sales[1] > sales[0]
    # a day one or two days old has no economics yet on either reference (spec 2.9 rule 2)
    assert all(row["net_sales"] is None for rows in answers for row in rows)


def test_without_restating_a_day_is_the_same_on_every_reference():
    day = (TODAY - timedelta(days=1)).isoformat()
    answers = [
        every_row(
            SandboxService("small", reference, restating=Restating(0)),
            "/v1/campaign-metrics",
            start_date=day,
            end_date=day,
            granularity="daily",
        )
        for reference in (TODAY, TOMORROW)
    ]
    assert answers[0] == answers[1]


def test_the_environment_sets_the_window_and_a_bad_value_is_named(monkeypatch):
    monkeypatch.setenv("ADWH_SANDBOX_RESTATE_DAYS", "5")
    assert from_environment() == Restating(5)
    monkeypatch.setenv("ADWH_SANDBOX_RESTATE_DAYS", "soon")
    with pytest.raises(ValueError, match=r"ADWH_SANDBOX_RESTATE_DAYS.*'soon'"):
        from_environment()
