"""The window spool: what goes in comes back, a slice of whole days at a time, and nothing is
left in staging; a window is published a slice at a time."""

from datetime import date, timedelta

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.destination import Destination
from pipelines.stages.outcome import TableOutcome
from pipelines.stages.publish import Covered, publish_dated
from tests.warehouse.test_lake import current, metrics
from tests.warehouse.test_lake import days as lake_days
from warehouse.schemas import CAMPAIGN_METRICS
from warehouse.spool import Spool

FIRST = date(2026, 10, 1)
ACCOUNT, CAMPAIGN = "a" * 24, "0123456789abcdef01234567"


def frame_of(days: list[date]) -> pl.DataFrame:
    """Rows of the campaign metrics schema, one per entry of `days` (other columns null)."""
    schema = CAMPAIGN_METRICS.polars_schema
    rows = pl.DataFrame({"date": days}, schema={"date": pl.Date})
    return rows.with_columns(
        [pl.lit(None, dtype).alias(name) for name, dtype in schema.items() if name != "date"]
    ).select(list(schema))


@settings(max_examples=30, deadline=None)
@given(
    per_day=st.lists(st.integers(0, 40), min_size=1, max_size=12),
    batch=st.integers(1, 50),
    slice_rows=st.integers(1, 60),
)
def test_slices_give_back_every_row_by_whole_days(tmp_path_factory, per_day, batch, slice_rows):
    staging = tmp_path_factory.mktemp("staging")
    days = [FIRST + timedelta(days=i) for i in range(len(per_day))]
    rows = [day for day, count in zip(days, per_day, strict=True) for _ in range(count)]
    spool = Spool(staging, CAMPAIGN_METRICS, slice_rows=slice_rows)
    for at in range(0, len(rows), batch):
        spool.append(frame_of(rows[at : at + batch]))

    seen_days: list[date] = []
    back = 0
    for slice_days, frame in spool.slices(days):
        assert set(frame["date"].to_list()) <= set(slice_days)  # whole days, no strays
        assert frame.height <= slice_rows or len(slice_days) == 1  # bounded unless one big day
        assert frame.schema == CAMPAIGN_METRICS.polars_schema
        seen_days += slice_days
        back += frame.height
    assert seen_days == days  # every day, rows or not, in order
    assert back == len(rows)
    assert spool.first_date_outside(days) is None
    spool.close()
    assert list(staging.iterdir()) == []


def test_a_row_outside_the_window_is_found_and_not_sliced(tmp_path):
    spool = Spool(tmp_path, CAMPAIGN_METRICS)
    window = [FIRST, FIRST + timedelta(days=1)]
    stray = FIRST + timedelta(days=40)
    spool.append(frame_of([FIRST, stray, window[1]]))
    assert spool.first_date_outside(window) == stray
    assert sum(frame.height for _, frame in spool.slices(window)) == 2


def test_a_window_is_published_a_slice_of_days_per_commit(tmp_path):
    """Delta's writer holds a commit's files in memory until it commits: a window goes to the
    lake a slice of whole days per commit, each day whole, a day held back left out."""
    dest = Destination(tmp_path)
    window = lake_days(6)
    published = [day for day in window if day != window[3]]  # the day of a bad value
    spool = Spool(dest.staging, CAMPAIGN_METRICS, slice_rows=4)  # two rows a day: two days
    spool.append(metrics(ACCOUNT, published).with_columns(campaign=pl.lit(CAMPAIGN)))
    outcome = TableOutcome("campaign_metrics")
    outcome.hold(window[3], "a bad value")
    publish_dated(dest, spool, Covered(window, [ACCOUNT]), outcome)
    assert current(dest.lake)["date"].unique().sort().to_list() == published
    assert dest.lake.table("campaign_metrics").version() == 2  # [0, 1], [2, 4], [5]
    assert (outcome.rows, outcome.partitions, outcome.files) == (10, 5, 10)
    assert outcome.rows_by_day == dict.fromkeys(published, 2)


@settings(max_examples=30, deadline=None)
@given(
    owners=st.lists(st.sampled_from("abc"), min_size=1, max_size=12), failed=st.sampled_from("abc")
)
def test_a_failed_accounts_batches_are_taken_out_and_the_others_kept(
    tmp_path_factory, owners, failed
):
    spool = Spool(tmp_path_factory.mktemp("staging"), CAMPAIGN_METRICS)
    for i, owner in enumerate(owners):
        batch = frame_of([FIRST + timedelta(days=i)]).with_columns(
            pl.lit(owner).alias("account_id")
        )
        spool.append(batch, owner)
    spool.discard(failed)
    kept = spool.frame()
    assert sorted(kept["account_id"].to_list()) == sorted(o for o in owners if o != failed)
    assert len(list(spool.folder.glob("*.parquet"))) == kept.height
    spool.close()
