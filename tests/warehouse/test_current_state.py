"""Current state in the lake, read without picking a day: `lake/current/<table>/` holds each
account's newest snapshot, exactly the warehouse's rows, for Delta readers and plain Parquet
readers (DuckDB, Polars, PyArrow) alike; `lake/<table>/date=…/` keeps every snapshot.

The lake's rules run against real Delta tables written by the real `Lake`; the readers run
after two days of every current-state table extracted and built, in an `ADWH_HOME` that is not
`data`.
"""

from datetime import date, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pyarrow.dataset as pads
import pytest
from deltalake import DeltaTable

from tests import docs, library, prepared
from tests.conftest import preparing
from warehouse.build import WAREHOUSE_FILE, build_warehouse
from warehouse.lake import Lake, current_table
from warehouse.schemas import TABLES, Column, Kind, Layout

CAMPAIGNS = TABLES["campaigns"]
CURRENT_STATE = sorted(name for name, t in TABLES.items() if t.layout is Layout.SNAPSHOT)
D1, D2 = date(2026, 11, 21), date(2026, 11, 22)


def snapshot(day: date, ids_by_account: dict[str, list[str]]) -> pl.DataFrame:
    rows = [
        {"account_id": account, "id": id_, "_extracted_at": datetime(2026, 11, 23)}
        for account, ids in ids_by_account.items()
        for id_ in ids
    ]
    frame = pl.DataFrame(rows, schema=CAMPAIGNS.polars_schema)
    return frame.with_columns(date=pl.lit(day))


def take(lake: Lake, day: date, ids_by_account: dict[str, list[str]]) -> None:
    """What a run publishes for the accounts it extracted: the dated snapshot, then the
    current rows (`pipelines/stages/publish.py`)."""
    frame = snapshot(day, ids_by_account)
    lake.publish(CAMPAIGNS, frame, [day], list(ids_by_account))
    lake.publish_current(CAMPAIGNS, frame, day, list(ids_by_account))


def readers(root: Path) -> dict[str, set[tuple[str, str, date]]]:
    """(account, id, day) of every current row, as each reader the docs name sees it."""
    folder = root / current_table("campaigns")
    delta = pl.read_delta(str(folder))
    glob = f"{folder}/*.parquet"
    seen = {
        "delta": delta,
        "duckdb": duckdb.sql(f"SELECT * FROM read_parquet('{glob}')").pl(),
        "polars": pl.read_parquet(glob),
        "pyarrow": pl.from_arrow(pads.dataset(folder, format="parquet").to_table()),
    }
    return {
        name: set(rows.select("account_id", "id", "date").iter_rows())
        for name, rows in seen.items()
    }


def test_each_account_keeps_its_newest_snapshot_whatever_the_others_did(tmp_path):
    """An account fetched on day 2 has its day-2 rows (one deleted since day 1 is gone); an
    account not fetched on day 2 (its fetch failed, or another run's) keeps day 1's; an
    account whose day-2 snapshot is empty has none; a later rebuild of day 1 changes none."""
    lake = Lake(tmp_path)
    take(lake, D1, {"a": ["c1", "c2"], "b": ["c3"], "c": ["c4"]})
    take(lake, D2, {"a": ["c1"], "c": []})
    take(lake, D1, {"a": ["c1", "c2"], "b": ["c3"]})  # a rebuild of day 1
    lake.tidy(lake.every_table())
    expected = {("a", "c1", D2), ("b", "c3", D1)}
    assert readers(tmp_path) == dict.fromkeys(("delta", "duckdb", "polars", "pyarrow"), expected)
    history = pl.scan_parquet(f"{tmp_path}/campaigns/date=*/*.parquet", hive_partitioning=True)
    assert history.select(pl.len()).collect().item() == 4 + 1  # day 1's four rows, day 2's one


