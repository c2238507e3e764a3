"""A range run's events are stored in batches (`assets/instance.py`): what Dagster reads back
is what its own SQLite storage gives when the same events are stored one at a time."""

import os
import time
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.events import (
    AssetMaterializationPlannedData,
    DagsterEvent,
    DagsterEventType,
    StepMaterializationData,
)
from dagster._core.events.log import EventLogEntry
from dagster._core.storage.event_log import ConsolidatedSqliteEventLogStorage

from assets.instance import PooledSqliteEventLogStorage

DAYS = [f"2026-10-{day:02d}" for day in range(1, 31)]
TABLE = dg.AssetKey("campaign_metrics")


def entry(event: DagsterEvent) -> EventLogEntry:
    return EventLogEntry(
        error_info=None,
        level=10,
        user_message="",
        run_id="a-range-run",
        timestamp=time.time(),
        dagster_event=event,
    )


def materializations() -> list[EventLogEntry]:
    return [
        entry(
            DagsterEvent(
                event_type_value=DagsterEventType.ASSET_MATERIALIZATION.value,
                job_name="daily",
                step_key="metrics",
                event_specific_data=StepMaterializationData(
                    dg.AssetMaterialization(
                        TABLE,
                        partition=day,
                        metadata={"rows": n},
                        tags={"dagster/data_version": f"v{n}"},
                    )
                ),
            )
        )
        for n, day in enumerate(DAYS)
    ]


def planned() -> list[EventLogEntry]:
    """What a run stores when it starts: a planned event per asset and partition (two assets
    in one batch)."""
    return [
        entry(
            DagsterEvent.build_asset_materialization_planned_event(
                "daily", "metrics", AssetMaterializationPlannedData(key, partition=day)
            )
        )
        for key in (TABLE, dg.AssetKey("target_metrics"))
        for day in DAYS
    ]


@pytest.fixture
def storages(tmp_path: Path):
    ours = PooledSqliteEventLogStorage(str(tmp_path / "ours"))
    dagsters = ConsolidatedSqliteEventLogStorage(str(tmp_path / "dagsters"))
    yield ours, dagsters
    ours.dispose()
    dagsters.dispose()


def read_back(storage, key: dg.AssetKey) -> tuple:
    records = storage.fetch_materializations(key, limit=1000).records
    latest = storage.get_latest_materialization_events([key])[key]
    return (
        storage.get_materialized_partitions(key),
        [(r.partition_key, r.asset_materialization.metadata["rows"].value) for r in records],
        latest.dagster_event.partition,
        [r.storage_id for r in records] == sorted((r.storage_id for r in records), reverse=True),
    )


def test_a_batch_of_one_assets_partitions_reads_back_as_stored_one_by_one(storages):
    ours, dagsters = storages
    ours.store_event_batch(materializations())
    for event in materializations():
        dagsters.store_event(event)
    assert read_back(ours, TABLE) == read_back(dagsters, TABLE)
    assert read_back(ours, TABLE)[2] == DAYS[-1]  # the asset's latest is the batch's last
    tags = ours.get_event_tags_for_asset(TABLE)
    assert tags == dagsters.get_event_tags_for_asset(TABLE)
    assert len(tags) == len(DAYS)


def test_a_batch_of_planned_events_of_several_assets_reads_back_as_stored_one_by_one(storages):
    ours, dagsters = storages
    ours.store_event_batch(planned())
    for event in planned():
        dagsters.store_event(event)
    for storage in storages:
        runs = storage.get_records_for_run(
            "a-range-run", of_type=DagsterEventType.ASSET_MATERIALIZATION_PLANNED
        ).records
        assert [(r.event_log_entry.dagster_event.asset_key, r.partition_key) for r in runs] == [
            (event.dagster_event.asset_key, event.dagster_event.partition) for event in planned()
        ]
    keys = [TABLE, dg.AssetKey("target_metrics")]
    assert ours.get_asset_records(keys) == dagsters.get_asset_records(keys)


class FailingMidBatch(PooledSqliteEventLogStorage):
    """The real storage, with a fault injected at its second asset's events (a full disk)."""

    stored = 0

    def _store_asset_event_tags(self, conn, events, event_ids) -> None:
        self.stored += 1
        if self.stored == 2:
            raise OSError("disk full")
        super()._store_asset_event_tags(conn, events, event_ids)


def test_a_batch_that_fails_leaves_nothing_half_written(tmp_path):
    """Dagster stores a failed batch again event by event: a half-written one would be stored
    twice."""
    storage = FailingMidBatch(str(tmp_path))
    with pytest.raises(OSError, match="disk full"):
        storage.store_event_batch(planned())
    assert storage.get_records_for_run("a-range-run").records == []
    storage.dispose()


def test_the_instance_adwh_opens_writes_events_in_batches():
    assert int(os.environ["DAGSTER_EVENT_BATCH_SIZE"]) >= len(DAYS)
