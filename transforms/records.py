"""Service records (dicts) to typed Polars frames: tolerant where the spec leaves a shape open,
strict where it pins one down.

What the spec pins down, and only that, can make a value bad: the identifier pattern (2.1), the
decimal-string syntax of money (1), integers for counts (2.6), ISO dates and timestamps (2.1),
closed enumerations (checked by the contracts). Everything it leaves open is read in every
reasonable shape: money as a decimal string or a JSON number (1 versus 2.2), a related field as
an id or as the expanded object (2.1), timestamps with or without fractional seconds and with
`Z` or an offset, strings that arrive as numbers, and a field whose name the spec leaves open
under each name the registry gives it (`Column.also`: the change log's entity id as
`entity_id`, or `entity` as its filter is named, 4.8).

Money is exact: a string is checked digit by digit before the cast (Polars' decimal cast would
round extra fractional digits silently), and a JSON number is never read through a binary
float: a float in a money column raises `InexactNumber`, and the caller re-reads the page's
bytes with every number as a `Decimal` (`Page.exact`).
"""

import contextlib
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from operator import itemgetter
from types import NoneType
from typing import NamedTuple

import orjson
import polars as pl

from warehouse.schemas import MONEY_PRECISION, MONEY_SCALE, Column, Kind, TableSchema

# Spec 1: a decimal string. Trailing zeros beyond the scale change no digit, so they are kept.
MONEY_SYNTAX = rf"^-?\d{{1,{MONEY_PRECISION - MONEY_SCALE}}}(\.\d{{1,{MONEY_SCALE}}}0*)?$"
_INTEGER = re.compile(r"^-?\d+$")
_NUMBER = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?$")
_TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S%.f%#z"  # fractions optional; Z, +00:00 or any offset
EPOCH = datetime(1970, 1, 1)


class RecordError(ValueError):
    """A value from the service that cannot be kept faithfully; names table, column, value."""

    def __init__(
        self, table: str, column: str, value: object, problem: str, where: str = ""
    ) -> None:
        self.table, self.column, self.value = table, column, value
        place = f" ({where})" if where else ""
        super().__init__(f"{table}.{column}{place}: {problem}: {value!r}")


class InexactNumber(Exception):  # noqa: N818 - a signal to re-read exactly, not an error
    """Money arrived as a binary float: its digits must be read again from the page's text."""


def _dig(record: dict, path: tuple[str, ...]) -> object:
    value: object = record
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def json_text(value: object) -> str:
    """Compact JSON; numbers keep their digits (a `Decimal` from an exact re-read, an integer
    wider than 64 bits)."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return orjson.dumps(_tokens(value)).decode()


def _tokens(value: object) -> object:
    """`value` with every number orjson cannot write held as its own JSON text."""
    if isinstance(value, dict):
        return {key: _tokens(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_tokens(item) for item in value]
    if isinstance(value, Decimal):
        return orjson.Fragment(format(value, "f"))
    if isinstance(value, int) and not isinstance(value, bool):
        return orjson.Fragment(str(value))
    return value


def _text(value: object) -> str:
    """A scalar or structure as the text a string column keeps (numbers with their digits)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        raise InexactNumber  # its text is what the column keeps: read it from the page
    return json_text(value)


# ---------------------------------------------------------------------------- per kind
# Each reader maps one raw value to the Python value its column holds, raising ValueError
# with the problem in words when the spec says the value cannot be what it is.
def _money(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        raise ValueError("expected a decimal string or number")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, float):
        raise InexactNumber
    raise ValueError("expected a decimal string or number")


def _count(value: object) -> int:
    if isinstance(value, bool):
        raise ValueError("expected count")
    if isinstance(value, int):
        return value
    if isinstance(value, float | Decimal) and value == int(value):
        return int(value)
    if isinstance(value, str) and _INTEGER.match(value):
        return int(value)
    raise ValueError("expected count")


def _number(value: object) -> float:
    if isinstance(value, bool):
        raise ValueError(f"expected a number, not {value!r}")
    if isinstance(value, int | float | Decimal):
        return float(value)
    if isinstance(value, str) and _NUMBER.match(value):
        return float(value)
    raise ValueError("expected a number")


def _identifier(value: object) -> str:
    """Spec 2.1: a related field holds an id, or with `expand` the related object."""
    if isinstance(value, dict):
        value = value.get("id")
    if isinstance(value, str):
        return value
    raise ValueError("expected id")


def _strings(value: object) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [
        item["id"] if isinstance(item, dict) and isinstance(item.get("id"), str) else _text(item)
        for item in items
    ]


def _boolean(value: object) -> bool:
    if isinstance(value, bool):
        return value
    if value in ("true", "false"):
        return value == "true"
    raise ValueError("expected bool")


def _nothing(value: object) -> None:
    raise ValueError("expected null (schema evolution types the column first)")


