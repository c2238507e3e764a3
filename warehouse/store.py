"""The DuckDB warehouse: typed tables created from the schema registry, loaded in transactions.

A load of a date range is one transaction that deletes those dates and inserts the new rows,
so analysts see the old partition or the new one, never both and never half. DuckDB allows one
writing process per file: the connection is retried while another process holds the lock.
"""

from collections.abc import Iterable
from datetime import date
from pathlib import Path

import duckdb
import polars as pl
from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_exponential

from warehouse.schemas import DUCKDB_TYPES, Layout, TableSchema


class WarehouseBusyError(RuntimeError):
    """Another process held the warehouse file for longer than we wait."""


def _is_lock_error(error: BaseException) -> bool:
    return isinstance(error, duckdb.IOException) and "lock" in str(error).lower()


class Store:
    def __init__(self, path: Path, wait_seconds: float = 120.0) -> None:
        self.path = path
        self.wait_seconds = wait_seconds

    def connect(self, read_only: bool = False) -> duckdb.DuckDBPyConnection:
        """Open the file, waiting (bounded) while another process holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            for attempt in Retrying(
                retry=retry_if_exception(_is_lock_error),
                wait=wait_exponential(multiplier=0.05, max=2),
                stop=stop_after_delay(self.wait_seconds),
                reraise=True,
            ):
                with attempt:
                    return duckdb.connect(str(self.path), read_only=read_only)
        except duckdb.IOException as error:
            raise WarehouseBusyError(
                f"{self.path} is held by another process: {str(error).splitlines()[0]}"
            ) from None
        raise AssertionError("unreachable")

    @staticmethod
    def ddl(schema: TableSchema) -> str:
        columns = ", ".join(f'"{c.name}" {DUCKDB_TYPES[c.kind]}' for c in schema.columns)
        return f'CREATE TABLE IF NOT EXISTS "{schema.name}" ({columns})'

    def replace_dates(
        self, schema: TableSchema, frame: pl.DataFrame, dates: Iterable[date]
    ) -> None:
        """Replace exactly the rows of `dates` with `frame`, atomically."""
        days = sorted(set(dates))
        with self.connect() as con:
            con.execute(self.ddl(schema))
            con.execute("BEGIN TRANSACTION")
            try:
                con.execute(
                    f'DELETE FROM "{schema.name}" WHERE "date" IN (SELECT unnest(?::DATE[]))',
                    [days],
                )
                self._insert(con, schema, frame)
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise

    def replace_all(self, schema: TableSchema, frame: pl.DataFrame) -> None:
        """Replace a current-state table whole, atomically."""
        assert schema.layout is Layout.SNAPSHOT
        with self.connect() as con:
            con.execute(self.ddl(schema))
            con.execute("BEGIN TRANSACTION")
            try:
                con.execute(f'DELETE FROM "{schema.name}"')
                self._insert(con, schema, frame)
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise

    @staticmethod
    def _insert(con: duckdb.DuckDBPyConnection, schema: TableSchema, frame: pl.DataFrame) -> None:
        if frame.is_empty():
            return
        arrow = frame.select(schema.column_names).to_arrow()
        con.register("incoming", arrow)
        try:
            con.execute(f'INSERT INTO "{schema.name}" BY NAME SELECT * FROM incoming')
        finally:
            con.unregister("incoming")
