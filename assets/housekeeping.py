"""The lake's housekeeping as an asset: each table's small files compacted, then vacuumed.

Each run already vacuums what it replaced; compaction is the part that waits. Daily runs and
per-account runs each write a file per partition they touch, so partitions collect small files
that every reader opens one by one. This asset rewrites each partition's files into one and
then vacuums the replaced ones, with the history setting the runs use (`ADWH_LAKE_KEEP_HOURS`).
Its schedule is off after set-up, like the daily one; `adwh lake optimize` does the same by hand.
"""

import dagster as dg

from assets.resources import WarehouseResource


@dg.asset(
    group_name="lake",
    kinds={"deltalake"},
    owners=["team:ads-warehouse"],
    description="Compaction (OPTIMIZE) and vacuum of every lake table: files per table and "
    "their median size before and after.",
)
def lake_housekeeping(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource
) -> dg.MaterializeResult:
    lake = warehouse.destination().lake
    rows = []
    for name in lake.every_table():
        before = lake.file_stats(name)
        lake.optimize(name)
        lake.vacuum(name, lake.keep_hours)
        after = lake.file_stats(name)
        rows.append(
            f"| {name} | {before.files} | {before.median_bytes:,} | {after.files} | "
            f"{after.median_bytes:,} |"
        )
        context.log.info(f"{name}: {before.files} files -> {after.files}")
    table = "\n".join(
        [
            "| table | files before | median bytes before | files after | median bytes after |",
            "|---|---|---|---|---|",
            *rows,
        ]
    )
    return dg.MaterializeResult(metadata={"tables": len(rows), "files": dg.MetadataValue.md(table)})


lake_housekeeping_job = dg.define_asset_job(
    "housekeeping",
    selection=[lake_housekeeping],
    description="Compact and vacuum every lake table.",
)


@dg.schedule(
    cron_schedule="0 7 * * 0",
    execution_timezone="UTC",
    job=lake_housekeeping_job,
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Sundays 07:00 UTC, after the daily run: compact and vacuum the lake. Off "
    "after set-up: start it in the UI (Automation).",
)
def lake_housekeeping_schedule() -> dg.RunRequest:
    return dg.RunRequest()
