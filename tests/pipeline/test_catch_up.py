"""The daily job catches up: every day after what the lake holds complete, per account and
table, up to yesterday; an account the key newly reaches from ADWH_START_DATE; the lookback
and pending economics on top. The library plans and fetches it (tests/library.py `daily`);
the CLI's daily range and the schedule's packs come from the same plan
(tests/pipeline/test_cli.py, tests/pipeline/test_packing.py)."""

import subprocess
import sys
from datetime import date, timedelta

import dagster as dg
import polars as pl
import pytest

from assets.dated import DATED as DATED_STEP
from assets.instance import open_instance
from assets.partitions import first_partition
from bench import scenarios
from launcher.cli import parser
from pipelines.catch_up import CATCH_UP_HORIZON_DAYS, daily_starts
from sandbox.embedded import DEFAULT_PRESET, embedded_service
from sandbox.faults import NO_FAULTS, FaultPlan
from sandbox.service import SandboxService
from tests import library
from tests.conftest import SECRET, TODAY, copy_of_a_run, serving
from warehouse.coverage import read_coverage
from warehouse.lake import Lake
from warehouse.schemas import TABLES, Layout

YESTERDAY = TODAY - timedelta(days=1)
DATED = [name for name, t in TABLES.items() if t.layout is not Layout.SNAPSHOT]
GAP_TABLES = ("campaign_metrics", "seller_product_metrics")


def asked_from(service: SandboxService, path: str) -> dict[str | None, date]:
    """The first day each account's requests to `path` asked for."""
    firsts: dict[str | None, date] = {}
    for request in service.requests:
        query = dict(request.query)
        if request.path == path and "start_date" in query:
            day = date.fromisoformat(query["start_date"])
            firsts[request.account] = min(firsts.get(request.account, day), day)
    return firsts


def days_held(home, table: str) -> list[date]:
    """The days the lake holds rows of `table` for."""
    lake = Lake(home / "lake")
    if table not in lake.tables():
        return []
    return sorted(pl.read_delta(str(home / "lake" / table))["date"].unique())


def every_day(first: date, last: date) -> list[date]:
    return [first + timedelta(days=n) for n in range((last - first).days + 1)]


def without_seller_products(service: SandboxService, monkeypatch: pytest.MonkeyPatch) -> None:
    """The account sells nothing itself: its seller economics are always empty."""
    original = service.handle

    def handle(method, path, query, headers):
        status, body, extra = original(method, path, query, headers)
        if path == "/v1/seller-product-metrics" and body and "data" in body:
            body = {**body, "data": [], "has_more": False}
            if "total" in body:
                body["total"] = 0
        return status, body, extra

    monkeypatch.setattr(service, "handle", handle)


def test_a_gap_of_forty_days_without_seller_products_is_filled_by_one_daily_run(
    home, embedded, monkeypatch
):
    """Nothing pending reaches back: the lake's coverage does. The daily extraction asks each
    table only from its first day missing; the next one asks only the lookback."""
    without_seller_products(embedded, monkeypatch)
    first = TODAY - timedelta(days=50)
    monkeypatch.setenv("ADWH_START_DATE", first.isoformat())
    library.extract(home, first, TODAY - timedelta(days=41), GAP_TABLES)
    embedded.requests.clear()
    library.daily(home, GAP_TABLES)
    assert days_held(home, "campaign_metrics") == every_day(first, YESTERDAY)
    assert days_held(home, "seller_product_metrics") == []
    gap_start = TODAY - timedelta(days=40)
    for path in ("/v1/campaign-metrics", "/v1/seller-product-metrics"):
        assert set(asked_from(embedded, path).values()) == {gap_start}
    (account,) = {account for account, _ in read_coverage(Lake(home / "lake"))}
    coverage = read_coverage(Lake(home / "lake"))
    assert coverage[(account, "seller_product_metrics")] == [(first, YESTERDAY)]
    embedded.requests.clear()
    library.daily(home, GAP_TABLES)
    assert set(asked_from(embedded, "/v1/campaign-metrics").values()) == {TODAY - timedelta(3)}


def seller_rows(home, since: date, until: date) -> list[tuple]:
    """The lake's seller product rows of [since, until], sorted, without `_extracted_at`."""
    rows = pl.read_delta(str(home / "lake" / "seller_product_metrics"))
    rows = rows.filter(pl.col("date").is_between(since, until)).drop("_extracted_at")
    return sorted(rows.rows(), key=repr)


