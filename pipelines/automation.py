"""What keeps the warehouse fresh when tables change outside a full run.

A backfill or a run launched from the UI materializes tables, not always the warehouse built
from them. The warehouse's condition asks for a build whenever any table it reads was updated
and the warehouse itself was not (a full run builds both: nothing more to do), once nothing
upstream is still running. Dagster's `eager()` would never fire here: it also
waits until no upstream partition is missing, and the daily tables always miss some (every
day since the first partition that was never fetched). The sensor that evaluates it is on by
default, so `dagster dev` keeps the warehouse as fresh as `adwh run` does.
"""

import dagster as dg

WAREHOUSE_REFRESH = (
    dg.AutomationCondition.any_deps_updated()
    & ~dg.AutomationCondition.newly_updated()
    & ~dg.AutomationCondition.in_progress()
    & ~dg.AutomationCondition.any_deps_in_progress()
).with_label("rebuild after any table it reads changes")

warehouse_refresh_sensor = dg.AutomationConditionSensorDefinition(
    "warehouse_refresh",
    target=dg.AssetSelection.all(),
    default_status=dg.DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=30,
    description="Evaluates the warehouse's automation condition every 30 s: after a backfill "
    "or a UI run changes a table, the DuckDB warehouse and its marts are rebuilt.",
)
