"""Typed batches of one extraction window, spooled to Parquet until the window is published.

A month of a large account's metrics is millions of values per table; held as frames until the
window is published, it would be most of a run's memory, and several sources run at once. So
each typed batch is written to the staging folder as it is made (fast LZ4 Parquet) and the
window is read back a slice of whole days at a time when it is published: memory holds one
batch while fetching and one slice while publishing, however large the account. The staging
folder is removed at the start of every run, so a crash leaves nothing behind for long.
"""

import shutil
import uuid
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import polars as pl

from warehouse.schemas import TableSchema

SLICE_ROWS = 100_000  # rows read back, checked and published at once (~50 MB of seller rows)


class Spool:
    """`schema` is the table's schema as it stands: the service may add or widen a column in
    any batch (schema evolution), and rows are read back in the latest schema, earlier batches
    with the new column NULL and narrower types cast up."""

    def __init__(self, staging: Path, schema: TableSchema, slice_rows: int = SLICE_ROWS) -> None:
        self.schema = schema
        self.slice_rows = slice_rows
        self.folder = staging / f"spool-{schema.name}-{uuid.uuid4().hex}"
        self.files: list[Path] = []
        self._owners: dict[Path, str] = {}
        self._shapes: set[tuple] = set()
        self._written = 0

    def append(self, frame: pl.DataFrame, account: str = "") -> None:
        """Spool a batch; `account`: whose fetch it came from (one account per batch), so that
        an account whose fetch fails later in the window can be taken out whole."""
        if frame.is_empty():
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"batch-{self._written:05d}.parquet"
        self._written += 1
        frame.write_parquet(path, compression="lz4")
        self.files.append(path)
        self._owners[path] = account
        self._shapes.add(tuple(frame.schema.items()))

    def discard(self, account: str) -> None:
        """Take out every batch of `account`: its fetch failed, so the window publishes the
        other accounts and leaves this one's rows in the lake as they were."""
        for path in [p for p in self.files if self._owners[p] == account]:
            self.files.remove(path)
            path.unlink()

    def _scan(self) -> pl.LazyFrame:
        if len(self._shapes) == 1:
            return self.schema.conformed(pl.scan_parquet(self.files))
        return pl.concat([self.schema.conformed(pl.scan_parquet(path)) for path in self.files])

    def frame(self) -> pl.DataFrame:
        """Every spooled row (for snapshots, which are published whole)."""
        if not self.files:
            return self.schema.concat([])
        return self._scan().collect()

    def first_date_outside(self, days: list[date]) -> date | None:
        if not self.files:
            return None
        outside = self._scan().filter(~pl.col("date").is_in(days)).select("date").head(1)
        found = outside.collect()
        return found["date"][0] if found.height else None

    def slices(self, days: list[date]) -> Iterator[tuple[list[date], pl.DataFrame]]:
        """The rows of `days`, a run of whole days (about `slice_rows` rows) at a time; days
        without rows are included, so that publishing them clears their old partitions."""
        if not self.files:
            yield days, self.schema.concat([])
            return
        counts = dict(
            self._scan().filter(pl.col("date").is_in(days)).group_by("date").len().collect().rows()
        )
        run: list[date] = []
        rows = 0
        for day in days:
            if run and rows + counts.get(day, 0) > self.slice_rows:
                yield run, self._rows_of(run)
                run, rows = [], 0
            run.append(day)
            rows += counts.get(day, 0)
        if run:
            yield run, self._rows_of(run)

    def _rows_of(self, days: list[date]) -> pl.DataFrame:
        return self._scan().filter(pl.col("date").is_in(days)).collect()

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
