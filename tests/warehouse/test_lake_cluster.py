"""The lake's layout after a build: the partitions the runs crowded with their files are
clustered by account (a few files a day, each a narrow range of ids), with the same rows, so
that a later run's replace rewrites only the files of its own accounts."""

import itertools

import polars as pl
import pyarrow as pa

from tests.warehouse.test_current_state import D1, readers, take
from tests.warehouse.test_lake import CAMPAIGN_METRICS, CAMPAIGNS, days, metrics
from tests.warehouse.test_warehouse_load import contents, from_nothing
from warehouse import lake as lake_module
from warehouse.build import build_warehouse
from warehouse.lake import CROWDED_FILES, Lake, current_table
from warehouse.load import VERSIONS_TABLE
from warehouse.schemas import TABLES

NAME = CAMPAIGN_METRICS.name
SPAN = days(3)
ACCOUNTS = [f"acct-{n:03d}" for n in range(CROWDED_FILES + 8)]


def files_of(lake: Lake) -> pl.DataFrame:
    """Each data file of the table now: its day, currency and range of account ids."""
    actions = pl.from_arrow(pa.table(lake.table(NAME).get_add_actions(flatten=True)))
    return actions.select(
        pl.col("path"),
        pl.col("partition.date").alias("day"),
        pl.col("partition.currency").alias("currency"),
        pl.col("min.account_id").alias("first"),
        pl.col("max.account_id").alias("last"),
    )


def rows_of(lake: Lake) -> list[tuple]:
    return sorted(lake.scan(NAME).collect().rows(), key=repr)


def without_versions(tables: dict[str, list[tuple]]) -> dict[str, list[tuple]]:
    """A warehouse's tables but the lake versions it loaded (clustering is a commit)."""
    return {name: rows for name, rows in tables.items() if name != VERSIONS_TABLE}


def campaigns(account: str, on: list, n: int, clicks: int = 1) -> pl.DataFrame:
    """`n` campaigns' rows of `account` on days `on`: enough rows for a partition to be cut."""
    one = metrics(account, on, clicks, currencies=("USD",)).drop("campaign")
    return one.join(pl.DataFrame({"campaign": [f"c{k}" for k in range(n)]}), how="cross")


def test_a_build_clusters_the_days_runs_crowded_and_keeps_their_rows(tmp_path):
    """One run per account, as packs of a backfill write: each day then holds a file per run.
    A build that tends the lake leaves a crowded day in one file (its data is small), a day of
    few files as it was, the same rows, and the warehouse a build of the crowded lake makes
    (which leaves its layout); a second build has nothing to cluster."""
    home, lake = tmp_path / "home", Lake(tmp_path / "lake")
    home.mkdir()
    for clicks, account in enumerate(ACCOUNTS):
        lake.publish(CAMPAIGN_METRICS, metrics(account, SPAN[:2], clicks), SPAN[:2], [account])
    lake.publish(CAMPAIGN_METRICS, metrics("acct-000", SPAN[2:], 7), SPAN[2:], ["acct-000"])
    before = rows_of(lake)
    crowded = files_of(lake)
    assert crowded.group_by("day", "currency").len()["len"].max() == len(ACCOUNTS)
    expected = from_nothing(lake, tmp_path)  # a build that does not tend the lake
    assert files_of(lake).equals(crowded)

    built = build_warehouse(home, lake, TABLES.values(), tidy=True)

    per_partition = dict(files_of(lake).group_by("day").len().iter_rows())
    assert per_partition == {SPAN[0]: 2, SPAN[1]: 2, SPAN[2]: 2}  # a file per currency
    assert built.tended.clustered == 2 * 2 * len(ACCOUNTS)
    assert built.tended.vacuumed >= built.tended.clustered  # nothing left on disk for globs
    folder = tmp_path / "lake" / NAME
    on_disk = {path.relative_to(folder).as_posix() for path in folder.glob("date=*/**/*.parquet")}
    assert on_disk == set(files_of(lake)["path"])
    assert rows_of(lake) == before
    assert without_versions(contents(home)) == without_versions(expected)

    again = build_warehouse(home, lake, TABLES.values(), tidy=True)
    assert again.tended.clustered == 0
    assert not any(table.days for table in again.loaded)


def test_a_clustered_day_is_cut_by_account_and_a_pack_rewrites_only_its_own_files(
    tmp_path, monkeypatch
):
    """With the smallest file allowed lowered, a crowded day is cut in several files whose
    ranges of ids follow each other (an account's rows may straddle two); a later replace of
    two neighbouring accounts rewrites the one or two files that hold them, not the day."""
    monkeypatch.setattr(lake_module, "CLUSTER_MIN_BYTES", 1)
    lake = Lake(tmp_path / "lake")
    day = SPAN[:1]
    for account in ACCOUNTS:
        lake.publish(CAMPAIGN_METRICS, campaigns(account, day, 1_000), day, [account])
    before = rows_of(lake)

    assert lake.cluster(NAME) == len(ACCOUNTS)

    files = files_of(lake).sort("first")
    assert 2 <= files.height <= 2 * lake_module.CLUSTERS_PER_PARTITION
    ranges = list(zip(files["first"], files["last"], strict=True))
    assert all(last <= first for (_, last), (first, _) in itertools.pairwise(ranges))
    assert rows_of(lake) == before
    assert lake.cluster(NAME) == 0

    pack = ACCOUNTS[5:7]
    lake.publish(CAMPAIGN_METRICS, campaigns(pack[0], day, 1_000, 2), day, pack)
    replace = lake.history(NAME, limit=1)[0]
    assert 1 <= replace.files_removed <= 2 < files.height


def test_current_rows_crowded_by_runs_are_clustered_and_every_reader_sees_the_same(tmp_path):
    """Each run replaces its accounts' current rows (`current/`, no partitions) with a file of
    its own; clustered and vacuumed, they are one file that each reader the docs name
    reads as it read the runs' files."""
    lake = Lake(tmp_path / "lake")
    for account in ACCOUNTS:
        take(lake, D1, {account: ["c1", "c2"]})
    current = current_table(CAMPAIGNS.name)
    before = readers(tmp_path / "lake")

    assert lake.cluster(current) == len(ACCOUNTS)
    lake.tidy([current])

    assert len(lake.table(current).file_uris()) == 1
    assert readers(tmp_path / "lake") == before
