"""The one Dagster `Definitions` object: assets, checks, the daily job and its schedule."""

import dagster as dg

from assets.advertising import ADVERTISING_ASSETS
from assets.catalog import CATALOG_ASSETS
from assets.history import HISTORY_ASSETS
from assets.metrics import METRICS_ASSETS
from assets.warehouse import warehouse_duckdb
from pipelines.partitions import daily_range, pending_economics_since, range_tags
from pipelines.resources import ServiceResource, WarehouseResource

ALL_ASSETS = [
    *CATALOG_ASSETS,
    *ADVERTISING_ASSETS,
    *METRICS_ASSETS,
    *HISTORY_ASSETS,
    warehouse_duckdb,
]

daily_job = dg.define_asset_job(
    "daily",
    selection=dg.AssetSelection.all(),
    description="Every table for a range of days (current-state tables as of today), then the "
    "DuckDB warehouse.",
)


@dg.schedule(
    cron_schedule="0 6 * * *",
    execution_timezone="UTC",
    job_name="daily",
    description="06:00 UTC, after the service's optimizer (03:00): yesterday plus the lookback "
    "days that late data needs, in one run.",
)
def daily_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
    home = WarehouseResource().settings().home
    start, end = daily_range(context.scheduled_execution_time.date(), pending_economics_since(home))
    return dg.RunRequest(run_key=f"daily-{end}", tags=range_tags(start, end))


defs = dg.Definitions(
    assets=ALL_ASSETS,
    jobs=[daily_job],
    schedules=[daily_schedule],
    resources={"service": ServiceResource(), "warehouse": WarehouseResource()},
)