def pending_days(home) -> list[date]:
    rows = pl.read_delta(str(home / "lake" / "seller_product_metrics"))
    return sorted(rows.filter(economics_status="pending")["date"].unique())


def test_a_daily_run_forty_days_late_asks_again_for_what_the_last_one_left_pending(
    home, tmp_path, monkeypatch
):
    """The last daily run left the economics of its newest days pending (they arrive 48-72 h
    late); the next one, 40 days later, fills the gap and asks for those days again: no row
    stays pending whose figures the service has published, and every day is a clean
    extraction's."""
    last = TODAY - timedelta(days=40)
    monkeypatch.setenv("ADWH_START_DATE", (last - timedelta(days=6)).isoformat())
    monkeypatch.setenv("ADWH_TODAY", last.isoformat())
    library.daily(home, ["seller_product_metrics"])
    left = pending_days(home)
    assert left and min(left) < last - timedelta(days=1)  # the last run's newest days
    monkeypatch.setenv("ADWH_TODAY", TODAY.isoformat())
    service = embedded_service(DEFAULT_PRESET, TODAY)
    service.requests.clear()
    library.daily(home, ["seller_product_metrics"])
    assert asked_from(service, "/v1/seller-product-metrics") == {None: min(left)}
    assert all(day >= TODAY - timedelta(days=3) for day in pending_days(home))
    clean = scenarios.new_home(tmp_path / "clean", home)  # the same pseudonym key
    library.extract(clean, min(left), YESTERDAY, ["seller_product_metrics"])
    assert seller_rows(home, min(left), YESTERDAY) == seller_rows(clean, min(left), YESTERDAY)


@pytest.fixture
def agency(home, monkeypatch):
    """An agency key reaching three small accounts, over HTTP."""
    service = SandboxService("small", TODAY, key=SECRET, clients=3)
    with serving(service) as url:
        monkeypatch.setenv("ADS_API_BASE_URL", url)
        monkeypatch.setenv("ADS_API_KEY", SECRET)
        yield service


def test_an_account_the_key_newly_reaches_is_backfilled_from_the_start_date(
    home, agency, monkeypatch
):
    first = TODAY - timedelta(days=12)
    monkeypatch.setenv("ADWH_START_DATE", first.isoformat())
    old, new = [a.id for a in agency.accounts[:2]], agency.accounts[2].id
    monkeypatch.setenv("ADS_ACCOUNT_IDS", ",".join(old))
    library.daily(home, ["campaign_metrics"])
    assert set(asked_from(agency, "/v1/campaign-metrics")) == set(old)
    agency.requests.clear()
    monkeypatch.delenv("ADS_ACCOUNT_IDS")
    library.daily(home, ["campaign_metrics"])
    lookback = TODAY - timedelta(days=3)
    assert asked_from(agency, "/v1/campaign-metrics") == {
        **dict.fromkeys(old, lookback),
        new: first,
    }
    coverage = read_coverage(Lake(home / "lake"))
    assert coverage[(new, "campaign_metrics")] == [(first, YESTERDAY)]


def partition_statuses(table: str, days: list[date]) -> set[dg.AssetPartitionStatus | None]:
    """What Dagster shows of `table`'s partitions on `days`, in the home's instance."""
    keys = [day.isoformat() for day in days]
    with open_instance() as instance:
        status = instance.get_status_by_partition(
            dg.AssetKey(table), keys, DATED_STEP.partitions_def
        )
    return {status.get(key) for key in keys}


def test_days_whose_last_attempt_failed_are_fetched_again_by_the_daily_run_and_turn_green(
    home, embedded
):
    """A run over two days fails after an earlier one published them: the lake holds them
    whole, Dagster shows them failed. The next daily run fetches them again, though they lie
    before its lookback, and they turn green."""
    first = date(2026, 11, 18)  # the shared run's first day; the lookback starts on the 20th
    copy_of_a_run(home, ["run", "--start", first.isoformat(), "--end", "2026-11-20"])
    failed = every_day(first, first + timedelta(days=1))
    start = {"ADWH_START_DATE": first.isoformat()}
    table = ["--tables", "campaign_metrics"]
    span = ["--start", first.isoformat(), "--end", failed[-1].isoformat()]
    embedded.faults = FaultPlan(broken_routes=(("/v1/campaign-metrics", 404),))
    assert scenarios.adwh(home, ["run", *span, *table], **start).code == 1
    assert partition_statuses("campaign_metrics", failed) == {dg.AssetPartitionStatus.FAILED}
    embedded.faults = NO_FAULTS
    embedded.requests.clear()
    assert scenarios.adwh(home, ["run", *table], **start).code == 0
    green = partition_statuses("campaign_metrics", every_day(first, YESTERDAY))
    assert green == {dg.AssetPartitionStatus.MATERIALIZED}
    asked = asked_from(embedded, "/v1/campaign-metrics")
    assert asked and set(asked.values()) == {first}


