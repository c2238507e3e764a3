"""The lake: one Delta Lake table per contract table, Parquet in `date=`/`currency=` folders.

Delta Lake (delta-rs, no catalog server) gives the lake what renames on a local disk could not:
every publish is one atomic commit that replaces exactly the rows a run covers (its accounts
and days, by predicate), writers in several processes or machines land side by side (each
commit retries on a conflict that does not touch its rows), the table lives on a local disk or
on any S3-compatible store, a column the service adds merges into the table's schema, and every
earlier version stays readable until it is vacuumed.

A reader that globs the Parquet files instead of reading the Delta log sees every file still
on disk: after a publish, the replaced files too, until `vacuum` removes them. So `tidy` vacuums
after each run unless the user keeps history (`ADWH_LAKE_KEEP_HOURS`).
"""

import os
import re
import threading
import uuid
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import unquote

import polars as pl
import pyarrow as pa
import pyarrow.fs as pafs
from deltalake import CommitProperties, DeltaTable, write_deltalake
from deltalake.exceptions import CommitFailedError, TableNotFoundError
from tenacity import (
    retry,
    retry_if_exception_type,
    stop_after_attempt,
    wait_random_exponential,
)

from warehouse.schemas import RESTATEMENTS, TABLES, Layout, TableSchema

if TYPE_CHECKING:  # PyArrow's datasets load with the first read: extraction runs only write
    import pyarrow.dataset as pads

# Concurrent writers to one table: each commit that finds a newer version re-checks its
# predicate against it and retries; with a few dozen runs at once, more than delta-rs' default.
COMMIT_RETRIES = 50
# Opening a table replays its JSON commits since the last checkpoint: 47 ms for one with 66 of
# them (delta-rs' default checkpoints every 100), 9 ms from a checkpoint. A build opens the
# tables it vacuums, each day, and a daily run adds about three commits to a table.
CHECKPOINT_INTERVAL = "10"
TABLE_PROPERTIES = {"delta.checkpointInterval": CHECKPOINT_INTERVAL}
# A data file an object store was still writing (`part-….parquet#1`) when its writer died.
STAGED = re.compile(r"\.parquet#\d+$")
# Files the log does not name (a writer killed before its commit) are removed by a full vacuum
# once they are this old: younger ones may belong to a writer still at work in another process.
ORPHAN_HOURS = 1
# Each writer marks the table while it writes (`_writers/<id>`, skipped by readers like the
# log): a mark left behind (a writer killed, or a commit that failed) makes the next tidy look
# for the files no commit names, a listing of the whole table; with no mark it has nothing to
# look for. A mark goes once this old (its writer's files are then past ORPHAN_HOURS: a commit
# lasts minutes, not a day) and swept.
WRITERS = "_writers"
MARK_HOURS = 24
# A partition the runs left in more files than this is clustered by the next warehouse build
# (`Lake.cluster`): each run writes one file per partition it covers, so after a backfill of a
# thousand accounts a day held ~400 files, and every run after it paid for each of them (an
# open table holds every file's statistics: ~7 MiB and ~150 ms a table of 12,000 files).
CROWDED_FILES = 16
# A clustered partition is cut in about this many files, each a narrow range of account ids
# (the runs' packs are too: pipelines/fanout.py), so that a pack's replace rewrites one or two
# of them, not the whole day; none is made smaller than CLUSTER_MIN_BYTES.
CLUSTERS_PER_PARTITION = 8
CLUSTER_MIN_BYTES = 1 << 20
# One z-order reads its partitions into memory: a build clusters at most this much at a time.
CLUSTER_BATCH_BYTES = 64 << 20
# Where the current rows of each current-state table live: `lake/current/<table>/`, one
# unpartitioned Delta table beside the dated snapshots (`lake/<table>/date=…/`).
CURRENT = "current"


def sql_string(text: str) -> str:
    """A SQL string literal, for the statements that take no bound parameters (a Delta
    predicate, a file list, COMMENT ON)."""
    return "'" + text.replace("'", "''") + "'"


