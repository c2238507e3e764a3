"""The Parquet lake: Hive partitions published atomically, one date directory at a time.

Polars writes the partitioned dataset into a staging folder beside the table; each date
directory is then swapped into place with renames. A reader sees the old or the new partition,
never a half-written one, and a crash leaves only a staging folder that the next run removes.
Dates in the published range that have no rows lose their old partition: re-materializing a
range replaces exactly those partitions.
"""

import ctypes
import errno
import os
import shutil
import uuid
from collections.abc import Iterable
from datetime import date
from pathlib import Path

import duckdb
import polars as pl

from warehouse.schemas import Layout, TableSchema

_RENAME_EXCHANGE = 2  # renameat2(2) flag: swap two paths in one step
_AT_FDCWD = -100


def _exchange(first: Path, second: Path) -> bool:
    """Swap two directories atomically (Linux renameat2 RENAME_EXCHANGE); False where the
    system cannot, and the caller falls back to two renames. With two renames a reader can
    glob between them and find the partition missing, and a crash there loses it until the
    next run."""
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is None:
        return False
    done = renameat2(
        _AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE
    )
    if done == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(second))


class Lake:
    def __init__(self, root: Path, staging: Path) -> None:
        self.root = root
        self.staging = staging  # on the same file system, so that renames are atomic

    def table_dir(self, schema: TableSchema) -> Path:
        return self.root / schema.name

    def publish(self, schema: TableSchema, frame: pl.DataFrame, dates: Iterable[date]) -> int:
        """Replace the partitions of `dates` with `frame`'s rows; return files written."""
        table_dir = self.table_dir(schema)
        staging = self.staging / f"{schema.name}-{uuid.uuid4().hex}"
        try:
            files = self._write(schema, frame, staging)
            table_dir.mkdir(parents=True, exist_ok=True)
            for day in sorted(set(dates)):
                self._swap(
                    staging / f"date={day.isoformat()}", table_dir / f"date={day.isoformat()}"
                )
            return files
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _write(self, schema: TableSchema, frame: pl.DataFrame, staging: Path) -> int:
        """Write `frame` as Hive partitions under `staging`; return the files written.

        Polars' partitioned sink streams each partition to its file: pyarrow's dataset writer
        kept a writer and its buffers per partition, hundreds of MB for a month of a large
        account's seller rows. The keys live in the folder names only, as BI tools expect."""
        if frame.is_empty():
            return 0
        written: list[str] = []
        frame.with_columns(pl.col("date").cast(pl.String)).lazy().sink_parquet(
            pl.PartitionBy(staging, key=list(schema.lake_partitions), include_key=False),
            mkdir=True,
            sinked_paths_callback=lambda sunk: written.extend(p.path for p in sunk.paths),
        )
        return len(written)

    def _swap(self, staged: Path, target: Path) -> None:
        if staged.exists() and target.exists() and _exchange(staged, target):
            shutil.rmtree(staged, ignore_errors=True)  # it now holds the old partition
            return
        trash = self.staging / f"trash-{uuid.uuid4().hex}"
        if target.exists():
            trash.parent.mkdir(parents=True, exist_ok=True)
            target.rename(trash)
        if staged.exists():
            staged.rename(target)
        shutil.rmtree(trash, ignore_errors=True)

    def conform(self, schema: TableSchema) -> int:
        """Rewrite the partitions whose files lack a column of `schema`, or hold it in a
        narrower type, so that every file has every column; return the partitions rewritten.

        Plain Parquet readers (DuckDB's `read_parquet`, `pyarrow.dataset`, Polars) take the
        schema of one file and fail or drop a column that others lack; after the service adds
        a field (schema evolution), older partitions get it as NULL, once, here. Each
        partition is republished whole, like any other."""
        table_dir = self.table_dir(schema)
        wanted = {
            name: dtype
            for name, dtype in schema.polars_schema.items()
            if name not in schema.lake_partitions
        }
        rewritten = 0
        for folder in sorted(table_dir.glob("date=*")):
            files = sorted(folder.rglob("*.parquet"))
            if all(dict(pl.read_parquet_schema(path)) == wanted for path in files):
                continue
            day = date.fromisoformat(folder.name.removeprefix("date="))
            parts = [
                schema.conformed(pl.scan_parquet(path, hive_partitioning=True)) for path in files
            ]
            self.publish(schema, pl.concat(parts).collect(), [day])
            rewritten += 1
        return rewritten

    def earliest(self, table: str, condition: str) -> date | None:
        """The first date of `table` with a row meeting `condition` (SQL), or None."""
        files = self.root / table
        if not any(files.glob("date=*/**/*.parquet")):
            return None
        with duckdb.connect() as con:
            found = con.sql(
                f"SELECT min(date) FROM read_parquet('{files}/**/*.parquet', "
                f"hive_partitioning = true, hive_types = {{'date': 'DATE'}}, "
                f"union_by_name = true) WHERE {condition}"
            ).fetchall()[0][0]
        return found

    def clean_staging(self) -> None:
        """Remove what a crashed run left behind."""
        shutil.rmtree(self.staging, ignore_errors=True)

    def snapshot_frame(self, schema: TableSchema, frame: pl.DataFrame, day: date) -> pl.DataFrame:
        """Current-state rows dated by the snapshot day, for the lake's history of snapshots."""
        assert schema.layout is Layout.SNAPSHOT
        return frame.with_columns(pl.lit(day).alias("date"))