def test_a_lake_of_snapshots_only_is_given_its_current_rows_once(tmp_path):
    """A lake written before `current/` existed: its current rows are each account's newest
    snapshot, written once, then kept by the runs."""
    lake = Lake(tmp_path)
    for day, ids in ((D1, {"a": ["c1"], "b": ["c3"]}), (D2, {"a": ["c2"]})):
        lake.publish(CAMPAIGNS, snapshot(day, ids), [day], list(ids))
    lake.seed_current(CAMPAIGNS)
    assert readers(tmp_path)["delta"] == {("a", "c2", D2), ("b", "c3", D1)}
    version = DeltaTable(str(tmp_path / current_table("campaigns"))).version()
    lake.seed_current(CAMPAIGNS)
    assert DeltaTable(str(tmp_path / current_table("campaigns"))).version() == version


def test_a_column_the_service_adds_reaches_the_current_rows_too(tmp_path):
    lake = Lake(tmp_path)
    take(lake, D1, {"a": ["c1"]})
    evolved = CAMPAIGNS.extended((Column("color", Kind.STRING, ("color",)),))
    assert lake.conform(evolved) == 2  # a file of the snapshot and one of the current rows
    for name in ("campaigns", current_table("campaigns")):
        assert "color" in pl.read_delta(str(tmp_path / name)).columns, name


def run_two_days(home: Path) -> None:
    """Every current-state table extracted on two days by the library, each day built, into
    `home` (with the housekeeping a run's build does): what the daily runs of those tables
    write."""
    with preparing(home):
        for today in (D2, D2 + timedelta(days=1)):
            library.succeeded(library.extract(home, today, today, CURRENT_STATE, ADWH_TODAY=today))
            build_warehouse(home, library.lake(home), TABLES.values(), tidy=True)


@pytest.fixture(scope="module")
def two_days() -> Path:
    """A home elsewhere than `data`, after every current-state table was extracted and built
    on two days (made once per suite; read only)."""
    return prepared.shared("two-days", run_two_days, D2, folder_name="warehouse-home")


def test_after_two_days_every_reader_of_current_state_counts_as_the_warehouse(two_days):
    lake = two_days / "lake"
    with duckdb.connect(str(two_days / WAREHOUSE_FILE), read_only=True) as con:
        for table in CURRENT_STATE:
            held = con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
            folder = lake / current_table(table)
            counts = {
                "delta": pl.scan_delta(str(folder)).select(pl.len()).collect().item(),
                "duckdb": con.execute(
                    f"SELECT count(*) FROM read_parquet('{folder}/*.parquet')"
                ).fetchall()[0][0],
                "polars": pl.scan_parquet(f"{folder}/*.parquet").select(pl.len()).collect().item(),
                "pyarrow": pads.dataset(folder, format="parquet").count_rows(),
            }
            assert counts == dict.fromkeys(counts, held), table
            history = pl.scan_parquet(f"{lake}/{table}/date=*/*.parquet", hive_partitioning=True)
            days = history.group_by("date").len().collect()
            assert days["date"].to_list() and sorted(days["date"]) == [D2, D2 + timedelta(1)]
        mine = con.sql("SELECT * EXCLUDE (_extracted_at) FROM campaigns").pl()
    lakes = pl.read_delta(str(lake / current_table("campaigns"))).select(mine.columns)
    assert lakes.sort("account_id", "id").equals(mine.sort("account_id", "id"))


def test_the_readmes_current_state_example_runs_as_written(two_days, monkeypatch):
    """docs/analysts.md's example of the current rows and their history, as written."""
    (example,) = [block for block in docs.blocks("python") if "current/" in block]
    monkeypatch.setenv("ADWH_HOME", str(two_days))
    namespace: dict = {}
    exec(example, namespace)
    with duckdb.connect(str(two_days / WAREHOUSE_FILE), read_only=True) as con:
        held = con.execute("SELECT count(*) FROM campaigns").fetchall()[0][0]
    assert held > 0
    assert namespace["current"].height == namespace["same"].height == held
    assert len(namespace["plain"].fetchall()) == namespace["arrow"].num_rows == held
    assert namespace["history"].num_rows == 2 * held  # the same campaigns on both days
    assert namespace["days"].select(pl.col("date").n_unique()).collect().item() == 2
