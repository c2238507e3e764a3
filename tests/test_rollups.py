"""Re-aggregating daily rows (transforms/rollups.py) gives the service's own answer.

Hypothesis picks a window (within the daily cap), a grain and a grouping; the sandbox answers
that `granularity` and `group_by` itself, and our Polars roll-up of its daily rows must match:
every additive measure exactly, recomputed ratios within float noise, `cpc` to the cent (it is
money rounded half to even), and the non-additive seller measures by the spec's rules. The same
meaning holds in SQL: the marts' `money_ratio` macro and `date_trunc` agree with Polars, and
null and zero survive Parquet and DuckDB.
"""

import math
import tempfile
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_EVEN, Decimal
from functools import cache
from pathlib import Path

import duckdb
import polars as pl
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sandbox.periods import period_start as service_period_start
from sandbox.periods import periods as service_periods
from sandbox.service import SandboxService
from tests.conftest import TODAY, direct
from transforms.records import records_to_frame
from transforms.rollups import (
    ADVERTISING_SUMS,
    CURRENCY_DIGITS,
    SELLER_SUMS,
    money_ratio,
    period_start,
    periods,
    reported_sum,
    rollup_advertising,
    rollup_seller,
    with_clusters,
)
from warehouse.build import build_warehouse
from warehouse.lake import Lake
from warehouse.marts import SQL_DIR
from warehouse.schemas import (
    CAMPAIGN_METRICS,
    PRODUCT_AD_METRICS,
    SELLER_PRODUCT_METRICS,
    TABLES,
    TableSchema,
)

SERVICE = SandboxService("small", TODAY)
ACCOUNT = SERVICE.main_account.id
NOW = datetime(2026, 11, 23, tzinfo=UTC)
EXTRACTED = NOW.replace(tzinfo=None)
YESTERDAY = TODAY - timedelta(days=1)
DAILY_CAP = 92  # every resource below accepts 92 days with `daily`, 366 otherwise
EXAMPLES = settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
ADVERTISING = {
    "campaign-metrics": (CAMPAIGN_METRICS, "campaign"),
    "product-ad-metrics": (PRODUCT_AD_METRICS, "product_ad"),
}
GROUPINGS = ((), ("account",), ("country",), ("connection",), ("connection", "country"))


# ---------------------------------------------------------------------- asking the sandbox
def every_row(path: str, **params) -> list[dict]:
    rows: list[dict] = []
    while True:
        response = direct(SERVICE, path, limit=1000, offset=len(rows), **params)
        assert response.status_code == 200, response.json()
        page = response.json()
        rows += page["data"]
        if not page["has_more"]:
            return rows


def daily_frame(schema: TableSchema, start: date, end: date) -> pl.DataFrame:
    """The service's daily entity rows, typed by the pipeline's own transform."""
    rows = every_row(f"/v1/{schema.resource}", start_date=start, end_date=end, granularity="daily")
    return records_to_frame(rows, schema, account_id=ACCOUNT, extracted_at=NOW)


@cache
def memberships() -> pl.DataFrame:
    """(cluster, product) of every cluster, from the service's cursor list."""
    clusters: list[dict] = []
    while True:
        after = {"starting_after": clusters[-1]["id"]} if clusters else {}
        page = direct(SERVICE, "/v1/clusters", limit=100, **after).json()
        clusters += page["data"]
        if not page["has_more"]:
            break
    return pl.DataFrame(
        [{"cluster": c["id"], "product": p} for c in clusters for p in c.get("products") or []],
        schema={"cluster": pl.String, "product": pl.String},
    )


def service_answer(resource: str, start: date, end: date, grain: str, grouping: tuple) -> list:
    params = {"start_date": start, "end_date": end, "granularity": grain}
    if grouping:
        params["group_by"] = ",".join(grouping)
    return every_row(f"/v1/{resource}", **params)


windows = st.builds(
    lambda start, days: (start, min(start + timedelta(days=days - 1), YESTERDAY)),
    st.dates(date(2025, 11, 1), YESTERDAY),
    st.integers(1, DAILY_CAP),
)
grains = st.sampled_from(("daily", "weekly", "monthly", "quarterly", "yearly", "total"))


def keys_for(grouping: tuple, entity: tuple[str, ...], split: tuple[str, ...]) -> list[str]:
    if not grouping:
        return [*entity, *split]
    if grouping == ("account",):
        return list(split)
    return [*grouping, *split]


def by_key(rows, keys: list[str], grain: str) -> dict:
    """Rows (dicts) keyed by the key columns and, unless grain is total, the period label."""
    out = {}
    for row in rows:
        key = tuple(row[k] for k in keys)
        if grain != "total":
            label = row["date"]
            key += (label if isinstance(label, str) else label.isoformat(),)
        assert key not in out, key
        out[key] = row
    return out


