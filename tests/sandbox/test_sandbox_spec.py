"""The sandbox keeps the spec where a black-box probe found it did not (issue 12, item 7).

Written from the spec, not from the sandbox: `expand` of related fields with dot notation
(spec 2.1, 4.1, 8), `order_by` and `order` on the metrics lists (spec 4.2, 4.4, 4.5), and the
seller `conversion_rate` of grouped and non-daily rows (spec 2.9: orders / sessions of the row).
"""

from collections import defaultdict
from datetime import date
from decimal import Decimal

import pytest

from sandbox import ordering
from sandbox.service import SandboxService
from tests.sandbox.conftest import TODAY, ask, every_row, ok

OCTOBER = {"start_date": date(2026, 10, 1), "end_date": date(2026, 10, 31)}
COUNTRY_FIELDS = {"id", "code", "name", "marketplaceId"}  # spec 2.8, expanded `countries`


@pytest.fixture(scope="module")
def sandbox() -> SandboxService:
    """A small sandbox shared by this module's read-only tests."""
    return SandboxService("small", TODAY)


def item(service: SandboxService, resource: str, record_id: str, *pairs) -> dict:
    """A record as its own item endpoint returns it (the shape an expansion must have)."""
    return ok(service, f"/v1/{resource}/{record_id}", *pairs)


def expand(*paths: str) -> tuple[tuple[str, str], ...]:
    return tuple(("expand[]", path) for path in paths)


# ---------------------------------------------------------------------- expand (spec 2.1, 4.1)
def test_expand_one_level_on_a_list_puts_the_item_in_place_of_the_id(sandbox):
    plain = ok(sandbox, "/v1/campaigns", limit=10)["data"]
    expanded = ok(sandbox, "/v1/campaigns", *expand("connection", "country"), limit=10)["data"]
    assert [r["id"] for r in expanded] == [r["id"] for r in plain]
    for before, after in zip(plain, expanded, strict=True):
        assert after["connection"] == item(sandbox, "connections", before["connection"])
        assert after["country"] == item(sandbox, "countries", before["country"])
        rest = {k: v for k, v in after.items() if k not in ("connection", "country")}
        assert rest == {k: v for k, v in before.items() if k not in ("connection", "country")}


def test_expand_two_levels_on_a_list_expands_inside_the_related_object(sandbox):
    plain = ok(sandbox, "/v1/product-ads", limit=10)["data"]
    expanded = ok(sandbox, "/v1/product-ads", *expand("campaign.connection"), limit=10)["data"]
    for before, after in zip(plain, expanded, strict=True):
        campaign = item(sandbox, "campaigns", before["campaign"])
        connection = item(sandbox, "connections", campaign["connection"])
        assert after["campaign"] == {**campaign, "connection": connection}
        assert after["adGroup"] == before["adGroup"]  # not asked: still an identifier


def test_expand_on_an_item_endpoint_one_and_two_levels(sandbox):
    target = sandbox.main_account.targets[5]
    got = item(sandbox, "targets", target["id"], *expand("adGroup", "campaign.country"))
    assert got["adGroup"] == item(sandbox, "adgroups", target["adGroup"])
    campaign = item(sandbox, "campaigns", target["campaign"])
    country = item(sandbox, "countries", campaign["country"])
    assert got["campaign"] == {**campaign, "country": country}
    assert got["connection"] == target["connection"]


def test_a_string_expand_and_comma_separated_names_work_like_the_array(sandbox):
    ad = sandbox.main_account.product_ads[0]
    as_array = item(sandbox, "product-ads", ad["id"], *expand("product", "adGroup"))
    as_string = ok(sandbox, f"/v1/product-ads/{ad['id']}", expand="product,adGroup")
    assert as_array == as_string
    assert as_array["product"] == item(sandbox, "products", ad["product"])


