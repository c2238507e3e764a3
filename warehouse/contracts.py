"""Pandera contracts, one per table, derived from the schema registry.

They run on every partition before it is published: ids match the spec's pattern, currency
codes are ISO 4217 codes, counts and ratios are non-negative, closed enums hold only the
spec's values, natural keys are unique. A failure names table, partition, column and value.

Pandera runs each check as its own query (85 for `target_metrics`: ~45 ms a frame whatever its
size, most of a daily run's ~1 s of contracts over 27 small tables). So every frame is first
screened in one query by the same rules as Polars expressions, each written beside its Pandera
check; only a frame the screen finds fault with goes to Pandera, which decides and names what
broke. The screen is never looser than Pandera (a property test holds it to that): where in
doubt it defers to Pandera, which costs time, never a check.
"""

from collections.abc import Callable
from functools import cache

import pandera.polars as pa
import polars as pl

from warehouse.schemas import ACCOUNT_ID, POLARS_TYPES, Column, Kind, TableSchema
from warehouse.spec import CURRENCY_PATTERN, ID_PATTERN, ISO_4217

NON_NEGATIVE_MONEY = ("cost", "sales", "cpc", "new_to_brand_sales")


class ContractError(ValueError):
    """A partition broke its table's contract; nothing of it was published."""


# A rule: Pandera's check, and the same rule as the Polars expression of the values that hold
# it (of the column it is given); a null holds every rule, as in Pandera's checks.
Rule = tuple[pa.Check, Callable[[pl.Expr], pl.Expr]]


def _matches(pattern: str) -> Rule:
    anchored = pattern if pattern.startswith("^") else f"^{pattern}"  # as Pandera anchors it
    return pa.Check.str_matches(pattern), lambda values: values.str.contains(anchored)


def _one_of(allowed: list[str]) -> Rule:
    return pa.Check.isin(allowed), lambda values: values.is_in(allowed)


def _rules(column: Column) -> list[Rule]:
    rules: list[Rule] = []
    if column.kind is Kind.ID and column is not ACCOUNT_ID:
        rules.append(_matches(ID_PATTERN))
    if column.name == "currency" or column.name.endswith("_currency"):
        rules.append(_matches(CURRENCY_PATTERN))
        rules.append(_one_of(sorted(ISO_4217)))
    if column.kind in (Kind.COUNT, Kind.RATIO) or column.name in NON_NEGATIVE_MONEY:
        rules.append((pa.Check.ge(0), lambda values: values >= 0))
    if column.enum:
        rules.append(_one_of(list(column.enum)))
    return rules


@cache
def contract(schema: TableSchema) -> pa.DataFrameSchema:
    return pa.DataFrameSchema(
        {
            c.name: pa.Column(
                POLARS_TYPES[c.kind],
                checks=[check for check, _ in _rules(c)],
                nullable=not c.required,
            )
            for c in schema.columns
        },
        unique=list(schema.natural_key),
        strict=True,
        name=schema.name,
    )


@cache
def _screen(schema: TableSchema) -> list[pl.Expr]:
    """One boolean per rule and column, true when some value breaks it."""
    broken = []
    for column in schema.columns:
        values = pl.col(column.name)
        if column.required:
            broken.append(values.is_null().any())
        broken += [(~holds(values)).fill_null(False).any() for _, holds in _rules(column)]
    if schema.natural_key:
        broken.append(pl.struct(schema.natural_key).is_duplicated().any())
    return [flag.alias(str(number)) for number, flag in enumerate(broken)]


def passes_screen(schema: TableSchema, frame: pl.DataFrame) -> bool:
    """True only when the frame keeps every rule of the contract (one query); false when it
    may not, Pandera to decide."""
    if dict(frame.schema) != schema.polars_schema:  # the same columns, of the same types
        return False
    return not any(frame.select(_screen(schema)).row(0))


def validate(schema: TableSchema, frame: pl.DataFrame, partition: str) -> None:
    """Raise ContractError naming table, partition, column and the first offending values."""
    if passes_screen(schema, frame):
        return
    try:
        contract(schema).validate(frame, lazy=True)
    except pa.errors.SchemaErrors as errors:
        problems: dict[tuple[str, str], tuple[object, int]] = {}
        for case in errors.failure_cases.iter_rows(named=True):
            key = (str(case.get("column")), str(case.get("check")))
            first, count = problems.get(key, (case.get("failure_case"), 0))
            problems[key] = (first, count + 1)
        described = [
            f"column {column}: {check} failed {count}x, e.g. {_short(value)}"
            for (column, check), (value, count) in problems.items()
        ]
        raise ContractError(
            f"{schema.name} partition {partition} broke its contract: " + "; ".join(described)
        ) from None


def _short(value: object, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
