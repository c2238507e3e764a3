"""Service records (dicts) to typed Polars frames, refusing anything that would lose meaning.

Money arrives as decimal strings and must land exactly: a string is checked digit by digit
before the cast, because Polars' decimal cast would round extra fractional digits silently.
A JSON number where a decimal string belongs is an error, not something to coerce.
"""

import re
from datetime import datetime

import orjson
import polars as pl

from warehouse.schemas import MONEY_PRECISION, MONEY_SCALE, Column, Kind, TableSchema

_MONEY = re.compile(rf"^-?\d{{1,{MONEY_PRECISION - MONEY_SCALE}}}(\.\d{{1,{MONEY_SCALE}}})?$")
_MONEY_PATTERN = _MONEY.pattern


class RecordError(ValueError):
    """A value from the service that cannot be kept faithfully; names table, column, value."""

    def __init__(
        self, table: str, column: str, value: object, problem: str, where: str = ""
    ) -> None:
        self.table, self.column, self.value = table, column, value
        place = f" ({where})" if where else ""
        super().__init__(f"{table}.{column}{place}: {problem}: {value!r}")


def _dig(record: dict, path: tuple[str, ...]) -> object:
    value: object = record
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


_PYTHON_TYPES: dict[Kind, tuple[type, ...]] = {
    Kind.ID: (str,),
    Kind.STRING: (str,),
    Kind.MONEY: (str,),
    Kind.DECIMAL_NUMBER: (int, float),
    Kind.RATIO: (int, float),
    Kind.NUMBER: (int, float),
    Kind.COUNT: (int,),
    Kind.DATE: (str,),
    Kind.TIMESTAMP: (str,),
    Kind.BOOL: (bool,),
    Kind.STRINGS: (list,),
}


def _check_types(schema: TableSchema, column: Column, values: list, where: str) -> None:
    allowed = _PYTHON_TYPES.get(column.kind)
    if allowed is None:
        return
    for value in values:
        if value is None:
            continue
        wrong_bool = isinstance(value, bool) and bool not in allowed
        if wrong_bool or not isinstance(value, allowed):
            expected = "a decimal string" if column.kind is Kind.MONEY else column.kind.value
            raise RecordError(schema.name, column.name, value, f"expected {expected}", where)


def _series(schema: TableSchema, column: Column, values: list, where: str) -> pl.Series:
    _check_types(schema, column, values, where)
    name, kind = column.name, column.kind
    if kind is Kind.JSON:
        text = [None if v is None else orjson.dumps(v).decode() for v in values]
        return pl.Series(name, text, dtype=pl.String)
    if kind is Kind.DECIMAL_NUMBER:
        values = [None if v is None else repr(v) for v in values]
        return _money(schema, column, pl.Series(name, values, dtype=pl.String), where)
    if kind is Kind.MONEY:
        return _money(schema, column, pl.Series(name, values, dtype=pl.String), where)
    if kind is Kind.DATE:
        return _parse(
            schema,
            column,
            pl.Series(name, values, dtype=pl.String),
            where,
            lambda s: s.str.to_date("%Y-%m-%d", strict=False),
        )
    if kind is Kind.TIMESTAMP:
        return _parse(
            schema,
            column,
            pl.Series(name, values, dtype=pl.String),
            where,
            lambda s: s.str.to_datetime(
                time_unit="us", time_zone="UTC", strict=False
            ).dt.replace_time_zone(None),
        )
    if kind is Kind.STRINGS:
        return pl.Series(name, values, dtype=pl.List(pl.String), strict=True)
    dtype = {
        Kind.RATIO: pl.Float64,
        Kind.NUMBER: pl.Float64,
        Kind.COUNT: pl.Int64,
        Kind.BOOL: pl.Boolean,
    }.get(kind, pl.String)
    return pl.Series(name, values, dtype=dtype, strict=True)


def _parse(schema, column, raw: pl.Series, where: str, parse) -> pl.Series:
    parsed = parse(raw)
    bad = raw.filter(parsed.is_null() & raw.is_not_null())
    if len(bad):
        raise RecordError(schema.name, column.name, bad[0], f"not a valid {column.kind}", where)
    return parsed


def _money(schema: TableSchema, column: Column, raw: pl.Series, where: str) -> pl.Series:
    """Validate every digit, then cast: nothing may be rounded on the way in."""
    if column.kind is Kind.DECIMAL_NUMBER:
        raw = raw.str.replace(r"\.0$", "")
    bad = raw.filter(raw.is_not_null() & ~raw.str.contains(_MONEY_PATTERN))
    if len(bad):
        raise RecordError(
            schema.name,
            column.name,
            bad[0],
            f"not an exact decimal with at most {MONEY_SCALE} fractional digits",
            where,
        )
    return raw.cast(pl.Decimal(MONEY_PRECISION, MONEY_SCALE))


def records_to_frame(
    records: list[dict],
    schema: TableSchema,
    *,
    account_id: str,
    extracted_at: datetime,
    where: str = "",
    constants: dict[str, list] | None = None,
) -> pl.DataFrame:
    """Typed frame of `schema` from the service's records; raises RecordError on bad values.

    `constants` fill columns the records do not carry (the campaign and day a history page was
    asked for), one value per record, parsed like the service's own values.
    """
    columns = []
    for column in schema.columns:
        if column.source:
            if len(column.source) == 1:
                key = column.source[0]
                values = [r.get(key) for r in records]
            else:
                values = [_dig(r, column.source) for r in records]
            if column.required and any(v is None for v in values):
                raise RecordError(schema.name, column.name, None, "required field missing", where)
            columns.append(_series(schema, column, values, where))
    for name, values in (constants or {}).items():
        columns.append(_series(schema, schema.column(name), values, where))
    frame = pl.DataFrame(columns)
    return frame.with_columns(
        pl.lit(account_id, dtype=pl.String).alias("account_id"),
        pl.lit(extracted_at.replace(tzinfo=None), dtype=pl.Datetime("us")).alias("_extracted_at"),
    ).select(
        [
            name
            for name in schema.column_names
            if name in frame.columns or name in ("account_id", "_extracted_at")
        ]
    )


def unknown_fields(records: list[dict], schema: TableSchema) -> set[str]:
    """Top-level fields the service sent that the schema does not know (kept in raw only)."""
    known = {c.source[0] for c in schema.columns if c.source} | {"object"}
    seen: set[str] = set()
    for record in records:
        seen.update(record.keys())
    return seen - known
