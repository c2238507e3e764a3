"""The functions every mart calls (warehouse/sql/functions.sql) keep the service's meaning.

Hypothesis picks the values: `money_ratio` is exact and rounds half to even to the currency's
digits as the service rounds `cpc`; a sum of nothing reported is NULL and a reported 0 stays 0;
SQL cuts periods where the service does; NULL and 0 survive Parquet, DuckDB, the lake, the
warehouse and a mart. That the marts themselves equal the service's grouped answers is proved
in tests/warehouse/test_marts.py.
"""

import tempfile
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import duckdb
import polars as pl
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.periods import period_start as service_period_start
from tests.conftest import TODAY
from warehouse.build import build_warehouse, functions_sql
from warehouse.lake import Lake
from warehouse.schemas import CAMPAIGN_METRICS, TABLES
from warehouse.spec import CURRENCY_DIGITS, DEFAULT_CURRENCY_DIGITS, ECONOMICS_STATUSES

ACCOUNT = "acc_" + "0" * 20
EXTRACTED = datetime(2026, 11, 23, tzinfo=UTC).replace(tzinfo=None)
YESTERDAY = TODAY - timedelta(days=1)
SQL_PART = {"daily": "day", "weekly": "week", "monthly": "month", "quarterly": "quarter"}


def functions() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the marts' functions, as the warehouse build creates them."""
    con = duckdb.connect()
    con.execute(functions_sql())
    return con


# ---------------------------------------------------------------------- periods
windows = st.builds(
    lambda start, days: (start, min(start + timedelta(days=days - 1), YESTERDAY)),
    st.dates(date(2025, 11, 1), YESTERDAY),
    st.integers(1, 92),
)


@settings(max_examples=60, deadline=None)
@given(window=windows, grain=st.sampled_from(("daily", "weekly", "monthly", "quarterly", "yearly")))
def test_sql_truncates_dates_to_the_services_period_labels(window, grain):
    start, end = window
    days = pl.DataFrame({"day": pl.date_range(start, end, "1d", eager=True)})
    with duckdb.connect() as con:
        sql = con.sql(
            f"SELECT CAST(date_trunc('{SQL_PART.get(grain, 'year')}', day) AS DATE) AS s "
            "FROM days ORDER BY day"
        ).fetchall()
    assert [s for (s,) in sql] == [service_period_start(d, grain) for d in days["day"]]


# ---------------------------------------------------------------------- money and nulls
amounts = st.decimals(
    min_value=Decimal("-9999999999.9999"),
    max_value=Decimal("9999999999.9999"),
    places=4,
    allow_nan=False,
    allow_infinity=False,
)
currencies = st.sampled_from(("USD", "EUR", "JPY", "KWD", "GBP", "XTS"))


def half_even(numerator: Decimal, denominator: int, currency: str) -> Decimal | None:
    if denominator == 0:
        return None
    digits = CURRENCY_DIGITS.get(currency, DEFAULT_CURRENCY_DIGITS)
    return (numerator / Decimal(denominator)).quantize(
        Decimal(1).scaleb(-digits), rounding=ROUND_HALF_EVEN
    )


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(amounts, st.integers(-50, 5000), currencies),
        min_size=1,
        max_size=30,
    )
)
def test_money_ratio_is_exact_and_rounds_half_to_even_to_the_currencys_digits(cases):
    exact = [half_even(n, d, c) for n, d, c in cases]
    frame = pl.DataFrame(
        {
            "n": [n for n, _, _ in cases],
            "d": [d for _, d, _ in cases],
            "c": [c for _, _, c in cases],
        },
        schema={"n": pl.Decimal(18, 4), "d": pl.Int64, "c": pl.String},
    )
    with functions() as con:
        con.register("frame", frame)
        sql = con.sql("SELECT money_ratio(n, d, c) FROM frame").fetchall()
    assert [v for (v,) in sql] == exact


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), st.integers(-(10**9), 10**9)), st.integers(-5, 5))))
def test_safe_ratio_is_null_on_a_zero_or_null_denominator(pairs):
    frame = pl.DataFrame(
        {"n": [n for n, _ in pairs], "d": [d for _, d in pairs]},
        schema={"n": pl.Int64, "d": pl.Int64},
    )
    with functions() as con:
        con.register("frame", frame)
        sql = [v for (v,) in con.sql("SELECT safe_ratio(n, d) FROM frame").fetchall()]
    assert sql == [None if n is None or d == 0 else n / d for n, d in pairs]


def test_currency_digits_are_the_specs_table():
    with functions() as con:
        for code, digits in [*CURRENCY_DIGITS.items(), ("XTS", DEFAULT_CURRENCY_DIGITS)]:
            assert con.sql(f"SELECT currency_digits('{code}')").fetchall() == [(digits,)], code


def test_the_economics_statuses_are_the_specs():
    with functions() as con:
        named = con.sql("SELECT economics_available(), economics_pending(), economics_missing()")
        assert named.fetchall() == [ECONOMICS_STATUSES]


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
    with duckdb.connect() as con:
        con.register("frame", frame)
        sql = dict(con.sql("SELECT g, sum(v) FROM frame GROUP BY g").fetchall())
    for group in {g for g, _ in pairs}:
        values = [v for g, v in pairs if g == group and v is not None]
        assert sql[group] == (sum(values) if values else None)


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
    lake = Lake(home / "lake")
    lake.publish(CAMPAIGN_METRICS, frame, [day], [ACCOUNT])
    build_warehouse(home, lake, TABLES.values())
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
