"""The one Dagster `Definitions` object: assets, checks, the daily job and its schedule."""

import dagster as dg

from assets.advertising import ADVERTISING_ASSETS
from assets.catalog import CATALOG_ASSETS
from assets.history import HISTORY_ASSETS
from assets.housekeeping import lake_housekeeping, lake_housekeeping_job, lake_housekeeping_schedule
from assets.marts import warehouse_marts
from assets.metrics import METRICS_ASSETS
from pipelines.automation import warehouse_refresh_sensor
from pipelines.partitions import daily_range, pending_economics_since, range_tags
from pipelines.resources import ServiceResource, WarehouseResource

# One multi-asset per source family: the steps that extract (or, with config, rebuild).
FAMILY_ASSETS = [*CATALOG_ASSETS, *ADVERTISING_ASSETS, *METRICS_ASSETS, *HISTORY_ASSETS]
# What is built from the lake for analysts.
WAREHOUSE_ASSETS = [warehouse_marts]
ALL_ASSETS = [*FAMILY_ASSETS, *WAREHOUSE_ASSETS]

daily_job = dg.define_asset_job(
    "daily",
    selection=dg.AssetSelection.assets(*ALL_ASSETS),
    description="Every table for a range of days (current-state tables as of today), then the "
    "DuckDB warehouse.",
)


@dg.schedule(
    cron_schedule="0 6 * * *",
    execution_timezone="UTC",
    job_name="daily",
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="06:00 UTC, after the service's optimizer (03:00): yesterday plus the lookback "
    "days that late data needs, in one run. Off after set-up: start it in the UI (Automation) "
    "or with `dagster schedule start daily_schedule`.",
)
def daily_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
    lake = WarehouseResource().destination().lake
    today = context.scheduled_execution_time.date()
    start, end = daily_range(today, pending_economics_since(lake, today))
    return dg.RunRequest(run_key=f"daily-{end}", tags=range_tags(start, end))


defs = dg.Definitions(
    assets=[*ALL_ASSETS, lake_housekeeping],
    jobs=[daily_job, lake_housekeeping_job],
    schedules=[daily_schedule, lake_housekeeping_schedule],
    sensors=[warehouse_refresh_sensor],
    resources={"service": ServiceResource(), "warehouse": WarehouseResource()},
)
