"""The contracts' one-query screen agrees with Pandera: a frame it passes, Pandera passes, so
no frame Pandera would refuse is published unchecked; and a frame Pandera refuses is still
refused, naming what broke."""

from datetime import date, datetime
from decimal import Decimal

import pandera.polars as pa
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warehouse.contracts import ContractError, contract, passes_screen, validate
from warehouse.schemas import POLARS_TYPES, TABLES, Column, Kind, TableSchema

GOOD_ID, OTHER_ID = "0123456789abcdef01234567", "fedcba9876543210fedcba98"
# A few values per kind, good and bad for some rule of the contract, so that generated frames
# break each rule now and then (and natural keys repeat).
VALUES: dict[Kind, list] = {
    Kind.ID: [GOOD_ID, OTHER_ID, "0123456789ABCDEF01234567", "42", ""],
    Kind.STRING: ["USD", "EUR", "usd", "ZZZ", "ENABLED", "bogus", ""],
    Kind.JSON: ["{}", "[1]"],
    Kind.MONEY: [Decimal("0"), Decimal("1.5"), Decimal("-2.25")],
    Kind.RATIO: [0.0, 0.25, -0.5, float("nan")],
    Kind.NUMBER: [0.0, -1.5, 3.0],
    Kind.COUNT: [0, 7, -1],
    Kind.DATE: [date(2026, 11, 1), date(2026, 11, 2)],
    Kind.TIMESTAMP: [datetime(2026, 11, 1, 8), datetime(2026, 11, 2, 9, 30)],
    Kind.BOOL: [True, False],
    Kind.STRINGS: [["a"], []],
    Kind.NULL: [None],
}


def column_values(column: Column, rows: int) -> st.SearchStrategy[list]:
    pool = [*VALUES[column.kind], *column.enum, None]
    return st.lists(st.sampled_from(pool), min_size=rows, max_size=rows)


@st.composite
def frames(draw: st.DrawFn) -> tuple[TableSchema, pl.DataFrame]:
    schema = draw(st.sampled_from(sorted(TABLES.values(), key=lambda s: s.name)))
    rows = draw(st.integers(0, 6))
    data = {c.name: draw(column_values(c, rows)) for c in schema.columns}
    return schema, pl.DataFrame(data, schema=schema.polars_schema)


def pandera_passes(schema: TableSchema, frame: pl.DataFrame) -> bool:
    try:
        contract(schema).validate(frame, lazy=True)
    except pa.errors.SchemaErrors:
        return False
    return True


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frames())
def test_the_screen_passes_exactly_what_pandera_passes(case):
    schema, frame = case
    assert passes_screen(schema, frame) == pandera_passes(schema, frame)


def test_a_frame_of_other_types_or_columns_goes_to_pandera():
    schema = TABLES["campaign_metrics"]
    frame = pl.DataFrame(schema=schema.polars_schema)
    assert passes_screen(schema, frame)
    assert passes_screen(schema, frame.select(reversed(frame.columns)))  # order is free
    assert not passes_screen(schema, frame.with_columns(pl.col("clicks").cast(pl.Float64)))
    assert not passes_screen(schema, frame.with_columns(pl.lit(1).alias("extra")))
    assert not passes_screen(schema, frame.drop("clicks"))
    with pytest.raises(ContractError, match="campaign_metrics partition 2026-11-01 broke"):
        validate(schema, frame.with_columns(pl.lit(1).alias("extra")), "2026-11-01")


def test_every_rule_pandera_runs_is_screened():
    """A broken value of each checked column fails the screen and is named by Pandera."""
    schema = TABLES["campaign_metrics"]
    good = {c.name: (c.enum or VALUES[c.kind])[:1] for c in schema.columns}
    assert passes_screen(schema, pl.DataFrame(good, schema=schema.polars_schema))
    broken = {"campaign": "NOT-AN-ID", "currency": "ZZZ", "ad_product": "XX", "clicks": -1}
    broken |= {"cost": Decimal("-1"), "ctr": -0.5}
    for name, bad in broken.items():
        frame = pl.DataFrame({**good, name: [bad]}, schema=schema.polars_schema)
        assert not passes_screen(schema, frame), name
        with pytest.raises(ContractError, match=f"column {name}:"):
            validate(schema, frame, "2026-11-01")


def test_polars_types_cover_every_kind():
    assert set(VALUES) == set(POLARS_TYPES)
