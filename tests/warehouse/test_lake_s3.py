"""The lake on object storage: the same promises against a real S3-compatible server on
127.0.0.1 (moto's, over HTTP), credentials through the standard AWS environment variables."""

from datetime import timedelta

import duckdb
import polars as pl
import pytest

from launcher.cli import main
from tests.pipeline.test_pipeline import snapshot_of
from tests.warehouse.test_lake import CAMPAIGN_METRICS, D1, current, days, metrics, run_writers
from warehouse.lake import Lake
from warehouse.raw import RawStore
from warehouse.schemas import Column, Kind

ONE_OF_EACH_LAYOUT = "campaign_metrics,advertising_changes,campaigns"


def test_publish_replace_tidy_and_time_travel_on_s3(s3_lake):
    lake = Lake(s3_lake, keep_hours=24)
    lake.publish(CAMPAIGN_METRICS, metrics("a", days(3), 1), days(3), ["a"])
    lake.publish(CAMPAIGN_METRICS, metrics("b", days(3), 1), days(3), ["b"])
    lake.publish(CAMPAIGN_METRICS, metrics("a", days(2), 2), days(3), ["a"])
    lake.tidy(["campaign_metrics"])
    rows = current(lake)
    assert rows.filter(account_id="a")["clicks"].to_list() == [2, 2, 2, 2]
    assert rows.filter(account_id="b").height == 6
    assert pl.from_arrow(lake.dataset("campaign_metrics", version=0).to_table()).height == 6
    assert [v.version for v in lake.history("campaign_metrics")] == [2, 1, 0]
    assert lake.earliest_by_account("campaign_metrics", "clicks = 2", D1, ["a"]) == {"a": D1}
    assert lake.tables() == ["campaign_metrics"]


def test_writers_in_several_processes_all_land_on_s3(s3_lake):
    run_writers(s3_lake, 6)
    rows = current(Lake(s3_lake))
    assert sorted(rows["account_id"].unique()) == ["acct0", "acct1", "acct2"]
    # round k wrote the 3 days from D1 + k % 5: the last (5) wrote D1.., round 4 wrote D1 + 6
    for i in range(3):
        mine = rows.filter(account_id=f"acct{i}")
        assert mine.height == 7 * 2 and mine.filter(date=D1)["clicks"].item(0) == 5
        assert mine.filter(date=D1 + timedelta(6))["clicks"].item(0) == 4
    assert Lake(s3_lake).table("campaign_metrics").version() == 3 * 6 - 1


def test_a_column_the_service_adds_is_merged_on_s3(s3_lake):
    lake = Lake(s3_lake)
    lake.publish(CAMPAIGN_METRICS, metrics("a", days(2)), days(2), ["a"])
    evolved = CAMPAIGN_METRICS.extended((Column("video_views", Kind.COUNT, ("videoViews",)),))
    lake.conform(evolved)
    day = D1 + timedelta(2)
    lake.publish(evolved, metrics("a", [day]).with_columns(video_views=pl.lit(3)), [day], ["a"])
    assert current(lake)["video_views"].to_list() == [None] * 4 + [3, 3]


@pytest.mark.timeout(600)  # S3 through moto, in another process: each commit many requests
@pytest.mark.slow(seconds=80)
def test_a_run_with_its_lake_and_raw_pages_on_s3_builds_and_rebuilds_from_them(
    home, embedded, s3_lake, monkeypatch
):
    """What only a whole run proves: a run's pages and tables land on S3 and none locally,
    and the warehouse is built, and rebuilt, from there. One day and one table of each layout
    (daily facts, a dated log, current state) are enough: every source writes through the same
    lake and raw store, whose S3 behaviour (replace, time travel, concurrent writers) is tested
    above, and each commit to moto's server costs a second or more."""
    raw_url = s3_lake.removesuffix("/lake") + "/raw"
    monkeypatch.setenv("ADWH_LAKE_URL", s3_lake)
    monkeypatch.setenv("ADWH_RAW_URL", raw_url)
    dates = ["--start", "2026-11-20", "--end", "2026-11-20"]
    assert main(["run", *dates, "--tables", ONE_OF_EACH_LAYOUT]) == 0
    assert not (home / "lake").exists() and not (home / "raw").exists()
    lake = Lake(s3_lake)
    in_lake = lake.dataset("campaign_metrics").count_rows()
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        assert con.sql("SELECT count(*) FROM campaign_metrics").fetchall() == [(in_lake,)]
        assert con.sql("SELECT count(*) FROM mart_account_daily").fetchall()[0][0] > 0
    assert in_lake > 0 and lake.tables() == sorted(ONE_OF_EACH_LAYOUT.split(","))
    assert main(["history", "campaign_metrics"]) == 0
    # the raw pages on S3 rebuild the same warehouse without a request
    assert len(RawStore(raw_url).fetches("campaign_metrics")) == 1
    before = snapshot_of(home)
    embedded.requests.clear()
    assert main(["rebuild", *dates]) == 0
    assert embedded.requests == [] and snapshot_of(home) == before
