"""The Delta lake: exact replacement by account and day, writers side by side, a writer killed
mid-commit, time travel, schema evolution, housekeeping and what plain Parquet readers see.

Everything runs against real Delta tables on disk, written by the real `Lake`, in real
processes where the promise is about processes."""

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import duckdb
import polars as pl
import pyarrow.dataset as pads
import pytest

from warehouse.lake import MARK_HOURS, WRITERS, Lake
from warehouse.schemas import TABLES, Column, Kind

CAMPAIGN_METRICS = TABLES["campaign_metrics"]
CAMPAIGNS = TABLES["campaigns"]
D1 = date(2026, 11, 1)
EXTRACTED = datetime(2026, 11, 23, 6, 0)


def days(n: int, first: date = D1) -> list[date]:
    return [first + timedelta(days=i) for i in range(n)]


def metrics(
    account: str, on: list[date], clicks: int = 1, currencies=("USD", "EUR")
) -> pl.DataFrame:
    """One campaign's rows per day and currency; `clicks` tells one publish from another."""
    rows = [
        {
            "account_id": account,
            "campaign": "c1",
            "date": day,
            "currency": currency,
            "ad_product": "SP",
            "clicks": clicks,
            "cost": Decimal("1.2345"),
            "_extracted_at": EXTRACTED,
        }
        for day in on
        for currency in currencies
    ]
    return pl.DataFrame(rows, schema=CAMPAIGN_METRICS.polars_schema)


def current(lake: Lake, table: str = "campaign_metrics") -> pl.DataFrame:
    return pl.from_arrow(lake.dataset(table).to_table()).sort("account_id", "date", "currency")


def plain(root: Path, table: str = "campaign_metrics") -> dict[str, int]:
    """Rows as the docs' plain Parquet readers see them, without the Delta log."""
    glob = f"{root}/{table}/date=*/**/*.parquet"
    return {
        "duckdb": duckdb.sql(
            f"SELECT count(*) FROM read_parquet('{glob}', hive_partitioning = true)"
        ).fetchall()[0][0],
        "polars": pl.scan_parquet(glob, hive_partitioning=True).select(pl.len()).collect().item(),
        "pyarrow": pads.dataset(root / table, format="parquet", partitioning="hive").count_rows(),
    }


def test_a_publish_replaces_exactly_its_accounts_and_days(tmp_path):
    lake = Lake(tmp_path)
    lake.publish(CAMPAIGN_METRICS, metrics("a", days(5)), days(5), ["a"])
    lake.publish(CAMPAIGN_METRICS, metrics("b", days(5)), days(5), ["b"])
    # a re-run of a's days 2-3, where day 3 now has no rows: a's day 3 is gone, b's stays
    lake.publish(
        CAMPAIGN_METRICS,
        metrics("a", days(1, D1 + timedelta(1)), 7),
        days(2, D1 + timedelta(1)),
        ["a"],
    )
    rows = current(lake)
    a = rows.filter(account_id="a").group_by("date").agg(pl.col("clicks").max()).sort("date")
    assert a.rows() == [
        (D1, 1),
        (D1 + timedelta(1), 7),
        (D1 + timedelta(3), 1),
        (D1 + timedelta(4), 1),
    ]
    assert rows.filter(account_id="b").height == 10 and set(
        rows.filter(account_id="b")["clicks"]
    ) == {1}
    assert rows["cost"].dtype == pl.Decimal(18, 4) and rows["cost"][0] == Decimal("1.2345")


def test_an_empty_window_removes_what_its_accounts_held(tmp_path):
    lake = Lake(tmp_path)
    lake.publish(CAMPAIGN_METRICS, metrics("a", days(3)), days(3), ["a"])
    lake.publish(CAMPAIGN_METRICS, metrics("a", []), days(2), ["a"])
    assert current(lake)["date"].unique().to_list() == [D1 + timedelta(2)]


def test_rows_outside_what_a_publish_covers_are_refused_and_nothing_changes(tmp_path):
    lake = Lake(tmp_path)
    lake.publish(CAMPAIGN_METRICS, metrics("a", days(2)), days(2), ["a"])
    with pytest.raises(Exception, match="failed validation"):
        lake.publish(CAMPAIGN_METRICS, metrics("b", days(2)), days(2), ["a"])
    assert current(lake).height == 4 and lake.table("campaign_metrics").version() == 0


def _writer(root: str, account: str, rounds: int) -> None:
    lake = Lake(root)
    for k in range(rounds):
        window = days(3, D1 + timedelta(k % 5))
        lake.publish(CAMPAIGN_METRICS, metrics(account, window, k), window, [account])


