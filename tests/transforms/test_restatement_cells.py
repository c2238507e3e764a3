"""What a replace changes (transforms/restatements.py): exactly the cells that differ, each
once, with the kinds that tell a correction from a first arrival of economics."""

from datetime import date, datetime, timedelta
from decimal import Decimal

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from transforms.restatements import compared_columns, restatements
from warehouse.schemas import CAMPAIGN_METRICS, RESTATEMENTS, SELLER_PRODUCT_METRICS

BEFORE = datetime(2026, 11, 22, 6, 0)
AFTER = datetime(2026, 11, 23, 6, 0)
DAYS = [date(2026, 11, 20) + timedelta(days=n) for n in range(3)]
money = st.none() | st.decimals(min_value=0, max_value=10**6, places=2, allow_nan=False)
counts = st.none() | st.integers(0, 10**6)
# (campaign, day, currency): the rows' natural key (account and ad product fixed)
keys = st.tuples(st.sampled_from(["c1", "c2", "c3"]), st.sampled_from(DAYS), st.just("USD"))
measures = st.fixed_dictionaries(
    {"clicks": counts, "orders": counts, "cost": money, "sales": money}
)
day_rows = st.dictionaries(keys, measures, max_size=9)


def campaign_frame(rows: dict[tuple, dict], fetched: datetime) -> pl.DataFrame:
    """The rows in campaign_metrics' columns, as the lake holds them."""
    records = [
        {
            "account_id": "a1",
            "campaign": campaign,
            "ad_product": "SP",
            "date": day,
            "currency": currency,
            "_extracted_at": fetched,
            **values,
        }
        for (campaign, day, currency), values in rows.items()
    ]
    frame = pl.DataFrame(records, schema_overrides=None) if records else pl.DataFrame()
    return CAMPAIGN_METRICS.conformed(frame.lazy()).collect()


def as_cells(frame: pl.DataFrame) -> dict[tuple, str]:
    """Every reported cell of the compared columns, as exact text, by (row key, column)."""
    cells = {}
    for row in frame.iter_rows(named=True):
        for name in compared_columns(CAMPAIGN_METRICS):
            if row[name] is not None:
                key = (row["campaign"], row["date"], row["currency"])
                cells[key, name] = str(pl.Series([row[name]], dtype=frame[name].dtype).cast(str)[0])
    return cells


@settings(max_examples=60, deadline=None)
@given(day_rows, day_rows)
def test_applying_the_restatements_to_the_old_rows_gives_the_new_ones(old, new):
    before, after = campaign_frame(old, BEFORE), campaign_frame(new, AFTER)
    found = restatements(CAMPAIGN_METRICS, before, after, "run-2")
    cells = as_cells(before)
    for row in found.iter_rows(named=True):
        key = (pl.Series([row["row_key"]]).str.json_decode()[0]["campaign"], row["date"], "USD")
        assert cells.get((key, row["column_name"])) == row["value_before"]
        if row["value_after"] is None:
            del cells[key, row["column_name"]]
        else:
            cells[key, row["column_name"]] = row["value_after"]
    assert cells == as_cells(after)
    # each cell once, every change in RESTATEMENTS' columns and run
    assert found.columns == RESTATEMENTS.column_names
    assert found.select("row_key", "date", "column_name").is_unique().all()
    assert set(found["run_id"]) <= {"run-2"}


@settings(max_examples=60, deadline=None)
@given(day_rows, day_rows)
def test_the_kind_of_each_cell_says_whether_its_row_came_went_or_changed(old, new):
    found = restatements(
        CAMPAIGN_METRICS, campaign_frame(old, BEFORE), campaign_frame(new, AFTER), "r"
    )
    for row in found.iter_rows(named=True):
        key = (pl.Series([row["row_key"]]).str.json_decode()[0]["campaign"], row["date"], "USD")
        expected = (
            "appeared" if key not in old else "disappeared" if key not in new else "correction"
        )
        assert row["kind"] == expected
        assert row["before_extracted_at"] == (None if key not in old else BEFORE)
        assert row["_extracted_at"] == AFTER or (
            key not in new and row["_extracted_at"] in (AFTER, None)
        )