def replaced_rows(accounts: Iterable[str], days: Iterable[date]) -> str:
    """The predicate of what a publish replaces: these accounts' rows on these days."""
    day_list = ", ".join(sql_string(d.isoformat()) for d in sorted(set(days)))
    return f"{of_accounts(accounts)} AND date IN ({day_list})"


def of_accounts(accounts: Iterable[str]) -> str:
    """The predicate of these accounts' rows."""
    return f"account_id IN ({', '.join(sql_string(a) for a in sorted(set(accounts)))})"


def current_table(name: str) -> str:
    """The lake table holding the current rows of current-state table `name`: each account's
    newest snapshot, so that a reader of the lake counts each row once without picking a day."""
    return f"{CURRENT}/{name}"


def loaded_from(schema: TableSchema) -> str:
    """The lake table the warehouse's table `schema` holds: its current rows for current
    state, the table itself for the dated ones (the dated snapshots for `snapshots_of`)."""
    if schema.lake_table:
        return schema.lake_table
    return current_table(schema.name) if schema.layout is Layout.SNAPSHOT else schema.name


def hive_parquet(paths: Iterable[str], schema: TableSchema, partitioned: bool = True) -> str:
    """DuckDB's own Parquet reader over these files (or globs), columns matched by name; when
    `partitioned`, each file's partition keys read from its Hive folder names."""
    listed = ", ".join(sql_string(path) for path in paths)
    if not partitioned:
        return f"read_parquet([{listed}], union_by_name = true)"
    types = "{'date': 'DATE', 'currency': 'VARCHAR'}"
    if schema.layout is not Layout.DAILY_FACT:
        types = "{'date': 'DATE'}"
    return (
        f"read_parquet([{listed}], hive_partitioning = true, union_by_name = true, "
        f"hive_types = {types})"
    )


def lake_columns(schema: TableSchema) -> dict[str, pl.DataType]:
    """The columns a table holds in the lake: a column the service has only sent as null has
    no type yet and Delta Lake cannot hold a typeless column, so it joins the table with its
    first value (readers of the warehouse see it as NULL until then). Current-state tables
    keep one snapshot per day, dated by the day it was taken."""
    columns = {name: t for name, t in schema.polars_schema.items() if t != pl.Null()}
    return columns if "date" in columns else {**columns, "date": pl.Date()}


@dataclass(frozen=True)
class Version:
    """One commit of a lake table, as `adwh history` lists it."""

    version: int
    timestamp: datetime
    operation: str
    predicate: str
    rows_written: int | None
    files_added: int | None
    files_removed: int | None


@dataclass(frozen=True)
class Snapshot:
    """One version of a table: its data files, each with its day (None: a table without
    partitions, the current rows)."""

    version: int
    files: dict[str, date | None]


class Tended(NamedTuple):
    """What a build's housekeeping did to the lake: the files its clustering rewrote, and
    those its vacuum removed."""

    clustered: int = 0
    vacuumed: int = 0


@dataclass(frozen=True)
class FileStats:
    files: int
    median_bytes: int
    total_bytes: int


def _removed_files(commit: dict) -> bool:
    """Whether a commit (an entry of `DeltaTable.history`) removed data files: its metrics say
    so; a vacuum's or a creation's removes none; any other without metrics may have."""
    removed = (commit.get("operationMetrics") or {}).get("num_removed_files")
    if removed is not None:
        return int(removed) > 0
    operation = str(commit.get("operation", ""))
    return not (operation.startswith("VACUUM") or operation == "CREATE TABLE")