def test_a_connection_expands_its_countries_to_the_spec_shape(sandbox):
    connection = next(c for c in sandbox.main_account.connections if len(c["countries"]) == 2)
    got = item(sandbox, "connections", connection["id"], *expand("countries"))
    assert [c["id"] for c in got["countries"]] == connection["countries"]
    for country in got["countries"]:
        assert set(country) == COUNTRY_FIELDS
        full = item(sandbox, "countries", country["id"])
        assert country == {k: full[k] for k in COUNTRY_FIELDS}


def test_catalog_related_fields_expand_brand_and_portfolio(sandbox):
    product = sandbox.main_account.products[0]
    got = item(sandbox, "products", product["id"], *expand("brand"))
    assert got["brand"] == item(sandbox, "product-brands", product["brand"])
    campaign = next(c for c in sandbox.main_account.campaigns if c["portfolioId"])
    got = item(sandbox, "campaigns", campaign["id"], *expand("portfolioId"))
    assert got["portfolioId"] == item(sandbox, "portfolios", campaign["portfolioId"])


def test_four_levels_are_accepted_and_a_fifth_is_400_naming_expand(sandbox):
    path = "target.campaign.connection.countries"  # spec 8: up to 4 levels
    page = ok(sandbox, "/v1/search-terms", *expand(path), limit=3)
    for row in page["data"]:
        countries = row["target"]["campaign"]["connection"]["countries"]
        assert countries and all(set(c) == COUNTRY_FIELDS for c in countries)
    search_term = page["data"][0]["id"]
    for where in ("/v1/search-terms", f"/v1/search-terms/{search_term}", "/v1/campaigns"):
        status, body = ask(sandbox, where, *expand(f"{path}.more"))
        assert status == 400, (where, body)
        assert body["error"]["code"] == "parameter_invalid"
        assert body["error"]["param"] == "expand"


def test_unknown_expand_names_are_ignored(sandbox):
    plain = ok(sandbox, "/v1/adgroups", limit=5)
    assert ok(sandbox, "/v1/adgroups", *expand("nothing", "nothing.deeper"), limit=5) == plain
    assert ok(sandbox, "/v1/adgroups", *expand("name"), limit=5) == plain  # not a related field


def test_the_special_expands_keep_working_beside_related_ones(sandbox):
    account = sandbox.main_account
    position = next(i for i in range(len(account.campaigns)) if account.optimization_config(i))
    campaign = account.campaigns[position]
    got = item(sandbox, "campaigns", campaign["id"], *expand("optimizationConfig", "connection"))
    assert got["optimizationConfig"] == account.optimization_config(position)
    assert got["connection"]["id"] == campaign["connection"]
    ads = ok(sandbox, "/v1/adgroups", *expand("campaign.optimizationConfig"), limit=100)["data"]
    nested = [a for a in ads if a["campaign"]["id"] == campaign["id"]]
    assert nested and all(
        a["campaign"]["optimizationConfig"] == got["optimizationConfig"] for a in nested
    )
    listings = ok(
        sandbox, "/v1/marketplace-seller-products", *expand("salesRanks", "brand"), limit=5
    )
    for row in listings["data"]:
        assert isinstance(row["salesRanks"], list)
        assert row["brand"] is None or row["brand"]["object"] == "product_brand"


def test_expanding_leaves_the_records_of_later_answers_untouched(sandbox):
    ok(sandbox, "/v1/targets", *expand("campaign.connection.countries", "adGroup"), limit=50)
    plain = ok(sandbox, "/v1/targets", limit=50)["data"]
    assert all(isinstance(r["campaign"], str) and isinstance(r["adGroup"], str) for r in plain)
    connection = sandbox.main_account.connections[0]
    assert all(isinstance(c, str) for c in connection["countries"])


def test_the_change_log_expands_its_campaign(sandbox):
    rows = ok(sandbox, "/v1/advertising-changes", *expand("campaign"), limit=5)["data"]
    assert rows
    for row in rows:
        assert row["campaign"] == item(sandbox, "campaigns", row["campaign"]["id"])