# ---------------------------------------------------------------------- comparing values
def same_amount(got, expected) -> bool:
    if expected is None or got is None:
        return got is None and expected is None
    if isinstance(expected, str):
        return Decimal(got) == Decimal(expected)
    return got == expected


def same_ratio(got, expected, tolerance: float = 0.0) -> bool:
    if expected is None or got is None:
        return got is None and expected is None
    return math.isclose(got, expected, rel_tol=1e-12, abs_tol=tolerance + 1e-15)


def assert_matches(got: pl.DataFrame, expected: list[dict], keys: list[str], grain: str, checks):
    mine = by_key(got.to_dicts(), keys, grain)
    theirs = by_key(expected, keys, grain)
    assert mine.keys() == theirs.keys()
    for key, row in theirs.items():
        for name, same in checks:
            assert same(mine[key][name], row[name]), (key, name, mine[key][name], row[name])


ADVERTISING_CHECKS = [
    *((name, same_amount) for name in ADVERTISING_SUMS),
    ("cpc", same_amount),
    *((name, same_ratio) for name in ("acos", "roas", "ctr", "conversion_rate")),
]


# ---------------------------------------------------------------------- the property tests
@pytest.mark.parametrize("resource", sorted(ADVERTISING))
@EXAMPLES
@given(window=windows, grain=grains, grouping=st.sampled_from((*GROUPINGS, ("cluster",))))
def test_advertising_rollups_equal_the_service(resource, window, grain, grouping):
    schema, entity = ADVERTISING[resource]
    if grouping == ("cluster",) and resource == "campaign-metrics":
        grouping = ("country",)  # group_by=cluster is for product resources only
    start, end = window
    frame = daily_frame(schema, start, end)
    if grouping == ("cluster",):
        frame = with_clusters(frame, memberships())
    keys = keys_for(grouping, (entity, "connection", "country"), ("currency", "ad_product"))
    got = rollup_advertising(frame, keys, grain, start=start, end=end)
    expected = service_answer(resource, start, end, grain, grouping)
    checks = list(ADVERTISING_CHECKS)
    if resource == "campaign-metrics":  # a campaign's share, impression-weighted, never summed
        checks.append(("top_of_search_is", lambda a, b: same_ratio(a, b, 1e-4)))
    assert_matches(got, expected, keys, grain, checks)


SELLER_CHECKS = [
    *((name, same_amount) for name in SELLER_SUMS),
    ("conversion_rate", same_ratio),
    ("buy_box_percentage", lambda a, b: same_ratio(a, b, 1e-4)),  # from 4-digit daily shares
    ("b2b_buy_box_percentage", lambda a, b: same_ratio(a, b, 1e-4)),
    ("stock", same_amount),
    # Both rounded to 0.1 day, the service from the binary float (Python's round: 2.85 is
    # 2.8500000000000001 and goes up) and Polars from the decimal (a tie, to even: 2.8).
    ("days_of_coverage", lambda a, b: same_ratio(a, b, 0.1 + 1e-9)),
    ("rank", same_amount),
    ("price", same_amount),
]


@EXAMPLES
@given(window=windows, grain=grains, grouping=st.sampled_from((*GROUPINGS, ("cluster",))))
def test_seller_rollups_equal_the_service(window, grain, grouping):
    start, end = window
    frame = daily_frame(SELLER_PRODUCT_METRICS, start, end)
    if grouping == ("cluster",):
        frame = with_clusters(frame, memberships())
    keys = keys_for(grouping, ("asin", "sku", "connection", "country"), ("currency",))
    got = rollup_seller(frame, keys, grain, start=start, end=end)
    expected = service_answer("seller-product-metrics", start, end, grain, grouping)
    assert_matches(got, expected, keys, grain, SELLER_CHECKS)
    if grouping and "country" not in grouping:
        assert all(r["stock"] is None for r in got.to_dicts())  # spec 2.9 rule 7


def test_a_year_boundary_and_partial_edges_roll_up_like_the_service():
    start, end = date(2025, 12, 20), date(2026, 1, 10)
    frame = daily_frame(CAMPAIGN_METRICS, start, end)
    for grain in ("weekly", "monthly", "quarterly", "yearly"):
        got = rollup_advertising(frame, ["currency", "ad_product"], grain)
        expected = service_answer("campaign-metrics", start, end, grain, ("account",))
        assert_matches(got, expected, ["currency", "ad_product"], grain, ADVERTISING_CHECKS)
    labels = periods(start, end, "yearly")
    assert labels["date"].to_list() == [date(2025, 1, 1), date(2026, 1, 1)]
    assert labels["partial"].to_list() == [True, True]
    assert labels["days"].to_list() == [12, 10]


