"""Alerts through Dagster's public sensors: a run failed, a check failed (contracts,
reconciliation, dbt tests, freshness), the service started sending a column, a daily table
was not updated in time. What each says, and where it goes, is `pipelines/notify.py`.

- `alert_on_failure` (a run failure sensor) and `alert_on_success` (a run status sensor on
  success: checks fail without failing their run) read each finished run's record once
  (`pipelines/run_record.findings`), in the daemon that `dagster dev` and the deployment run;
  runs the CLI records in the same instance are read there too.
- Freshness: every extraction table has Dagster's freshness check (the dated ones: yesterday's
  partition by `FRESHNESS_DEADLINE`; the current state: updated within a day by then), shown
  on the asset in the UI and evaluated by Dagster's freshness sensor; a check that fails is an
  alert like any other.
"""

import warnings
from collections.abc import Sequence
from datetime import timedelta

import dagster as dg

from pipelines.notify import Alert, deliver
from pipelines.resources import WarehouseResource
from pipelines.run_record import findings
from pipelines.settings import AlertSettings, load_settings

# Dagster 1.12 marks freshness checks superseded by `FreshnessPolicy`, which is evaluated per
# asset, not per partition (a backfill of an old day makes a late table look fresh), and whose
# alerts are Dagster+'s; the checks say "yesterday's partition is late", and their failures
# are check evaluations the run sensors below read. Chosen knowingly (ARCHITECTURE.md).
warnings.filterwarnings(
    "ignore", category=dg.SupersessionWarning, message=".*(freshness_checks|FreshnessPolicy).*"
)
# When yesterday's rows must be in: three hours after the daily schedule (06:00 UTC).
FRESHNESS_DEADLINE = "0 9 * * *"
NO_DESTINATION = "no alert destination is set (ADWH_ALERT_WEBHOOK_URL, ADWH_ALERT_SMTP_URL)"


def freshness_checks(
    dated: dg.AssetsDefinition, current: dg.AssetsDefinition
) -> list[dg.AssetChecksDefinition]:
    """A daily table is late when yesterday's partition is not materialized by the deadline;
    a current-state table, when it was not updated within the day before it."""
    return [
        *dg.build_time_partition_freshness_checks(assets=[dated], deadline_cron=FRESHNESS_DEADLINE),
        *dg.build_last_update_freshness_checks(
            assets=[current], lower_bound_delta=timedelta(days=1), deadline_cron=FRESHNESS_DEADLINE
        ),
    ]


def alerts_of(instance: dg.DagsterInstance, run: dg.DagsterRun, ui_url: str) -> list[Alert]:
    """One alert per kind of finding in `run`, linking to it in the UI."""
    by_kind: dict[str, list] = {}
    for finding in findings(instance, run):
        by_kind.setdefault(finding.kind, []).append(finding)
    link = f"{ui_url.rstrip('/')}/runs/{run.run_id}"
    name = f"{run.job_name} {run.run_id[:8]}"
    return [Alert(kind, name, link, tuple(found)) for kind, found in by_kind.items()]


def _alert(
    instance: dg.DagsterInstance, run: dg.DagsterRun, warehouse: WarehouseResource
) -> dg.SkipReason | None:
    settings = load_settings(AlertSettings)
    if not settings.configured:
        return dg.SkipReason(NO_DESTINATION)
    sent = deliver(alerts_of(instance, run, settings.ui_url), settings, warehouse.settings().home)
    return None if sent else dg.SkipReason(f"nothing new to tell of run {run.run_id}")


def alert_sensors() -> Sequence[dg.SensorDefinition]:
    """The two run sensors, on by default: with no destination set they send nothing."""

    @dg.run_failure_sensor(
        name="alert_on_failure",
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="A run failed: each table it left failed, with the account, source, "
        "request and cause, to the webhook and e-mail destinations set (ADWH_ALERT_*).",
    )
    def alert_on_failure(context: dg.RunFailureSensorContext, warehouse: WarehouseResource):
        return _alert(context.instance, context.dagster_run, warehouse)

    @dg.run_status_sensor(
        run_status=dg.DagsterRunStatus.SUCCESS,
        name="alert_on_success",
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="A run succeeded but a check failed (contract, reconciliation, dbt test, "
        "freshness) or the service started sending a column: to the destinations set.",
    )
    def alert_on_success(context: dg.RunStatusSensorContext, warehouse: WarehouseResource):
        return _alert(context.instance, context.dagster_run, warehouse)

    return [alert_on_failure, alert_on_success]