def run_writers(root: str, rounds: int, count: int = 3) -> None:
    """`count` processes at once, each publishing its own account `rounds` times."""
    context = multiprocessing.get_context("spawn")
    writers = [
        context.Process(target=_writer, args=(root, f"acct{i}", rounds)) for i in range(count)
    ]
    for w in writers:
        w.start()
    for w in writers:
        w.join(180)
        assert w.exitcode == 0


def test_writers_in_several_processes_publishing_other_accounts_all_land(tmp_path):
    run_writers(str(tmp_path), 12)
    rows = current(Lake(tmp_path))
    for i in range(3):
        mine = rows.filter(account_id=f"acct{i}")
        # the last round (11) wrote days 2..4 from D1+1; earlier rounds the days before
        assert (
            mine.height == 7 * 2
            and mine.filter(pl.col("date") >= D1 + timedelta(1))["clicks"].max() == 11
        )
    assert Lake(tmp_path).table("campaign_metrics").version() == 3 * 12 - 1


ALL_CURRENCIES = ("USD", "EUR", "GBP", "JPY")
KILLED_WRITER = """
import sys
from tests.warehouse.test_lake import ALL_CURRENCIES, CAMPAIGN_METRICS, Lake, days, metrics
lake = Lake(sys.argv[1])
k = 1
while True:
    lake.publish(CAMPAIGN_METRICS, metrics("a", days(30), k, ALL_CURRENCIES), days(30), ["a"])
    print(k, flush=True)
    k += 1
"""


def test_a_writer_killed_mid_commit_leaves_a_whole_version(tmp_path):
    lake = Lake(tmp_path)
    lake.publish(CAMPAIGN_METRICS, metrics("a", days(30), 0, ALL_CURRENCIES), days(30), ["a"])
    commits = set()
    for delay in (0.0, 0.03, 0.06, 0.09, 0.12, 0.15):
        writer = subprocess.Popen(
            [sys.executable, "-c", KILLED_WRITER, str(tmp_path)],
            cwd=Path(__file__).parents[2],
            stdout=subprocess.PIPE,
            text=True,
        )
        writer.stdout.readline()  # it has published once: the next publish is under way
        time.sleep(delay)
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        commits.add(lake.table("campaign_metrics").version())
        rows = current(lake)
        # one version's rows, whole: every partition, all from the same publish
        assert rows.height == 120 and rows["clicks"].n_unique() == 1, rows["clicks"].unique()
    assert len(commits) == 6  # every kill left a version behind it, whole
    # files the killed writers wrote and never committed are no version's; each writer left
    # its mark, so the next tidy looks for them and removes those over an hour old, and then
    # plain readers see only the current version
    marks = sorted((tmp_path / "campaign_metrics" / WRITERS).iterdir())
    assert marks
    age(tmp_path / "campaign_metrics", hours=2)
    lake.tidy(["campaign_metrics"])
    assert plain(tmp_path) == {"duckdb": 120, "polars": 120, "pyarrow": 120}
    # a writer that finishes leaves no mark; the killed writers' go once a day old
    lake.publish(CAMPAIGN_METRICS, metrics("a", days(30), 0, ALL_CURRENCIES), days(30), ["a"])
    assert sorted((tmp_path / "campaign_metrics" / WRITERS).iterdir()) == marks
    age(tmp_path / "campaign_metrics" / WRITERS, hours=MARK_HOURS + 1)
    lake.tidy(["campaign_metrics"])
    assert not list((tmp_path / "campaign_metrics" / WRITERS).iterdir())


def age(folder: Path, hours: int) -> None:
    """Every file under `folder` written `hours` ago."""
    then = time.time() - hours * 3600
    for path in folder.rglob("*"):
        if path.is_file():
            os.utime(path, (then, then))


def test_time_travel_reads_an_earlier_version_while_history_is_kept(tmp_path):
    lake = Lake(tmp_path, keep_hours=24)
    lake.publish(CAMPAIGN_METRICS, metrics("a", days(2), 1), days(2), ["a"])
    lake.publish(CAMPAIGN_METRICS, metrics("a", days(2), 2), days(2), ["a"])
    lake.tidy(["campaign_metrics"])
    old = pl.from_arrow(lake.dataset("campaign_metrics", version=0).to_table())
    assert set(old["clicks"]) == {1} and set(current(lake)["clicks"]) == {2}
    history = lake.history("campaign_metrics")
    assert [v.version for v in history] == [1, 0] and history[0].operation == "WRITE"
    assert "account_id = 'a'" in history[0].predicate and history[0].rows_written == 4
    # a plain reader sees both versions' files while history is kept: the docs say so
    assert plain(tmp_path)["duckdb"] == 8


