"""The warehouse updated incrementally: a build reads from the lake only the days whose files
changed, and ends with exactly the warehouse a build from nothing would give."""

import shutil
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import duckdb
import polars as pl

from tests.warehouse.test_lake import CAMPAIGN_METRICS, D1, days, metrics
from tests.warehouse.test_marts import ACCOUNT, P1, P3, PA1, PA3, ad_day, seller_day, typed
from warehouse.build import PREVIOUS_FILE, WAREHOUSE_FILE, build_warehouse
from warehouse.lake import Lake
from warehouse.load import FILES_TABLE, RELOADS_TABLE
from warehouse.marts import PROJECT_TABLE
from warehouse.schemas import PRODUCT_AD_METRICS, SELLER_PRODUCT_METRICS, TABLES, Column, Kind


def contents(home: Path) -> dict[str, list[tuple]]:
    """Every table of the warehouse, its rows sorted (the load's bookkeeping aside)."""
    with duckdb.connect(str(home / WAREHOUSE_FILE), read_only=True) as con:
        names = [
            row[0]
            for row in con.sql(
                "SELECT table_name FROM duckdb_tables() WHERE NOT temporary ORDER BY 1"
            ).fetchall()
        ]
        return {
            name: sorted(con.sql(f'SELECT * FROM "{name}"').fetchall(), key=repr)
            for name in names
            if name not in (FILES_TABLE, RELOADS_TABLE)
        }


def read_days(built) -> dict[str, int]:
    return {t.table: t.days for t in built.loaded if t.days}


def from_nothing(lake: Lake, tmp_path: Path) -> dict[str, list[tuple]]:
    fresh = tmp_path / "fresh"
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir()
    build_warehouse(fresh, lake, TABLES.values())
    return contents(fresh)


def test_a_build_reads_only_the_days_that_changed_and_equals_a_build_from_nothing(tmp_path):
    home, lake = tmp_path / "home", Lake(tmp_path / "lake")
    home.mkdir()
    for account in ("a", "b"):
        lake.publish(CAMPAIGN_METRICS, metrics(account, days(20)), days(20), [account])
    first = build_warehouse(home, lake, TABLES.values())
    assert read_days(first) == {"campaign_metrics": 20}

    day3 = D1 + timedelta(2)
    lake.publish(CAMPAIGN_METRICS, metrics("a", [day3], clicks=9), [day3], ["a"])
    lake.tidy(["campaign_metrics"])
    second = build_warehouse(home, lake, TABLES.values())
    assert read_days(second) == {"campaign_metrics": 1}
    assert contents(home) == from_nothing(lake, tmp_path)

    # The build writes the generation before the current one: it reads that day again too.
    caught_up = build_warehouse(home, lake, TABLES.values())
    assert read_days(caught_up) == {"campaign_metrics": 1}
    unchanged = build_warehouse(home, lake, TABLES.values())
    assert read_days(unchanged) == {}
    with duckdb.connect(str(home / WAREHOUSE_FILE), read_only=True) as con:
        assert con.sql("SELECT sum(clicks) FROM campaign_metrics").fetchall() == [(20 * 4 + 16,)]
        recorded = con.sql(
            f"SELECT path, date FROM {FILES_TABLE} WHERE table_name = 'campaign_metrics'"
        ).fetchall()
    assert dict(recorded) == lake.snapshot("campaign_metrics").files and len(recorded) == 80


def test_days_a_compaction_or_another_writer_touched_are_read_again(tmp_path):
    home, lake = tmp_path / "home", Lake(tmp_path / "lake")
    home.mkdir()
    lake.publish(CAMPAIGN_METRICS, metrics("a", days(4)), days(4), ["a"])
    build_warehouse(home, lake, TABLES.values())
    lake.publish(CAMPAIGN_METRICS, metrics("b", days(2)), days(2), ["b"])  # another run
    assert read_days(build_warehouse(home, lake, TABLES.values())) == {"campaign_metrics": 2}
    lake.optimize("campaign_metrics")
    assert read_days(build_warehouse(home, lake, TABLES.values())) == {"campaign_metrics": 2}
    assert contents(home) == from_nothing(lake, tmp_path)


def test_a_column_the_service_adds_reloads_its_table_whole(tmp_path):
    home, lake = tmp_path / "home", Lake(tmp_path / "lake")
    home.mkdir()
    lake.publish(CAMPAIGN_METRICS, metrics("a", days(3)), days(3), ["a"])
    build_warehouse(home, lake, TABLES.values())
    evolved = CAMPAIGN_METRICS.extended((Column("video_views", Kind.COUNT, ("videoViews",)),))
    lake.conform(evolved)
    day = D1 + timedelta(3)
    newer = metrics("a", [day]).with_columns(video_views=pl.lit(5, pl.Int64))
    lake.publish(evolved, newer, [day], ["a"])
    tables = [evolved if t.name == evolved.name else t for t in TABLES.values()]
    built = build_warehouse(home, lake, tables)
    (loaded,) = [t for t in built.loaded if t.table == "campaign_metrics"]
    assert loaded.whole and loaded.days == 4
    with duckdb.connect(str(home / WAREHOUSE_FILE), read_only=True) as con:
        got = con.sql("SELECT count(*), sum(video_views) FROM campaign_metrics").fetchall()
    assert got == [(8, 10)]


