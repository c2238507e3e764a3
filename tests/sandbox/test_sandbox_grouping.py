"""`group_by` and the `cluster` filter on metrics (spec 2.6, 2.9 rule 7, 4.2, 8)."""

from collections import defaultdict
from decimal import ROUND_HALF_EVEN, Decimal

import pytest

from sandbox import metrics_api
from tests.sandbox.conftest import EXPONENT, ask, every_row, ok

OCTOBER = {"start_date": "2026-10-01", "end_date": "2026-10-31"}
ADVERTISING_ENTITY = ("campaign", "connection", "country")


def grouped(service, resource: str, *dims: str, **params) -> list[dict]:
    pairs = [("group_by[]", d) for d in dims]
    rows: list[dict] = []
    while True:
        page = ok(service, f"/v1/{resource}", *pairs, limit=1000, offset=len(rows), **params)
        rows += page["data"]
        if not page["has_more"]:
            return rows


def sums(rows: list[dict], key, fields: tuple[str, ...]) -> dict:
    """Per key: each field summed (Decimal for money strings), None when every value is None."""
    out: dict = {}
    for row in rows:
        totals = out.setdefault(key(row), {name: None for name in fields})
        for name in fields:
            value = row[name]
            if value is None:
                continue
            value = Decimal(value) if isinstance(value, str) else value
            totals[name] = value if totals[name] is None else totals[name] + value
    return out


def as_decimal(row: dict, fields: tuple[str, ...]) -> dict:
    return {
        name: Decimal(row[name]) if isinstance(row[name], str) else row[name] for name in fields
    }


# ---------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "dims",
    [("account", "country"), ("account", "cluster"), ("region",)],
)
def test_invalid_groupings_are_400(medium, dims):
    pairs = [("group_by[]", d) for d in dims]
    status, body = ask(medium, "/v1/product-ad-metrics", *pairs, **OCTOBER)
    assert status == 400 and body["error"]["param"] == "group_by"


@pytest.mark.parametrize(
    ("resource", "allowed"),
    [
        ("campaign-metrics", False),
        ("adgroup-metrics", False),
        ("target-metrics", False),
        ("search-term-metrics", False),
        ("product-ad-metrics", True),
        ("seller-product-metrics", True),
        ("vendor-product-metrics", True),
    ],
)
def test_cluster_grouping_is_for_product_resources_only(medium, resource, allowed):
    status, _ = ask(medium, f"/v1/{resource}", ("group_by", "cluster"), limit=1, **OCTOBER)
    assert status == (200 if allowed else 400)


# ---------------------------------------------------------------------- advertising
MEASURES = ("impressions", "clicks", "orders", "units", "cost", "sales", "new_to_brand_sales")


@pytest.mark.parametrize("dims", [("account",), ("country",), ("connection", "country")])
def test_advertising_groups_sum_their_entities_and_recompute_ratios(medium, dims):
    entities = every_row(medium, "/v1/campaign-metrics", **OCTOBER)
    rows = grouped(medium, "campaign-metrics", *dims, **OCTOBER)
    named = [d for d in dims if d != "account"]

    def key(row: dict) -> tuple:
        return (*(row[d] for d in named), row["currency"], row["ad_product"])

    expected = sums(entities, key, MEASURES)
    assert len(rows) == len(expected) == len({key(r) for r in rows})
    for row in rows:
        assert as_decimal(row, MEASURES) == expected[key(row)]
        assert row["campaign"] is None and row["top_of_search_is"] is None
        for field in ADVERTISING_ENTITY:
            if field not in named:
                assert row[field] is None
        cost, sales = Decimal(row["cost"]), Decimal(row["sales"])
        assert row["acos"] == pytest.approx(float(cost / sales))
        assert row["ctr"] == pytest.approx(row["clicks"] / row["impressions"])
        quantum = Decimal(1).scaleb(-EXPONENT[row["currency"]])
        assert Decimal(row["cpc"]) == (cost / row["clicks"]).quantize(quantum, ROUND_HALF_EVEN)
    total = ok(
        medium,
        "/v1/campaign-metrics",
        *[("group_by[]", d) for d in dims],
        include_total="true",
        limit=1,
        **OCTOBER,
    )
    assert total["total_count"] == len(expected)