@given(day_rows)
def test_a_fetch_that_says_the_same_again_records_nothing(rows):
    before = campaign_frame(rows, BEFORE)
    again = campaign_frame(rows, AFTER)  # fetched later, the same figures
    assert restatements(CAMPAIGN_METRICS, before, again, "r").is_empty()


def test_a_money_value_keeps_its_digits():
    key = ("c1", DAYS[0], "USD")
    old = {key: {"clicks": 3, "orders": 1, "cost": Decimal("1.10"), "sales": Decimal("10400")}}
    new = {key: {**old[key], "sales": Decimal("11250.40")}}
    found = restatements(
        CAMPAIGN_METRICS, campaign_frame(old, BEFORE), campaign_frame(new, AFTER), "r"
    )
    (row,) = found.iter_rows(named=True)
    assert (row["column_name"], row["kind"]) == ("sales", "correction")
    assert Decimal(row["value_after"]) - Decimal(row["value_before"]) == Decimal("850.40")
    assert row["row_key"] == '{"campaign":"c1","ad_product":"SP"}'


def test_economics_first_reported_are_an_arrival_and_the_status_is_not_compared():
    common = {
        "account_id": "a1",
        "asin": "B0",
        "sku": "S",
        "connection": "k",
        "country": "DE",
        "currency": "EUR",
        "date": DAYS[0],
        "sales": Decimal("20.00"),
    }
    before = SELLER_PRODUCT_METRICS.conformed(
        pl.DataFrame([{**common, "economics_status": "pending", "_extracted_at": BEFORE}]).lazy()
    ).collect()
    after = SELLER_PRODUCT_METRICS.conformed(
        pl.DataFrame(
            [
                {
                    **common,
                    "sales": Decimal("21.00"),
                    "net_sales": Decimal("17.50"),
                    "economics_status": "available",
                    "_extracted_at": AFTER,
                }
            ]
        ).lazy()
    ).collect()
    found = restatements(SELLER_PRODUCT_METRICS, before, after, "r")
    assert sorted(found.select("column_name", "kind").rows()) == [
        ("net_sales", "arrival"),
        ("sales", "correction"),
    ]


def test_a_day_whose_rows_all_went_is_dated_by_the_replacing_fetch():
    key = ("c1", DAYS[0], "USD")
    old = {key: {"clicks": 3, "orders": None, "cost": None, "sales": None}}
    found = restatements(
        CAMPAIGN_METRICS, campaign_frame(old, BEFORE), campaign_frame({}, AFTER), "r", AFTER
    )
    assert found.select(
        "column_name", "kind", "value_before", "value_after", "_extracted_at"
    ).rows() == [("clicks", "disappeared", "3", None, AFTER)]


@given(st.lists(st.sampled_from(["S1", None]), min_size=1, max_size=2, unique=True))
def test_a_row_whose_key_holds_a_null_is_the_same_row_in_both_fetches(skus):
    """A seller product without a sku keys its rows with a null: fetched again unchanged, it
    restates nothing; its sales moved, one correction, not a row gone and one come."""
    rows = [
        {
            "account_id": "a1",
            "asin": "B0",
            "sku": sku,
            "connection": "k",
            "country": "DE",
            "currency": "EUR",
            "date": DAYS[0],
            "sales": Decimal("20.00"),
        }
        for sku in skus
    ]

    def fetched(at: datetime, sales: Decimal) -> pl.DataFrame:
        frame = pl.DataFrame([{**row, "sales": sales, "_extracted_at": at} for row in rows])
        return SELLER_PRODUCT_METRICS.conformed(frame.lazy()).collect()

    same = restatements(
        SELLER_PRODUCT_METRICS, fetched(BEFORE, Decimal(20)), fetched(AFTER, Decimal(20)), "r"
    )
    assert same.is_empty()
    moved = restatements(
        SELLER_PRODUCT_METRICS, fetched(BEFORE, Decimal(20)), fetched(AFTER, Decimal(21)), "r"
    )
    assert moved.select("column_name", "kind").rows() == [("sales", "correction")] * len(skus)
