"""The entity history models (`warehouse/dbt/models/history/`), written from the registry.

One model per current-state table, `history_<table>`, each a call of the `entity_history` macro
with the table's key and attributes, and one yml that declares their sources (the dated
snapshots the warehouse loads, `snapshots_of`) and documents every column in the model's order
with the registry's words (`column_docs`). Written, not hand-kept: a column the registry gains
is in its history, documented, the next time this runs (`python -m warehouse.history_models`;
tests/warehouse/test_history.py fails while the files on disk differ from what it writes).

What moves every day by nature (`NIGHTLY_STAMPS`) is kept in a history but opens no interval.

No dbt test: a model's grain (one row per id and valid_from) holds by construction, and each
test would cost every build ~50 ms and Dagster a check; tests/warehouse/test_history.py holds
the macro to it.
"""

import json
from pathlib import Path

from warehouse.column_docs import describe
from warehouse.dbt_project import DBT_PROJECT
from warehouse.schemas import (
    ACCOUNT_ID,
    EXTRACTED_AT,
    SNAPSHOTS_SUFFIX,
    TABLES,
    Kind,
    Layout,
    TableSchema,
)

FOLDER = DBT_PROJECT / "models" / "history"
# The dbt source of the dated snapshots: its tables are named as the lake's.
SNAPSHOTS_SOURCE = "snapshots"
# The tables the service's change log (advertising_changes) says the changes of: by entity id.
CHANGE_LOGGED = ("campaigns", "adgroups")
# What a current-state record holds that moves every day by nature, by table: a column, or a key
# of a JSON column as `column.key`. The optimizer runs every night (spec 8: "nightly at 03:00
# UTC") and stamps each campaign it manages with the date of its run (spec 2.2: `optimizeDate`,
# "read-only, stamped by the optimizer"), whether or not it changed anything: every daily
# snapshot of such a campaign holds a new date, and so does the configuration (JSON) a
# workflow's campaign carries. An interval per night would bury the changes a person looks for,
# so a history keeps these as columns, each with its value in the interval's last snapshot (the
# latest run while the interval's values held), but opens no interval on them and never names
# them in `changed_columns`. What the optimizer really changes is a change of the record and
# opens one: a target's bid, a campaign's `updatedAt` after a placement adjustment;
# `optimizingSince` (when a workflow first touched the campaign) is stamped once, not nightly.
NIGHTLY_STAMPS: dict[str, tuple[str, ...]] = {
    "campaigns": ("optimization_config_optimize_date",),
    "workflow_campaigns": ("optimization_config.optimizeDate",),
}
HEADER = "Written by `python -m warehouse.history_models` from the registry: do not edit."

HELD = "The value throughout the interval."
STAMPED = (
    "Stamped every night by the optimizer's run, so it opens no interval: its value in the "
    "interval's last snapshot."
)
UNCHANGED_BY_STAMPS = "Never for what the optimizer's nightly run stamps alone (its date)."
INTERVAL_COLUMNS = {
    "valid_from": "The first snapshot day that held these values: they changed after "
    "previous_snapshot and by this day.",
    "valid_to": "The first snapshot day of the account that no longer held them (a value "
    "changed, or the id was absent): the values held on [valid_from, valid_to). NULL while "
    "they still hold.",
    "is_current": "True for the values the newest snapshot of the account holds (valid_to is "
    "NULL).",
    "previous_snapshot": "The account's snapshot day before valid_from. NULL when valid_from "
    "is the first snapshot the warehouse holds of the account: since when the values held "
    "before it is not known.",
    "snapshots": "How many snapshots held these values.",
    "changed_columns": "The attributes that differ from the id's previous interval, by name "
    "(empty when the id only came back after a snapshot without it); NULL for its first.",
}
LOGGED_COLUMNS = {
    "logged_changes": "Applied changes the service's change log (advertising_changes) holds "
    "for the id from the previous snapshot's day to the day before valid_from: the changes "
    "that made these values, as far as the log says (0 when it says none, or valid_from is "
    "the first snapshot).",
    "logged_fields": "The fields those logged changes set (state, dailyBudget, defaultBid, "
    "name ...), as the change log names them; NULL when none.",
    "logged_sources": "Who sent them, as the change log says: front (the application), "
    "workflow (the optimizer), system, public-api, mcp; NULL when none.",
    "change_ids": "The ids of those changes in the order they were made, to look them up in "
    "advertising_changes or mart_change_log (who, when, old and new value); NULL when none.",
}


def history_tables() -> list[TableSchema]:
    """The current-state tables of the registry, each with a history model."""
    return [t for t in TABLES.values() if t.layout is Layout.SNAPSHOT]


def key_of(schema: TableSchema) -> list[str]:
    """What names one record within its account."""
    return [c for c in schema.natural_key if c != ACCOUNT_ID.name]


def attributes_of(schema: TableSchema) -> list[str]:
    """The columns whose changes make history: all but the key and when it was fetched."""
    skipped = {*schema.natural_key, EXTRACTED_AT.name, "date"}
    return [c.name for c in schema.columns if c.name not in skipped]