def test_seller_conversion_of_a_period_is_orders_over_sessions_of_the_row():
    """Spec 2.9: a week's conversion_rate counts the orders of days without reported traffic."""
    monday, tuesday, wednesday = date(2026, 10, 5), date(2026, 10, 6), date(2026, 10, 7)
    frame = pl.DataFrame(
        {
            "product": ["p", "p", "p", "q"],
            "date": [monday, tuesday, wednesday, monday],
            "currency": ["USD"] * 4,
            "orders": [1, 2, 0, 3],
            "sessions": [10, None, 0, None],  # traffic not reported on Tuesday, nor for q
        }
    )
    weekly = rollup_seller(frame, ["product", "currency"], "weekly").to_dicts()
    by_product = {r["product"]: r for r in weekly}
    assert by_product["p"]["orders"] == 3 and by_product["p"]["sessions"] == 10
    assert by_product["p"]["conversion_rate"] == pytest.approx(0.3)  # not 1 / 10
    assert by_product["q"]["sessions"] is None and by_product["q"]["conversion_rate"] is None
    daily = rollup_seller(frame, ["product", "currency"], "daily").to_dicts()
    rates = {(r["product"], r["date"]): r["conversion_rate"] for r in daily}
    assert rates == {
        ("p", monday): 0.1,
        ("p", tuesday): None,
        ("p", wednesday): None,
        ("q", monday): None,
    }


# ---------------------------------------------------------------------- periods
@settings(max_examples=60, deadline=None)
@given(window=windows, grain=st.sampled_from(("daily", "weekly", "monthly", "quarterly", "yearly")))
def test_periods_are_the_services_and_sql_truncates_alike(window, grain):
    start, end = window
    ours = periods(start, end, grain)
    theirs = list(service_periods(start, end, grain))
    assert list(zip(ours["date"], ours["first_day"], ours["last_day"], strict=True)) == theirs
    days = pl.DataFrame({"day": pl.date_range(start, end, "1d", eager=True)})
    polars_starts = days.select(period_start(pl.col("day"), grain))["day"].to_list()
    assert polars_starts == [service_period_start(d, grain) for d in days["day"]]
    part = {"daily": "day", "weekly": "week", "monthly": "month", "quarterly": "quarter"}
    with duckdb.connect() as con:
        sql = con.sql(
            f"SELECT CAST(date_trunc('{part.get(grain, 'year')}', day) AS DATE) AS s "
            "FROM days ORDER BY day"
        ).fetchall()
    assert [s for (s,) in sql] == polars_starts


# ---------------------------------------------------------------------- money and nulls
amounts = st.decimals(
    min_value=Decimal("-9999999999.9999"),
    max_value=Decimal("9999999999.9999"),
    places=4,
    allow_nan=False,
    allow_infinity=False,
)
currencies = st.sampled_from(("USD", "EUR", "JPY", "KWD", "GBP"))


def half_even(numerator: Decimal, denominator: int, currency: str) -> Decimal | None:
    if denominator == 0:
        return None
    digits = CURRENCY_DIGITS.get(currency, 2)
    return (numerator / Decimal(denominator)).quantize(
        Decimal(1).scaleb(-digits), rounding=ROUND_HALF_EVEN
    )


MACROS = (SQL_DIR / "mart_00_functions.sql").read_text()


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(amounts, st.integers(-50, 5000), currencies),
        min_size=1,
        max_size=30,
    )
)
def test_money_ratio_is_exact_half_even_in_polars_and_sql(cases):
    exact = [half_even(n, d, c) for n, d, c in cases]
    frame = pl.DataFrame(
        {
            "n": [n for n, _, _ in cases],
            "d": [d for _, d, _ in cases],
            "c": [c for _, _, c in cases],
        },
        schema={"n": pl.Decimal(18, 4), "d": pl.Int64, "c": pl.String},
    )
    polars = frame.select(money_ratio(pl.col("n"), pl.col("d"), pl.col("c")))["n"].to_list()
    assert polars == exact
    with duckdb.connect() as con:
        con.execute(MACROS)
        sql = con.sql("SELECT money_ratio(n, d, c) FROM frame").fetchall()
    assert [v for (v,) in sql] == exact
    # money_ratio is also what the marts' cpc uses: the service rounds the same way
    assert all(v is None or v == v.quantize(Decimal("0.0001")) for v in exact)


groups_of_values = st.lists(
    st.tuples(st.integers(0, 3), st.one_of(st.none(), st.integers(-5, 5))), min_size=1
)


