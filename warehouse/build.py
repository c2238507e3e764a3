"""The DuckDB warehouse, rebuilt from the lake and swapped into place.

Analysts keep `warehouse.duckdb` open for hours, and DuckDB lets no process write a file that
another holds. So a run never writes the file analysts read: it builds a new file beside it from
the lake (the source of truth), has the marts built in it (dbt, `warehouse/dbt`), and renames it
over the old one. Open sessions keep reading the old file; new ones see the new one; a crash or a
failed mart test leaves the old file untouched and a temporary file that the next build removes.
DuckDB reads Parquet fast enough that a full rebuild costs seconds even for a year of the
`large` preset (see bench/RESULTS.md).
"""

import contextlib
import os
import shutil
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import duckdb

from warehouse.marts import build_marts
from warehouse.schema_log import SchemaLog
from warehouse.schemas import DUCKDB_TYPES, Layout, TableSchema
from warehouse.spec import CURRENCY_DIGITS, DEFAULT_CURRENCY_DIGITS

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
    # A column the service added after the last partition was written is in the schema and in
    # no file yet: it loads as NULL, like the partitions written before it existed.
    held = {row[0] for row in con.sql(f"DESCRIBE SELECT * FROM {source}").fetchall()}
    columns = ", ".join(f'"{name}"' for name in schema.column_names)
    values = ", ".join(
        f'"{c.name}"' if c.name in held else f"CAST(NULL AS {DUCKDB_TYPES[c.kind]})"
        for c in schema.columns
    )
    if schema.layout is Layout.SNAPSHOT:
        query = (
            f'INSERT INTO "{schema.name}" ({columns}) SELECT {values} FROM {source} '
            f"WHERE date = (SELECT max(date) FROM {source})"
        )
    else:
        query = f'INSERT INTO "{schema.name}" ({columns}) SELECT {values} FROM {source}'
    con.execute(query)


def _schema_changes(con: duckdb.DuckDBPyConnection, log: SchemaLog) -> None:
    """The log of columns the service added or widened, as a table analysts can query."""
    con.execute(SCHEMA_CHANGES_DDL)
    con.execute(f"COMMENT ON TABLE schema_changes IS {sql_string(SCHEMA_CHANGES_COMMENT)}")
    rows = [
        (
            c.table_name,
            c.column_name,
            c.column_type,
            c.change,
            c.previous_type,
            c.source_field,
            c.first_date,
            c.run_id,
            c.recorded_at,
        )
        for c in log.changes()
    ]
    if rows:
        con.executemany("INSERT INTO schema_changes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)


SCHEMA_CHANGES_DDL = """
CREATE TABLE schema_changes (
    table_name VARCHAR, column_name VARCHAR, column_type VARCHAR, change VARCHAR,
    previous_type VARCHAR, source_field VARCHAR, first_date DATE, run_id VARCHAR,
    recorded_at TIMESTAMP
)"""
SCHEMA_CHANGES_COMMENT = (
    "Every column the service added to a table (a field the registry does not know), or "
    "widened (a later value that did not fit its type: BIGINT -> DECIMAL -> VARCHAR): the "
    "table, the column and its type, the service's field, the first date holding a value and "
    "the run that found it. Rows written before a column existed read it as NULL."
)


FUNCTIONS = Path(__file__).parent / "sql" / "functions.sql"


def functions_sql() -> str:
    """The macros the marts call, `currency_digits` written from the spec's table."""
    digits = "\n".join(
        f"        WHEN '{code}' THEN {n}" for code, n in sorted(CURRENCY_DIGITS.items())
    )
    return (
        FUNCTIONS.read_text()
        .replace("{currency_digits}", digits)
        .replace("{default_digits}", str(DEFAULT_CURRENCY_DIGITS))
    )


def build_warehouse(home: Path, tables: Iterable[TableSchema], run_id: str = "build") -> list[Any]:
    """Build `warehouse.duckdb` from `home/lake` with its marts (dbt), and swap it in; return
    dbt's node results. When a model or test fails, the old warehouse stays as it was and
    MartError names the failure; dbt's artifacts stay in `home/dbt/<run_id>` for a look."""
    target = home / WAREHOUSE_FILE
    for stale in home.glob(f"{WAREHOUSE_FILE}.building-*"):
        stale.unlink()
    building = home / f"{WAREHOUSE_FILE}.building-{uuid.uuid4().hex}"
    artifacts = home / "dbt" / run_id
    try:
        log = SchemaLog(home)
        with duckdb.connect(str(building), config=BUILD_CONFIG) as con:
            for schema in tables:
                _load(con, home / "lake", log.schema(schema))
            _schema_changes(con, log)
            con.execute(functions_sql())
        results = build_marts(building, artifacts)
        with duckdb.connect(str(building)) as con:
            con.execute("CHECKPOINT")
        os.replace(building, target)
        shutil.rmtree(artifacts, ignore_errors=True)
        with contextlib.suppress(OSError):  # kept while another build's artifacts are there
            artifacts.parent.rmdir()
        return results
    finally:
        building.unlink(missing_ok=True)
        Path(f"{building}.wal").unlink(missing_ok=True)
