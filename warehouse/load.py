"""Loading a lake table into the warehouse: only the days whose files changed since last time.

The warehouse records which lake files each table's rows came from (`_lake_files`). A Delta
table's files never change once written, so a day whose files are the same as at the last load
holds the same rows, and a day with a file added or removed (a publish, a rewrite after schema
evolution, a compaction, another run's accounts) is deleted and read again from the lake. This
holds whoever wrote the lake, with no journal to keep in step: a daily run reads the days it
replaced, not the years held.

The days a build read again are left in `_lake_reloads` for the incremental models
(`warehouse/dbt/models/int_product_daily.sql`), which recompute the same days and no others.

Each table's Delta version is kept beside its files (`_lake_versions`): the next build vacuums
a table only when a commit since that version replaced files (`Lake.snapshots`).
"""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

import duckdb
import pyarrow as pa

from warehouse.lake import Lake, Snapshot, hive_parquet, loaded_from, sql_string
from warehouse.schemas import DUCKDB_TYPES, Layout, TableSchema

FILES_TABLE = "_lake_files"
RELOADS_TABLE = "_lake_reloads"
VERSIONS_TABLE = "_lake_versions"
FILES_DDL = f"""
CREATE TABLE IF NOT EXISTS {FILES_TABLE} (table_name VARCHAR, path VARCHAR, date DATE);
COMMENT ON TABLE {FILES_TABLE} IS 'The lake files (Delta Lake data files) each table was loaded
from, with their day: the next build reads again only the days whose files changed.';
CREATE TABLE IF NOT EXISTS {VERSIONS_TABLE} (table_name VARCHAR, version BIGINT);
COMMENT ON TABLE {VERSIONS_TABLE} IS 'The Delta version of each lake table the warehouse holds
(the files in _lake_files are that version''s): the next build reads the commits after it.';
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


def held_versions(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """The Delta version of each lake table the warehouse holds (none in a new one, or one
    loaded by a version of the project that kept none)."""
    held = con.execute(
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_catalog = current_database() AND table_name = ?",
        [VERSIONS_TABLE],
    ).fetchall()
    if not held:
        return {}
    return dict(con.execute(f"SELECT table_name, version FROM {VERSIONS_TABLE}").fetchall())


def refresh(
    con: duckdb.DuckDBPyConnection,
    lake: Lake,
    schemas: Iterable[TableSchema],
    changes: dict[str, Snapshot | None],
) -> list[Loaded]:
    """Bring every table of `schemas` to the lake as `changes` gives each lake table
    (`Lake.snapshots`): a dated table to itself, current state to its current rows. The
    versions of the other tables in `changes` (the dated snapshots, vacuumed by the build but
    not loaded) are recorded too, for the next build to read their commits since."""
    con.execute(FILES_DDL)
    schemas = list(schemas)
    as_declared = _tables_as_declared(con, schemas)
    done = [
        _refresh(con, lake, schema, changes[loaded_from(schema)], schema.name in as_declared)
        for schema in schemas
    ]
    _record(con, [schema.name for schema in schemas], done, changes)
    return [table.loaded for table in done]


@dataclass(frozen=True)
class _Done:
    """What a table's load changed in the build's bookkeeping, recorded for all at once (a few
    statements per table were most of a daily build's load)."""

    loaded: Loaded
    source: str  # the lake table it holds
    version: int | None  # the lake version it holds; None: no lake table
    reloads: list[date]  # the dated days read again (`loaded.whole`: recorded as the table)
    added: dict[str, date]
    removed: list[str]


def _refresh(
    con: duckdb.DuckDBPyConnection,
    lake: Lake,
    schema: TableSchema,
    snapshot: Snapshot | None,
    as_declared: bool,
) -> _Done:
    """The table brought to the lake; what it changed is recorded by `_record`."""
    previous = dict(
        con.execute(
            f"SELECT path, date FROM {FILES_TABLE} WHERE table_name = ?", [schema.name]
        ).fetchall()
    )
    # A table with other columns (the service added or widened one), or loaded by a version
    # that kept no file list, is read again whole.
    whole = not as_declared or (not previous and _has_rows(con, schema))
    source = loaded_from(schema)
    version = snapshot.version if snapshot is not None else None
    current = snapshot.files if snapshot is not None else {}
    if whole:
        con.execute(f'DROP TABLE IF EXISTS "{schema.name}"')
        con.execute(ddl(schema))
        con.execute(f'COMMENT ON TABLE "{schema.name}" IS {sql_string(schema.description)}')
        previous = {}
    added = {path: day for path, day in current.items() if path not in previous}
    removed = [path for path in previous if path not in current]
    changed = set(added.values()) | {previous[path] for path in removed}
    if not changed:
        return _Done(Loaded(schema.name, 0, whole), source, version, [], {}, [])
    snapshots = schema.layout is Layout.SNAPSHOT
    if snapshots:
        # Current state is each account's newest snapshot (`Lake.publish_current`): small,
        # and read whole when it changes.
        con.execute(f'DELETE FROM "{schema.name}"')
        days = None
    else:
        days = sorted(changed)
        con.execute(f'DELETE FROM "{schema.name}" WHERE date IN ({_dates(days)})')
    if snapshot is not None and days != []:
        if lake.remote:  # DuckDB has no object-store reader here: through PyArrow
            con.register("lake_rows", lake.dataset(source, snapshot.version, days))
            _insert(con, schema, "lake_rows")
            con.unregister("lake_rows")
        elif files := lake.local_files(source, snapshot, days):  # none: days emptied
            _insert(con, schema, hive_parquet(files, schema, partitioned=not snapshots))
    reloads = days or []
    loaded = Loaded(schema.name, 1 if snapshots else len(reloads), whole)
    return _Done(loaded, source, version, reloads, added, removed)


def _record(
    con: duckdb.DuckDBPyConnection,
    names: list[str],
    done: list[_Done],
    changes: dict[str, Snapshot | None],
) -> None:
    """Bring `_lake_files`, `_lake_reloads` and `_lake_versions` of the tables `names` to what
    their loads did: the files added and removed, not each table's whole list (which grows
    with the years held); and the versions of the other lake tables in `changes`."""
    whole = [table.loaded.table for table in done if table.loaded.whole]
    con.execute(f"DELETE FROM {FILES_TABLE} WHERE list_contains(?, table_name)", [whole])
    removed = [(table.loaded.table, path) for table in done for path in table.removed]
    if removed:
        tables, paths = zip(*removed, strict=True)
        con.register("removed_files", pa.table({"table_name": tables, "path": paths}))
        con.execute(f"DELETE FROM {FILES_TABLE} WHERE (table_name, path) IN (FROM removed_files)")
        con.unregister("removed_files")
    added = [(t.loaded.table, path, day) for t in done for path, day in t.added.items()]
    if added:
        owners, paths, days = zip(*added, strict=True)
        listed = pa.table(
            {"table_name": owners, "path": paths, "date": pa.array(days, pa.date32())}
        )
        con.register("added_files", listed)
        con.execute(f"INSERT INTO {FILES_TABLE} SELECT * FROM added_files")
        con.unregister("added_files")
    # The days read again (date NULL: the whole table), for the incremental models.
    con.execute(f"DELETE FROM {RELOADS_TABLE} WHERE list_contains(?, table_name)", [names])
    reloads = [
        (t.loaded.table, day) for t in done for day in ([None] if t.loaded.whole else t.reloads)
    ]
    if reloads:
        con.executemany(f"INSERT INTO {RELOADS_TABLE} VALUES (?, ?)", reloads)
    # Keyed by lake table: a warehouse table may have been loaded from another before (its
    # dated snapshots, by a version before `current/`), whose row goes with it.
    versions = {name: change.version for name, change in changes.items() if change is not None}
    versions |= {t.source: t.version for t in done if t.version is not None}
    con.execute(
        f"DELETE FROM {VERSIONS_TABLE} WHERE list_contains(?, table_name)",
        [[*names, *changes]],
    )
    if versions:
        con.executemany(f"INSERT INTO {VERSIONS_TABLE} VALUES (?, ?)", list(versions.items()))


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
