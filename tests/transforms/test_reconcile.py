"""The comparison behind the reconciliation checks: exact, null-aware, naming what differs."""

from datetime import date, timedelta
from decimal import Decimal

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from transforms.reconcile import ABSENT, differences, reported_sums

KEYS = ["account_id", "date", "currency"]
MEASURES = ["cost", "clicks"]
SCHEMA = {
    "account_id": pl.String,
    "date": pl.Date,
    "currency": pl.String,
    "cost": pl.Decimal(18, 2),
    "clicks": pl.Int64,
}
money = st.decimals(min_value=-(10**9), max_value=10**9, places=2, allow_nan=False)
groups = st.lists(
    st.tuples(
        st.sampled_from(["a1", "a2"]),
        st.integers(0, 6).map(lambda n: date(2026, 11, 1) + timedelta(days=n)),
        st.sampled_from(["USD", "JPY", "EUR"]),
        st.none() | money,
        st.none() | st.integers(0, 10**12),
    ),
    min_size=1,
    max_size=30,
    unique_by=lambda g: g[:3],
)


def frame(rows: list[tuple]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=SCHEMA, orient="row")


@given(groups)
def test_a_frame_has_no_difference_with_itself(rows):
    assert differences(frame(rows), frame(rows), KEYS, MEASURES).is_empty()


@given(groups, st.data())
def test_one_changed_figure_is_the_one_difference_named(rows, data):
    reported = [i for i, row in enumerate(rows) if row[3] is not None]
    if not reported:
        return
    at = data.draw(st.sampled_from(reported))
    delta = data.draw(st.sampled_from([Decimal("0.01"), Decimal("-0.01"), Decimal("1000")]))
    changed = list(rows)
    changed[at] = (*rows[at][:3], rows[at][3] + delta, rows[at][4])
    found = differences(frame(changed), frame(rows), KEYS, MEASURES)
    ((*grain, measure, lake, service),) = found.rows()
    assert (*grain, measure) == (*rows[at][:3], "cost")
    assert (Decimal(lake), Decimal(service)) == (changed[at][3], rows[at][3])


def test_a_group_one_side_lacks_lists_its_reported_figures():
    held = frame([("a1", date(2026, 11, 1), "USD", Decimal("1.00"), None)])
    told = frame([])
    assert differences(held, told, KEYS, MEASURES).to_dicts() == [
        {
            "account_id": "a1",
            "date": date(2026, 11, 1),
            "currency": "USD",
            "measure": "cost",
            "lake": "1.00",
            "service": ABSENT,
        }
    ]


def test_a_figure_one_side_does_not_report_is_not_compared():
    held = frame([("a1", date(2026, 11, 1), "USD", None, 3)])
    told = frame([("a1", date(2026, 11, 1), "USD", Decimal("5.00"), 3)])
    assert differences(held, told, KEYS, MEASURES).is_empty()


def test_sums_keep_null_apart_from_zero():
    rows = frame(
        [
            ("a1", date(2026, 11, 1), "USD", None, 0),
            ("a1", date(2026, 11, 1), "JPY", Decimal("0.00"), None),
        ]
    ).vstack(frame([("a1", date(2026, 11, 1), "USD", None, 2)]))
    sums = reported_sums(rows.lazy(), ["currency"], MEASURES).collect().sort("currency")
    assert sums.rows() == [("JPY", Decimal("0.00"), None), ("USD", None, 2)]