# ---------------------------------------------------------------------- order_by (spec 4.2)
def walk(service: SandboxService, path: str, limit: int, **params) -> list[dict]:
    """Every row of a metrics list through offset pages of `limit` rows."""
    rows: list[dict] = []
    while True:
        page = ok(service, path, limit=limit, offset=len(rows), **params)
        rows += page["data"]
        if not page["has_more"]:
            return rows


def number(value) -> Decimal | float | int:
    return Decimal(value) if isinstance(value, str) else value


def in_order(rows: list[dict], measure: str, descending: bool) -> bool:
    """Sorted by the measure in the direction asked, nulls last."""
    values = [r[measure] for r in rows]
    present = [number(v) for v in values if v is not None]
    nulls_last = values[len(present) :] == [None] * (len(values) - len(present))
    return nulls_last and present == sorted(present, reverse=descending)


def stable_sort(rows: list[dict], measure: str, descending: bool) -> list[dict]:
    """The rows by the measure, nulls last, ties left in the order they came (the default)."""

    def key(row: dict) -> tuple:
        value = row[measure]
        if value is None:
            return (1, 0)
        return (0, -number(value) if descending else number(value))

    return sorted(rows, key=key)


def same_rows(a: list[dict], b: list[dict]) -> bool:
    """The same rows, in any order."""
    return sorted(map(repr, a)) == sorted(map(repr, b))


ORDERINGS = [
    ("campaign-metrics", "cost", {"granularity": "daily"}),
    ("campaign-metrics", "acos", {}),
    ("target-metrics", "clicks", {}),
    ("product-ad-metrics", "roas", {"granularity": "weekly"}),
    ("adgroup-metrics", "sales", {}),
    ("search-term-metrics", "conversion_rate", {}),
    ("seller-product-metrics", "conversion_rate", {"granularity": "weekly"}),
    ("seller-product-metrics", "days_of_coverage", {}),
    ("vendor-product-metrics", "shipped_revenue", {}),
]


@pytest.mark.parametrize(("resource", "measure", "extra"), ORDERINGS)
@pytest.mark.parametrize("order", ["desc", "asc"])
def test_order_by_sorts_across_offset_pages_completely(sandbox, resource, measure, extra, order):
    path = f"/v1/{resource}"
    unsorted = walk(sandbox, path, 1000, order=order, **OCTOBER, **extra)
    pages = walk(sandbox, path, 7, order=order, order_by=measure, **OCTOBER, **extra)
    assert len(unsorted) > 7
    assert same_rows(pages, unsorted)  # complete: no row skipped or repeated across pages
    assert in_order(pages, measure, descending=order == "desc")
    assert pages == stable_sort(unsorted, measure, descending=order == "desc")  # ties: default


def test_order_by_defaults_to_desc_and_sorts_grouped_rows(sandbox):
    params = {"group_by": "country", "granularity": "weekly", **OCTOBER}
    rows = walk(sandbox, "/v1/campaign-metrics", 5, order_by="sales", **params)
    assert same_rows(rows, walk(sandbox, "/v1/campaign-metrics", 1000, **params))
    assert in_order(rows, "sales", descending=True)


def test_order_by_counts_the_same_total_and_has_more(sandbox):
    params = {"include_total": "true", "granularity": "daily", **OCTOBER}
    plain = ok(sandbox, "/v1/target-metrics", limit=10, **params)
    ordered = ok(sandbox, "/v1/target-metrics", limit=10, order_by="cost", **params)
    assert ordered["total_count"] == plain["total_count"] > 10 and ordered["has_more"]
    params["order_by"] = "cost"
    last = ok(sandbox, "/v1/target-metrics", limit=10, offset=plain["total_count"] - 3, **params)
    assert len(last["data"]) == 3 and last["has_more"] is False


