"""What keeps the warehouse fresh when tables change outside a full run.

A backfill, a UI run or the daily schedule's runs (one per account) materialize tables, not the
warehouse built from them. The `warehouse_refresh` sensor asks for one build of the whole
warehouse once a table was materialized after the warehouse was last built, and no run is
queued or in progress and no failed run awaits the retry Dagster promised it
(`assets/retries.py`): after 300 accounts' runs, one build, not 300, and never under a writer
(the build vacuums the lake). `adwh run` builds the warehouse after its tables itself: nothing
more to do. The sensor lives in the warehouse's code location (`assets/warehouse_definitions.py`)
and reads the tables' materializations from the instance both locations write. A backfill's
runs count once the daemon has queued them; Dagster has no public API a
sensor could ask for backfills not yet queued (ARCHITECTURE.md, "Where a dependency's public
API stops"), so a build may come between two of a backfill's chunks, and another after it.

Why not a declarative automation condition: conditions are evaluated per asset, so each mart
whose own tables were done was requested while other accounts' runs still wrote the tables
of the rest, and the warehouse was built twice or more (seen in tests/deployment). Dagster's
`eager()` would never fire at all: it waits until no upstream partition is missing, and the
daily tables always miss some. The sensor is on by default, so `dagster dev` keeps the
warehouse as fresh as `adwh run` does.
"""

import time
from collections.abc import Sequence
from datetime import UTC, datetime

import dagster as dg

from assets.retries import RETRY_WAIT_SECONDS, WILL_RETRY_TAG, awaits_retry

ACTIVE = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
]


def warehouse_refresh_sensor(
    tables: Sequence[dg.AssetKey],
    warehouse: Sequence[dg.AssetKey],
    job_name: str,
) -> dg.SensorDefinition:
    """The sensor that builds `warehouse` (every key: it is one file) after `tables` changed,
    by a run of the job `job_name` (so named in the UI; a sensor's asset selection would run
    Dagster's implicit `__ASSET_JOB`)."""

    @dg.sensor(
        name="warehouse_refresh",
        job_name=job_name,
        # 10 s: the wait after a day's last run is part of the day (issue 47: 1,000 accounts
        # to a fresh warehouse in 5 minutes); a skipped tick is one query of the runs.
        minimum_interval_seconds=10,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Every 10 s: once a table was materialized after the warehouse was last "
        "built and no run is queued, in progress or about to be retried, builds the DuckDB "
        "warehouse and its marts (and vacuums the lake), once.",
    )
    def warehouse_refresh(context: dg.SensorEvaluationContext):
        instance = context.instance
        if instance.get_run_records(dg.RunsFilter(statuses=ACTIVE), limit=1):
            return dg.SkipReason("waiting for the runs in progress or queued")
        if _retry_coming(instance):
            return dg.SkipReason("waiting for the retry of a failed run")
        newest_table = _newest_materialization(instance, tables)
        if newest_table is None:
            return dg.SkipReason("no table materialized yet")
        built = _newest_materialization(instance, warehouse)
        if built is not None and built > newest_table:
            return dg.SkipReason("the warehouse is newer than every table")
        return dg.RunRequest(run_key=f"after-table-event-{newest_table}")

    return warehouse_refresh


def _retry_coming(instance: dg.DagsterInstance) -> bool:
    """A run failed lately, and Dagster promised its retry and has not launched it yet."""
    now = time.time()
    failed = instance.get_run_records(
        dg.RunsFilter(
            statuses=[dg.DagsterRunStatus.FAILURE],
            tags={WILL_RETRY_TAG: "true"},
            updated_after=datetime.fromtimestamp(now - RETRY_WAIT_SECONDS, UTC),
        ),
        limit=100,
    )
    return any(awaits_retry(r.dagster_run.tags, r.end_time, now) for r in failed)


def _newest_materialization(
    instance: dg.DagsterInstance, keys: Sequence[dg.AssetKey]
) -> int | None:
    """The event log id of the newest materialization of any of `keys` (ids only grow)."""
    ids = [
        record.asset_entry.last_materialization_record.storage_id
        for record in instance.get_asset_records(list(keys))
        if record.asset_entry.last_materialization_record is not None
    ]
    return max(ids, default=None)