@settings(max_examples=60, deadline=None)
@given(groups_of_values)
def test_a_sum_of_nothing_reported_is_null_and_zero_stays_zero(pairs):
    frame = pl.DataFrame(
        {"g": [g for g, _ in pairs], "v": [v for _, v in pairs]},
        schema={"g": pl.Int64, "v": pl.Int64},
    )
    got = dict(frame.group_by("g").agg(reported_sum("v")).iter_rows())
    with duckdb.connect() as con:
        sql = dict(con.sql("SELECT g, sum(v) FROM frame GROUP BY g").fetchall())
    for group in {g for g, _ in pairs}:
        values = [v for g, v in pairs if g == group and v is not None]
        expected = sum(values) if values else None
        assert got[group] == expected and sql[group] == expected


nullable_rows = st.lists(
    st.tuples(
        st.one_of(st.none(), st.just(0), st.integers(-(2**40), 2**40)),
        st.one_of(st.none(), st.just(Decimal(0)), amounts),
        st.one_of(st.none(), st.just(0.0), st.floats(-1e6, 1e6, allow_nan=False)),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=30, deadline=None)
@given(nullable_rows)
def test_null_and_zero_survive_parquet_and_duckdb(rows):
    frame = pl.DataFrame(
        {
            "i": list(range(len(rows))),
            "clicks": [r[0] for r in rows],
            "cost": [r[1] for r in rows],
            "ctr": [r[2] for r in rows],
        },
        schema={"i": pl.Int64, "clicks": pl.Int64, "cost": pl.Decimal(18, 4), "ctr": pl.Float64},
    )
    with tempfile.TemporaryDirectory() as folder:
        written_by_polars = Path(folder) / "polars.parquet"
        frame.write_parquet(written_by_polars)
        written_by_arrow = Path(folder) / "arrow.parquet"
        pq.write_table(frame.to_arrow(), written_by_arrow)
        with duckdb.connect() as con:
            for path in (written_by_polars, written_by_arrow):
                back = con.sql(f"SELECT * FROM read_parquet('{path}') ORDER BY i").fetchall()
                assert back == list(frame.iter_rows())


def test_null_and_zero_survive_the_lake_the_warehouse_and_a_mart(tmp_path):
    """Through the real writer and the real build: NULL stays NULL, 0 stays 0."""
    home = tmp_path / "home"
    day = date(2026, 10, 1)
    rows = [
        # SP: new_to_brand_sales not reported (NULL), a real 0 of clicks and cost
        {"campaign": "a" * 24, "ad_product": "SP", "impressions": 0, "clicks": 0, "cost": "0"},
        {"campaign": "b" * 24, "ad_product": "SP", "impressions": 10, "clicks": 0, "cost": "0"},
        # SB: one campaign reports new_to_brand_sales 0, one does not report it
        {"campaign": "c" * 24, "ad_product": "SB", "new_to_brand_sales": "0", "sales": "0"},
        {"campaign": "d" * 24, "ad_product": "SB", "sales": None},
    ]
    money = ("cost", "sales", "new_to_brand_sales")
    typed = [
        {k: Decimal(v) if k in money and v is not None else v for k, v in r.items()} for r in rows
    ]
    frame = pl.DataFrame(
        [
            {"account_id": ACCOUNT, "date": day, "currency": "USD", "_extracted_at": EXTRACTED, **r}
            for r in typed
        ],
        schema=CAMPAIGN_METRICS.polars_schema,
    )
    Lake(home / "lake", home / "staging").publish(CAMPAIGN_METRICS, frame, [day])
    build_warehouse(home, TABLES.values())
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        table = con.sql(
            "SELECT clicks, cost, new_to_brand_sales, sales FROM campaign_metrics ORDER BY campaign"
        ).fetchall()
        mart = dict(
            (p, rest)
            for p, *rest in con.sql(
                "SELECT ad_product, clicks, spend, new_to_brand_sales, sales, ctr, cpc "
                "FROM mart_account_daily"
            ).fetchall()
        )
    assert table == [
        (0, Decimal(0), None, None),
        (0, Decimal(0), None, None),
        (None, None, Decimal(0), Decimal(0)),
        (None, None, None, None),
    ]
    assert mart["SP"] == [0, Decimal(0), None, None, 0.0, None]  # ctr 0/10 = 0; cpc 0/0 NULL
    assert mart["SB"] == [None, None, Decimal(0), Decimal(0), None, None]


def test_currency_must_be_a_key():
    frame = daily_frame(CAMPAIGN_METRICS, date(2026, 10, 1), date(2026, 10, 2))
    with pytest.raises(ValueError, match="currency"):
        rollup_advertising(frame, ["ad_product"], "monthly")
