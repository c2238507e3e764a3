"""The DuckDB warehouse, brought up to date from the lake in a copy and swapped into place.

Analysts keep `warehouse.duckdb` open for hours, and DuckDB lets no process write a file that
another holds. So a run never writes the file analysts read: it copies it beside itself, loads
into the copy only the days whose lake files changed (`warehouse/load.py`), has the marts built
in it (dbt, `warehouse/dbt`), and renames it over the old one. Open sessions keep reading the old
file, a consistent state; new ones see the new one; a crash or a failed mart test leaves the old
file untouched and a temporary file that the next build removes. Copying a file costs a small
fraction of reading the years it holds again (see bench/RESULTS.md).
"""

import contextlib
import os
import shutil
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
from filelock import FileLock

from warehouse.lake import Lake, sql_string
from warehouse.load import Loaded, refresh
from warehouse.marts import build_marts
from warehouse.schema_log import SchemaLog
from warehouse.schemas import TableSchema
from warehouse.spec import CURRENCY_DIGITS, DEFAULT_CURRENCY_DIGITS

WAREHOUSE_FILE = "warehouse.duckdb"
# Loading streams Parquet into tables: keeping insertion order and DuckDB's default buffer
# pool (80% of RAM) buy nothing but resident memory, which would grow with the lake.
BUILD_CONFIG = {"memory_limit": "256MB", "preserve_insertion_order": False}


def _schema_changes(con: duckdb.DuckDBPyConnection, log: SchemaLog) -> None:
    """The log of columns the service added or widened, as a table analysts can query."""
    con.execute("DROP TABLE IF EXISTS schema_changes")
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


@dataclass(frozen=True)
class Built:
    """What a build did: each table's load, and dbt's node results (models and tests)."""

    loaded: list[Loaded]
    results: list[Any]


def build_warehouse(
    home: Path, lake: Lake, tables: Iterable[TableSchema], run_id: str = "build"
) -> Built:
    """Bring `warehouse.duckdb` in `home` up to `lake` with its marts (dbt), and swap it in.
    When a model or test fails, the old warehouse stays as it was and
    MartError names the failure; dbt's artifacts stay in `home/dbt/<run_id>` for a look.

    One build at a time per home (a lock file): two would each start from the same old file,
    and the second swap would drop what the first loaded."""
    with FileLock(home / ".warehouse.lock"):  # hidden, like the CLI's `.adwh.lock`
        return _build(home, lake, tables, run_id)


def _build(home: Path, lake: Lake, tables: Iterable[TableSchema], run_id: str) -> Built:
    target = home / WAREHOUSE_FILE
    for stale in home.glob(f"{WAREHOUSE_FILE}.building-*"):
        stale.unlink()
    building = home / f"{WAREHOUSE_FILE}.building-{uuid.uuid4().hex}"
    artifacts = home / "dbt" / run_id
    try:
        if target.exists():
            shutil.copyfile(target, building)
        log = SchemaLog(home)
        with duckdb.connect(str(building), config=BUILD_CONFIG) as con:
            loaded = [refresh(con, lake, log.schema(schema)) for schema in tables]
            _schema_changes(con, log)
            con.execute(functions_sql())
        results = build_marts(building, artifacts)
        with duckdb.connect(str(building), config=BUILD_CONFIG) as con:
            con.execute("CHECKPOINT")
        os.replace(building, target)
        shutil.rmtree(artifacts, ignore_errors=True)
        with contextlib.suppress(OSError):  # kept while another build's artifacts are there
            artifacts.parent.rmdir()
        return Built(loaded, results)
    finally:
        building.unlink(missing_ok=True)
        Path(f"{building}.wal").unlink(missing_ok=True)
