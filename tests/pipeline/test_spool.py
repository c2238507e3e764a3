"""The window spool: what goes in comes back, a slice of whole days at a time, and nothing is
left in staging."""

from datetime import date, timedelta

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from warehouse.schemas import CAMPAIGN_METRICS
from warehouse.spool import Spool

FIRST = date(2026, 10, 1)


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
