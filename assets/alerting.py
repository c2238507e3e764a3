"""Alerts through Dagster's public sensors: a run failed, a check failed (contracts,
reconciliation, dbt tests), the service started sending a column, a restatement moved more of
a day's money than `ADWH_ALERT_RESTATED_SHARE`, a table was not updated in time. What each
says, and where it goes, is `pipelines/notify.py`.

- `alert_on_failure` (a run failure sensor) and `alert_on_success` (a run status sensor on
  success: checks fail without failing their run) read each finished run's record once
  (`assets/run_record.findings`), in the daemon that `dagster dev` and the deployment run.
- `adwh run` tells its own runs as they end (`tell_runs`), whether a daemon runs or not. The
  sensors read those runs too (`monitor_all_code_locations`: a run executed in process has no
  code location to match), so what the CLI could not deliver is sent at the daemon's next
  tick; the sent log makes either one the only one.
- Freshness: every extraction table carries Dagster's `FreshnessPolicy` (updated in the day
  before 09:00 UTC), which the UI shows on the asset and Dagster's freshness daemon judges.
  That policy is judged per asset, not per partition, and its alerts are Dagster+'s; so the
  `alert_on_late_tables` sensor says the day that is late: a daily table whose yesterday's
  partition is not materialized by the deadline, a current-state table not updated in the day
  before it. Dagster's freshness checks would say so too, but an asset's checks run in every
  run that materializes it (backfills, the UI's): a step and 33 evaluations more per run, and a
  backfill of old days judged late while it runs.
"""

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import dagster as dg

from assets.resources import WarehouseResource
from assets.run_record import findings
from pipelines.notify import Alert, Finding, deliver
from pipelines.settings import AlertSettings, load_settings

# When yesterday's rows must be in (UTC): three hours after the daily schedule (06:00 UTC).
DEADLINE_HOUR = 9
FRESHNESS_POLICY = dg.FreshnessPolicy.cron(
    deadline_cron=f"0 {DEADLINE_HOUR} * * *", lower_bound_delta=timedelta(days=1)
)
NO_DESTINATION = "no alert destination is set (ADWH_ALERT_WEBHOOK_URL, ADWH_ALERT_SMTP_URL)"


def last_deadline(now: datetime) -> datetime:
    """The most recent deadline (DEADLINE_HOUR UTC) at or before `now`."""
    today = now.astimezone(UTC).replace(hour=DEADLINE_HOUR, minute=0, second=0, microsecond=0)
    return today if today <= now else today - timedelta(days=1)


def late_tables(
    instance: dg.DagsterInstance, assets: Sequence[dg.AssetsDefinition], now: datetime
) -> list[Finding]:
    """The tables late at the last deadline: a daily table whose partition of the day before
    is not materialized, a current-state table not updated in the day before the deadline.
    A table never materialized is not late: nothing keeps it up to date yet."""
    deadline = last_deadline(now)
    day = (deadline - timedelta(days=1)).date().isoformat()
    due = f"due {deadline:%Y-%m-%d %H:%M} UTC"
    late = []
    for asset in assets:
        for key in asset.keys:
            latest = instance.get_latest_materialization_event(key)
            if latest is None:
                continue
            table = key.to_user_string()
            if asset.partitions_def is None:
                if latest.timestamp < (deadline - timedelta(days=1)).timestamp():
                    updated = datetime.fromtimestamp(latest.timestamp, UTC)
                    cause = f"last updated {updated:%Y-%m-%d %H:%M} UTC, not in the day before"
                    late.append(Finding("not fresh", table, due, cause))
                continue
            status = instance.get_status_by_partition(key, [day], asset.partitions_def) or {}
            if status.get(day) is not dg.AssetPartitionStatus.MATERIALIZED:
                cause = f"the partition {day} is not materialized ({_status(status.get(day))})"
                late.append(Finding("not fresh", table, due, cause))
    return late


def _status(status: dg.AssetPartitionStatus | None) -> str:
    return "never fetched" if status is None else status.value.lower().replace("_", " ")


