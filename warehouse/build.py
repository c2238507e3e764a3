"""The DuckDB warehouse, rebuilt from the lake and swapped into place.

Analysts keep `warehouse.duckdb` open for hours, and DuckDB lets no process write a file that
another holds. So a run never writes the file analysts read: it builds a new file beside it from
the lake (the source of truth), adds the marts, and renames it over the old one. Open sessions
keep reading the old file; new ones see the new one; a crash leaves the old file untouched and a
temporary file that the next build removes. DuckDB reads Parquet fast enough that a full
rebuild costs seconds even for a year of the `large` preset (see bench/RESULTS.md).
"""

import os
import uuid
from collections.abc import Iterable
from pathlib import Path

import duckdb

from warehouse.marts import create_marts
from warehouse.schemas import DUCKDB_TYPES, Layout, TableSchema

WAREHOUSE_FILE = "warehouse.duckdb"
# Loading streams Parquet into tables: keeping insertion order and DuckDB's default buffer
# pool (80% of RAM) buy nothing but resident memory, which would grow with the lake.
BUILD_CONFIG = {"memory_limit": "256MB", "preserve_insertion_order": False}


def sql_string(text: str) -> str:
    """A SQL string literal (COMMENT ON takes no bound parameters)."""
    return "'" + text.replace("'", "''") + "'"


def ddl(schema: TableSchema) -> str:
    columns = ", ".join(f'"{c.name}" {DUCKDB_TYPES[c.kind]}' for c in schema.columns)
    return f'CREATE TABLE "{schema.name}" ({columns})'


def _load(con: duckdb.DuckDBPyConnection, lake: Path, schema: TableSchema) -> None:
    con.execute(ddl(schema))
    con.execute(f'COMMENT ON TABLE "{schema.name}" IS {sql_string(schema.description)}')
    files = lake / schema.name
    if not any(files.glob("date=*/**/*.parquet")):
        return
    source = (
        f"read_parquet('{files}/**/*.parquet', hive_partitioning = true, union_by_name = true, "
        f"hive_types = {{'date': 'DATE', 'currency': 'VARCHAR'}})"
        if schema.layout is Layout.DAILY_FACT
        else f"read_parquet('{files}/**/*.parquet', hive_partitioning = true, "
        f"union_by_name = true, hive_types = {{'date': 'DATE'}})"
    )
    columns = ", ".join(f'"{name}"' for name in schema.column_names)
    if schema.layout is Layout.SNAPSHOT:
        query = (
            f'INSERT INTO "{schema.name}" ({columns}) SELECT {columns} FROM {source} '
            f"WHERE date = (SELECT max(date) FROM {source})"
        )
    else:
        query = f'INSERT INTO "{schema.name}" ({columns}) SELECT {columns} FROM {source}'
    con.execute(query)


def build_warehouse(home: Path, tables: Iterable[TableSchema]) -> Path:
    """Build `warehouse.duckdb` from `home/lake` and swap it in; return its path."""
    target = home / WAREHOUSE_FILE
    for stale in home.glob(f"{WAREHOUSE_FILE}.building-*"):
        stale.unlink()
    building = home / f"{WAREHOUSE_FILE}.building-{uuid.uuid4().hex}"
    try:
        with duckdb.connect(str(building), config=BUILD_CONFIG) as con:
            for schema in tables:
                _load(con, home / "lake", schema)
            create_marts(con)
            con.execute("CHECKPOINT")
        os.replace(building, target)
    finally:
        building.unlink(missing_ok=True)
        Path(f"{building}.wal").unlink(missing_ok=True)
    return target