def stamps_of(schema: TableSchema) -> tuple[list[str], dict[str, list[str]]]:
    """What moves every night in the table's records (`NIGHTLY_STAMPS`): the columns, and per
    JSON column the keys; a name the registry does not hold is refused."""
    columns, keys = [], {}
    for stamp in NIGHTLY_STAMPS.get(schema.name, ()):
        name, _, key = stamp.partition(".")
        if name not in attributes_of(schema) or (key and schema.column(name).kind is not Kind.JSON):
            raise ValueError(f"NIGHTLY_STAMPS: {schema.name} has no attribute {stamp}")
        if key and not key.isidentifier():
            raise ValueError(f"NIGHTLY_STAMPS: {stamp}: a key of the JSON's top level, by name")
        if key:
            keys.setdefault(name, []).append(key)
        else:
            columns.append(name)
    return columns, keys


def model_name(schema: TableSchema) -> str:
    return f"history_{schema.name}"


def model_sql(schema: TableSchema) -> str:
    attributes = "".join(f"\n        {json.dumps(name)}," for name in attributes_of(schema))
    arguments = [
        repr(schema.name),
        f"key={json.dumps(key_of(schema))}",
        f"attributes=[{attributes.rstrip(',')}\n    ]",
    ]
    if schema.name in CHANGE_LOGGED:
        arguments.append("change_log=true")
    stamped, stamped_keys = stamps_of(schema)
    if stamped:
        arguments.append(f"stamped={json.dumps(stamped)}")
    if stamped_keys:
        arguments.append(f"stamped_keys={json.dumps(stamped_keys)}")
    listed = ",\n    ".join(arguments)
    return f"-- {HEADER}\n{{{{ entity_history(\n    {listed}\n) }}}}\n"


def model_columns(schema: TableSchema) -> list[tuple[str, str]]:
    """(name, description) of the model's columns, in its order."""
    described = {c.name: describe(c, schema) for c in schema.columns}
    columns = [(name, described[name]) for name in [ACCOUNT_ID.name, *key_of(schema)]]
    stamped, stamped_keys = stamps_of(schema)
    intervals = dict(INTERVAL_COLUMNS)
    if stamped or stamped_keys:
        intervals["changed_columns"] += f" {UNCHANGED_BY_STAMPS}"
    columns += list(intervals.items())
    for name in attributes_of(schema):
        if name in stamped:
            held = STAMPED
        elif name in stamped_keys:
            keys = ", ".join(f"`{key}`" for key in stamped_keys[name])
            held = (
                f"Its {keys} stamped every night by the optimizer's run, which opens no "
                "interval: the value in the interval's last snapshot, the rest held throughout."
            )
        else:
            held = HELD
        columns.append((name, f"{described[name]} {held}"))
    if schema.name in CHANGE_LOGGED:
        columns += list(LOGGED_COLUMNS.items())
    return columns


def history_yml() -> str:
    tables = history_tables()
    lines = [
        f"# {HEADER}",
        "version: 2",
        "",
        "sources:",
        f"  - name: {SNAPSHOTS_SOURCE}",
        "    schema: main",
        "    description: Every dated snapshot of the current-state tables, one per account and "
        "day a run took it, loaded into warehouse.duckdb by the pipeline as <table>_snapshots.",
        "    tables:",
    ]
    for schema in tables:
        lines += [
            f"      - name: {schema.name}",
            f"        identifier: {schema.name}{SNAPSHOTS_SUFFIX}",
        ]
    lines += ["", "models:"]
    for schema in tables:
        description = (
            f"The history of {schema.name}: each record's values with the interval they held "
            "(valid_from, valid_to), one row per interval, from the snapshots the daily runs "
            "took; a new interval only where a value changed or the record came back. To read "
            "a day D: valid_from <= D AND (valid_to > D OR valid_to IS NULL)."
        )
        if schema.name in CHANGE_LOGGED:
            description += " Joined to the change log: which logged changes made each interval."
        lines += [
            f"  - name: {model_name(schema)}",
            f"    description: {json.dumps(description)}",
            "    columns:",
        ]
        for name, words in model_columns(schema):
            lines += [f"      - name: {name}", f"        description: {json.dumps(words)}"]
    return "\n".join(lines) + "\n"


def expected_files() -> dict[Path, str]:
    """Every file of the history folder, with what it must hold."""
    files = {FOLDER / "history.yml": history_yml()}
    files |= {FOLDER / f"{model_name(t)}.sql": model_sql(t) for t in history_tables()}
    return files


def write() -> list[Path]:
    """Write the folder as the registry has it; return the files that changed."""
    FOLDER.mkdir(exist_ok=True)
    changed = []
    for path, text in expected_files().items():
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            changed.append(path)
    for stale in set(FOLDER.iterdir()) - set(expected_files()):
        stale.unlink()
        changed.append(stale)
    return changed


if __name__ == "__main__":
    for path in write():
        print(f"wrote {path.relative_to(DBT_PROJECT)}")