def test_by_default_the_housekeeping_leaves_plain_readers_the_current_version(tmp_path):
    lake = Lake(tmp_path)  # keep_hours=0, the default
    for k in range(3):
        lake.publish(CAMPAIGN_METRICS, metrics("a", days(2), k), days(2), ["a"])
    assert plain(tmp_path)["duckdb"] == 12
    lake.tidy(["campaign_metrics"])
    assert plain(tmp_path) == {"duckdb": 4, "polars": 4, "pyarrow": 4}
    with pytest.raises(FileNotFoundError):
        lake.dataset("campaign_metrics", version=0).to_table()
    version = lake.table("campaign_metrics").version()
    lake.tidy(["campaign_metrics"])  # nothing left to remove: no new commit
    assert lake.table("campaign_metrics").version() == version


def test_plain_readers_stay_correct_after_a_checkpoint(tmp_path):
    """delta-rs writes a Parquet checkpoint into `_delta_log/` every 100 commits: the docs'
    glob (`date=*/**`) must not read it as data."""
    lake = Lake(tmp_path)
    for k in range(101):
        lake.publish(CAMPAIGN_METRICS, metrics("a", [D1], k, ("USD",)), [D1], ["a"])
    assert list((tmp_path / "campaign_metrics" / "_delta_log").glob("*.checkpoint.parquet"))
    lake.tidy(["campaign_metrics"])
    assert plain(tmp_path) == {"duckdb": 1, "polars": 1, "pyarrow": 1}


def test_a_column_the_service_adds_reaches_every_file_and_every_reader(tmp_path):
    lake = Lake(tmp_path)
    lake.publish(CAMPAIGN_METRICS, metrics("a", days(2)), days(2), ["a"])
    evolved = CAMPAIGN_METRICS.extended((Column("video_views", Kind.COUNT, ("videoViews",)),))
    assert lake.conform(evolved) == 4
    newer = metrics("a", [D1 + timedelta(2)]).with_columns(video_views=pl.lit(5, pl.Int64))
    lake.publish(evolved, newer, [D1 + timedelta(2)], ["a"])
    lake.tidy(["campaign_metrics"])
    rows = current(lake)
    assert rows["video_views"].to_list() == [None, None, None, None, 5, 5]
    for path in (tmp_path / "campaign_metrics").glob("date=*/*/*.parquet"):
        assert "video_views" in pl.read_parquet_schema(path)
    glob = f"{tmp_path}/campaign_metrics/date=*/**/*.parquet"
    got = duckdb.sql(
        f"SELECT sum(video_views) FROM read_parquet('{glob}', hive_partitioning = true)"
    ).fetchall()
    assert got == [(10,)]
    # widened later (BIGINT -> VARCHAR): the table is rewritten in the wider type
    widened = evolved.extended((Column("video_views", Kind.STRING, ("videoViews",)),))
    lake.conform(widened)
    assert current(lake)["video_views"].dtype == pl.String
    assert lake.conform(widened) == 0  # already in the schema: nothing rewritten


def test_a_column_sent_only_as_null_waits_for_its_first_value(tmp_path):
    lake = Lake(tmp_path)
    nulls = CAMPAIGN_METRICS.extended((Column("note", Kind.NULL, ("note",)),))
    frame = metrics("a", [D1]).with_columns(note=pl.lit(None, pl.Null))
    lake.publish(nulls, frame, [D1], ["a"])
    assert "note" not in current(lake).columns


def test_compaction_merges_each_partitions_files(tmp_path):
    lake = Lake(tmp_path)
    for account in ("a", "b", "c"):
        lake.publish(CAMPAIGN_METRICS, metrics(account, days(2)), days(2), [account])
    before = lake.file_stats("campaign_metrics")
    lake.optimize("campaign_metrics")
    lake.tidy(["campaign_metrics"])
    after = lake.file_stats("campaign_metrics")
    assert (before.files, after.files) == (12, 4) and after.median_bytes > before.median_bytes
    assert current(lake).height == 12 and plain(tmp_path)["duckdb"] == 12


def test_current_state_tables_keep_one_snapshot_a_day(tmp_path):
    lake = Lake(tmp_path)
    frame = pl.DataFrame(
        [{"account_id": "a", "id": "c1", "_extracted_at": EXTRACTED}],
        schema=CAMPAIGNS.polars_schema,
    ).with_columns(date=pl.lit(D1))
    lake.publish(CAMPAIGNS, frame, [D1], ["a"])
    lake.publish(
        CAMPAIGNS, frame.with_columns(date=pl.lit(D1 + timedelta(1))), [D1 + timedelta(1)], ["a"]
    )
    assert sorted(p.name for p in (tmp_path / "campaigns").glob("date=*")) == [
        "date=2026-11-01",
        "date=2026-11-02",
    ]
    assert lake.earliest_by_account("campaigns", "id = 'c1'", D1, ["a"]) == {"a": D1}


