"""The extraction's code location: the tables' assets and checks, their jobs and schedules,
and the alert sensors. The warehouse and its marts are a location of their own
(`assets/warehouse_definitions.py`), so the processes that load this one never import dbt.

Every run process loads this module once Dagster is loaded, and Dagster's modules live as long
as the process. Frozen out of the garbage collector here, they are no longer walked by every
full collection while the rest loads (polars, PyArrow, pandera, the assets), while the run
goes on, and when the process ends: an extraction run's process, started and ended, went from
1.45-1.64 s to 1.09-1.14 s here, `import dagster` alone taking 0.72-0.87 s (bench/startup.py;
~0.1 s of it loading, the rest ending). A process that loaded DuckDB unfreezes them as it
ends: DuckDB's bindings report every object of theirs still alive then as leaked, on stderr.
"""

import atexit
import gc
import sys
from datetime import date

import dagster as dg

gc.freeze()

from assets.alerting import alert_sensors
from assets.current import CURRENT_STATE
from assets.dated import DATED, RESTATEMENTS_RECORD
from assets.healing import plan_the_day
from assets.housekeeping import lake_housekeeping, lake_housekeeping_job, lake_housekeeping_schedule
from assets.partitions import range_tags
from assets.reconciliation import reconciliation
from assets.resources import ServiceResource, WarehouseResource
from pipelines.catch_up import CATCH_UP_TAG, heal_tags
from pipelines.client.errors import ServiceError
from pipelines.fanout import ACCOUNTS_TAG, EXTRACT_JOB, account_ids, pack_runs, short_digest

# The steps that extract (or, with config, rebuild): the current state, then the dated facts.
EXTRACTION_ASSETS = [CURRENT_STATE, DATED]
# The one table a scheduled day's run fetches when the service cannot be asked (`not_started`).
NOT_STARTED = dg.AssetKey("accounts")

daily_job = dg.define_asset_job(
    "daily",
    selection=dg.AssetSelection.assets(*EXTRACTION_ASSETS),
    description="Every table for a range of days (current-state tables as of today): `adwh "
    "run`'s, whose warehouse is built after it by the warehouse location's `warehouse` job.",
)


extract_job = dg.define_asset_job(
    EXTRACT_JOB,
    selection=dg.AssetSelection.assets(*EXTRACTION_ASSETS),
    description="Every table for a range of days, without the warehouse: the job of the daily "
    "schedule's and `adwh backfill`'s runs, each over a pack of accounts (tag adwh/accounts); "
    "the warehouse is built once after them by the warehouse_refresh sensor.",
)


reconcile_job = dg.define_asset_job(
    "reconcile",
    selection=dg.AssetSelection.checks(reconciliation),
    description="The metrics tables' days (the partitions chosen) checked against the service's "
    "own sums, without fetching them again: after a change to the lake, or to see whether the "
    "service restated days the warehouse holds. Each run already does it for its own days.",
)


def not_started(today: date) -> dg.RunRequest:
    """The day's one run when the service refused the key or did not answer: only `accounts`
    (the current state, no partition), which fails the same way, so the failure is a failed
    run that the alert sensors tell, and no daily partition is planned to show failed while
    the data is held; the next good run materializes `accounts` again."""
    return dg.RunRequest(run_key=f"daily-{today}-not-started", asset_selection=[NOT_STARTED])


@dg.schedule(
    cron_schedule="0 6 * * *",
    execution_timezone="UTC",
    job=extract_job,
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="06:00 UTC, after the service's optimizer (03:00): for every account the key "
    "reaches, every day up to yesterday that the warehouse lacks (90 days back at most; a new "
    "account from ADWH_START_DATE), the ADWH_LOOKBACK_DAYS most recent days, economics still "
    "pending and days whose last attempt failed; small accounts packed into one run. The "
    "warehouse_refresh sensor builds the warehouse once they are all done. Off after set-up: "
    "start it in the UI (Automation) or with `dagster schedule start daily_schedule`.",
)
def daily_schedule(
    context: dg.ScheduleEvaluationContext, service: ServiceResource, warehouse: WarehouseResource
) -> list[dg.RunRequest]:
    today = context.scheduled_execution_time.date()
    settings = service.settings(warehouse).model_copy(update={"today": today})
    try:
        accounts = account_ids(settings)
    except ServiceError as error:
        context.log.warning(f"the daily runs were not started: {error}")
        return [not_started(today)]
    plan = plan_the_day(context.instance, settings, warehouse.destination().lake, accounts)
    starts = {account: plan.account_start(account) for account in plan.accounts}
    days = {account: (plan.end - start).days + 1 for account, start in starts.items()}
    requests = []
    for tags in pack_runs(settings, days, plan.accounts):
        start = min(starts[account] for account in tags[ACCOUNTS_TAG].split(","))
        requests.append(
            dg.RunRequest(
                run_key=f"daily-{plan.end}-{short_digest(tags[ACCOUNTS_TAG])}",
                tags={
                    **range_tags(start, plan.end),
                    **tags,
                    CATCH_UP_TAG: "1",
                    **heal_tags(plan.heal),
                },
            )
        )
    return requests


defs = dg.Definitions(
    assets=[*EXTRACTION_ASSETS, RESTATEMENTS_RECORD, lake_housekeeping],
    asset_checks=[reconciliation],
    jobs=[
        daily_job,
        extract_job,
        reconcile_job,
        lake_housekeeping_job,
    ],
    schedules=[daily_schedule, lake_housekeeping_schedule],
    sensors=alert_sensors(EXTRACTION_ASSETS),
    resources={"service": ServiceResource(), "warehouse": WarehouseResource()},
    # Every job runs its steps in the run's own process, the asset job of backfills included:
    # parallelism comes from many runs at once, and a process per step would cost each small
    # run another Dagster start-up (~400 MiB, seconds of CPU) per extraction step.
    executor=dg.in_process_executor,
)


@atexit.register
def _unfreeze_where_duckdb_loaded() -> None:
    if "duckdb" in sys.modules:
        gc.unfreeze()
