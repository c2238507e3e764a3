"""The slice end to end: `adwh run` on the sandbox, checked against the sandbox's own answers."""

import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import duckdb
import polars as pl
import pyarrow.dataset as ds
import pytest

from pipelines.cli import main
from tests.conftest import direct

START, END = "2026-10-01", "2026-10-31"


def warehouse(home: Path) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(home / "warehouse.duckdb"), read_only=True)


def figures(home: Path) -> list[tuple]:
    with warehouse(home) as con:
        return con.sql(
            "SELECT date, currency, ad_product, count(*), sum(cost), sum(sales), sum(clicks), "
            "count(new_to_brand_sales), count(cpc) FROM campaign_metrics GROUP BY ALL ORDER BY ALL"
        ).fetchall()


@pytest.fixture
def ran(home: Path, embedded) -> Path:
    assert main(["run", "--start", START, "--end", END]) == 0
    return home


def describe(con: duckdb.DuckDBPyConnection, sql: str) -> dict[str, str]:
    return {row[0]: row[1] for row in con.sql(f"DESCRIBE {sql}").fetchall()}


def test_run_fills_the_lake_and_the_warehouse(ran: Path, embedded):
    files = list((ran / "lake" / "campaign_metrics").glob("date=*/currency=*/*.parquet"))
    assert files and all(f.parent.name.removeprefix("currency=").isupper() for f in files)
    assert {f.parent.parent.name for f in files} <= {f"date=2026-10-{d:02d}" for d in range(1, 32)}
    assert list((ran / "lake" / "campaigns").glob("date=2026-11-23/*.parquet"))
    with warehouse(ran) as con:
        types = describe(con, "campaign_metrics")
        assert types["cost"].startswith("DECIMAL") and types["date"] == "DATE"
        count = con.sql("SELECT count(*) FROM campaigns").fetchall()[0][0]
        assert count == len(embedded.main_account.campaigns)
    assert (ran / "raw" / "campaign_metrics").is_dir()


def test_warehouse_matches_the_sandbox_totals_per_campaign(ran: Path, embedded):
    expected: dict[str, tuple[Decimal, Decimal, int]] = {}
    offset = 0
    while True:
        page = direct(
            embedded,
            "/v1/campaign-metrics",
            start_date=START,
            end_date=END,
            granularity="total",
            limit=1000,
            offset=offset,
        ).json()
        for row in page["data"]:
            expected[row["campaign"]] = (Decimal(row["cost"]), Decimal(row["sales"]), row["clicks"])
        if not page["has_more"]:
            break
        offset += len(page["data"])
    with warehouse(ran) as con:
        got = {
            campaign: (cost, sales, clicks)
            for campaign, cost, sales, clicks in con.sql(
                "SELECT campaign, sum(cost), sum(sales), sum(clicks) FROM campaign_metrics "
                "GROUP BY campaign"
            ).fetchall()
        }
    assert got == expected


def test_null_and_zero_survive_every_layer(ran: Path):
    with warehouse(ran) as con:
        sp_ntb = con.sql(
            "SELECT count(*), count(new_to_brand_sales) FROM campaign_metrics "
            "WHERE ad_product = 'SP'"
        ).fetchall()[0]
        zero_clicks = con.sql(
            "SELECT count(*), count(cpc), count(ctr) FROM campaign_metrics "
            "WHERE clicks = 0 AND impressions > 0"
        ).fetchall()[0]
        zero_cost = con.sql("SELECT count(*) FROM campaign_metrics WHERE cost = 0").fetchall()[0]
    assert sp_ntb[0] > 0 and sp_ntb[1] == 0  # SP: not reported, never 0
    assert zero_clicks[0] > 0 and zero_clicks[1] == 0 and zero_clicks[2] == zero_clicks[0]
    assert zero_cost[0] > 0  # a real zero stays a zero
    lake = pl.scan_parquet(
        str(ran / "lake" / "campaign_metrics" / "**" / "*.parquet"), hive_partitioning=True
    ).collect()
    assert (
        lake.filter(pl.col("ad_product") == "SP")["new_to_brand_sales"].null_count()
        == lake.filter(pl.col("ad_product") == "SP").height
    )


