"""A table's commits read from its Delta log say exactly what opening the table would: the files
of any version, from those of an earlier one; and a build that knows its tables by their commits
gives the warehouse a build from nothing gives."""

from pathlib import Path

import duckdb
import pyarrow as pa
from deltalake import DeltaTable
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.warehouse.test_lake import CAMPAIGN_METRICS, days, metrics
from tests.warehouse.test_warehouse_load import contents, from_nothing
from warehouse.build import WAREHOUSE_FILE, build_warehouse
from warehouse.delta_log import LOG
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
def test_the_commits_after_a_version_give_every_later_version(tmp_path_factory, writes, data):
    lake = Lake(tmp_path_factory.mktemp("lake"))
    for clicks, (account, on) in enumerate(writes):
        lake.publish(CAMPAIGN_METRICS, metrics(account, on, clicks), on, [account])
    newest = lake.snapshot(CAMPAIGN_METRICS.name).version
    since = data.draw(st.integers(0, newest))
    commits = lake.commits_since(CAMPAIGN_METRICS.name, since)
    assert commits.version == newest
    assert commits.applied(files_at(lake, since)) == files_at(lake, newest)
    replaced = any(
        not files_at(lake, version - 1).keys() <= files_at(lake, version).keys()
        for version in range(since + 1, newest + 1)
    )
    assert commits.removes == replaced


def test_a_log_that_no_longer_holds_a_commit_gives_nothing(tmp_path):
    lake = Lake(tmp_path / "lake")
    for n in range(3):
        lake.publish(CAMPAIGN_METRICS, metrics("a", SPAN[:2], n), SPAN[:2], ["a"])
    log = Path(lake.uri(CAMPAIGN_METRICS.name)) / LOG
    assert lake.commits_since(CAMPAIGN_METRICS.name, 0) is not None
    (log / f"{1:020d}.json").unlink()  # cleaned up after a checkpoint
    assert lake.commits_since(CAMPAIGN_METRICS.name, 0) is None
    assert lake.commits_since(CAMPAIGN_METRICS.name, 1).version == 2
    assert lake.commits_since(CAMPAIGN_METRICS.name, 7) is None  # the table was written anew
    assert lake.commits_since("vendor_product_metrics", 0) is None  # no table


def test_builds_that_read_commits_equal_a_build_from_nothing(tmp_path):
    """Each build records the versions it holds; the next reads the commits after them (the
    previous generation's: two builds' worth), even when the log lost the oldest of them."""
    home, lake = tmp_path / "home", Lake(tmp_path / "lake")
    home.mkdir()
    lake.publish(CAMPAIGN_METRICS, metrics("a", SPAN, 1), SPAN, ["a"])
    for n, account in enumerate(["b", "a", "b"], start=2):
        build_warehouse(home, lake, TABLES.values(), vacuum=True)
        lake.publish(CAMPAIGN_METRICS, metrics(account, SPAN[n:], n), SPAN[n:], [account])
    with duckdb.connect(str(home / WAREHOUSE_FILE), read_only=True) as con:
        held = dict(con.execute(f"SELECT * FROM {VERSIONS_TABLE}").fetchall())
    assert held[CAMPAIGN_METRICS.name] == lake.snapshot(CAMPAIGN_METRICS.name).version - 1
    build_warehouse(home, lake, TABLES.values(), vacuum=True)
    assert contents(home) == from_nothing(lake, tmp_path)

    lake.publish(CAMPAIGN_METRICS, metrics("a", SPAN[:1], 9), SPAN[:1], ["a"])
    table = DeltaTable(lake.uri(CAMPAIGN_METRICS.name))
    table.create_checkpoint()  # and the log's older commits cleaned up, as after 30 days
    for commit in (Path(lake.uri(CAMPAIGN_METRICS.name)) / LOG).glob("*.json"):
        if int(commit.stem) < table.version():
            commit.unlink()
    build_warehouse(home, lake, TABLES.values(), vacuum=True)  # opens the table whole
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