def test_grouped_daily_rows_are_group_periods(medium):
    entities = every_row(medium, "/v1/adgroup-metrics", granularity="daily", **OCTOBER)
    rows = grouped(medium, "adgroup-metrics", "account", granularity="daily", **OCTOBER)

    def key(row):
        return (row["date"], row["currency"], row["ad_product"])

    expected = sums(entities, key, MEASURES)
    assert {key(r): as_decimal(r, MEASURES) for r in rows} == expected
    page = ok(
        medium,
        "/v1/adgroup-metrics",
        ("group_by", "account"),
        granularity="daily",
        include_total="true",
        limit=1,
        **OCTOBER,
    )
    assert page["total_count"] == len(expected)


# ---------------------------------------------------------------------- seller rules
SELLER_SUMS = (
    "sales",
    "units",
    "orders",
    "sessions",
    "page_views",
    "net_sales",
    "amazon_fees",
    "refunded_units",
    "b2b_sales",
)


def test_seller_groups_by_country_sum_latest_stock_and_weight_buy_box(medium):
    entities = every_row(medium, "/v1/seller-product-metrics", **OCTOBER)
    rows = grouped(medium, "seller-product-metrics", "country", **OCTOBER)

    def key(row):
        return (row["country"], row["currency"])

    expected = sums(entities, key, (*SELLER_SUMS, "stock"))
    assert {key(r) for r in rows} == set(expected)
    for row in rows:
        members = [e for e in entities if key(e) == key(row)]
        assert as_decimal(row, SELLER_SUMS) == {n: expected[key(row)][n] for n in SELLER_SUMS}
        assert row["stock"] == expected[key(row)]["stock"]
        assert row["days_of_coverage"] == pytest.approx(row["stock"] * 31 / row["units"], abs=0.051)
        weighted = sum(
            e["buy_box_percentage"] * e["page_views"] for e in members if e["page_views"]
        )
        views = sum(e["page_views"] for e in members if e["page_views"])
        assert row["buy_box_percentage"] == pytest.approx(weighted / views, abs=1e-3)
        assert row["conversion_rate"] is not None
        for name in ("rank", "price", "fulfillment_channel", "product", "asin", "sku", "cluster"):
            assert row[name] is None


@pytest.mark.parametrize("dims", [("connection",), ("account",), ("cluster",)])
def test_stock_and_coverage_are_null_unless_country_is_a_dimension(medium, dims):
    rows = grouped(medium, "seller-product-metrics", *dims, **OCTOBER)
    assert rows and all(r["stock"] is None and r["days_of_coverage"] is None for r in rows)
    vendor = grouped(medium, "vendor-product-metrics", *dims, **OCTOBER)
    assert all(r["on_hand_sellable_units"] is None for r in vendor)
    combinable = [d for d in dims if d != "account"]
    with_country = grouped(medium, "vendor-product-metrics", *combinable, "country", **OCTOBER)
    assert all(r["on_hand_sellable_units"] is not None for r in with_country)


# ---------------------------------------------------------------------- clusters
def memberships(service) -> dict[str, list[str]]:
    """Cluster id → its catalog product ids."""
    return {c["id"]: c["products"] for c in service.main_account.clusters}


