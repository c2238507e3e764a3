"""The lake's record of complete days: spans merge exactly, runs over other accounts keep
theirs, and a lake written before the record existed is taken at its word once."""

from datetime import date, timedelta
from itertools import pairwise

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from warehouse.coverage import (
    first_uncovered,
    merged,
    read_coverage,
    record_coverage,
    seed_coverage,
    spans_of_days,
)
from warehouse.lake import Lake
from warehouse.schemas import TABLES

D0 = date(2026, 1, 1)
offsets = st.sets(st.integers(min_value=0, max_value=60), max_size=40)


def days_of(offsets: set[int]) -> set[date]:
    return {D0 + timedelta(days=n) for n in offsets}


def covered_days(spans: list[tuple[date, date]]) -> set[date]:
    return {a + timedelta(days=n) for a, b in spans for n in range((b - a).days + 1)}


@given(offsets, offsets)
def test_merged_spans_cover_exactly_the_days_given_apart_and_in_order(first, second):
    spans = merged([*spans_of_days(days_of(first)), *spans_of_days(days_of(second))])
    assert covered_days(spans) == days_of(first) | days_of(second)
    for (_, end), (start, _) in pairwise(spans):
        assert start > end + timedelta(days=1)  # apart: adjacent spans would have joined


@given(offsets, st.integers(0, 60), st.integers(0, 60))
def test_the_first_uncovered_day_is_the_first_day_missing(held, a, b):
    first, last = D0 + timedelta(days=min(a, b)), D0 + timedelta(days=max(a, b))
    missing = [
        day
        for day in (first + timedelta(days=n) for n in range((last - first).days + 1))
        if day not in days_of(held)
    ]
    found = first_uncovered(spans_of_days(days_of(held)), first, last)
    assert found == (missing[0] if missing else None)


def test_a_run_adds_to_its_accounts_spans_and_leaves_the_others(tmp_path):
    lake = Lake(tmp_path)
    week = (D0, D0 + timedelta(days=6))
    record_coverage(lake, {("a", "campaign_metrics"): [week], ("b", "campaign_metrics"): [week]})
    later = (D0 + timedelta(days=7), D0 + timedelta(days=9))
    record_coverage(lake, {("a", "campaign_metrics"): [later]})
    assert read_coverage(lake) == {
        ("a", "campaign_metrics"): [(D0, later[1])],
        ("b", "campaign_metrics"): [week],
    }
    assert read_coverage(lake, ["b"]) == {("b", "campaign_metrics"): [week]}


def test_a_lake_without_a_record_is_seeded_from_its_rows_once(tmp_path):
    schema = TABLES["campaign_metrics"]
    first, last = D0, D0 + timedelta(days=4)
    frame = pl.DataFrame(
        [
            {"account_id": "a", "campaign": "c" * 24, "currency": "USD", "date": day}
            for day in (first, last)
        ]
    )
    lake = Lake(tmp_path)
    lake.publish(schema, schema.conformed(frame.lazy()).collect(), [first, last], ["a"])
    campaigns = TABLES["campaigns"]  # current state: its dated snapshots are not days held
    snapshot = pl.DataFrame([{"account_id": "a", "id": "c" * 24}], schema=campaigns.polars_schema)
    lake.publish(campaigns, snapshot.with_columns(date=pl.lit(last)), [last], ["a"])
    seed_coverage(lake)
    assert read_coverage(lake) == {("a", "campaign_metrics"): [(first, last)]}
    later = last + timedelta(days=3)
    lake.publish(schema, schema.conformed(frame.lazy()).collect().head(0), [later], ["a"])
    lake.publish(
        schema,
        schema.conformed(frame.head(1).with_columns(date=pl.lit(later)).lazy()).collect(),
        [later],
        ["a"],
    )
    seed_coverage(lake)  # the record exists: rows published since are not taken as complete
    assert read_coverage(lake) == {("a", "campaign_metrics"): [(first, last)]}