def test_the_plan_is_the_earliest_of_gap_lookback_and_pending_within_the_horizon():
    today, first_day = TODAY, TODAY - timedelta(days=400)
    full = [(first_day, YESTERDAY)]
    covered = {("seen", name): full for name in DATED}
    covered[("gap", "campaign_metrics")] = [(first_day, TODAY - timedelta(days=20))]
    covered[("old gap", "campaign_metrics")] = [(TODAY - timedelta(days=200), YESTERDAY)]
    covered[("old gap", "target_metrics")] = [(TODAY - timedelta(days=30), YESTERDAY)]
    pending = {"seen": TODAY - timedelta(days=9)}
    accounts = ["seen", "gap", "old gap", "new"]
    plan = daily_starts(covered, pending, accounts, today, 3, first_day)
    lookback = TODAY - timedelta(days=3)
    horizon = TODAY - timedelta(days=CATCH_UP_HORIZON_DAYS)
    assert plan.starts["campaign_metrics"]["seen"] == lookback
    assert plan.starts["seller_product_metrics"]["seen"] == pending["seen"]
    assert plan.starts["campaign_metrics"]["gap"] == TODAY - timedelta(days=19)
    # a table never fetched for a seen account: caught up over the horizon, no further
    assert plan.starts["adgroup_metrics"]["gap"] == horizon
    assert plan.starts["target_metrics"]["old gap"] == horizon
    # the change log is kept 12 months, the history 90 days: neither asked beyond
    assert plan.starts["optimization_history"]["gap"] == horizon
    assert plan.account_start("new") == first_day and plan.end == YESTERDAY
    late = daily_starts(covered, pending, accounts, today, 3, lookback + timedelta(days=1))
    assert plan.start == first_day and late.start == lookback + timedelta(days=1)
    # a day whose last attempt failed: every account from it, within what the service answers
    failed = {"campaign_metrics": TODAY - timedelta(days=12)}
    failed["optimization_history"] = TODAY - timedelta(days=200)
    healed = daily_starts(covered, pending, accounts, today, 3, first_day, heal=failed)
    assert healed.starts["campaign_metrics"]["seen"] == failed["campaign_metrics"]
    assert healed.starts["campaign_metrics"]["gap"] == TODAY - timedelta(days=19)
    assert healed.starts["optimization_history"]["seen"] == horizon
    assert healed.starts["target_metrics"]["seen"] == lookback


def test_the_demo_fills_every_partition_of_a_new_warehouse(monkeypatch):
    """`make demo` fetches the days from the default first day to yesterday: no asset shows a
    partition missing."""
    monkeypatch.setenv("ADWH_TODAY", TODAY.isoformat())
    monkeypatch.delenv("ADWH_START_DATE", raising=False)
    days = parser().parse_args(["demo"]).days
    assert YESTERDAY - timedelta(days=days - 1) == first_partition()


def test_the_first_partition_is_the_start_date_or_thirty_days_back(monkeypatch):
    monkeypatch.setenv("ADWH_TODAY", TODAY.isoformat())
    monkeypatch.setenv("ADWH_START_DATE", "2026-03-01")
    assert first_partition() == date(2026, 3, 1)
    monkeypatch.delenv("ADWH_START_DATE")
    assert first_partition() == TODAY - timedelta(days=30)
    code = "from assets.definitions import defs; import dagster as dg; " + (
        "print(defs.resolve_asset_graph().get(dg.AssetKey('campaign_metrics'))"
        ".partitions_def.get_first_partition_key())"
    )
    env = {"ADWH_TODAY": TODAY.isoformat(), "PATH": ""}
    shown = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert shown.stdout.strip() == (TODAY - timedelta(days=30)).isoformat(), shown.stderr
    env["ADWH_START_DATE"] = TODAY.isoformat()
    refused = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert refused.returncode != 0 and "ADWH_START_DATE 2026-11-23 is not before today" in (
        refused.stderr
    )
