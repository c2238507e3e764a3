"""Tables: how a table is laid out in the lake, its schema, and what every table shares (the
account it was extracted for, when it was fetched) or every current-state table does."""

from dataclasses import dataclass
from enum import StrEnum

import polars as pl

from warehouse.schemas.columns import POLARS_TYPES, Column, Kind, field


class Layout(StrEnum):
    DAILY_FACT = "daily_fact"  # lake/<t>/date=/currency=/
    DATED = "dated"  # lake/<t>/date=/
    SNAPSHOT = "snapshot"  # current state; lake keeps one dated snapshot per run


@dataclass(frozen=True)
class TableSchema:
    name: str
    resource: str  # the service path below /v1/
    layout: Layout
    columns: tuple[Column, ...]
    natural_key: tuple[str, ...]
    description: str
    # The lake table the warehouse loads it from, when not the one of its own name (the dated
    # snapshots of a current-state table: `snapshots_of`).
    lake_table: str = ""

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def polars_schema(self) -> dict[str, pl.DataType]:
        return {c.name: POLARS_TYPES[c.kind] for c in self.columns}

    def concat(self, frames: list[pl.DataFrame]) -> pl.DataFrame:
        """The frames as one; with none, an empty frame of this table's columns."""
        return pl.concat(frames) if frames else pl.DataFrame(schema=self.polars_schema)

    @property
    def lake_partitions(self) -> tuple[str, ...]:
        return ("date", "currency") if self.layout is Layout.DAILY_FACT else ("date",)

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    def conformed(self, rows: pl.LazyFrame) -> pl.LazyFrame:
        """`rows` in this schema: a column they lack is NULL (written before the service sent
        it), a held one is cast straight to its type (never through a common supertype, which
        for integers and decimals would be a float)."""
        held = rows.collect_schema()
        return rows.select(
            pl.col(name).cast(dtype) if name in held else pl.lit(None, dtype).alias(name)
            for name, dtype in self.polars_schema.items()
        )

    def extended(self, extra: tuple[Column, ...]) -> "TableSchema":
        """This table with columns the service added (schema evolution) after the registry's;
        an extra column of a name already held replaces it in place (a widened type)."""
        if not extra:
            return self
        replacing = {c.name: c for c in extra}
        kept = tuple(replacing.pop(c.name, c) for c in self.columns)
        return TableSchema(
            self.name,
            self.resource,
            self.layout,
            kept + tuple(replacing.values()),
            self.natural_key,
            self.description,
            self.lake_table,
        )


ACCOUNT_ID = Column("account_id", Kind.ID, (), required=True)
EXTRACTED_AT = Column("_extracted_at", Kind.TIMESTAMP, (), required=True)
SNAPSHOT_DATE = Column("date", Kind.DATE, ())
SNAPSHOTS_SUFFIX = "_snapshots"

TIMESTAMPS = (field("createdAt", Kind.TIMESTAMP), field("updatedAt", Kind.TIMESTAMP))
PLACE = (field("connection", Kind.ID), field("country", Kind.ID))


def snapshot(
    name: str,
    resource: str,
    description: str,
    *columns: Column,
    key: tuple[str, ...] = ("account_id", "id"),
) -> TableSchema:
    """A current-state table: one row per record of a cursor list."""
    return TableSchema(
        name, resource, Layout.SNAPSHOT, (ACCOUNT_ID, *columns, EXTRACTED_AT), key, description
    )


def snapshots_of(schema: TableSchema) -> TableSchema:
    """Every dated snapshot the lake keeps of current-state table `schema`, one per account and
    day a run took it, as the warehouse holds them for the entity history models
    (`warehouse/dbt/models/history/`): the table's columns, dated by the snapshot's day."""
    account, *rest = schema.columns
    return TableSchema(
        f"{schema.name}{SNAPSHOTS_SUFFIX}",
        schema.resource,
        Layout.DATED,
        (account, SNAPSHOT_DATE, *rest),
        (*schema.natural_key, "date"),
        f"Every snapshot of `{schema.name}` the runs took, one per account and day (`date`): "
        f"the history models read it. {schema.description}",
        lake_table=schema.name,
    )
