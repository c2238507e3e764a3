"""`adwh history` and `adwh lake …` on a lake a real run wrote, and the one-command migration
of a Hive Parquet lake as earlier versions wrote it."""

import shutil
from datetime import date
from pathlib import Path

import duckdb
import polars as pl
import pytest

from launcher.cli import main
from tests.conftest import copy_of_a_run
from tests.pipeline.test_pipeline import snapshot_of
from warehouse.build import build_warehouse
from warehouse.lake import Lake
from warehouse.schemas import TABLES

START, END = date(2026, 11, 18), date(2026, 11, 20)
RANGE = ["--start", START.isoformat(), "--end", END.isoformat()]


@pytest.fixture
def ran(home, embedded) -> Path:
    return copy_of_a_run(home, ["run", *RANGE])


def test_history_lists_each_version_with_what_it_replaced(ran, capsys, monkeypatch):
    monkeypatch.setenv("ADWH_LAKE_KEEP_HOURS", "24")
    assert main(["run", *RANGE, "--tables", "campaign_metrics"]) == 0
    capsys.readouterr()
    assert main(["history", "campaign_metrics"]) == 0
    out = capsys.readouterr().out
    assert out.count("WRITE") == 2 and "account_id = '" in out and "2026-11-20" in out
    # 80 columns when not a terminal: each predicate wrapped under its version, never cut
    assert max(map(len, out.splitlines())) <= 80
    lines = out.splitlines()
    (first,) = [i for i, line in enumerate(lines) if line.lstrip().startswith("where ")]
    indent = len(lines[first]) - len(lines[first].lstrip())
    wrapped = [lines[first]]
    for line in lines[first + 1 :]:
        if len(line) - len(line.lstrip()) <= indent:
            break
        wrapped.append(line)
    predicate = " ".join(line.strip() for line in wrapped)
    assert len(wrapped) > 1 and predicate.endswith("'2026-11-20'::date)"), wrapped
    # the first version is kept (ADWH_LAKE_KEEP_HOURS): it reads back as it was
    target = ran / "v0.parquet"
    assert (
        main(["lake", "export", "campaign_metrics", "--version", "0", "--output", str(target)]) == 0
    )
    with duckdb.connect(str(ran / "warehouse.duckdb"), read_only=True) as con:
        rows = con.sql("SELECT count(*) FROM campaign_metrics").fetchall()[0][0]
    assert pl.read_parquet(target).height == rows


def test_a_vacuumed_version_and_an_unknown_table_are_refused_in_one_line(ran, capsys):
    assert main(["run", *RANGE, "--tables", "campaign_metrics"]) == 0  # vacuums version 0
    capsys.readouterr()
    argv = ["lake", "export", "campaign_metrics", "--version", "0", "--output", "x.parquet"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "its files were vacuumed" in err and len(err.splitlines()) == 1
    assert main(["history", "no_such_table"]) == 2
    assert "unknown tables: no_such_table" in capsys.readouterr().err


def test_optimize_then_vacuum_leaves_one_file_per_partition(ran, capsys, monkeypatch):
    # a second account's run writes its own file into each partition
    lake = Lake(ran / "lake")
    frame = pl.from_arrow(lake.dataset("campaign_metrics").to_table())
    other = frame.with_columns(account_id=pl.lit("other"))
    days = other["date"].unique().to_list()
    lake.publish(TABLES["campaign_metrics"], other, days, ["other"])
    partitions = frame.select("date", "currency").n_unique()
    assert lake.file_stats("campaign_metrics").files == 2 * partitions
    assert main(["lake", "optimize", "campaign_metrics"]) == 0
    assert f"{2 * partitions} files" in capsys.readouterr().out
    assert main(["lake", "vacuum"]) == 0
    assert lake.file_stats("campaign_metrics").files == partitions
    files = list((ran / "lake" / "campaign_metrics").glob("date=*/*/*.parquet"))
    assert (
        len(files) == partitions
        and lake.dataset("campaign_metrics").count_rows() == 2 * frame.height
    )


def hive_copy(lake: Lake, target: Path) -> None:
    """The lake as earlier versions wrote it: Hive folders, keys only in folder names, no log
    (their writer, Polars' partitioned sink, with the same options)."""
    for name in lake.tables():
        schema = TABLES[name]
        rows = pl.from_arrow(lake.dataset(name).to_table())
        rows.with_columns(pl.col("date").cast(pl.String)).lazy().sink_parquet(
            pl.PartitionBy(target / name, key=list(schema.lake_partitions), include_key=False),
            mkdir=True,
        )


def test_a_hive_lake_migrates_with_one_command_and_gives_the_same_warehouse(ran, capsys):
    before = snapshot_of(ran)
    hive_copy(Lake(ran / "lake"), ran / "hive")
    shutil.rmtree(ran / "lake")
    (ran / "hive").rename(ran / "lake")
    (ran / "warehouse.duckdb").unlink()
    assert main(["lake", "migrate"]) == 0
    out = capsys.readouterr().out
    assert f"{len(list((ran / 'hive-lake-backup').iterdir()))} tables migrated" in out
    assert (ran / "lake" / "campaign_metrics" / "_delta_log").is_dir()
    build_warehouse(ran, Lake(ran / "lake"), TABLES.values())
    assert snapshot_of(ran) == before
    assert main(["lake", "migrate"]) == 0  # nothing left in the old layout
    assert "0 tables migrated" in capsys.readouterr().out
    # and runs go on over the migrated tables: a dated one and a current-state one
    assert main(["run", *RANGE, "--tables", "campaign_metrics,campaigns"]) == 0
    assert snapshot_of(ran) == before


def test_the_housekeeping_asset_compacts_and_vacuums_every_table(ran):
    import dagster as dg

    from assets.housekeeping import lake_housekeeping
    from assets.resources import WarehouseResource

    lake = Lake(ran / "lake")
    frame = pl.from_arrow(lake.dataset("target_metrics").to_table())
    other = frame.with_columns(account_id=pl.lit("other"))
    lake.publish(TABLES["target_metrics"], other, other["date"].unique().to_list(), ["other"])
    partitions = frame.select("date", "currency").n_unique()
    result = dg.materialize(
        [lake_housekeeping], resources={"warehouse": WarehouseResource(home=str(ran))}
    )
    assert result.success
    (event,) = result.asset_materializations_for_node("lake_housekeeping")
    files = event.metadata["files"].value
    assert f"| target_metrics | {2 * partitions} |" in files
    assert lake.file_stats("target_metrics").files == partitions
    assert len(list((ran / "lake" / "target_metrics").glob("date=*/*/*.parquet"))) == partitions
