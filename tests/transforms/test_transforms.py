"""Transforms keep the service's meaning: exact money, null vs zero, economics lag, pseudonyms."""

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import orjson
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from transforms.meaning import economics_status, pseudonym, pseudonymize_text, safe_ratio
from transforms.records import RecordError, records_to_frame
from warehouse.schemas import CAMPAIGN_METRICS
from warehouse.spec import ECONOMICS_FIELDS

NOW = datetime(2026, 11, 23, tzinfo=UTC)
CAMPAIGN = "0123456789abcdef01234567"


def row(**overrides) -> dict:
    base = {
        "campaign": CAMPAIGN,
        "date": "2026-10-01",
        "currency": "USD",
        "ad_product": "SP",
        "impressions": 10,
        "clicks": 1,
        "orders": 0,
        "units": 0,
        "cost": "0.50",
        "sales": "0.00",
    }
    return base | overrides


def frame(*rows: dict) -> pl.DataFrame:
    return records_to_frame(
        list(rows), CAMPAIGN_METRICS, account_id="a" * 24, extracted_at=NOW, where="test"
    )


money = st.decimals(
    min_value=Decimal("-99999999999999.9999"),
    max_value=Decimal("99999999999999.9999"),
    places=4,
    allow_nan=False,
    allow_infinity=False,
)


@given(st.lists(st.one_of(st.none(), money), min_size=1, max_size=20))
def test_decimal_strings_land_exactly_and_null_stays_null(values):
    rows = [row(cost=None if v is None else format(v, "f")) for v in values]
    got = frame(*rows)["cost"].to_list()
    assert got == values


OPTIONAL = [c.source[0] for c in CAMPAIGN_METRICS.columns if c.source and not c.required]


@given(
    st.lists(
        st.tuples(st.sets(st.sampled_from(OPTIONAL)), st.integers(0, 2**53), money),
        min_size=1,
        max_size=20,
    )
)
def test_a_field_a_record_leaves_out_reads_as_null_like_one_sent_as_null(rows):
    """Records that hold every field are read in one pass; a batch where some record leaves a
    field out is read field by field. Both give the same frame."""
    sent = [row(clicks=clicks, cost=format(cost, "f")) for _, clicks, cost in rows]
    gone = [fields for fields, _, _ in rows]
    as_null = [record | dict.fromkeys(g) for g, record in zip(gone, sent, strict=True)]
    left_out = [
        {k: v for k, v in record.items() if k not in g}
        for g, record in zip(gone, sent, strict=True)
    ]
    assert frame(*left_out).equals(frame(*as_null))
    assert frame(*sent)["clicks"].to_list() == [clicks for _, clicks, _ in rows]


@given(st.lists(st.one_of(st.none(), st.integers(0, 2**53)), min_size=1, max_size=20))
def test_counts_keep_null_apart_from_zero(values):
    got = frame(*[row(impressions=v) for v in values])["impressions"].to_list()
    assert got == values


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("cost", "1.23456", "at most 4 fractional digits"),
        ("cost", "1,000.00", "not an exact decimal"),
        ("cost", True, "expected a decimal string or number"),
        ("clicks", True, "expected count"),
        ("clicks", 7.5, "expected count"),
        ("clicks", "seven", "expected count"),
        ("campaign", 12, "expected id"),
        ("date", "2026-02-30", "not a valid date"),
        ("campaign", None, "required field missing"),
    ],
)
def test_bad_values_are_named_not_coerced(field, value, problem):
    with pytest.raises(RecordError) as raised:
        frame(row(**{field: value}))
    message = str(raised.value)
    assert f"campaign_metrics.{field}" in message and problem in message and "test" in message


def test_a_jpy_amount_has_no_fraction_and_stays_whole():
    got = frame(row(currency="JPY", cost="1234"))
    assert got["cost"].to_list() == [Decimal("1234")]


@given(
    st.lists(
        st.tuples(st.integers(0, 10), st.one_of(st.none(), st.sampled_from(ECONOMICS_FIELDS))),
        min_size=1,
        max_size=30,
    )
)
def test_economics_status_follows_the_72_hour_rule(days_and_reported):
    """Any one field of the block reported makes the day's economics available."""
    reference = date(2026, 11, 23)
    rows = pl.DataFrame(
        {
            "date": [reference - timedelta(days=d) for d, _ in days_and_reported],
            **{
                name: pl.Series([1 if got == name else None for _, got in days_and_reported])
                for name in ECONOMICS_FIELDS
            },
        }
    )
    status = economics_status(rows, reference)["economics_status"].to_list()
    for (age, reported), got in zip(days_and_reported, status, strict=True):
        expected = "available" if reported else ("pending" if age < 3 else "missing")
        assert got == expected


@pytest.mark.parametrize("absent", ECONOMICS_FIELDS)
def test_a_field_of_the_economics_block_missing_from_the_frame_is_an_error(absent):
    reference = date(2026, 11, 23)
    rows = pl.DataFrame({"date": [reference], **{n: [None] for n in ECONOMICS_FIELDS}})
    with pytest.raises(KeyError, match=absent):
        economics_status(rows.drop(absent), reference)


@given(st.emails(), st.binary(min_size=16, max_size=32), st.binary(min_size=16, max_size=32))
def test_pseudonyms_are_stable_keyed_and_hide_the_address(address, key, other_key):
    first = pseudonym(address, key)
    assert first == pseudonym(f" {address.lower()} ", key)  # the same person, the same value
    assert "@" not in first and address not in first
    if key != other_key:
        assert pseudonym(address, other_key) != first


@given(st.emails(), st.sampled_from(["actor", "note", "error"]))
def test_every_address_in_a_page_becomes_its_pseudonym_and_the_json_stays_valid(address, field):
    key = b"k" * 32
    page = orjson.dumps({"data": [{field: address, "other": f"sent by {address}, twice"}]})
    hidden = pseudonymize_text(page, key)
    assert address.encode() not in hidden and b"@" not in hidden
    row = orjson.loads(hidden)["data"][0]
    assert row[field] == pseudonym(address, key)
    assert pseudonymize_text(hidden, key) == hidden  # idempotent: rebuilds hide nothing twice


def test_pages_without_an_address_are_left_as_they_came():
    page = b'{"data":[{"actor":"workflow:nightly","n":1.50}]}'
    assert pseudonymize_text(page, b"k" * 32) is page


@given(
    st.lists(
        st.tuples(st.integers(0, 100), st.one_of(st.none(), st.integers(0, 100))),
        min_size=1,
        max_size=30,
    )
)
def test_ratios_are_null_on_zero_or_missing_denominators(pairs):
    data = pl.DataFrame(
        {"n": [a for a, _ in pairs], "d": [b for _, b in pairs]},
        schema={"n": pl.Int64, "d": pl.Int64},
    )
    got = data.select(safe_ratio(pl.col("n"), pl.col("d")).alias("r"))["r"].to_list()
    for (n, d), value in zip(pairs, got, strict=True):
        assert value == (None if not d else n / d)
