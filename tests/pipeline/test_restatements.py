"""Restatements, as the library records them when a run replaces days it had published
(pipelines/stages/publish.py): against the sandbox revising recent days between two reference
dates, `restatements` holds exactly the difference of the two fetches, cell by cell."""

import shutil
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import duckdb
import polars as pl
import pytest

from assets.marts import TABLES as WAREHOUSE_TABLES
from tests.conftest import TODAY
from tests.library import extract, lake, rebuild
from transforms.restatements import compared_columns
from warehouse.build import build_warehouse
from warehouse.schemas import TABLES

TABLES_RESTATED = ("campaign_metrics", "seller_product_metrics")
FIRST, LAST = TODAY - timedelta(days=6), TODAY - timedelta(days=1)
TOMORROW = TODAY + timedelta(days=1)


def held(home: Path, table: str) -> pl.DataFrame:
    return lake(home).scan(table).collect()


def cells(frame: pl.DataFrame, table: str) -> dict[tuple, object]:
    """Every reported cell of the compared columns, by (account, day, currency, key, column)."""
    schema = TABLES[table]
    row_key = [n for n in schema.natural_key if n not in ("account_id", "date", "currency")]
    found = {}
    for row in frame.iter_rows(named=True):
        key = (row["account_id"], row["date"], row["currency"], tuple(row[n] for n in row_key))
        for name in compared_columns(schema):
            if row[name] is not None:
                found[(*key, name)] = row[name]
    return found


def typed(text: str | None, kind: pl.DataType) -> object:
    """A restatement's text as its column's value."""
    if text is None:
        return None
    if isinstance(kind, pl.Decimal):
        return Decimal(text)
    return pl.Series([text]).cast(kind)[0]


def reported_sum(column: str) -> pl.Expr:
    """A sum as SQL's: NULL when no row reported the column."""
    return pl.when(pl.col(column).is_not_null().any()).then(pl.col(column).sum())


@pytest.fixture
def two_fetches(home: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict, dict]:
    """The same six days fetched on TODAY, then again on TOMORROW while the service restates
    its three most recent days: each table's rows after each fetch."""
    monkeypatch.setenv("ADWH_SANDBOX_RESTATE_DAYS", "3")
    extract(home, FIRST, LAST, TABLES_RESTATED, run_id="first")
    before = {table: held(home, table) for table in TABLES_RESTATED}
    extract(home, FIRST, LAST, TABLES_RESTATED, run_id="second", ADWH_TODAY=TOMORROW.isoformat())
    after = {table: held(home, table) for table in TABLES_RESTATED}
    return home, before, after


def test_restatements_hold_exactly_the_difference_of_the_two_fetches(two_fetches):
    home, before, after = two_fetches
    recorded = held(home, "restatements")
    assert set(recorded["run_id"]) == {"second"}  # the first fetch of a day records nothing
    for table in TABLES_RESTATED:
        schema = TABLES[table].polars_schema
        old, new = cells(before[table], table), cells(after[table], table)
        rows = recorded.filter(pl.col("table_name") == table)
        assert rows.height > 0, f"{table}: nothing restated"
        replayed = dict(old)
        for row in rows.iter_rows(named=True):
            key = pl.Series([row["row_key"]]).str.json_decode()[0]
            cell = (row["account_id"], row["date"], row["currency"], tuple(key.values()))
            where = (*cell, row["column_name"])
            kind = schema[row["column_name"]]
            assert old.get(where) == typed(row["value_before"], kind), where
            assert new.get(where) == typed(row["value_after"], kind), where
            if row["value_after"] is None:
                del replayed[where]
            else:
                replayed[where] = typed(row["value_after"], kind)
        assert replayed == new, f"{table}: a changed cell is missing from restatements"


def test_a_correction_is_told_from_a_first_arrival_of_economics(two_fetches):
    home, _, _ = two_fetches
    recorded = held(home, "restatements")
    kinds = dict(
        recorded.group_by("table_name", "kind")
        .len()
        .select(pl.concat_str("table_name", "kind", separator=" "), "len")
        .rows()
    )
    # attribution moved sales on both tables; the economics of TOMORROW - 3 arrived
    assert kinds.get("campaign_metrics correction", 0) > 0
    assert kinds.get("seller_product_metrics correction", 0) > 0
    assert kinds.get("seller_product_metrics arrival", 0) > 0
    # the service revised figures: no row came or went (a null in a key is the same row)
    assert set(recorded["kind"]) == {"correction", "arrival"}
    arrived = recorded.filter(pl.col("kind") == "arrival")
    assert set(arrived["date"]) == {TOMORROW - timedelta(days=3)}
    assert arrived["value_before"].is_null().all()
    moved = recorded.filter(pl.col("kind") == "correction")
    assert set(moved["date"]) <= {TODAY - timedelta(days=n) for n in (1, 2, 3)}
    assert (moved["before_extracted_at"] < moved["_extracted_at"]).all()


def test_fetching_the_same_answers_again_records_nothing(home: Path):
    extract(home, FIRST, LAST, ("campaign_metrics",), run_id="first")
    extract(home, FIRST, LAST, ("campaign_metrics",), run_id="again")
    assert lake(home).scan("restatements") is None


def test_the_marts_money_is_the_difference_of_the_sums_before_and_after(two_fetches):
    home, before, after = two_fetches
    build_warehouse(home, lake(home), WAREHOUSE_TABLES)
    grain = ["account_id", "currency", "date"]
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        mart = pl.from_arrow(con.sql("SELECT * FROM mart_restatements").arrow())
    for table, columns in (
        ("campaign_metrics", {"spend": "cost", "sales": "sales"}),
        ("seller_product_metrics", {"sales": "sales", "net_sales": "net_sales"}),
    ):
        sums = {
            side: frame.group_by(grain).agg(reported_sum(c).alias(n) for n, c in columns.items())
            for side, frame in (("before", before[table]), ("after", after[table]))
        }
        moved = sums["after"].join(sums["before"], on=grain, suffix="_before")
        rows = mart.filter(pl.col("table_name") == table).join(moved, on=grain, how="left")
        assert rows.height > 0
        for name in columns:
            change = rows.select(
                pl.col(f"{name}_change").fill_null(0),
                (pl.col(name).fill_null(0) - pl.col(f"{name}_before").fill_null(0)).alias("diff"),
                pl.col(f"{name}_now"),
                pl.col(name),
            )
            assert change[f"{name}_change"].to_list() == change["diff"].to_list(), (table, name)
            assert change[f"{name}_now"].to_list() == change[name].to_list(), (table, name)
        # a day the mart does not list kept its sums
        unmoved = moved.join(rows.select(grain), on=grain, how="anti")
        for name in columns:
            assert unmoved[name].eq_missing(unmoved[f"{name}_before"]).all(), (table, name)


def test_a_rebuild_from_the_raw_pages_gives_the_same_restatements_as_the_runs(two_fetches):
    """The raw pages keep each fetch of a window (fetched twice here, the same window), so a
    rebuild replays what each said: the lake's record, lost, comes back cell for cell."""
    home, _, _ = two_fetches
    recorded = held(home, "restatements")
    shutil.rmtree(home / "lake" / "restatements")
    rebuild(home, FIRST, LAST, TABLES_RESTATED)
    replayed = held(home, "restatements")
    assert replayed.height == recorded.height > 0
    assert sorted(replayed.rows(), key=repr) == sorted(
        recorded.select(replayed.columns).rows(), key=repr
    )
    rebuild(home, FIRST, LAST, TABLES_RESTATED)  # again: the same, not twice
    assert held(home, "restatements").height == recorded.height
