"""What a replace changes: the cells of a day's rows that differ between two fetches.

A service restates recent days (attribution keeps crediting conversions; seller economics arrive
48-72 hours late), and the daily job re-fetches them and replaces the days whole. Before the
replace, the rows the lake held and the rows about to replace them are compared here, row by
row on the table's natural key and column by column: only what differs is kept, one row per
cell, with both values as exact text (a decimal keeps its digits) and when each was fetched.

A row the new fetch no longer has is `disappeared`, one it newly has `appeared` (each of its
reported cells recorded, so the money it moved adds up); an economics amount first reported
where it was null is an `arrival` (spec 2.9: it comes late), not a correction; anything else
that differs is a `correction`. `economics_status` is not compared: the warehouse derives it
from the run's reference date, so it changes with time, not with what the service said.

Every cell is recorded, arrivals too; but an arrival in a row the warehouse held as `pending`
is the lag the spec states, not news: a run's summary says it apart ("economics arrived"), and
it weighs nothing in what a restatement alert compares (`largest_share`).
"""

from datetime import UTC, datetime

import polars as pl

from warehouse.schemas import (
    MONEY_PRECISION,
    MONEY_SCALE,
    RESTATEMENT_KINDS,
    RESTATEMENTS,
    Kind,
    TableSchema,
)
from warehouse.spec import (
    ECONOMICS_FIELDS,
    ECONOMICS_PENDING,
    NOT_SUMMED_IN_GROUPS,
    currency_digits,
)

APPEARED, DISAPPEARED, ARRIVAL, CORRECTION = RESTATEMENT_KINDS
# Columns never compared: when a row was fetched (each side's is kept as such), and what the
# warehouse derives from the reference date rather than reads from the service.
NOT_COMPARED = frozenset({"_extracted_at", "economics_status"})
# Where the row key's columns name the row; these three have columns of their own.
OWN_COLUMNS = ("account_id", "date", "currency")


def compared_columns(schema: TableSchema) -> list[str]:
    """The columns of `schema` whose changes are restatements: every one but its key and
    NOT_COMPARED."""
    keys = set(schema.natural_key)
    return [name for name in schema.column_names if name not in keys | NOT_COMPARED]


def restatements(
    schema: TableSchema,
    before: pl.DataFrame,
    after: pl.DataFrame,
    run_id: str,
    fetched_at: datetime | None = None,
) -> pl.DataFrame:
    """The cells that differ between `before` (the rows held of some accounts' days) and
    `after` (the rows replacing them), in RESTATEMENTS' columns; both frames in `schema`'s
    columns, each natural key at most once (the contract checks it before a publish). A row
    that disappeared was last fetched when the new rows of its account and day were, or, when
    the day now has none, at `fetched_at` (the replacing fetch's time)."""
    keys = list(schema.natural_key)
    compared = [name for name in compared_columns(schema) if name in before.columns]
    held = before.select(*keys, *compared, "_extracted_at").with_columns(_held=pl.lit(True))
    new = after.select(*keys, *compared, "_extracted_at").with_columns(_new=pl.lit(True))
    # A key part may be null (a seller product without a sku): the same row all the same.
    paired = held.join(new, on=keys, how="full", coalesce=True, suffix="_after", nulls_equal=True)
    row_key = [name for name in keys if name not in OWN_COLUMNS]
    common = paired.select(
        pl.lit(schema.name).alias("table_name"),
        "account_id",
        "date",
        "currency",
        pl.struct(row_key).struct.json_encode().alias("row_key"),
        pl.col("_held").fill_null(False),
        pl.col("_new").fill_null(False),
        pl.col("_extracted_at").alias("before_extracted_at"),
        pl.coalesce(
            "_extracted_at_after",
            pl.col("_extracted_at_after").max().over("account_id", "date"),
            pl.lit(naive_utc(fetched_at), pl.Datetime("us")),
        ).alias("_extracted_at"),
        *(pl.col(name).cast(pl.String).alias(f"{name}|before") for name in compared),
        *(pl.col(f"{name}_after").cast(pl.String).alias(f"{name}|after") for name in compared),
    )
    cells = [
        common.filter(pl.col(f"{name}|before").ne_missing(pl.col(f"{name}|after"))).select(
            *RESTATEMENT_IDENTITY,
            pl.lit(name).alias("column_name"),
            pl.col(f"{name}|before").alias("value_before"),
            pl.col(f"{name}|after").alias("value_after"),
            _kind(name).alias("kind"),
            "before_extracted_at",
            "_extracted_at",
        )
        for name in compared
    ]
    changed = pl.concat(cells) if cells else pl.DataFrame()
    return RESTATEMENTS.conformed(
        changed.lazy().with_columns(pl.lit(run_id).alias("run_id"))
    ).collect()


