"""Loading a lake table into the warehouse: only the days whose files changed since last time.

The warehouse records which lake files each table's rows came from (`_lake_files`). A Delta
table's files never change once written, so a day whose files are the same as at the last load
holds the same rows, and a day with a file added or removed (a publish, a rewrite after schema
evolution, a compaction, another run's accounts) is deleted and read again from the lake. This
holds whoever wrote the lake, with no journal to keep in step: a daily run reads the days it
replaced, not the years held.

The days a build read again are left in `_lake_reloads` for the incremental models
(`warehouse/dbt/models/int_product_daily.sql`), which recompute the same days and no others.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

import duckdb
import pyarrow as pa

from warehouse.lake import Lake, Snapshot, hive_parquet, sql_string
from warehouse.schemas import DUCKDB_TYPES, Layout, TableSchema

FILES_TABLE = "_lake_files"
RELOADS_TABLE = "_lake_reloads"
FILES_DDL = f"""
CREATE TABLE IF NOT EXISTS {FILES_TABLE} (table_name VARCHAR, path VARCHAR, date DATE);
COMMENT ON TABLE {FILES_TABLE} IS 'The lake files (Delta Lake data files) each table was loaded
from, with their day: the next build reads again only the days whose files changed.';
CREATE TABLE IF NOT EXISTS {RELOADS_TABLE} (table_name VARCHAR, date DATE);
COMMENT ON TABLE {RELOADS_TABLE} IS 'The days the last build read again from the lake, per
table (date NULL: the whole table): the incremental models recompute these days.';
"""


@dataclass(frozen=True)
class Loaded:
    """What a build read for one table: the days read again, or all of it."""

    table: str
    days: int
    whole: bool


def columns_sql(schema: TableSchema) -> str:
    return ", ".join(f'"{c.name}" {DUCKDB_TYPES[c.kind]}' for c in schema.columns)


def ddl(schema: TableSchema) -> str:
    return f'CREATE TABLE "{schema.name}" ({columns_sql(schema)})'


def refresh(
    con: duckdb.DuckDBPyConnection,
    lake: Lake,
    schemas: Iterable[TableSchema],
    snapshots: dict[str, Snapshot | None],
) -> list[Loaded]:
    """Bring every table of `schemas` to its version in `snapshots` (`Lake.snapshots`)."""
    con.execute(FILES_DDL)
    schemas = list(schemas)
    as_declared = _tables_as_declared(con, schemas)
    return [
        _refresh(con, lake, schema, snapshots[schema.name], schema.name in as_declared)
        for schema in schemas
    ]


def _refresh(
    con: duckdb.DuckDBPyConnection,
    lake: Lake,
    schema: TableSchema,
    snapshot: Snapshot | None,
    as_declared: bool,
) -> Loaded:
    current = snapshot.files if snapshot is not None else {}
    previous = dict(
        con.execute(
            f"SELECT path, date FROM {FILES_TABLE} WHERE table_name = ?", [schema.name]
        ).fetchall()
    )
    # A table with other columns (the service added or widened one), or loaded by a version
    # that kept no file list, is read again whole.
    whole = not as_declared or (not previous and _has_rows(con, schema))
    _record_reloads(con, schema.name, None if whole else [])
    if whole:
        con.execute(f'DROP TABLE IF EXISTS "{schema.name}"')
        con.execute(ddl(schema))
        con.execute(f'COMMENT ON TABLE "{schema.name}" IS {sql_string(schema.description)}')
        previous = {}
    added = {path: day for path, day in current.items() if path not in previous}
    removed = [path for path in previous if path not in current]
    changed = set(added.values()) | {previous[path] for path in removed}
    if not changed:
        return Loaded(schema.name, 0, whole)
    if schema.layout is Layout.SNAPSHOT:
        # Current state is the newest snapshot only: small, and read whole when it changes.
        con.execute(f'DELETE FROM "{schema.name}"')
        days = [max(current.values())] if current else []
    else:
        days = sorted(changed)
        con.execute(f'DELETE FROM "{schema.name}" WHERE date IN ({_dates(days)})')
        if not whole:
            _record_reloads(con, schema.name, days)
    if snapshot is not None and days:
        if lake.remote:  # DuckDB has no object-store reader here: through PyArrow
            con.register("lake_rows", lake.dataset(schema.name, snapshot.version, days))
            _insert(con, schema, "lake_rows")
            con.unregister("lake_rows")
        elif files := lake.local_files(schema.name, snapshot, days):  # none: days emptied
            _insert(con, schema, hive_parquet(files, schema))
    _record_files(con, schema.name, added, removed, whole)
    return Loaded(schema.name, len(days), whole)


def _record_files(
    con: duckdb.DuckDBPyConnection,
    table: str,
    added: dict[str, date],
    removed: list[str],
    whole: bool,
) -> None:
    """Bring `_lake_files` of `table` to the lake: the files a build added and removed, not the
    table's whole list (which grows with the years held)."""
    if whole:
        con.execute(f"DELETE FROM {FILES_TABLE} WHERE table_name = ?", [table])
    elif removed:
        con.execute(
            f"DELETE FROM {FILES_TABLE} WHERE table_name = ? AND list_contains(?, path)",
            [table, removed],
        )
    listed = pa.table(
        {
            "table_name": [table] * len(added),
            "path": list(added),
            "date": pa.array(list(added.values()), pa.date32()),
        }
    )
    con.register("added_files", listed)
    con.execute(f"INSERT INTO {FILES_TABLE} SELECT * FROM added_files")
    con.unregister("added_files")


