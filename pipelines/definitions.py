"""The one Dagster `Definitions` object: assets, checks, the daily job and its schedule."""

import dagster as dg

from assets.advertising import campaigns
from assets.metrics import METRICS_ASSETS
from pipelines.partitions import daily_range, range_tags
from pipelines.resources import ServiceResource, WarehouseResource

SNAPSHOT_ASSETS = [campaigns]
DATED_ASSETS = METRICS_ASSETS

snapshot_job = dg.define_asset_job("current_state", selection=SNAPSHOT_ASSETS)
daily_facts_job = dg.define_asset_job("daily_facts", selection=DATED_ASSETS)


@dg.schedule(
    cron_schedule="0 6 * * *",
    execution_timezone="UTC",
    job_name="daily_facts",
    description="06:00 UTC, after the service's optimizer (03:00): yesterday plus the lookback "
    "days that late data needs, in one run.",
)
def daily_facts_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
    start, end = daily_range(context.scheduled_execution_time.date())
    return dg.RunRequest(run_key=f"daily-{end}", tags=range_tags(start, end))


current_state_schedule = dg.ScheduleDefinition(
    job=snapshot_job,
    cron_schedule="0 6 * * *",
    execution_timezone="UTC",
    description="06:00 UTC: snapshot the current state of every entity.",
)

defs = dg.Definitions(
    assets=[*SNAPSHOT_ASSETS, *DATED_ASSETS],
    jobs=[snapshot_job, daily_facts_job],
    schedules=[daily_facts_schedule, current_state_schedule],
    resources={"service": ServiceResource(), "warehouse": WarehouseResource()},
)
