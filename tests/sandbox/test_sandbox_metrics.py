"""Metrics lists (spec 2.6, 4.2, 8): fields, paging, windows, periods, money, nulls, filters."""

from collections import defaultdict
from datetime import date, timedelta
from decimal import Decimal

import pytest

from sandbox.periods import period_start
from sandbox.service import SandboxService
from sandbox.windows import window_cap
from tests.sandbox.conftest import TODAY, ask, every_row, is_money, ok

ADVERTISING = [
    "campaign-metrics",
    "adgroup-metrics",
    "target-metrics",
    "product-ad-metrics",
    "search-term-metrics",
]
RETAIL = ["seller-product-metrics", "vendor-product-metrics"]
MEASURES = {
    "impressions",
    "clicks",
    "orders",
    "units",
    "cost",
    "sales",
    "cpc",
    "ctr",
    "acos",
    "roas",
    "conversion_rate",
    "new_to_brand_sales",
    "new_to_brand_purchases",
    "detail_page_views",
    "viewable_impressions",
    "currency",
    "ad_product",
}
ENTITY_FIELDS = {
    "campaign-metrics": {"object", "campaign", "connection", "country", "top_of_search_is"},
    "adgroup-metrics": {"object", "ad_group", "campaign", "connection", "country"},
    "target-metrics": {
        "object",
        "target",
        "target_type",
        "match_type",
        "target_expression",
        "campaign",
        "ad_group",
        "connection",
        "country",
    },
    "product-ad-metrics": {
        "object",
        "product_ad",
        "product",
        "asin",
        "campaign",
        "ad_group",
        "cluster",
        "cluster_name",
        "connection",
        "country",
    },
    "search-term-metrics": {
        "object",
        "search_term",
        "search_term_text",
        "target",
        "match_type",
        "campaign",
        "ad_group",
        "connection",
        "country",
    },
}
OCTOBER = {"start_date": "2026-10-01", "end_date": "2026-10-31"}
MONEY_FIELDS = ("cost", "sales", "cpc", "new_to_brand_sales")
ENTITY_KEY = {
    "campaign-metrics": "campaign",
    "adgroup-metrics": "ad_group",
    "target-metrics": "target",
    "product-ad-metrics": "product_ad",
    "search-term-metrics": "search_term",
}


@pytest.fixture(scope="module")
def october_targets(medium) -> list[dict]:
    return every_row(medium, "/v1/target-metrics", granularity="daily", **OCTOBER)


@pytest.mark.parametrize("resource", ADVERTISING)
def test_rows_carry_the_entity_fields_and_measures(medium, resource):
    daily = ok(medium, f"/v1/{resource}", granularity="daily", limit=50, **OCTOBER)["data"]
    assert daily
    for row in daily:
        assert set(row) == ENTITY_FIELDS[resource] | MEASURES | {"date"}
        assert row["object"] == resource.replace("-", "_")
    total = ok(medium, f"/v1/{resource}", limit=5, **OCTOBER)["data"]
    assert all("date" not in row for row in total)


@pytest.mark.parametrize("limit", [0, 1001])
def test_metrics_limit_is_1_to_1000(medium, limit):
    status, body = ask(medium, "/v1/campaign-metrics", limit=limit, **OCTOBER)
    assert status == 400 and body["error"]["param"] == "limit"


def test_metrics_limit_defaults_to_100_and_offset_pages(medium, october_targets):
    page = ok(medium, "/v1/target-metrics", granularity="daily", **OCTOBER)
    assert page["data"] == october_targets[:100] and page["has_more"] is True
    page = ok(medium, "/v1/target-metrics", granularity="daily", offset=250, limit=7, **OCTOBER)
    assert page["data"] == october_targets[250:257]
    beyond = len(october_targets) + 5
    page = ok(medium, "/v1/target-metrics", granularity="daily", offset=beyond, **OCTOBER)
    assert page == {"object": "list", "data": [], "has_more": False}
    assert ask(medium, "/v1/target-metrics", offset=-1, **OCTOBER)[0] == 400


def test_include_total_counts_entity_periods_with_data(medium, october_targets):
    daily = ok(medium, "/v1/target-metrics", granularity="daily", include_total="true", **OCTOBER)
    assert daily["total_count"] == len(october_targets)
    assert len({(r["target"], r["date"]) for r in october_targets}) == len(october_targets)
    total = ok(medium, "/v1/target-metrics", include_total="true", limit=1, **OCTOBER)
    assert total["total_count"] == len({r["target"] for r in october_targets})