def test_sorting_renders_in_chunks_and_keeps_only_the_rows_a_page_can_reach():
    """Memory stays flat: rows are rendered a chunk at a time and only `offset + limit` kept."""
    calls: list[tuple[int, int]] = []

    def render(first: int, last: int) -> list[dict]:
        calls.append((first, last))
        return [{"sales": str(k % 97), "k": k} for k in range(first, last)]

    count = 2 * ordering.CHUNK + 5
    sections = ordering.sorted_sections([(count, render)], ordering.Sort("sales", True), 10)
    [(total, page)] = sections
    assert total == count and all(b - a <= ordering.CHUNK for a, b in calls)
    rows = page(0, 1000)
    assert len(rows) == 10 and [r["sales"] for r in rows] == ["96"] * 10
    assert [r["k"] for r in rows] == sorted(r["k"] for r in rows)  # ties: the default order


@pytest.mark.parametrize(
    ("resource", "measure"),
    [
        ("campaign-metrics", "sessions"),  # a seller measure
        ("seller-product-metrics", "cost"),  # an advertising measure
        ("campaign-metrics", "top_of_search_is"),  # a field of the row, but not in the list
        ("vendor-product-metrics", "sales"),  # vendor has no single sales field (spec 2.10)
        ("product-ad-metrics", "COST"),
    ],
)
def test_an_order_by_not_allowed_for_the_resource_is_400(sandbox, resource, measure):
    status, body = ask(sandbox, f"/v1/{resource}", order_by=measure, **OCTOBER)
    assert status == 400, body
    assert body["error"]["code"] == "parameter_invalid"
    assert body["error"]["param"] == "order_by"


# ---------------------------------------------------------------------- seller conversion_rate
def expected_conversion(row: dict) -> float | None:
    """Spec 2.9: orders / sessions of the row; null when sessions are null or 0."""
    return row["orders"] / row["sessions"] if row["sessions"] else None


def assert_conversion(rows: list[dict]) -> None:
    assert rows
    for row in rows:
        expected = expected_conversion(row)
        if expected is None:
            assert row["conversion_rate"] is None, row
        else:
            assert row["conversion_rate"] == pytest.approx(expected, rel=1e-12), row


def test_daily_seller_rows_convert_orders_over_sessions(sandbox):
    assert_conversion(
        every_row(sandbox, "/v1/seller-product-metrics", granularity="daily", **OCTOBER)
    )


@pytest.mark.parametrize(
    "params",
    [
        {"granularity": "weekly"},
        {"granularity": "monthly"},
        {"granularity": "total"},
        {"granularity": "daily", "group_by": "country"},
        {"granularity": "weekly", "group_by": "account"},
        {"granularity": "total", "group_by": "cluster"},
    ],
    ids=lambda p: "-".join(p.values()),
)
def test_grouped_and_period_seller_rows_convert_orders_over_sessions_of_the_row(sandbox, params):
    assert_conversion(every_row(sandbox, "/v1/seller-product-metrics", **params, **OCTOBER))


def test_a_weekly_row_counts_the_orders_of_days_without_reported_traffic(sandbox):
    """The case where "orders of days with traffic / sessions" would give another answer."""
    daily = every_row(sandbox, "/v1/seller-product-metrics", granularity="daily", **OCTOBER)
    untracked: dict[tuple, int] = defaultdict(int)
    for row in daily:
        if row["sessions"] is None:
            monday = date.fromisoformat(row["date"]).toordinal()
            monday -= date.fromisoformat(row["date"]).weekday()
            untracked[row["product"], date.fromordinal(monday).isoformat()] += row["orders"]
    weekly = every_row(sandbox, "/v1/seller-product-metrics", granularity="weekly", **OCTOBER)
    differing = [
        r for r in weekly if r["sessions"] and untracked.get((r["product"], r["date"]), 0) > 0
    ]
    assert differing  # weeks mixing days with and without traffic exist
    for row in differing:
        assert row["conversion_rate"] == pytest.approx(row["orders"] / row["sessions"])