RESTATEMENT_IDENTITY = ("table_name", "account_id", "date", "currency", "row_key")


def naive_utc(moment: datetime | None) -> datetime | None:
    """`moment` as the lake's timestamps hold it: UTC, without a zone."""
    if moment is None or moment.tzinfo is None:
        return moment
    return moment.astimezone(UTC).replace(tzinfo=None)


def _kind(name: str) -> pl.Expr:
    """What a differing cell of column `name` is (the module's docstring)."""
    kind = (
        pl.when(~pl.col("_held"))
        .then(pl.lit(APPEARED))
        .when(~pl.col("_new"))
        .then(pl.lit(DISAPPEARED))
    )
    if name in ECONOMICS_FIELDS:
        first_reported = pl.col(f"{name}|before").is_null() & pl.col(f"{name}|after").is_not_null()
        kind = kind.when(first_reported).then(pl.lit(ARRIVAL))
    return kind.otherwise(pl.lit(CORRECTION))


def money_columns(schema: TableSchema) -> list[str]:
    """The amounts of `schema` that add up: a per-click or a unit price moves, but adds to
    nothing."""
    return [
        c.name
        for c in schema.columns
        if c.kind is Kind.MONEY and c.name not in NOT_SUMMED_IN_GROUPS
    ]


def _change() -> pl.Expr:
    """A money cell's change: after - before, a value not reported counting as nothing."""
    money = pl.Decimal(MONEY_PRECISION, MONEY_SCALE)
    before, after = pl.col("value_before").cast(money), pl.col("value_after").cast(money)
    return after.fill_null(0) - before.fill_null(0)


def money_moved(schema: TableSchema, cells: pl.DataFrame) -> pl.DataFrame:
    """Per money column and currency, what the restated cells moved in all, where it moved."""
    amounts = money_columns(schema)
    return (
        cells.filter(pl.col("column_name").is_in(amounts))
        .group_by("column_name", "currency")
        .agg(_change().sum().alias("change"))
        .filter(pl.col("change") != 0)
        .sort(pl.col("column_name").replace_strict(amounts, range(len(amounts))), "currency")
    )


def summary(schema: TableSchema, cells: pl.DataFrame, shown: int = 3) -> str:
    """What a run restated in one table, for its summary line: "3 days restated, sales
    +12.40 USD -3 JPY": the first `shown` amounts that moved, spend and sales first, each
    currency's change in its own digits (never added across currencies). Economics first
    reported are said apart, as what they are: "economics arrived for 2 days"."""
    arrived = cells.filter(pl.col("kind") == ARRIVAL)
    restated = cells.filter(pl.col("kind") != ARRIVAL)
    said = []
    if not restated.is_empty():
        said.append(f"{_days(restated)} restated")
        said += _amounts(schema, restated, shown)
    if not arrived.is_empty():
        said.append(f"economics arrived for {_days(arrived)}")
    return ", ".join(said)


def _days(cells: pl.DataFrame) -> str:
    days = cells["date"].n_unique()
    return f"{days} day{'s' if days != 1 else ''}"


