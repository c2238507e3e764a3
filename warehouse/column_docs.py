"""What each column means, in words an analyst reads: derived from the schema registry.

The registry knows each column's service field, kind, enumeration and whether it may be null;
this turns that into one sentence per column, shown in the Dagster UI's column schema (and
anywhere else a column is documented), so the words cannot drift from the types.
"""

from warehouse.schemas import DUCKDB_TYPES, Column, Kind, TableSchema

# Columns the warehouse adds or derives, which no service field explains.
OWN_COLUMNS = {
    "account_id": "The account the row was extracted for (agency keys reach several).",
    "_extracted_at": "When the row was fetched from the service (UTC).",
    "economics_status": "`available` where the economics block was reported; `pending` where it "
    "is null and the date is under 72 hours before the run's reference date (it may still "
    "arrive); `missing` where it is null and older.",
    "campaign": "The campaign whose optimization history this is (from the request path).",
    "cluster": "The cluster the row belongs to.",
    "polarity": "`positive` or `negative`: which keyword list of the cluster it came from.",
}

# The columns of the tables the warehouse records itself, which no service field explains.
RECORDED_COLUMNS = {
    "restatements": {
        "table_name": "The daily-facts table restated (campaign_metrics, seller_product_metrics, "
        "...).",
        "date": "The day restated, as the service dates its rows (partition key of the lake).",
        "currency": "The restated row's currency (part of its natural key).",
        "row_key": "The rest of the restated row's natural key, as JSON (for campaign_metrics: "
        '`{"campaign": …, "ad_product": …}`).',
        "column_name": "The column whose value changed.",
        "value_before": "The value the warehouse held, as exact text (a decimal keeps its "
        "digits: cast a money column's to DECIMAL); NULL when not reported or the row is new.",
        "value_after": "The value that replaced it, as exact text; NULL when not reported or "
        "the row is gone.",
        "kind": "`correction` (the service revised it), `arrival` (seller economics first "
        "reported: they come 48-72 hours late), `appeared` or `disappeared` (a row the day "
        "gained or lost).",
        "before_extracted_at": "When the value before was fetched (UTC); NULL for a row that "
        "appeared.",
        "run_id": "The Dagster run that fetched the value after and recorded the change.",
        "_extracted_at": "When the value after was fetched (UTC): when the change was seen.",
    },
}

KIND_WORDS = {
    Kind.ID: "identifier",
    Kind.MONEY: "exact decimal in the row's currency, never converted",
    Kind.RATIO: "a fraction; null when its denominator is zero",
    Kind.COUNT: "a count; null means not reported, 0 a real zero",
    Kind.NUMBER: "a number",
    Kind.TIMESTAMP: "UTC timestamp",
    Kind.JSON: "JSON, as the service sent it",
    Kind.STRINGS: "list of strings",
    Kind.NULL: "sent by the service, so far only as null",
}


def describe(column: Column, schema: TableSchema) -> str:
    """One sentence: where the value comes from, what kind it is, which values it takes."""
    recorded = RECORDED_COLUMNS.get(schema.name, {})
    if column.name in recorded:
        return recorded[column.name]
    if column.name == "date":
        words = {
            "daily_fact": "The day the figures are for (partition key of the lake).",
            "dated": "The day of the record (partition key of the lake).",
            "snapshot": "The day of the snapshot the row comes from.",
        }
        return words[schema.layout.value]
    parts = []
    if column.source:
        parts.append(_service_field(column))
    elif column.name in OWN_COLUMNS:
        parts.append(OWN_COLUMNS[column.name])
    if column.kind in KIND_WORDS:
        parts.append(KIND_WORDS[column.kind].capitalize() + ".")
    if column.enum and column.source:
        parts.append(f"Values the spec names: {', '.join(column.enum)}.")
    if column.name in schema.natural_key:
        parts.append("Part of the natural key.")
    return " ".join(parts)


def _service_field(column: Column) -> str:
    """The field a column is read from, and the other names a service may give it."""
    named = f"Service field `{'.'.join(column.source)}`"
    if not column.also:
        return named + "."
    others = ", ".join(f"`{'.'.join(path)}`" for path in column.also)
    return f"{named} (or {others}, as a service may name it)."


def column_types(schema: TableSchema) -> list[tuple[str, str, str]]:
    """(name, DuckDB type, description) for every column of `schema`, in order."""
    return [(c.name, DUCKDB_TYPES[c.kind], describe(c, schema)) for c in schema.columns]