class Lake:
    """The Delta tables under one URL: a local folder or `s3://bucket/prefix`."""

    def __init__(self, url: str | Path, keep_hours: int = 0) -> None:
        self.url = str(url).rstrip("/")
        self.keep_hours = keep_hours
        # Tables opened by this thread, brought to their newest version on each use: opening
        # reads the checkpoint and every commit after it (~15-40 ms a table), an update only
        # the new commits (~1 ms). A warehouse build opens all 27 twice (vacuum, then load).
        self._opened = threading.local()

    @property
    def remote(self) -> bool:
        return "://" in self.url

    def uri(self, table: str) -> str:
        return f"{self.url}/{table}"

    def table(self, name: str, version: int | None = None) -> DeltaTable | None:
        """The Delta table `name` (as of `version`, else its newest), or None before its first
        publish."""
        if version is not None:
            return self._open(name, version)
        opened = self._opened.__dict__
        if name in opened:
            opened[name].update_incremental()
            return opened[name]
        table = self._open(name)
        if table is not None:
            opened[name] = table
        return table

    def _open(self, name: str, version: int | None = None) -> DeltaTable | None:
        try:
            return DeltaTable(self.uri(name), version=version)
        except TableNotFoundError:
            return None

    def tables(self) -> list[str]:
        """The contract tables the lake holds."""
        return [name for name in sorted(TABLES) if self.exists(name)]

    def every_table(self) -> list[str]:
        """Every Delta table of the contract's the lake holds, the current rows of current
        state included: what housekeeping compacts and vacuums."""
        held = self.tables()
        current = [
            current_table(name)
            for name in held
            if TABLES[name].layout is Layout.SNAPSHOT and self.exists(current_table(name))
        ]
        return held + current

    def exists(self, name: str) -> bool:
        """Whether table `name` has had its first commit (on a local disk, without opening
        it: a build asks for every table, and an open replays its log)."""
        if self.remote:
            return self.table(name) is not None
        return DeltaTable.is_deltatable(str(Path(self.uri(name)).absolute()))

    def publish(
        self,
        schema: TableSchema,
        frame: pl.DataFrame,
        days: Iterable[date],
        accounts: Iterable[str],
        run_id: str = "",
    ) -> int:
        """Replace `accounts`' rows on `days` with the rows of `frame`, in one commit; return
        the files written (one per partition). Days of those accounts with no row lose what
        they held: re-materializing a range replaces exactly it."""
        days, accounts = sorted(set(days)), sorted(set(accounts))
        if not days or not accounts:
            return 0
        return self._replace(schema.name, schema, frame, replaced_rows(accounts, days), run_id)

    def publish_current(
        self,
        schema: TableSchema,
        frame: pl.DataFrame,
        day: date,
        accounts: Iterable[str],
        run_id: str = "",
    ) -> None:
        """Make `frame`, the snapshot of `accounts` taken on `day`, their current rows
        (`current_table`), in one commit replacing those accounts' rows: an account whose
        snapshot is empty has none after it, an account this run did not extract (another
        run's, or one whose fetch failed) keeps its own. An account whose current rows are of
        a later day (a rebuild of an older range) keeps them."""
        name = current_table(schema.name)
        self.seed_current(schema)
        accounts = set(accounts)
        table = self.table(name)
        if table is not None:
            newer = (
                pl.scan_delta(table)
                .filter(pl.col("account_id").is_in(list(accounts)) & (pl.col("date") > day))
                .select(pl.col("account_id").unique())
                .collect()
            )
            accounts -= set(newer["account_id"].to_list())
        if not accounts:
            return
        rows = frame.filter(pl.col("account_id").is_in(list(accounts)))
        self._replace(name, schema, rows, of_accounts(accounts), run_id)

    def seed_current(self, schema: TableSchema) -> None:
        """Write, once, the current rows of a lake that kept only the dated snapshots (written
        by a version before `current/`): each account's newest snapshot."""
        name = current_table(schema.name)
        if self.exists(name) or not self.exists(schema.name):
            return
        newest = (
            pl.scan_delta(self.table(schema.name))
            .filter(pl.col("date") == pl.col("date").max().over("account_id"))
            .collect()
        )
        self._replace(name, schema, newest, of_accounts(newest["account_id"].unique()), "")

    def _replace(
        self,
        name: str,
        schema: TableSchema,
        frame: pl.DataFrame,
        predicate: str,
        run_id: str,
    ) -> int:
        """One commit replacing the rows of `predicate` in table `name` (`schema`'s, or its
        current rows); return the partitions written."""
        partition_by = partitions_of(name, schema)
        self._commit(name, schema, frame, predicate, run_id)
        return frame.select(partition_by).n_unique() if partition_by else 1

    def append(self, schema: TableSchema, frame: pl.DataFrame, run_id: str = "") -> None:
        """Add `frame`'s rows to table `schema.name` in one commit, replacing nothing: an
        append-only record (`restatements`)."""
        if not frame.is_empty():
            self._commit(schema.name, schema, frame, None, run_id)

    @retry(
        retry=retry_if_exception_type(CommitFailedError),
        stop=stop_after_attempt(5),
        wait=wait_random_exponential(multiplier=0.05, max=2),
        reraise=True,
    )
    def _commit(
        self,
        name: str,
        schema: TableSchema,
        frame: pl.DataFrame,
        predicate: str | None,
        run_id: str,
    ) -> None:
        """One commit of `frame` to table `name`: replacing the rows of `predicate`, or, with
        none, appending. delta-rs retries a commit that meets a newer version it does not
        conflict with; what it cannot retry (two writers creating the table, a schema merged
        meanwhile) is tried again here on the new version."""
        target = arrow_schema(schema)
        existing = self.table(name)
        with self._writing(name):
            write_deltalake(
                existing if existing is not None else self.uri(name),
                pa.RecordBatchReader.from_batches(target, in_lake_columns(frame, schema, target)),
                mode="append" if predicate is None else "overwrite",
                predicate=predicate if existing is not None else None,
                configuration=TABLE_PROPERTIES if existing is None else None,
                partition_by=partitions_of(name, schema),
                schema_mode="merge",
                commit_properties=CommitProperties(
                    custom_metadata={"adwh.run_id": run_id} if run_id else None,
                    max_commit_retries=COMMIT_RETRIES,
                ),
            )

    def republish_restatements(
        self, tables: list[str], frame: pl.DataFrame, accounts: list[str], first: date, last: date
    ) -> None:
        """Replace, in one commit, what `restatements` records of `tables` for `accounts` over
        [first, last] by `frame` (a rebuild's replay of the raw pages)."""
        names = ", ".join(sql_string(name) for name in sorted(tables))
        predicate = (
            f"table_name IN ({names}) AND {of_accounts(accounts)} AND date BETWEEN "
            f"{sql_string(first.isoformat())} AND {sql_string(last.isoformat())}"
        )
        if frame.is_empty() and not self.exists(RESTATEMENTS.name):
            return
        self._replace(RESTATEMENTS.name, RESTATEMENTS, frame, predicate, "")

    def conform(self, schema: TableSchema) -> int:
        """Rewrite the table in `schema`'s columns when its files lack one or hold one in a
        narrower type; return the files rewritten.

        Delta readers would read a missing column as NULL, but a plain Parquet reader takes the
        schema of one file and fails or drops a column that others lack, and Delta Lake cannot
        widen a column's type in place. So after the service adds or widens a field, the whole
        table is rewritten once, in one commit, every file with every column (the current rows
        of current state too)."""
        rewritten = 0
        names = [schema.name]
        if schema.layout is Layout.SNAPSHOT:
            names.append(current_table(schema.name))
        for name in names:
            table = self.table(name)
            if table is None:
                continue
            held = dict(pl.scan_delta(table).collect_schema())
            if all(held.get(column) == kind for column, kind in lake_columns(schema).items()):
                continue
            batches = table.to_pyarrow_dataset().to_batches()
            rewritten += self.replace(schema, batches, table, name=name)
        return rewritten

    def replace(
        self,
        schema: TableSchema,
        batches: Iterable[pa.RecordBatch],
        table: DeltaTable | None = None,
        name: str | None = None,
    ) -> int:
        """Replace the whole table `name` (by default `schema`'s) by `batches` in `schema`'s
        lake columns, in one commit, one batch in memory at a time; return the files it then
        has."""
        name = name or schema.name
        target = arrow_schema(schema)
        conformed = (
            part
            for batch in batches
            for part in in_lake_columns(pl.from_arrow(batch), schema, target)
        )
        with self._writing(name):
            write_deltalake(
                table if table is not None else self.uri(name),
                pa.RecordBatchReader.from_batches(target, conformed),
                mode="overwrite",
                schema_mode="overwrite",
                configuration=TABLE_PROPERTIES if table is None else None,
                partition_by=partitions_of(name, schema),
                commit_properties=CommitProperties(max_commit_retries=COMMIT_RETRIES),
            )
        return len(self.table(name).file_uris())

    def dataset(
        self, name: str, version: int | None = None, days: list[date] | None = None
    ) -> "pads.Dataset | None":
        """The table (as of `version`) as a PyArrow dataset, which DuckDB and Polars read
        without a Delta extension; or None before its first publish. With `days`, only those
        partitions' files: a dataset costs a few milliseconds per file to open, which over
        years of daily partitions is seconds (a run's own reads go through `scan`)."""
        table = self.table(name, version)
        if table is None:
            return None
        if days is None:
            return table.to_pyarrow_dataset()
        where = [("date", "in", [day.isoformat() for day in days])]
        return table.to_pyarrow_dataset(file_pruning_predicate=where)

    def scan(
        self,
        name: str,
        days: list[date] | None = None,
        since: date | None = None,
        accounts: Iterable[str] | None = None,
    ) -> pl.LazyFrame | None:
        """The rows of table `name` on `days`, or from `since` on, of `accounts`, as Polars
        reads a Delta table; or None before its first publish.

        What a run reads of the lake while a thousand other accounts' files are there: Polars
        skips the files whose partition or `account_id` statistics exclude the filter, from
        the log's statistics in one pass, where a PyArrow dataset pays a few milliseconds for
        each file it opens (its partition expressions): 2.4 s against 0.2 s for one day of a
        table of 12,000 files (bench/SCALE.md)."""
        table = self.table(name)
        if table is None:
            return None
        rows = pl.scan_delta(table)
        if days is not None:
            rows = rows.filter(pl.col("date").is_in(days))
        if since is not None:
            rows = rows.filter(pl.col("date") >= since)
        if accounts is not None:
            rows = rows.filter(pl.col("account_id").is_in(sorted(set(accounts))))
        return rows

    def snapshot(self, name: str) -> Snapshot | None:
        """The current version of table `name`, or None before its first publish."""
        table = self.table(name)
        if table is None:
            return None
        actions = pa.table(table.get_add_actions(flatten=True))
        paths = actions["path"].to_pylist()
        if "partition.date" not in actions.column_names:  # current rows: no partitions
            return Snapshot(table.version(), dict.fromkeys(paths))
        days = actions["partition.date"].to_pylist()
        return Snapshot(table.version(), dict(zip(paths, days, strict=True)))

    def snapshots(
        self, names: Iterable[str], tidy: bool = False, held: dict[str, int] | None = None
    ) -> tuple[dict[str, Snapshot | None], Tended]:
        """What a warehouse build reads of each table, and what its housekeeping did.

        Each table's current version is listed whole (delta-rs replays its log since the last
        checkpoint and lists every file: O(files); it has no public reading of a range of
        commits), the tables side by side (outside the GIL); the build compares the files with
        those it loaded. With `tidy`, a table's crowded partitions are clustered first
        (`cluster`: the build then loads the clustered files, not the runs'), and it is
        vacuumed (`tidy`) when there may be something to remove: the clustering replaced
        files, it is new to the build (not in `held`), a commit since the version held
        replaced files, history is kept for some hours (what it keeps may have expired since),
        or a writer left a mark."""
        held = held or {}

        def current(name: str) -> tuple[Snapshot | None, Tended]:
            clustered = removed = 0
            if tidy:
                clustered = self.cluster(name)
                if (
                    clustered
                    or self.replaced_since(name, held.get(name))
                    or self.keep_hours
                    or self._marks(name)
                ):
                    removed = self.tidy([name])
            return self.snapshot(name), Tended(clustered, removed)

        names = list(names)
        with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
            found = dict(zip(names, pool.map(current, names), strict=True))
        each = [tended for _, tended in found.values()]
        tended = Tended(sum(t.clustered for t in each), sum(t.vacuumed for t in each))
        return {name: got[0] for name, got in found.items()}, tended

    def cluster(self, name: str) -> int:
        """Rewrite the crowded partitions of table `name` (more than CROWDED_FILES files) into
        files clustered by `account_id`, about CLUSTERS_PER_PARTITION each; return the files
        replaced. The rows stay the same (a commit that changes no data).

        A run's replace then rewrites only the files whose ids its pack holds, and every open
        of the table reads a few files' statistics a day instead of one per run that wrote it.
        Only while no run writes, in the warehouse build: delta-rs fails a compaction that
        meets a concurrent replace (the layout then waits for the next build), and a replace
        that meets one is tried again on the new version (`_replace`)."""
        table = self.table(name)
        if table is None:
            return 0
        crowded = _crowded(pl.from_arrow(pa.table(table.get_add_actions(flatten=True))))
        replaced = 0
        for days, target in _batches(crowded):
            where = [("date", "in", days)] if days else None
            try:
                with self._writing(name):
                    metrics = table.optimize.z_order(
                        ["account_id"], partition_filters=where, target_size=target
                    )
            except CommitFailedError:
                break
            replaced += metrics["numFilesRemoved"]
        if replaced:
            # The z-order's commit names every file it replaced; a checkpoint spares each
            # later open of the table from replaying it.
            table.create_checkpoint()
        return replaced

    def replaced_since(self, name: str, version: int | None) -> bool:
        """Whether a commit of table `name` after `version` removed files (or whether it may
        have: no version held, or its history no longer reaches back that far)."""
        table = self.table(name)
        if table is None:
            return False
        if version is None or table.version() < version:  # new to the build, or written anew
            return True
        since = table.version() - version
        if since == 0:
            return False
        newer = table.history(limit=since)
        return len(newer) < since or any(_removed_files(commit) for commit in newer)

    def local_files(
        self, name: str, snapshot: Snapshot, days: Iterable[date] | None = None
    ) -> list[str]:
        """The paths of a local table's data files (of `days` only, when given) in `snapshot`:
        DuckDB reads them natively, in parallel, several times faster than through a PyArrow
        dataset."""
        wanted = None if days is None else set(days)
        root = Path(self.uri(name)).absolute()
        return [
            str(root / unquote(path))
            for path, day in snapshot.files.items()
            if wanted is None or day in wanted
        ]

    def rows_per_account_day(self) -> dict[str, int]:
        """Each account's rows on the newest day the dated tables hold, summed over them: what
        a day of that account weighs (the runs are packed by it). Only that day's files are
        read."""
        counts: dict[str, int] = {}
        for name in self.tables():
            if TABLES[name].layout is Layout.SNAPSHOT:
                continue  # current state: the same whatever the days
            snapshot = self.snapshot(name)
            if snapshot is None or not snapshot.files:
                continue
            newest = date.fromisoformat(str(max(snapshot.files.values())))
            rows = self.scan(name, days=[newest])
            for account, count in rows.group_by("account_id").len().collect().iter_rows():
                counts[account] = counts.get(account, 0) + count
        return counts

    def earliest_by_account(
        self, name: str, condition: str, since: date, accounts: Iterable[str]
    ) -> dict[str, date]:
        """Each of `accounts`' first date of table `name` from `since` on with a row meeting
        `condition` (SQL); only those partitions, and the files that may hold those accounts,
        are read."""
        rows = self.scan(name, since=since, accounts=accounts)
        if rows is None:
            return {}
        query = f"SELECT account_id, min(date) FROM self WHERE {condition} GROUP BY account_id"
        return dict(rows.sql(query).collect().iter_rows())

    def tidy(self, names: Iterable[str]) -> int:
        """The housekeeping after a run: vacuum what the run replaced, unless history is kept
        longer, and the files of writers that left a mark; return the files removed. A build's
        vacuum costs what the runs changed, not the size of the lake."""
        removed = 0
        cutoff = datetime.now(UTC).timestamp() - MARK_HOURS * 3600
        for name in names:
            storage, _ = self._filesystem(name)
            marks = self._marks(name)
            removed += self.vacuum(name, self.keep_hours, ORPHAN_HOURS if marks else None)
            self._checkpointed(name)
            for mark in marks:
                if mark.mtime.timestamp() < cutoff:
                    storage.delete_file(mark.path)
        return removed

    def _checkpointed(self, name: str) -> None:
        """Give a table written before CHECKPOINT_INTERVAL was set the property (one commit)."""
        table = self.table(name)
        if table is None:
            return
        held = table.metadata().configuration
        if any(held.get(key) != value for key, value in TABLE_PROPERTIES.items()):
            table.alter.set_table_properties(
                TABLE_PROPERTIES,
                commit_properties=CommitProperties(max_commit_retries=COMMIT_RETRIES),
            )

    def _marks(self, name: str) -> list[pafs.FileInfo]:
        """The marks writers of table `name` left (`_writing`)."""
        storage, root = self._filesystem(name)
        listed = storage.get_file_info(pafs.FileSelector(f"{root}/{WRITERS}", allow_not_found=True))
        return [info for info in listed if info.type == pafs.FileType.File]

    def _filesystem(self, name: str) -> tuple[pafs.FileSystem, str]:
        """Table `name`'s storage and its path there; a local lake may be a relative path
        (`ADWH_HOME` is `data` by default), which PyArrow takes only as an absolute one."""
        uri = self.uri(name)
        if not self.remote:
            return pafs.LocalFileSystem(), str(Path(uri).absolute())
        return pafs.FileSystem.from_uri(uri)

    @contextmanager
    def _writing(self, name: str) -> Iterator[None]:
        """Mark table `name` while this process writes it; the mark stays when the write fails
        (its files may be left uncommitted) or the process dies."""
        storage, root = self._filesystem(name)
        storage.create_dir(f"{root}/{WRITERS}", recursive=True)
        mark = f"{root}/{WRITERS}/{uuid.uuid4().hex}"
        storage.open_output_stream(mark).close()
        yield
        storage.delete_file(mark)

    def vacuum(self, name: str, retain_hours: int, orphan_hours: int | None = ORPHAN_HOURS) -> int:
        """Remove the files of versions older than `retain_hours` and files no commit names
        (a writer killed before its commit) older than `orphan_hours` (None: keep them); return
        the files removed.

        Each pass is first a dry run: delta-rs lists the replaced files of every commit since
        the last checkpoint, removed or not, and a vacuum with nothing left to remove would
        still add two commits to the log."""
        table = self.table(name)
        if table is None:
            return 0
        passes = [(retain_hours, False)]
        if orphan_hours is not None:
            passes.append((max(retain_hours, orphan_hours), True))
        removed = 0
        for hours, full in passes:
            options = {"retention_hours": hours, "enforce_retention_duration": False, "full": full}
            present = _present(table, table.vacuum(dry_run=True, **options))
            if present:
                removed += len(table.vacuum(dry_run=False, **options))
        if orphan_hours is not None:
            removed += _remove_staged(table, max(retain_hours, orphan_hours))
        return removed

    def optimize(self, name: str) -> dict[str, Any]:
        """Compact each partition's small files into one (the replaced files stay until a
        vacuum); return delta-rs' metrics."""
        table = self.table(name)
        if table is None:
            return {}
        with self._writing(name):
            return table.optimize.compact(
                commit_properties=CommitProperties(max_commit_retries=COMMIT_RETRIES)
            )

    def history(self, name: str, limit: int | None = None) -> list[Version]:
        """The table's versions, newest first."""
        table = self.table(name)
        if table is None:
            return []
        return [_version(entry) for entry in table.history(limit)]

    def file_stats(self, name: str) -> FileStats:
        """How many data files the current version has, and how large they are."""
        table = self.table(name)
        if table is None:
            return FileStats(0, 0, 0)
        sizes = sorted(pa.table(table.get_add_actions(flatten=True))["size_bytes"].to_pylist())
        return FileStats(len(sizes), sizes[len(sizes) // 2] if sizes else 0, sum(sizes))


def partitions_of(name: str, schema: TableSchema) -> list[str]:
    """The partition columns of lake table `name`: none for current rows (a reader globs one
    folder), else the schema's `date=`/`currency=` folders."""
    return [] if name == current_table(schema.name) else list(schema.lake_partitions)


def arrow_schema(schema: TableSchema) -> pa.Schema:
    """The Arrow schema of a table's lake columns, as every commit writes them."""
    return pa.schema(pl.DataFrame(schema=lake_columns(schema)).to_arrow().schema)


def in_lake_columns(
    frame: pl.DataFrame, schema: TableSchema, target: pa.Schema
) -> list[pa.RecordBatch]:
    """`frame` in the table's lake columns (`target`): each cast straight to its type, a
    column it lacks NULL, one sent only as null left out."""
    conformed = schema.conformed(frame.lazy()).collect()
    if "date" not in conformed.columns:  # a current-state table's snapshot day
        conformed = conformed.with_columns(frame["date"])
    return conformed.select(target.names).to_arrow().cast(target).to_batches()


def _crowded(files: pl.DataFrame) -> pl.DataFrame:
    """Of a table's files (`get_add_actions`), the days with a crowded partition (one null day:
    a table without partitions), with those partitions' bytes and number."""
    keys = [column for column in files.columns if column.startswith("partition.")]
    day = pl.col("partition.date").cast(pl.String) if keys else pl.lit(None, pl.String)
    partitions = files.group_by(keys or pl.lit(0)).agg(
        day.first().alias("day"), pl.col("size_bytes").sum().alias("bytes"), pl.len()
    )
    crowded = partitions.filter(pl.col("len") > CROWDED_FILES)
    return crowded.group_by("day").agg(pl.col("bytes").sum(), pl.len()).sort("day")


def _batches(crowded: pl.DataFrame) -> Iterator[tuple[list[str], int]]:
    """The crowded days in batches of about CLUSTER_BATCH_BYTES, each with the target size of
    its files (a partition's bytes over CLUSTERS_PER_PARTITION)."""
    days: list[str] = []
    held = partitions = 0
    for day, size, count in crowded.select("day", "bytes", "len").iter_rows():
        if day is not None:
            days.append(day)
        held += size
        partitions += count
        if held >= CLUSTER_BATCH_BYTES:
            yield days, _target(held, partitions)
            days, held, partitions = [], 0, 0
    if partitions:
        yield days, _target(held, partitions)


def _target(size: int, partitions: int) -> int:
    return max(CLUSTER_MIN_BYTES, size // (partitions * CLUSTERS_PER_PARTITION))


def _storage(table: DeltaTable) -> pafs.FileSystem:
    """The table's storage, paths relative to the table's root."""
    storage, root = pafs.FileSystem.from_uri(table.table_uri)
    return pafs.SubTreeFileSystem(root, storage)


def _present(table: DeltaTable, paths: list[str]) -> list[str]:
    """The paths (relative to the table) that are still in its storage."""
    if not paths:
        return []
    found = _storage(table).get_file_info(paths)
    return [info.path for info in found if info.type != pafs.FileType.NotFound]


def _remove_staged(table: DeltaTable, hours: int) -> int:
    """Remove the partial files of writers killed mid-write that are older than `hours`;
    return how many. On a local disk the object store writes a data file as `<name>#<n>` and
    renames it when whole, so a kill leaves that name behind. delta-rs' vacuum never removes
    it (not a data file name), and `pyarrow.dataset` over the folder fails on it."""
    storage = _storage(table)
    cutoff = datetime.now(UTC).timestamp() - hours * 3600
    staged = [
        info.path
        for info in storage.get_file_info(pafs.FileSelector("", recursive=True))
        if info.type == pafs.FileType.File
        and STAGED.search(info.path)
        and not info.path.startswith("_")
        and info.mtime.timestamp() < cutoff
    ]
    for path in staged:
        storage.delete_file(path)
    return len(staged)


def _version(entry: dict[str, Any]) -> Version:
    parameters = entry.get("operationParameters") or {}
    metrics = entry.get("operationMetrics") or {}
    return Version(
        version=entry["version"],
        timestamp=datetime.fromtimestamp(entry["timestamp"] / 1000, UTC),
        operation=entry.get("operation", ""),
        predicate=str(parameters.get("predicate", "")),
        rows_written=metrics.get("num_added_rows", metrics.get("num_output_rows")),
        files_added=metrics.get("num_added_files"),
        files_removed=metrics.get("num_removed_files"),
    )