def _amounts(schema: TableSchema, cells: pl.DataFrame, shown: int) -> list[str]:
    changes: dict[str, list[str]] = {}
    for column, currency, change in money_moved(schema, cells).iter_rows():
        changes.setdefault(column, []).append(
            f"{change:+,.{currency_digits(currency)}f} {currency}"
        )
    ordered = sorted(changes, key=lambda c: HEADLINE.index(c) if c in HEADLINE else len(HEADLINE))
    said = [f"{column} {' '.join(changes[column])}" for column in ordered[:shown]]
    if len(ordered) > shown:
        said.append(f"{len(ordered) - shown} more amounts moved")
    return said


# The amounts a summary names first: spend, sales, then the seller economics' bottom lines.
HEADLINE = ("cost", "sales", "net_sales", "margin_before_ads", "amazon_fees")


def awaited(schema: TableSchema, cells: pl.DataFrame, before: pl.DataFrame) -> pl.DataFrame:
    """Of `cells`, the economics that arrived as the spec says they do (2.9: 48-72 hours late):
    an `arrival` in a row the warehouse held as `pending` (`before`'s `economics_status`: null,
    its day less than ECONOMICS_LAG_HOURS before the reference date of the run that fetched
    it, contract 5.4). An arrival in a row held as `missing` (past the lag) is not awaited."""
    if "economics_status" not in before.columns or cells.is_empty():
        return cells.clear()
    row_key = [name for name in schema.natural_key if name not in OWN_COLUMNS]
    pending = before.filter(pl.col("economics_status") == ECONOMICS_PENDING).select(
        "account_id", "date", "currency", pl.struct(row_key).struct.json_encode().alias("row_key")
    )
    arrivals = cells.filter(pl.col("kind") == ARRIVAL)
    return arrivals.join(pending, on=["account_id", "date", "currency", "row_key"], how="semi")


def largest_share(
    schema: TableSchema, cells: pl.DataFrame, before: pl.DataFrame
) -> dict[str, object] | None:
    """Of the money the cells moved, the largest change against what its account, day and
    currency held before (`before`'s rows), as a share: what a restatement alert compares
    with its threshold. Awaited economics (`awaited`) move nothing here: they are the lag the
    spec states. A change to a day that held none of that money is a share of 1; `held` is
    None where the day reported none of it (null: not reported, never 0)."""
    expected = awaited(schema, cells, before)
    weighed = cells.join(expected, on=list(RESTATEMENTS.natural_key), how="anti")
    moved = (
        weighed.filter(pl.col("column_name").is_in(money_columns(schema)))
        .group_by("account_id", "date", "currency", "column_name")
        .agg(_change().sum().alias("change"), pl.col("kind").unique().sort().alias("kinds"))
        .filter(pl.col("change") != 0)
    )
    if moved.is_empty():
        return None
    held = before.unpivot(
        index=["account_id", "date", "currency"],
        on=[name for name in money_columns(schema) if name in before.columns],
        variable_name="column_name",
        value_name="held",
    )
    reported = pl.when(pl.col("held").is_not_null().any()).then(pl.col("held").sum())
    held = held.group_by("account_id", "date", "currency", "column_name").agg(reported)
    shares = moved.join(held, on=["account_id", "date", "currency", "column_name"], how="left")
    shares = shares.with_columns(
        pl.when(pl.col("held").fill_null(0) == 0)
        .then(1.0)
        .otherwise((pl.col("change").cast(pl.Float64) / pl.col("held").cast(pl.Float64)).abs())
        .alias("share")
    )
    top = shares.sort("share", descending=True).row(0, named=True)
    digits = currency_digits(top["currency"])
    return {
        "table": schema.name,
        "account_id": top["account_id"],
        "date": top["date"].isoformat(),
        "currency": top["currency"],
        "column": top["column_name"],
        "change": f"{top['change']:+.{digits}f}",
        "held": None if top["held"] is None else f"{top['held']:.{digits}f}",
        "share": round(top["share"], 4),
        "kinds": list(top["kinds"]),
    }