def _insert(con: duckdb.DuckDBPyConnection, schema: TableSchema, source: str) -> None:
    """Insert the rows of `source` (the files of the days read again) in `schema`'s columns.
    A column the service added after the last publish, or has sent only as null so far, is in
    the schema and not in the lake: it loads as NULL, like rows written before it."""
    held = {row[0] for row in con.sql(f"DESCRIBE SELECT * FROM {source}").fetchall()}
    columns = ", ".join(f'"{name}"' for name in schema.column_names)
    values = ", ".join(
        f'"{c.name}"' if c.name in held else f"CAST(NULL AS {DUCKDB_TYPES[c.kind]})"
        for c in schema.columns
    )
    con.execute(f'INSERT INTO "{schema.name}" ({columns}) SELECT {values} FROM {source}')


def _record_reloads(con: duckdb.DuckDBPyConnection, table: str, days: list[date] | None) -> None:
    """Replace what `_lake_reloads` says of `table`: these days, or (None) the whole table."""
    con.execute(f"DELETE FROM {RELOADS_TABLE} WHERE table_name = ?", [table])
    rows = [(table, None)] if days is None else [(table, day) for day in days]
    if rows:
        con.executemany(f"INSERT INTO {RELOADS_TABLE} VALUES (?, ?)", rows)


def _has_rows(con: duckdb.DuckDBPyConnection, schema: TableSchema) -> bool:
    return con.execute(f'SELECT EXISTS (FROM "{schema.name}")').fetchone() == (True,)


def _tables_as_declared(con: duckdb.DuckDBPyConnection, schemas: list[TableSchema]) -> set[str]:
    """The tables that exist with exactly their schema's columns and types (a column the
    service added or widened since the last build makes its table read again whole). Two
    queries for all tables: one per table cost ~20 ms each, most of a quick build."""
    declared = sorted({DUCKDB_TYPES[c.kind] for schema in schemas for c in schema.columns})
    spelled = con.execute(
        "SELECT " + ", ".join(f"typeof(CAST(NULL AS {t}))" for t in declared)
    ).fetchone()
    named = dict(zip(declared, spelled, strict=True))
    held: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in con.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_catalog = current_database() AND table_schema = 'main' "
        "ORDER BY table_name, ordinal_position"
    ).fetchall():
        held.setdefault(table, []).append((column, kind))
    return {
        schema.name
        for schema in schemas
        if held.get(schema.name) == [(c.name, named[DUCKDB_TYPES[c.kind]]) for c in schema.columns]
    }


def _dates(days: list[date]) -> str:
    return ", ".join(f"DATE '{day.isoformat()}'" for day in days)
