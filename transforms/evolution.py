"""Schema evolution: fields the registry does not know become typed columns.

The spec leaves most records open ("the full field list: not shown" for vendor rows, ad groups,
targets, search terms, history and change-log rows), so a service may send fields we have never
seen. Each becomes a column named in snake_case and typed from its values; a later value that
does not fit widens the column along a lattice that never loses a digit:

    BIGINT → DECIMAL → VARCHAR,  BIGINT → DOUBLE → VARCHAR,  DATE → TIMESTAMP → VARCHAR,
    (BIGINT → DECIMAL only while DECIMAL holds the integers' whole digits)
    and any other mix → VARCHAR (the value's own text; objects as JSON).

A field sent only as null so far is a column of NULLs, typed by its first value. Decimal strings
are DECIMAL with or without a point (a zero-decimal currency writes "14283"), so a field of
amounts types the same whatever currencies its first rows are in.

Pure functions of records and schemas: where the changes are kept is `warehouse/schema_log.py`.
"""

import re
from datetime import date, datetime
from decimal import Decimal

from warehouse.schemas import (
    MONEY_PRECISION,
    MONEY_SCALE,
    Column,
    ColumnChange,
    Kind,
    TableSchema,
    snake,
)

Path = tuple[str, ...]

# A decimal string that fits the warehouse's money type; anything longer stays text. Amounts in
# a zero-decimal currency carry no point ("14283" yen, spec 1): digits alone are a decimal too,
# unless a leading zero says they are a code ("02134"), whose text a number would lose.
_WHOLE = rf"(0|[1-9]\d{{0,{MONEY_PRECISION - MONEY_SCALE - 1}}})"
_DECIMAL = re.compile(
    rf"^-?(\d{{1,{MONEY_PRECISION - MONEY_SCALE}}}\.\d{{1,{MONEY_SCALE}}}|{_WHOLE})$"
)
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$")
_INT64 = 2**63
_MONEY_WHOLE = 10 ** (MONEY_PRECISION - MONEY_SCALE)  # the first integer DECIMAL cannot hold
_WIDER = {
    frozenset({Kind.COUNT, Kind.MONEY}): Kind.MONEY,
    frozenset({Kind.COUNT, Kind.NUMBER}): Kind.NUMBER,
    frozenset({Kind.DATE, Kind.TIMESTAMP}): Kind.TIMESTAMP,
}
# Fields a record carries that are never columns: its type tag (spec 2.1 `object`).
ENVELOPE_FIELDS = frozenset({"object"})


def kind_of(value: object) -> Kind | None:
    """The narrowest column kind that holds `value` exactly; None for null."""
    if value is None:
        return None
    if isinstance(value, bool):
        return Kind.BOOL
    if isinstance(value, int):
        return Kind.COUNT if -_INT64 <= value < _INT64 else Kind.STRING
    if isinstance(value, float | Decimal):
        return Kind.NUMBER
    if isinstance(value, dict | list):
        return Kind.JSON
    if isinstance(value, str):
        return _string_kind(value)
    return Kind.STRING


def _string_kind(text: str) -> Kind:
    if _DECIMAL.match(text):
        return Kind.MONEY
    if _DATE.match(text) and _valid(date.fromisoformat, text):
        return Kind.DATE
    if _TIMESTAMP.match(text) and _valid(datetime.fromisoformat, text):
        return Kind.TIMESTAMP
    return Kind.STRING


def _valid(parse, text: str) -> bool:
    try:
        parse(text)
    except ValueError:
        return False
    return True


def widen(held: Kind, new: Kind) -> Kind:
    """The narrowest kind holding values of both kinds exactly."""
    if held is new or new is Kind.NULL:
        return held
    if held is Kind.NULL:
        return new
    return _WIDER.get(frozenset({held, new}), Kind.STRING)


def infer(values: list) -> Kind:
    """The kind of a field's values: NULL while every value is null (the service sent the
    field, so it is a column; its first value will type it). Integers beside decimal strings
    widen to DECIMAL only while the money type holds their whole digits; else to text."""
    kind = Kind.NULL
    for value in values:
        found = kind_of(value)
        if found is not None:
            kind = widen(kind, found)
            if kind is Kind.STRING:
                break
    if kind is Kind.MONEY and any(_beyond_money(value) for value in values):
        return Kind.STRING
    return kind


def _beyond_money(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) >= _MONEY_WHOLE


def unknown_values(
    records: list[dict], schema: TableSchema, ignore: frozenset[str] = frozenset()
) -> dict[Path, list]:
    """Every field path the schema does not read, with its values (null where absent).

    Known nested objects (`budget`, `optimizationConfig` …) are walked, so a new sub-field
    `budget.cap` is found as well as a new top-level one; anything else new is taken whole.
    """
    leaves = {path for c in schema.columns for path in c.sources}  # every name a field has
    skipped = ignore | ENVELOPE_FIELDS
    # Most batches hold only fields the schema reads: the set of their top-level keys (built
    # at C speed) shows that without walking every record in Python.
    if all((key,) in leaves or key in skipped for key in set().union(*records)):
        return {}
    prefixes = {source[:depth] for source in leaves for depth in range(1, len(source))}
    found: dict[Path, dict[int, object]] = {}

    def walk(value: dict, path: Path, index: int) -> None:
        for key, item in value.items():
            here = (*path, key)
            if here in leaves or (not path and key in skipped):
                continue
            if here in prefixes and isinstance(item, dict):
                walk(item, here, index)
            elif here not in prefixes:
                found.setdefault(here, {})[index] = item

    for index, record in enumerate(records):
        walk(record, (), index)
    return {path: [seen.get(i) for i in range(len(records))] for path, seen in found.items()}


def evolve(schema: TableSchema, found: dict[Path, list]) -> list[ColumnChange]:
    """The columns `found` adds to `schema` or widens, in the order first seen."""
    by_source = {c.source: c for c in schema.columns if c.source}
    taken = {c.name for c in schema.columns}
    changes = []
    for path, values in found.items():
        kind = infer(values)
        held = by_source.get(path)
        if held is None:
            name = _free_name(snake("_".join(path)), taken)
            taken.add(name)
            changes.append(ColumnChange(Column(name, kind, path), None))
        elif widen(held.kind, kind) is not held.kind:
            wider = Column(held.name, widen(held.kind, kind), path)
            changes.append(ColumnChange(wider, held.kind))
    return changes


def _free_name(name: str, taken: set[str]) -> str:
    """`name`, or `name_2` … when a registry column (or one we add) already has it."""
    candidate, number = name, 1
    while candidate in taken:
        number += 1
        candidate = f"{name}_{number}"
    return candidate