def alerts_of(
    instance: dg.DagsterInstance, run: dg.DagsterRun, settings: AlertSettings
) -> list[Alert]:
    """One alert per kind of finding in `run`, linking to it in the UI."""
    by_kind: dict[str, list] = {}
    for finding in findings(instance, run, settings.restated_share):
        by_kind.setdefault(finding.kind, []).append(finding)
    link = f"{settings.ui_url.rstrip('/')}/runs/{run.run_id}"
    name = f"Run {run.job_name} {run.run_id[:8]}"
    return [Alert(kind, name, link, tuple(found)) for kind, found in by_kind.items()]


def tell_runs(instance: dg.DagsterInstance, run_ids: Sequence[str], home: Path) -> list[Alert]:
    """What `adwh run` tells of the runs it made, as the sensors would: their failed tables,
    failed checks and new columns, to the destinations set (none: nothing)."""
    settings = load_settings(AlertSettings)
    if not settings.configured:
        return []
    runs = [instance.get_run_by_id(run_id) for run_id in run_ids]
    alerts = [a for run in runs if run for a in alerts_of(instance, run, settings)]
    return deliver(alerts, settings, home)


def _send(
    warehouse: WarehouseResource,
    alerts: Callable[[AlertSettings], Sequence[Alert]],
    nothing_new: str,
) -> dg.SkipReason | None:
    """What every alert sensor does with its alerts (built from the settings, for the UI's
    address): none when no destination is set, else delivered; a skip when nothing was new."""
    settings = load_settings(AlertSettings)
    if not settings.configured:
        return dg.SkipReason(NO_DESTINATION)
    sent = deliver(alerts(settings), settings, warehouse.settings().home)
    return None if sent else dg.SkipReason(nothing_new)


def _alert(
    instance: dg.DagsterInstance, run: dg.DagsterRun, warehouse: WarehouseResource
) -> dg.SkipReason | None:
    return _send(
        warehouse,
        lambda settings: alerts_of(instance, run, settings),
        f"nothing new to tell of run {run.run_id}",
    )


def late_alert(
    instance: dg.DagsterInstance, extraction: Sequence[dg.AssetsDefinition], ui_url: str
) -> list[Alert]:
    """The tables late now, as one alert linking to the UI's assets (none when none is)."""
    late = late_tables(instance, extraction, datetime.now(UTC))
    link = f"{ui_url.rstrip('/')}/assets"
    return [Alert("not fresh", "Assets", link, tuple(late))] if late else []


def alert_sensors(extraction: Sequence[dg.AssetsDefinition]) -> Sequence[dg.SensorDefinition]:
    """The alert sensors, on by default: with no destination set they send nothing."""

    @dg.run_failure_sensor(
        name="alert_on_failure",
        default_status=dg.DefaultSensorStatus.RUNNING,
        monitor_all_code_locations=True,
        description="A run failed: each table it left failed, with the account, source, "
        "request and cause, to the webhook and e-mail destinations set (ADWH_ALERT_*).",
    )
    def alert_on_failure(context: dg.RunFailureSensorContext, warehouse: WarehouseResource):
        return _alert(context.instance, context.dagster_run, warehouse)

    @dg.run_status_sensor(
        run_status=dg.DagsterRunStatus.SUCCESS,
        name="alert_on_success",
        default_status=dg.DefaultSensorStatus.RUNNING,
        monitor_all_code_locations=True,
        description="A run succeeded but a check failed (contract, reconciliation, dbt test) "
        "or the service started sending a column: to the destinations set.",
    )
    def alert_on_success(context: dg.RunStatusSensorContext, warehouse: WarehouseResource):
        return _alert(context.instance, context.dagster_run, warehouse)

    @dg.sensor(
        name="alert_on_late_tables",
        minimum_interval_seconds=600,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Every 10 minutes: a daily table whose yesterday's partition is not "
        "materialized by 09:00 UTC, or a current-state table not updated in the day before, "
        "to the destinations set (once a day per table).",
    )
    def alert_on_late_tables(context: dg.SensorEvaluationContext, warehouse: WarehouseResource):
        return _send(
            warehouse,
            lambda settings: late_alert(context.instance, extraction, settings.ui_url),
            "every table is fresh, or its lateness was told already",
        )

    return [alert_on_failure, alert_on_success, alert_on_late_tables]
