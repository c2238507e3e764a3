"""What keeps the warehouse fresh when tables change outside a full run.

A backfill, a UI run or the daily schedule's runs (one per account) materialize tables, not the
warehouse built from them. The warehouse's condition asks for one build once any table it reads
(not one of its own models) was updated since it was last built or requested, and nothing
upstream is still running or queued: after 300 accounts' runs, one build, not 300. An update
seen while other runs are still in progress is remembered until then (`since_last_handled`).
A full run builds tables and warehouse at once: nothing more to do. Dagster's `eager()` would
never fire here: it also waits until no upstream partition is missing, and the daily tables
always miss some (every day since the first partition that was never fetched). The sensor
that evaluates it is on by default, so `dagster dev` keeps the warehouse as fresh as
`adwh run` does.
"""

import dagster as dg

WAREHOUSE_REFRESH = (
    dg.AutomationCondition.any_deps_updated()
    .ignore(dg.AssetSelection.kind("dbt"))  # its own models are built with it, in one step
    .since_last_handled()
    & ~dg.AutomationCondition.in_progress()
    & ~dg.AutomationCondition.any_deps_in_progress()
).with_label("rebuild once the tables it reads changed and none is still running")

warehouse_refresh_sensor = dg.AutomationConditionSensorDefinition(
    "warehouse_refresh",
    target=dg.AssetSelection.all(),
    default_status=dg.DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=30,
    description="Evaluates the warehouse's automation condition every 30 s: after a backfill "
    "or a UI run changes a table, the DuckDB warehouse and its marts are rebuilt.",
)