@pytest.mark.parametrize("resource", [*ADVERTISING, *RETAIL])
@pytest.mark.parametrize("granularity", ["daily", "weekly", "total"])
def test_windows_over_the_cap_are_refused_naming_the_limit(medium, resource, granularity):
    cap = window_cap(resource, granularity)
    end = date(2026, 11, 20)
    start = end - timedelta(days=cap - 1)
    params = {"granularity": granularity, "limit": 1, "end_date": str(end)}
    assert ask(medium, f"/v1/{resource}", start_date=str(start), **params)[0] == 200
    status, body = ask(medium, f"/v1/{resource}", start_date=str(start - timedelta(1)), **params)
    assert status == 400
    assert f"limit of {cap} days" in body["error"]["message"]


def test_the_caps_are_those_of_the_spec():
    assert window_cap("target-metrics", "total") == 93
    assert window_cap("target-metrics", "daily") == 31
    assert window_cap("search-term-metrics", "daily") == 31
    assert window_cap("campaign-metrics", "daily") == 92
    assert window_cap("seller-product-metrics", "monthly") == 366


def test_bad_windows_are_400(medium):
    assert ask(medium, "/v1/campaign-metrics", start_date="2026-10-01")[0] == 400
    status, _ = ask(medium, "/v1/campaign-metrics", start_date="2026-10-05", end_date="2026-10-01")
    assert status == 400
    status, _ = ask(medium, "/v1/campaign-metrics", start_date="2026-13-01", end_date="2026-13-02")
    assert status == 400
    status, _ = ask(medium, "/v1/campaign-metrics", granularity="hourly", **OCTOBER)
    assert status == 400


@pytest.mark.parametrize(
    ("granularity", "labels"),
    [
        ("weekly", None),
        ("monthly", {"2025-12-01", "2026-01-01", "2026-02-01", "2026-03-01"}),
        ("quarterly", {"2025-10-01", "2026-01-01"}),
        ("yearly", {"2025-01-01", "2026-01-01"}),
    ],
)
def test_periods_start_on_calendar_boundaries_and_edges_are_partial(medium, granularity, labels):
    window = {"start_date": "2025-12-10", "end_date": "2026-03-05"}
    daily = every_row(medium, "/v1/campaign-metrics", granularity="daily", **window)
    rows = every_row(medium, "/v1/campaign-metrics", granularity=granularity, **window)
    seen = {row["date"] for row in rows}
    if labels is None:
        assert all(date.fromisoformat(d).weekday() == 0 for d in seen)
        assert "2025-12-08" in seen  # the partial first week is labelled with its Monday
    else:
        assert seen == labels
    expected: dict[tuple, list] = defaultdict(lambda: [0, Decimal(0), 0])
    for row in daily:
        label = period_start(date.fromisoformat(row["date"]), granularity)
        sums = expected[(row["campaign"], str(label))]
        sums[0] += row["clicks"]
        sums[1] += Decimal(row["cost"])
        sums[2] += row["impressions"]
    got = {
        (r["campaign"], r["date"]): [r["clicks"], Decimal(r["cost"]), r["impressions"]]
        for r in rows
    }
    assert got == dict(expected)


def test_total_is_the_sum_of_the_days(medium):
    daily = every_row(medium, "/v1/product-ad-metrics", granularity="daily", **OCTOBER)
    total = every_row(medium, "/v1/product-ad-metrics", **OCTOBER)
    sums: dict[str, Decimal] = defaultdict(Decimal)
    for row in daily:
        sums[row["product_ad"]] += Decimal(row["sales"])
    assert {r["product_ad"]: Decimal(r["sales"]) for r in total} == dict(sums)


def test_rows_are_ordered_by_period_then_entity(medium):
    desc = ok(medium, "/v1/campaign-metrics", granularity="daily", limit=1000, **OCTOBER)["data"]
    asc = ok(
        medium, "/v1/campaign-metrics", granularity="daily", order="asc", limit=1000, **OCTOBER
    )["data"]
    assert desc[0]["date"] == "2026-10-31" and asc[0]["date"] == "2026-10-01"
    dates = [r["date"] for r in asc]
    assert dates == sorted(dates)


def test_no_row_for_the_reference_date_or_later(medium):
    window = {"start_date": str(TODAY - timedelta(5)), "end_date": str(TODAY + timedelta(5))}
    rows = every_row(medium, "/v1/campaign-metrics", granularity="daily", **window)
    assert rows and max(r["date"] for r in rows) == str(TODAY - timedelta(1))


@pytest.mark.parametrize("resource", ADVERTISING)
def test_rows_split_by_currency_and_ad_product_with_money_at_currency_digits(medium, resource):
    account = medium.main_account
    campaigns = {c["id"]: c for c in account.campaigns}
    rows = ok(medium, f"/v1/{resource}", granularity="daily", limit=1000, **OCTOBER)["data"]
    assert {r["currency"] for r in rows} >= {"USD", "JPY"}
    for row in rows:
        campaign = campaigns[row["campaign"]]
        assert row["currency"] == campaign["budget"]["currency"]
        assert row["ad_product"] == campaign["adProduct"]
        for name in MONEY_FIELDS:
            if row[name] is not None:
                assert is_money(row[name], row["currency"]), (name, row[name])


