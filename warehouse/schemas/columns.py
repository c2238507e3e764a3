"""Columns: the kinds a value takes, their Polars and DuckDB types, and where each is read from.

Types follow the contract: money DECIMAL (exact), dates DATE, timestamps TIMESTAMP (UTC), ratios
DOUBLE, counts BIGINT, known nested objects flattened with `_`, free-form objects kept as JSON.
"""

import re
from dataclasses import dataclass
from enum import StrEnum

import polars as pl

MONEY_PRECISION, MONEY_SCALE = 18, 4


class Kind(StrEnum):
    ID = "id"  # the service's 24-hex identifier
    STRING = "string"
    MONEY = "money"  # a decimal string, or a JSON number read from its digits (spec 1, 2.2)
    RATIO = "ratio"  # a fraction, null on a zero denominator
    NUMBER = "number"
    COUNT = "count"
    DATE = "date"
    TIMESTAMP = "timestamp"
    BOOL = "bool"
    JSON = "json"
    STRINGS = "strings"
    NULL = "null"  # a field the service sent, so far only ever null: typed by its first value


POLARS_TYPES: dict[Kind, pl.DataType] = {
    Kind.ID: pl.String(),
    Kind.STRING: pl.String(),
    Kind.MONEY: pl.Decimal(MONEY_PRECISION, MONEY_SCALE),
    Kind.RATIO: pl.Float64(),
    Kind.NUMBER: pl.Float64(),
    Kind.COUNT: pl.Int64(),
    Kind.DATE: pl.Date(),
    Kind.TIMESTAMP: pl.Datetime("us"),
    Kind.BOOL: pl.Boolean(),
    Kind.JSON: pl.String(),
    Kind.STRINGS: pl.List(pl.String()),
    Kind.NULL: pl.Null(),
}

DUCKDB_TYPES: dict[Kind, str] = {
    Kind.ID: "VARCHAR",
    Kind.STRING: "VARCHAR",
    Kind.MONEY: f"DECIMAL({MONEY_PRECISION},{MONEY_SCALE})",
    Kind.RATIO: "DOUBLE",
    Kind.NUMBER: "DOUBLE",
    Kind.COUNT: "BIGINT",
    Kind.DATE: "DATE",
    Kind.TIMESTAMP: "TIMESTAMP",
    Kind.BOOL: "BOOLEAN",
    Kind.JSON: "JSON",
    Kind.STRINGS: "VARCHAR[]",
    Kind.NULL: "VARCHAR",  # DuckDB columns need a type; every value is NULL
}


@dataclass(frozen=True)
class Column:
    name: str
    kind: Kind
    source: tuple[str, ...]  # path in the service's record; () for columns we add
    enum: tuple[str, ...] = ()
    required: bool = False
    # Other paths a service may send the same value under, where the spec leaves the field's
    # name open: read when `source` holds nothing (`transforms/records.py`), and never taken
    # for a field of its own (`transforms/evolution.py`).
    also: tuple[tuple[str, ...], ...] = ()

    @property
    def sources(self) -> tuple[tuple[str, ...], ...]:
        """Every path the value may arrive under, `source` first; () for columns we add."""
        return (self.source, *self.also) if self.source else ()


def snake(name: str) -> str:
    """`adProduct` → `ad_product`, `optimizationConfig.objective.type` → `..._objective_type`."""
    return re.sub(r"(?<=[a-z])([A-Z])", r"_\1", name.replace(".", "_")).lower()


def field(
    path: str,
    kind: Kind,
    *,
    enum: tuple[str, ...] = (),
    required: bool = False,
    name: str | None = None,
    also: tuple[str, ...] = (),
) -> Column:
    """A column read from the service's field `path` (dots descend into nested objects), or
    from any path of `also` when the spec leaves the field's name open."""
    others = tuple(tuple(other.split(".")) for other in also)
    return Column(name or snake(path), kind, tuple(path.split(".")), enum, required, others)


@dataclass(frozen=True)
class ColumnChange:
    """A column the service's records added to a table, or widened (schema evolution)."""

    column: Column
    previous: Kind | None  # None: new
