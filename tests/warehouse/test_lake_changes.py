"""What a build learns of a lake table it loaded before, through deltalake's public API: whether
a commit since replaced files (its history's metrics, so it vacuums only then), and the files
of the version now, compared with those it holds: the warehouse a build from nothing gives."""

import re
from pathlib import Path

import duckdb
import pyarrow as pa
from deltalake import DeltaTable
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import docs
from tests.warehouse.test_lake import CAMPAIGN_METRICS, days, metrics
from tests.warehouse.test_warehouse_load import contents, from_nothing
from warehouse.build import WAREHOUSE_FILE, build_warehouse
from warehouse.lake import CHECKPOINT_INTERVAL, Lake
from warehouse.load import VERSIONS_TABLE
from warehouse.schemas import TABLES

SPAN = days(6)


def files_at(lake: Lake, version: int) -> dict:
    """What delta-rs lists for `version`: each data file and its day."""
    table = DeltaTable(lake.uri(CAMPAIGN_METRICS.name), version=version)
    actions = pa.table(table.get_add_actions(flatten=True))
    return dict(
        zip(actions["path"].to_pylist(), actions["partition.date"].to_pylist(), strict=True)
    )


# Each publish replaces some days of some accounts (an account's days, a window's slice).
publishes = st.lists(
    st.tuples(
        st.sampled_from(["a", "b"]),
        st.lists(st.sampled_from(SPAN), min_size=1, max_size=3, unique=True),
    ),
    min_size=2,
    max_size=14,
)


@settings(max_examples=12, deadline=None)
@given(publishes, st.data())
def test_a_build_knows_whether_a_commit_since_its_version_replaced_files(
    tmp_path_factory, writes, data
):
    lake = Lake(tmp_path_factory.mktemp("lake"))
    for clicks, (account, on) in enumerate(writes):
        lake.publish(CAMPAIGN_METRICS, metrics(account, on, clicks), on, [account])
    newest = lake.snapshot(CAMPAIGN_METRICS.name)
    assert newest.files == files_at(lake, newest.version)
    since = data.draw(st.integers(0, newest.version))
    replaced = any(
        not files_at(lake, version - 1).keys() <= files_at(lake, version).keys()
        for version in range(since + 1, newest.version + 1)
    )
    assert lake.replaced_since(CAMPAIGN_METRICS.name, since) == replaced
    assert lake.replaced_since(CAMPAIGN_METRICS.name, None)  # a table new to the build
    lake.tidy([CAMPAIGN_METRICS.name])  # a vacuum's commits carry no count of files removed
    assert not lake.replaced_since(CAMPAIGN_METRICS.name, newest.version)


def test_builds_that_know_their_versions_equal_a_build_from_nothing(tmp_path):
    """Each build records the versions it holds; the next compares what changed after them (the
    previous generation's: two builds' worth), even when the log lost the oldest of them."""
    home, lake = tmp_path / "home", Lake(tmp_path / "lake")
    home.mkdir()
    lake.publish(CAMPAIGN_METRICS, metrics("a", SPAN, 1), SPAN, ["a"])
    for n, account in enumerate(["b", "a", "b"], start=2):
        build_warehouse(home, lake, TABLES.values(), tidy=True)
        lake.publish(CAMPAIGN_METRICS, metrics(account, SPAN[n:], n), SPAN[n:], [account])
    with duckdb.connect(str(home / WAREHOUSE_FILE), read_only=True) as con:
        held = dict(con.execute(f"SELECT * FROM {VERSIONS_TABLE}").fetchall())
    assert held[CAMPAIGN_METRICS.name] == lake.snapshot(CAMPAIGN_METRICS.name).version - 1
    build_warehouse(home, lake, TABLES.values(), tidy=True)
    assert contents(home) == from_nothing(lake, tmp_path)

    lake.publish(CAMPAIGN_METRICS, metrics("a", SPAN[:1], 9), SPAN[:1], ["a"])
    # the log's older commits cleaned up, as deltalake does after their retention (30 days)
    table = DeltaTable(lake.uri(CAMPAIGN_METRICS.name))
    table.alter.set_table_properties({"delta.logRetentionDuration": "interval 0 seconds"})
    table.update_incremental()
    table.create_checkpoint()
    table.cleanup_metadata()
    assert len(table.history(limit=table.version())) == 1
    build_warehouse(home, lake, TABLES.values(), tidy=True)  # its history ends: vacuumed
    assert contents(home) == from_nothing(lake, tmp_path)


def test_tables_checkpoint_often_and_old_tables_are_given_the_property(tmp_path):
    lake = Lake(tmp_path / "lake")
    lake.publish(CAMPAIGN_METRICS, metrics("a", SPAN, 1), SPAN, ["a"])
    table = DeltaTable(lake.uri(CAMPAIGN_METRICS.name))
    assert table.metadata().configuration["delta.checkpointInterval"] == CHECKPOINT_INTERVAL
    table.alter.set_table_properties({"delta.checkpointInterval": "100"})
    lake.tidy([CAMPAIGN_METRICS.name])  # what a build's vacuum does
    table = DeltaTable(lake.uri(CAMPAIGN_METRICS.name))
    assert table.metadata().configuration["delta.checkpointInterval"] == CHECKPOINT_INTERVAL


def test_past_a_checkpoint_the_readmes_glob_reads_the_rows_and_a_glob_of_the_folder_does_not(
    tmp_path,
):
    """docs/analysts.md, What a plain Parquet reader sees: the glob starts at the partitions,
    because `**/*.parquet` from the table's folder also matches the checkpoint Delta writes into
    `_delta_log/` every N commits: N as the docs say it, and past it the two globs as they say."""
    (said,) = re.findall(r"into `_delta_log/` every (\d+) commits", docs.text())
    assert said == CHECKPOINT_INTERVAL
    lake = Lake(tmp_path / "lake")
    for clicks in range(int(CHECKPOINT_INTERVAL) + 1):
        lake.publish(CAMPAIGN_METRICS, metrics("a", SPAN[:1], clicks), SPAN[:1], ["a"])
    lake.tidy([CAMPAIGN_METRICS.name])  # the vacuum after each build, the docs' default
    table = lake.uri(CAMPAIGN_METRICS.name)
    assert list(Path(table, "_delta_log").glob("*.checkpoint.parquet"))
    rows = len(metrics("a", SPAN[:1]))
    assert counted(f"'{table}/date=*/**/*.parquet', hive_partitioning = true") == rows
    assert counted(f"'{table}/**/*.parquet'") != rows  # an error, or the checkpoint's rows too


def counted(arguments: str) -> int | str:
    """`count(*)` of DuckDB's `read_parquet(arguments)`, or the error it gives."""
    try:
        return duckdb.sql(f"SELECT count(*) FROM read_parquet({arguments})").fetchall()[0][0]
    except duckdb.Error as error:
        return str(error)