def test_a_warehouse_without_a_file_list_is_read_again_whole(tmp_path):
    """A warehouse built before the lake kept versions has no `_lake_files`."""
    home, lake = tmp_path / "home", Lake(tmp_path / "lake")
    home.mkdir()
    lake.publish(CAMPAIGN_METRICS, metrics("a", days(3)), days(3), ["a"])
    build_warehouse(home, lake, TABLES.values())
    with duckdb.connect(str(home / WAREHOUSE_FILE)) as con:
        con.execute(f"DROP TABLE {FILES_TABLE}")
        con.execute("INSERT INTO campaign_metrics SELECT * FROM campaign_metrics")  # stale rows
    built = build_warehouse(home, lake, TABLES.values())
    assert read_days(built)["campaign_metrics"] == 3
    assert contents(home) == from_nothing(lake, tmp_path)


# ============================================== the incremental model the product marts read
def product_days(lake: Lake, on: list, clicks: int) -> None:
    """Seller and product-ad rows of two products on days `on`; `clicks` marks the publish."""
    seller = typed(
        SELLER_PRODUCT_METRICS,
        [seller_day(p, day, "available", sales=Decimal("5.00")) for p in (P1, P3) for day in on],
    )
    ads = typed(
        PRODUCT_AD_METRICS,
        [
            ad_day(pa, p, "SP", day, "0.50", clicks)
            for pa, p in ((PA1, P1), (PA3, P3))
            for day in on
        ],
    )
    lake.publish(SELLER_PRODUCT_METRICS, seller, on, [ACCOUNT])
    lake.publish(PRODUCT_AD_METRICS, ads, on, [ACCOUNT])


def product_clicks(home: Path) -> dict:
    """int_product_daily's ad clicks per day (all products)."""
    with duckdb.connect(str(home / WAREHOUSE_FILE)) as con:
        return dict(
            con.sql("SELECT date, sum(ad_clicks) FROM int_product_daily GROUP BY date").fetchall()
        )


def tamper(home: Path, day, sql: str = "") -> None:
    """Mark `day`'s rows of int_product_daily: a build that recomputes the day removes the mark.
    In both generations of the file: the next build writes the previous one."""
    for generation in (home / WAREHOUSE_FILE, home / PREVIOUS_FILE):
        if generation.exists():
            with duckdb.connect(str(generation)) as con:
                con.execute("UPDATE int_product_daily SET ad_clicks = -1 WHERE date = ?", [day])
                if sql:
                    con.execute(sql)


def test_the_product_model_recomputes_only_the_days_the_build_read_again(tmp_path):
    home, lake = tmp_path / "home", Lake(tmp_path / "lake")
    home.mkdir()
    d1, d2, d3 = days(3)
    product_days(lake, [d1, d2, d3], clicks=1)
    build_warehouse(home, lake, TABLES.values())
    assert product_clicks(home) == {d1: 2, d2: 2, d3: 2}

    tamper(home, d1)
    product_days(lake, [d2], clicks=7)  # a daily run replaced d2
    build_warehouse(home, lake, TABLES.values())
    assert product_clicks(home) == {d1: -2, d2: 14, d3: 2}  # d1 was not recomputed

    # d3 replaced by nothing: the day's rows go, though no new row names the day
    lake.publish(SELLER_PRODUCT_METRICS, typed(SELLER_PRODUCT_METRICS, []), [d3], [ACCOUNT])
    lake.publish(PRODUCT_AD_METRICS, typed(PRODUCT_AD_METRICS, []), [d3], [ACCOUNT])
    build_warehouse(home, lake, TABLES.values())
    assert product_clicks(home) == {d1: -2, d2: 14}

    # a table read again whole (here: no file list) recomputes every day
    tamper(home, d1, f"DELETE FROM {FILES_TABLE} WHERE table_name = 'product_ad_metrics'")
    build_warehouse(home, lake, TABLES.values())
    assert product_clicks(home) == {d1: 2, d2: 14}
    assert contents(home) == from_nothing(lake, tmp_path)


def test_a_warehouse_built_by_another_version_of_the_models_is_recomputed_whole(tmp_path):
    home, lake = tmp_path / "home", Lake(tmp_path / "lake")
    home.mkdir()
    d1, d2 = days(2)
    product_days(lake, [d1, d2], clicks=1)
    build_warehouse(home, lake, TABLES.values())
    tamper(home, d1, f"UPDATE {PROJECT_TABLE} SET digest = 'an older project'")
    build_warehouse(home, lake, TABLES.values())
    assert product_clicks(home) == {d1: 2, d2: 2}
    assert contents(home) == from_nothing(lake, tmp_path)
