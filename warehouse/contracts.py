"""Pandera contracts, one per table, derived from the schema registry.

They run on every partition before it is published: ids match the spec's pattern, currency
codes are ISO 4217 codes, counts and ratios are non-negative, closed enums hold only the
spec's values, natural keys are unique. A failure names table, partition, column and value.
"""

import pandera.polars as pa
import polars as pl

from warehouse.schemas import ACCOUNT_ID, POLARS_TYPES, Kind, TableSchema
from warehouse.spec import CURRENCY_PATTERN, ID_PATTERN, ISO_4217

NON_NEGATIVE_MONEY = ("cost", "sales", "cpc", "new_to_brand_sales")


class ContractError(ValueError):
    """A partition broke its table's contract; nothing of it was published."""


def _checks(column, schema: TableSchema) -> list[pa.Check]:
    checks: list[pa.Check] = []
    if column.kind is Kind.ID and column is not ACCOUNT_ID:
        checks.append(pa.Check.str_matches(ID_PATTERN))
    if column.name == "currency" or column.name.endswith("_currency"):
        checks.append(pa.Check.str_matches(CURRENCY_PATTERN))
        checks.append(pa.Check.isin(sorted(ISO_4217)))
    if column.kind in (Kind.COUNT, Kind.RATIO) or column.name in NON_NEGATIVE_MONEY:
        checks.append(pa.Check.ge(0))
    if column.enum:
        checks.append(pa.Check.isin(list(column.enum)))
    return checks


def contract(schema: TableSchema) -> pa.DataFrameSchema:
    return pa.DataFrameSchema(
        {
            c.name: pa.Column(
                POLARS_TYPES[c.kind], checks=_checks(c, schema), nullable=not c.required
            )
            for c in schema.columns
        },
        unique=list(schema.natural_key),
        strict=True,
        name=schema.name,
    )


def validate(schema: TableSchema, frame: pl.DataFrame, partition: str) -> None:
    """Raise ContractError naming table, partition, column and the first offending values."""
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