def test_ratios_are_null_on_zero_denominators_and_recomputed_from_sums(october_targets):
    rows = october_targets
    zero_clicks = [r for r in rows if r["clicks"] == 0]
    no_sales = [r for r in rows if Decimal(r["sales"]) == 0 and Decimal(r["cost"]) > 0]
    no_impressions = [r for r in rows if r["impressions"] == 0]
    assert zero_clicks and no_sales and no_impressions
    for row in zero_clicks:
        assert row["cpc"] is None and row["conversion_rate"] is None and row["roas"] is None
    for row in no_sales:
        assert row["acos"] is None and row["roas"] == 0
    for row in no_impressions:
        assert row["ctr"] is None
    for row in rows:
        if row["acos"] is not None:
            assert row["acos"] == pytest.approx(float(Decimal(row["cost"]) / Decimal(row["sales"])))
        if row["ctr"] is not None:
            assert row["ctr"] == pytest.approx(row["clicks"] / row["impressions"])


def test_new_to_brand_sales_is_null_for_sp_only(medium):
    rows = ok(medium, "/v1/campaign-metrics", limit=1000, **OCTOBER)["data"]
    by_product = defaultdict(list)
    for row in rows:
        by_product[row["ad_product"]].append(row)
    assert all(r["new_to_brand_sales"] is None for r in by_product["SP"])
    for ad_product in ("SB", "SD"):
        assert all(isinstance(r["new_to_brand_sales"], str) for r in by_product[ad_product])
        assert all(r["top_of_search_is"] is None for r in by_product["SD"])


def test_filters_narrow_the_rows(medium):
    account = medium.main_account
    campaign = account.campaigns[0]["id"]
    rows = every_row(medium, "/v1/target-metrics", campaign=campaign, **OCTOBER)
    assert rows and {r["campaign"] for r in rows} == {campaign}
    group = rows[0]["ad_group"]
    assert {
        r["ad_group"] for r in every_row(medium, "/v1/target-metrics", ad_group=group, **OCTOBER)
    } == {group}
    target = rows[0]["target"]
    only = every_row(medium, "/v1/target-metrics", target=target, **OCTOBER)
    assert [r["target"] for r in only] == [target]
    sd = every_row(medium, "/v1/product-ad-metrics", ad_product="SD", **OCTOBER)
    assert sd and {r["ad_product"] for r in sd} == {"SD"}


@pytest.mark.parametrize(
    ("resource", "params"),
    [
        ("product-ad-metrics", {"ad_product": "SB"}),
        ("campaign-metrics", {"ad_product": "XX"}),
        ("campaign-metrics", {"campaign": "not-an-id"}),
        ("seller-product-metrics", {"asin": "b0short"}),
        ("seller-product-metrics", {"product": "123"}),
    ],
)
def test_bad_filter_values_are_400(medium, resource, params):
    status, body = ask(medium, f"/v1/{resource}", **params, **OCTOBER)
    assert status == 400 and body["error"]["param"] in params


def test_a_product_in_two_clusters_reports_its_first_cluster(medium):
    account = medium.main_account
    clusters = account.clusters
    memberships = defaultdict(list)
    for cluster in clusters:  # in list order: the first listed is the product's first cluster
        for product in cluster["products"]:
            memberships[product].append(cluster)
    rows = every_row(medium, "/v1/product-ad-metrics", **OCTOBER)
    checked = 0
    for row in rows:
        mine = memberships.get(row["product"], [])
        expected = mine[0] if mine else None
        assert row["cluster"] == (expected and expected["id"])
        assert row["cluster_name"] == (expected and expected["name"])
        checked += len(mine) == 2
    assert checked


def test_the_same_seed_and_reference_give_identical_bodies():
    first, second = SandboxService("small", TODAY), SandboxService("small", TODAY)
    paths = [
        ("/v1/targets", {"limit": 100}),
        ("/v1/clusters", {}),
        ("/v1/marketplace-seller-products", {"expand[]": "salesRanks"}),
        ("/v1/target-metrics", {"granularity": "daily", **OCTOBER}),
        ("/v1/seller-product-metrics", {"group_by": "country", **OCTOBER}),
        ("/v1/advertising-changes", {"limit": 100}),
    ]
    for path, params in paths:
        assert ok(first, path, **params) == ok(second, path, **params)
    other = SandboxService("small", TODAY, seed=2)
    assert ok(other, "/v1/target-metrics", **OCTOBER) != ok(first, "/v1/target-metrics", **OCTOBER)