def test_a_product_in_several_clusters_counts_in_full_in_each(medium):
    entities = every_row(medium, "/v1/seller-product-metrics", **OCTOBER)
    rows = grouped(medium, "seller-product-metrics", "cluster", **OCTOBER)
    clusters = memberships(medium)
    names = {c["id"]: c["name"] for c in medium.main_account.clusters}
    expected = {}
    for cluster, products in clusters.items():
        members = [e for e in entities if e["product"] in products]
        for currency, totals in sums(members, lambda r: r["currency"], ("sales", "units")).items():
            expected[(cluster, currency)] = totals
    got = {(r["cluster"], r["currency"]): as_decimal(r, ("sales", "units")) for r in rows}
    assert got == expected
    assert all(r["cluster_name"] == names[r["cluster"]] for r in rows)
    clustered = {p for products in clusters.values() for p in products}
    overlap = sum(Decimal(r["sales"]) for r in rows)
    in_some = sum(Decimal(e["sales"]) for e in entities if e["product"] in clustered)
    account = sum(Decimal(e["sales"]) for e in entities)
    shared = [p for p in clustered if sum(p in ps for ps in clusters.values()) == 2]
    assert shared and overlap > in_some  # shared products count twice
    assert in_some < account  # products in no cluster are left out


def test_product_ad_cluster_rows_stay_split_by_ad_product(medium):
    rows = grouped(medium, "product-ad-metrics", "cluster", **OCTOBER)
    keys = [(r["cluster"], r["currency"], r["ad_product"]) for r in rows]
    assert len(keys) == len(set(keys)) and {r["ad_product"] for r in rows} == {"SP", "SD"}
    assert all(r["product_ad"] is None and r["cluster_name"] for r in rows)


def test_the_cluster_filter_keeps_the_union_of_its_clusters(medium):
    clusters = memberships(medium)
    chosen = list(clusters)[:2]
    wanted = set(clusters[chosen[0]]) | set(clusters[chosen[1]])
    pairs = [("cluster", c) for c in chosen]
    rows = every_row(medium, "/v1/seller-product-metrics", **OCTOBER)
    filtered = ok(medium, "/v1/seller-product-metrics", *pairs, limit=1000, **OCTOBER)["data"]
    assert filtered and {r["product"] for r in filtered} == {r["product"] for r in rows} & wanted
    by_cluster = ok(
        medium, "/v1/seller-product-metrics", *pairs, ("group_by", "cluster"), limit=1000, **OCTOBER
    )["data"]
    assert {r["cluster"] for r in by_cluster} == set(chosen)


def test_unknown_cluster_ids_give_an_empty_list_not_an_error(medium):
    page = ok(medium, "/v1/product-ad-metrics", cluster="0" * 24, **OCTOBER)
    assert page["data"] == [] and page["has_more"] is False
    foreign = medium.accounts[1].clusters[0]["id"]
    assert ok(medium, "/v1/seller-product-metrics", cluster=foreign, **OCTOBER)["data"] == []


def test_too_many_memberships_need_the_cluster_filter(medium, monkeypatch):
    monkeypatch.setattr(metrics_api, "CLUSTER_MEMBERSHIP_LIMIT", 50)
    status, body = ask(medium, "/v1/seller-product-metrics", ("group_by", "cluster"), **OCTOBER)
    assert status == 400 and body["error"]["param"] == "cluster"
    assert "limit of 50" in body["error"]["message"]
    one = next(iter(memberships(medium)))
    status, _ = ask(
        medium, "/v1/seller-product-metrics", ("group_by", "cluster"), cluster=one, **OCTOBER
    )
    assert status == 200


def test_grouped_vendor_rows_are_summed_in_yen(medium):
    entities = every_row(medium, "/v1/vendor-product-metrics", **OCTOBER)
    rows = grouped(medium, "vendor-product-metrics", "account", **OCTOBER)
    fields = ("ordered_revenue", "shipped_revenue", "shipped_units", "glance_views")
    assert [as_decimal(r, fields) for r in rows] == list(
        sums(entities, lambda r: r["currency"], fields).values()
    )
    assert all("." not in r["shipped_revenue"] and r["rank"] is None for r in rows)


def test_rows_group_by_currency_even_for_one_dimension(medium):
    rows = grouped(medium, "seller-product-metrics", "connection", **OCTOBER)
    per_connection = defaultdict(set)
    for row in rows:
        per_connection[row["connection"]].add(row["currency"])
    assert any(len(currencies) == 2 for currencies in per_connection.values())  # EUR and GBP