def test_a_lake_at_a_relative_path_is_written_and_tidied(tmp_path, monkeypatch):
    """`ADWH_HOME` is `data` by default: the lake is `data/lake`, a relative path, which the
    writers' marks and the vacuum must take as the folder it names."""
    monkeypatch.chdir(tmp_path)
    lake = Lake(Path("data") / "lake")
    for k in range(2):
        lake.publish(CAMPAIGN_METRICS, metrics("a", days(2), k), days(2), ["a"])
    assert lake.tidy(["campaign_metrics"]) == 4  # the first publish's files
    assert not list((tmp_path / "data" / "lake" / "campaign_metrics" / WRITERS).iterdir())
    assert plain(tmp_path / "data" / "lake") == {"duckdb": 4, "polars": 4, "pyarrow": 4}


def delta_readers() -> str:
    """The docs' Python example of the Delta readers, as written (docs/analysts.md)."""
    from tests import docs

    (example,) = [block for block in docs.blocks("python") if "pl.scan_delta(" in block]
    return example


@pytest.mark.parametrize("keep_hours", [24, 0])
def test_the_readmes_delta_readers_run_against_a_lake(tmp_path, monkeypatch, keep_hours):
    """The docs' Python example of the Delta readers, as written, in an `ADWH_HOME` that is
    not the default, on a lake that kept its history and on one whose replaced files the
    default housekeeping removed (a version given by number failed there: its files gone)."""
    lake = Lake(tmp_path / "elsewhere" / "lake", keep_hours=keep_hours)
    for k in range(5):
        lake.publish(CAMPAIGN_METRICS, metrics("a", days(2), k), days(2), ["a"])
    lake.tidy([CAMPAIGN_METRICS.name])  # what each build does after the runs
    monkeypatch.setenv("ADWH_HOME", str(tmp_path / "elsewhere"))
    namespace: dict = {}
    exec(delta_readers(), namespace)
    assert namespace["con"].sql("SELECT count(*) FROM campaign_metrics").fetchall() == [(4,)]


def test_a_read_of_some_accounts_opens_only_the_files_that_may_hold_them(tmp_path):
    """A run reads its own accounts back (reconciliation, the catch-up's pending days): the
    files of other accounts' commits are not opened (their `account_id` statistics exclude
    them), whatever the lake holds besides; nor are other days' partitions."""
    lake = Lake(tmp_path)
    for account in ("a", "b", "c"):
        lake.publish(CAMPAIGN_METRICS, metrics(account, days(3), 1), days(3), [account])
    for stray in (tmp_path / "campaign_metrics").glob("date=*/*/*.parquet"):
        if "b" in pl.read_parquet(stray)["account_id"].to_list():
            stray.unlink()  # a read of b's files would now fail: none happens
    rows = lake.scan("campaign_metrics", days=days(2), accounts=["a", "c"])
    assert rows.group_by("account_id").len().sort("account_id").collect().rows() == [
        ("a", 4),
        ("c", 4),
    ]
    assert lake.scan("campaign_metrics", since=days(3)[1], accounts=["c"]).collect().height == 4
    assert lake.earliest_by_account("campaign_metrics", "clicks = 1", D1, ["c"]) == {"c": D1}
    assert lake.earliest_by_account("campaign_metrics", "clicks = 1", D1, []) == {}


def test_pending_economics_are_looked_for_within_the_horizon_only(tmp_path):
    """An old pending day (economics never came, the runs stopped) must not hide a recent one,
    and the daily run reads only the horizon's partitions of the lake."""
    from pipelines.catch_up import PENDING, PENDING_HORIZON_DAYS, daily_starts

    schema = TABLES["seller_product_metrics"]
    today = date(2026, 11, 23)
    old, recent = today - timedelta(days=200), today - timedelta(days=10)
    frame = pl.DataFrame(
        [
            {"account_id": "a", "asin": "B0", "sku": "s", "connection": "c", "country": "US",
             "currency": "USD", "date": day, "economics_status": "pending",
             "_extracted_at": EXTRACTED}
            for day in (old, recent)
        ],
        schema=schema.polars_schema,
    )  # fmt: skip
    lake = Lake(tmp_path)
    lake.publish(schema, frame, [old, recent], ["a"])
    for stray in (tmp_path / schema.name).glob(f"date={old}/*/*.parquet"):
        stray.unlink()  # a read of the old partition would now fail: none happens
    horizon = today - timedelta(days=PENDING_HORIZON_DAYS)
    pending = lake.earliest_by_account(schema.name, PENDING, horizon, ["a"])
    assert pending == {"a": recent} and horizon > old
    covered = {("a", name): [(old, today - timedelta(days=1))] for name in TABLES}
    plan = daily_starts(covered, pending, ["a"], today, 3, old)
    assert plan.starts["seller_product_metrics"] == {"a": recent}
    assert plan.starts["campaign_metrics"] == {"a": today - timedelta(days=3)}
