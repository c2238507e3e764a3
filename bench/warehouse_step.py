"""The warehouse step of a daily run, measured where it runs and on a warehouse ten times larger.

A daily run's warehouse step is read from the run's own record (Dagster's step times). Whether
it grows with what the warehouse holds is measured by building, outside any run, over the lake
of the longest window and over one ten times its size (ten times the history: each dated
table's rows again under dates shifted back by the window, nine times; the current-state
tables as they are): a daily run's change (its last days republished as they are, every
current-state table's newest snapshot written again), then the warehouse step (vacuum and
build), three times, the steady third one reported.
"""

import os
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from unittest.mock import patch

import polars as pl

from warehouse.build import build_warehouse
from warehouse.lake import Lake
from warehouse.schema_log import SchemaLog
from warehouse.schemas import TABLES, Layout, TableSchema

COPIES = 10
DAILY_DAYS = 4  # yesterday and the lookback a daily run reads again


def step_seconds(home: Path) -> float:
    """The warehouse step of the newest run recorded under `home`."""
    from assets.instance import open_instance

    with patch.dict(os.environ, {"ADWH_HOME": str(home)}), open_instance() as instance:
        (run,) = instance.get_runs(limit=1)
        stats = instance.get_run_step_stats(run.run_id)
    for step in stats:
        if step.step_key == "warehouse_marts" and step.end_time and step.start_time:
            return step.end_time - step.start_time
    return float("nan")


@dataclass(frozen=True)
class Step:
    rows: int
    file_mib: float
    seconds: float
    by_dbt: bool


def _schemas(home: Path) -> list[TableSchema]:
    log = SchemaLog(home)
    return [log.schema(table) for table in TABLES.values()]


def ten_times(home: Path, into: Path) -> None:
    """A lake at `into/lake` holding `home`'s dated rows COPIES times (each copy on days shifted
    back by the span `home` holds) and its current-state tables as they are."""
    source, target = Lake(home / "lake"), Lake(into / "lake")
    for schema in _schemas(home):
        table = source.dataset(schema.name)
        if table is None:
            continue
        rows = pl.from_arrow(table.to_table())
        if rows.is_empty():
            continue
        copies = COPIES if schema.layout is not Layout.SNAPSHOT else 1
        span = (rows["date"].max() - rows["date"].min()).days + 1
        for copy in range(copies):
            frame = rows.with_columns(pl.col("date") - timedelta(days=copy * span))
            days = frame["date"].unique().to_list()
            target.publish(schema, frame, days, frame["account_id"].unique().to_list())


def _a_daily_change(lake: Lake, schemas: list[TableSchema]) -> None:
    """What a daily run writes: its last days again, the newest snapshots."""
    for schema in schemas:
        snapshot = lake.snapshot(schema.name)
        if snapshot is None or not snapshot.files:
            continue
        last = max(snapshot.files.values())
        recent = 1 if schema.layout is Layout.SNAPSHOT else DAILY_DAYS
        days = [last - timedelta(days=n) for n in range(recent)]
        rows = pl.from_arrow(lake.dataset(schema.name, days=days).to_table())
        lake.publish(schema, rows, days, rows["account_id"].unique().to_list())


def steady_step(root: Path) -> Step:
    """The warehouse step after a daily change, the third time (the first builds of a new
    home build every model; the later ones what the change touches)."""
    home, lake = root, Lake(root / "lake")
    schemas = _schemas(home)
    build_warehouse(home, lake, schemas, tidy=True)
    built = None
    seconds = 0.0
    for _ in range(3):
        _a_daily_change(lake, schemas)
        started = time.perf_counter()
        built = build_warehouse(home, lake, schemas, tidy=True)
        seconds = time.perf_counter() - started
    rows = sum(
        table.count_rows() for schema in schemas if (table := lake.dataset(schema.name)) is not None
    )
    size = (home / "warehouse.duckdb").stat().st_size / 2**20
    return Step(rows, size, seconds, built.by_dbt if built else True)