def _date_text(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError("not a valid date")
    return value


READERS: dict[Kind, Callable[[object], object]] = {
    Kind.ID: _identifier,
    Kind.STRING: _text,
    Kind.MONEY: _money,
    Kind.RATIO: _number,
    Kind.NUMBER: _number,
    Kind.COUNT: _count,
    Kind.DATE: _date_text,
    Kind.TIMESTAMP: _date_text,
    Kind.BOOL: _boolean,
    Kind.JSON: json_text,
    Kind.STRINGS: _strings,
    Kind.NULL: _nothing,
}
# Values that are already what the column holds skip the reader (the common case, fast).
_NATIVE: dict[Kind, type] = {
    Kind.ID: str,
    Kind.STRING: str,
    Kind.MONEY: str,
    Kind.RATIO: float,
    Kind.NUMBER: float,
    Kind.COUNT: int,
    Kind.DATE: str,
    Kind.TIMESTAMP: str,
    Kind.BOOL: bool,
}


def _read(schema: TableSchema, column: Column, values: Sequence, where: str) -> Sequence:
    native = _NATIVE.get(column.kind)
    if native is not None and set(map(type, values)) <= {native, NoneType}:
        return values
    read = READERS[column.kind]
    out = []
    for value in values:
        if value is None:
            out.append(None)
            continue
        try:
            out.append(read(value))
        except ValueError as error:
            raise RecordError(schema.name, column.name, value, str(error), where) from None
    return out


def _series(schema: TableSchema, column: Column, values: Sequence, where: str) -> pl.Series:
    """The column of values `_read` returned, typed; money, dates and timestamps still as the
    service's text (`PARSED` types those, all columns of a frame at once)."""
    name, kind = column.name, column.kind
    if kind in PARSED:
        return pl.Series(name, values, dtype=pl.String)
    if kind is Kind.STRINGS:
        return pl.Series(name, values, dtype=pl.List(pl.String), strict=True)
    dtype = {
        Kind.RATIO: pl.Float64,
        Kind.NUMBER: pl.Float64,
        Kind.COUNT: pl.Int64,
        Kind.BOOL: pl.Boolean,
        Kind.NULL: pl.Null,
    }.get(kind, pl.String)
    try:
        return pl.Series(name, values, dtype=dtype, strict=True)
    except OverflowError:
        big = next(v for v in values if v is not None and abs(v) >= 2**63)
        raise RecordError(schema.name, name, big, "does not fit a 64-bit integer", where) from None


def _is_money(text: pl.Expr) -> pl.Expr:
    return text.str.contains(MONEY_SYNTAX)


def _money_of(text: pl.Expr) -> pl.Expr:
    return text.cast(pl.Decimal(MONEY_PRECISION, MONEY_SCALE))


def _date_of(text: pl.Expr) -> pl.Expr:
    return text.str.to_date("%Y-%m-%d", strict=False)


def _timestamp_of(text: pl.Expr) -> pl.Expr:
    return text.str.to_datetime(
        _TIMESTAMP_FORMAT, time_unit="us", time_zone="UTC", strict=False
    ).dt.replace_time_zone(None)


def _on(raw: pl.Series, expression: Callable[[pl.Expr], pl.Expr]) -> pl.Series:
    return raw.to_frame().select(expression(pl.col(raw.name))).to_series()


def _exact(schema: TableSchema, column: Column, raw: pl.Series, where: str) -> pl.Series:
    """Validate every digit, then cast: nothing may be rounded on the way in."""
    bad = raw.filter(raw.is_not_null() & ~_on(raw, _is_money))
    if len(bad):
        raise RecordError(
            schema.name,
            column.name,
            bad[0],
            f"not an exact decimal with at most {MONEY_SCALE} fractional digits",
            where,
        )
    return _on(raw, _money_of)


def _dates(schema: TableSchema, column: Column, raw: pl.Series, where: str) -> pl.Series:
    """`YYYY-MM-DD`; a timestamp where a date belongs gives its UTC day."""
    parsed = _on(raw, _date_of)
    missed = parsed.is_null() & raw.is_not_null()
    if missed.any():
        as_time = _timestamps(schema, column, raw.filter(missed), where)
        parsed = parsed.scatter(missed.arg_true(), as_time.dt.date())
    return parsed


def _timestamps(schema: TableSchema, column: Column, raw: pl.Series, where: str) -> pl.Series:
    """ISO 8601 in UTC (spec 2.1), read however a service writes it: fractional seconds or
    none, `Z` or `+00:00` (or another offset, converted), a bare date as midnight."""
    parsed = _on(raw, _timestamp_of)
    missed = parsed.is_null() & raw.is_not_null()
    if missed.any():
        slow = [_one_timestamp(schema, column, text, where) for text in raw.filter(missed)]
        parsed = parsed.scatter(missed.arg_true(), pl.Series(slow, dtype=pl.Datetime("us")))
    return parsed


def _one_timestamp(schema: TableSchema, column: Column, text: str, where: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise RecordError(
            schema.name, column.name, text, f"not a valid {column.kind}", where
        ) from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment


class Parser(NamedTuple):
    """How a kind kept as the service's text is typed: `fits`, a value the expression `parse`
    takes as it is; `exact`, the column's slow way, which takes every other value or names it."""

    fits: Callable[[pl.Expr], pl.Expr]
    parse: Callable[[pl.Expr], pl.Expr]
    exact: Callable[[TableSchema, Column, pl.Series, str], pl.Series]


PARSED: dict[Kind, Parser] = {
    Kind.MONEY: Parser(_is_money, _money_of, _exact),
    Kind.DATE: Parser(lambda text: _date_of(text).is_not_null(), _date_of, _dates),
    Kind.TIMESTAMP: Parser(
        lambda text: _timestamp_of(text).is_not_null(), _timestamp_of, _timestamps
    ),
}


def _typed(
    schema: TableSchema, frame: pl.DataFrame, columns: list[Column], where: str
) -> dict[str, pl.Expr | pl.Series]:
    """Each column of `frame` as its kind holds it. Every eager Polars call is a query of its
    own, and a page of twenty rows typed a column at a time cost ~30 of them. So whether every
    value of the parsed kinds fits is asked in one query, and the parses are expressions of
    the caller's one `select`; a column holding a value that does not fit goes its exact way
    (a timestamp where a date belongs, or the error naming the value)."""
    parsed = [column for column in columns if column.kind in PARSED]
    flawed: set[str] = set()
    if parsed and frame.height:
        flaws = frame.select(
            (pl.col(c.name).is_not_null() & ~PARSED[c.kind].fits(pl.col(c.name)))
            .any()
            .alias(c.name)
            for c in parsed
        )
        flawed = {name for name, flaw in flaws.row(0, named=True).items() if flaw}
    typed: dict[str, pl.Expr | pl.Series] = {}
    for column in columns:
        name = column.name
        if column.kind not in PARSED:
            typed[name] = pl.col(name)
        elif name in flawed:
            typed[name] = PARSED[column.kind].exact(schema, column, frame[name], where)
        else:
            typed[name] = PARSED[column.kind].parse(pl.col(name)).alias(name)
    return typed


def _columns(records: list[dict], columns: list[Column]) -> list[Sequence]:
    """Each column's values, in record order. Records that all hold every top-level field
    are read in one pass of C (`itemgetter`, `zip`): per value in Python, reading costs as
    much as typing does."""
    top = [column.source[0] for column in columns if _top_level(column)]
    held: dict[str, Sequence] = {}
    if len(top) > 1 and records:  # `itemgetter` of one key gives values, not tuples
        # KeyError: a field some record lacks (not reported); read with `get` below.
        with contextlib.suppress(KeyError):
            held = dict(zip(top, zip(*map(itemgetter(*top), records), strict=True), strict=True))
    if records and not held:
        held = {key: [record.get(key) for record in records] for key in top}
    return [
        held.get(column.source[0], ()) if _top_level(column) else _dug(records, column)
        for column in columns
    ]


def _top_level(column: Column) -> bool:
    """A field read by its one top-level name (the fast way)."""
    return len(column.source) == 1 and not column.also


def _dug(records: list[dict], column: Column) -> list:
    """A nested field's values, or a field of several names (`Column.also`): each record's
    first path that holds a value, so a service naming the field otherwise fills it too."""
    if not column.also:
        return [_dig(record, column.source) for record in records]
    return [_first(record, column.sources) for record in records]


def _first(record: dict, paths: tuple[tuple[str, ...], ...]) -> object:
    for path in paths:
        value = _dig(record, path)
        if value is not None:
            return value
    return None


def records_to_frame(
    records: list[dict],
    schema: TableSchema,
    *,
    account_id: str,
    extracted_at: datetime,
    where: str = "",
    constants: dict[str, list] | None = None,
) -> pl.DataFrame:
    """Typed frame of `schema` from the service's records; raises RecordError on bad values
    and InexactNumber when money arrived as a float (re-read the page exactly, then again).

    `constants` fill columns the records do not carry (the campaign and day a history page was
    asked for), one value per record, parsed like the service's own values.
    """
    # Every value is read before any column is typed: money that came as a JSON float
    # (InexactNumber) sends the page back to be re-read before typing is spent on it.
    read = [column for column in schema.columns if column.source]
    held = []
    for column, values in zip(read, _columns(records, read), strict=True):
        if column.required and None in values:
            raise RecordError(schema.name, column.name, None, "required field missing", where)
        held.append((column, _read(schema, column, values, where)))
    for name, values in (constants or {}).items():
        column = schema.column(name)
        held.append((column, _read(schema, column, values, where)))
    frame = pl.DataFrame([_series(schema, column, values, where) for column, values in held])
    typed = _typed(schema, frame, [column for column, _ in held], where)
    # Literals given a dtype, or of a datetime, are built as Series, a query each: these are not.
    typed["account_id"] = pl.lit(account_id).alias("account_id")
    since_epoch = extracted_at.replace(tzinfo=None) - EPOCH
    typed["_extracted_at"] = (
        pl.lit(since_epoch // timedelta(microseconds=1))
        .cast(pl.Datetime("us"))
        .alias("_extracted_at")
    )
    return frame.select(typed[name] for name in schema.column_names if name in typed)