def test_lake_reads_as_one_dataset_in_three_engines_and_agrees(ran: Path):
    root = ran / "lake" / "campaign_metrics"
    with warehouse(ran) as con:
        table_sum = con.sql("SELECT count(*), sum(cost) FROM campaign_metrics").fetchall()[0]
        lake_sum = con.sql(
            f"SELECT count(*), sum(cost) FROM read_parquet('{root}/**/*.parquet', "
            "hive_partitioning=true)"
        ).fetchall()[0]
        lake_types = describe(
            con, f"SELECT * FROM read_parquet('{root}/**/*.parquet', hive_partitioning=true)"
        )
    assert lake_sum == table_sum
    assert lake_types["date"] == "DATE" and lake_types["cost"].startswith("DECIMAL")
    frame = pl.scan_parquet(str(root / "**" / "*.parquet"), hive_partitioning=True).collect()
    assert frame.height == table_sum[0] and frame["cost"].sum() == table_sum[1]
    dataset = ds.dataset(str(root), format="parquet", partitioning="hive")
    assert dataset.count_rows() == table_sum[0]
    assert str(dataset.schema.field("cost").type).startswith("decimal128")


def test_running_again_gives_the_same_rows_and_sums(ran: Path):
    before = figures(ran)
    files_before = sorted(p.relative_to(ran) for p in (ran / "lake").rglob("*.parquet"))
    assert main(["run", "--start", START, "--end", END]) == 0
    assert figures(ran) == before
    assert sorted(p.relative_to(ran) for p in (ran / "lake").rglob("*.parquet")) == files_before


def test_a_narrower_rerun_replaces_exactly_its_partitions(ran: Path):
    before = {row[0]: row for row in figures(ran)}
    assert main(["run", "--start", "2026-10-10", "--end", "2026-10-12"]) == 0
    after = {row[0]: row for row in figures(ran)}
    assert after == before
    with warehouse(ran) as con:
        dates = con.sql("SELECT min(date), max(date) FROM campaign_metrics").fetchall()[0]
    assert str(dates[0]) == START and str(dates[1]) == END


def test_run_sends_nothing_but_get(ran: Path, embedded):
    assert embedded.requests and {r.method for r in embedded.requests} == {"GET"}


def test_rebuild_from_raw_is_identical_and_sends_no_request(ran: Path, embedded):
    before = figures(ran)
    with warehouse(ran) as con:
        campaigns_before = con.sql("SELECT * FROM campaigns ORDER BY id").fetchall()
    shutil.rmtree(ran / "lake")
    (ran / "warehouse.duckdb").unlink()
    embedded.requests.clear()
    assert main(["rebuild", "--start", START, "--end", "2026-11-23"]) == 0
    assert embedded.requests == []
    assert figures(ran) == before
    with warehouse(ran) as con:
        assert con.sql("SELECT * FROM campaigns ORDER BY id").fetchall() == campaigns_before


HOLDER = """
import sys, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
print(con.sql("SELECT count(*) FROM campaign_metrics").fetchall()[0][0], flush=True)
sys.stdin.readline()
print(con.sql("SELECT count(*) FROM campaign_metrics").fetchall()[0][0], flush=True)
"""


def test_an_analyst_holding_the_warehouse_open_does_not_block_the_run(ran: Path):
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(ran / "warehouse.duckdb")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        seen = int(holder.stdout.readline())
        assert main(["run", "--start", "2026-10-01", "--end", "2026-10-03"]) == 0
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert int(holder.stdout.readline()) == seen  # the old file, still whole
    finally:
        holder.kill()
        holder.wait()
    with warehouse(ran) as con:
        assert con.sql("SELECT count(*) FROM campaign_metrics").fetchall()[0][0] == seen
