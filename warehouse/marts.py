"""The analysts' marts: DuckDB views defined in `warehouse/sql/*.sql`, one file per mart.

Each file is one `CREATE VIEW` followed by its `COMMENT ON VIEW`; files run in name order, so
a mart may build on the marts before it.
"""

from pathlib import Path

import duckdb

SQL_DIR = Path(__file__).parent / "sql"


def mart_files() -> list[Path]:
    return sorted(SQL_DIR.glob("mart_*.sql"))


def create_marts(con: duckdb.DuckDBPyConnection) -> None:
    for path in mart_files():
        con.execute(path.read_text())
