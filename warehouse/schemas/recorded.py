"""The tables the runs record themselves, which the service never sends."""

from warehouse.schemas.columns import Column, Kind
from warehouse.schemas.tables import ACCOUNT_ID, EXTRACTED_AT, Layout, TableSchema

# What a replace changed in a day already published (transforms/restatements.py): not read from
# the service, but recorded by the runs as they replace days, before each commit.
RESTATEMENT_KINDS = ("appeared", "disappeared", "arrival", "correction")
RESTATEMENTS = TableSchema(
    "restatements",
    "",
    Layout.DATED,
    (
        Column("table_name", Kind.STRING, (), required=True),
        ACCOUNT_ID,
        Column("date", Kind.DATE, (), required=True),
        Column("currency", Kind.STRING, (), required=True),
        Column("row_key", Kind.JSON, (), required=True),
        Column("column_name", Kind.STRING, (), required=True),
        Column("value_before", Kind.STRING, ()),
        Column("value_after", Kind.STRING, ()),
        Column("kind", Kind.STRING, (), RESTATEMENT_KINDS, True),
        Column("before_extracted_at", Kind.TIMESTAMP, ()),
        Column("run_id", Kind.STRING, ()),
        EXTRACTED_AT,
    ),
    ("table_name", "account_id", "date", "currency", "row_key", "column_name", "_extracted_at"),
    "What the service said about a day and what it says now: one row per cell a run changed in "
    "a day it had already published (append-only). `kind` is `correction` (the service revised "
    "a figure), `arrival` (seller economics first reported, spec 2.9: they come 48-72 hours "
    "late), `appeared` or `disappeared` (a row the day newly has, or no longer has: each of its "
    "reported cells). Values are exact text (cast a money column's to DECIMAL); "
    "`before_extracted_at` and `_extracted_at` say when each was fetched, `run_id` which run "
    "restated it. `date` is the day restated.",
)
