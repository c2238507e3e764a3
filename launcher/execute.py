"""`adwh run` and `adwh rebuild` as Dagster runs, recorded in the instance, and told to the
alert destinations as they end: the `daily` job's run of the tables, then the warehouse
location's `warehouse` job building from what it published.

They go through the same Definitions, assets and checks as the UI and the schedule, and write
to the instance `dagster dev` reads (`assets/instance.py`), so the UI shows what the CLI did:
materializations per partition, check results, metadata. What the CLI prints is read back from
that record through the instance API: materializations, check evaluations, step failures.
"""

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date

import dagster as dg

from assets.alerting import tell_runs
from assets.definitions import EXTRACTION_ASSETS, defs
from assets.instance import open_instance
from assets.partitions import range_tags
from assets.resources import ServiceResource
from assets.run_record import error_line, failed_check, metadata_value
from assets.runner import CREDITS_TAG, RECONCILIATION_CREDITS_TAG
from pipelines.catch_up import CATCH_UP_TAG, heal_tags
from pipelines.destination import Destination
from pipelines.notify import AlertDeliveryError
from pipelines.settings import Settings, in_environment
from pipelines.sources import SOURCES

# The console gets only our one-line summary; Dagster's full event log stays in the instance.
QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
OUTCOME_EVENTS = {
    dg.DagsterEventType.ASSET_MATERIALIZATION,
    dg.DagsterEventType.ASSET_OBSERVATION,
    dg.DagsterEventType.ASSET_CHECK_EVALUATION,
    dg.DagsterEventType.STEP_FAILURE,
}
# What a table's line is read from: materialized, or observed where it was published for
# some accounts only (`assets/runner.py`).
TABLE_EVENTS = {dg.DagsterEventType.ASSET_MATERIALIZATION, dg.DagsterEventType.ASSET_OBSERVATION}
# The run of the tables a warehouse build follows.
AFTER_TAG = "adwh/after"
# Dagster's run tag: how often the daemon retries a failed run. Never the CLI's: the person or
# scheduler that started it has its exit status, and Dagster cannot re-execute a run that was
# executed in process (the daemon would log that it cannot, after the warehouse_refresh sensor
# had waited for the retry promised).
NO_RETRY = {"dagster/max_retries": "0"}
# `rows` is each partition's own, summed over the run's partitions; the run's own figures are
# on one partition (`assets/runner.py`), and a partition's own `held_back` comes first.
SUMMED = ("rows",)


@dataclass
class TableLine:
    table: str
    metadata: dict[str, object]


@dataclass
class RunSummary:
    start: date
    end: date
    run_id: str = ""
    tables: list[TableLine] = field(default_factory=list)
    failure: str | None = None
    credits: int = 0  # what the run's reads cost, all steps together
    reconciliation_credits: int = 0  # of which the reconciliation's
    run_ids: list[str] = field(default_factory=list)  # the run, and a warehouse build after it
    untold: str | None = None  # why what went wrong could not be told (`assets/alerting.py`)
    max_credits: int | None = None

    @property
    def warehouse_built(self) -> bool:
        """The warehouse's models materialized (not when not run, `run_pipeline(warehouse=False)`,
        or failed): the project's models, read from its manifest, not from dagster-dbt."""
        from warehouse.dbt_project import models_in_order, project_digest

        models = set(models_in_order(project_digest()))
        return any(line.table in models for line in self.tables)


def configured_service() -> ServiceResource:
    """The `service` resource as the runs this module launches configure it: what the CLI
    checks before a run is the service the run will reach, with the same retries."""
    return ServiceResource(**QUIET.get("resources", {}).get("service", {}).get("config", {}))


def read_outcome(instance: dg.DagsterInstance, run_id: str, summary: RunSummary) -> None:
    """Fill `summary` from the run's record: per table, the partitions' rows summed and the
    run's own figures. The failure: a blocking check that failed before any step (a mart's dbt
    test, whose step then fails for it); else every failed step, in one line (each names its
    sources); else the first failed check (a contract's held-back partitions, a
    reconciliation's difference). Not the order the steps ran in: a contract held back in one
    step does not hide another step's failed sources."""
    records = instance.get_records_for_run(run_id, of_type=OUTCOME_EVENTS, limit=1_000_000)
    lines: dict[str, TableLine] = {}
    failure, blocked, failed_steps = None, None, []
    for record in records.records:
        event = record.event_log_entry.dagster_event
        if event is None:
            continue
        if event.event_type in TABLE_EVENTS:
            entry = record.event_log_entry
            reported = entry.asset_materialization or entry.asset_observation
            key = reported.asset_key.to_user_string()
            metadata = {k: metadata_value(v) for k, v in reported.metadata.items()}
            line = lines.get(key)
            if line is None:
                lines[key] = TableLine(key, metadata)
                continue
            for name, value in metadata.items():
                if name in SUMMED and isinstance(value, int):
                    line.metadata[name] = int(line.metadata.get(name, 0)) + value
                else:
                    line.metadata.setdefault(name, value)
        elif event.event_type is dg.DagsterEventType.STEP_FAILURE:
            failed_steps.append(error_line(event.step_failure_data.error))
        else:
            evaluation = event.event_specific_data
            failed = not evaluation.passed and evaluation.severity is dg.AssetCheckSeverity.ERROR
            if failed and failure is None:
                failure = failed_check(evaluation)
            if failed and evaluation.blocking and blocked is None and not failed_steps:
                blocked = failed_check(evaluation)  # the step failing after it, for it
    summary.tables = list(lines.values())
    summary.failure = blocked or "; ".join(dict.fromkeys(failed_steps)) or failure


def selection(tables: tuple[str, ...]) -> list[dg.AssetKey] | None:
    """The assets that produce `tables` (whole sources); None for all."""
    if not tables:
        return None
    known = {o.schema.name: s for s in SOURCES for o in s.outputs}
    unknown = sorted(set(tables) - set(known))
    if unknown:
        raise ValueError(f"unknown tables: {', '.join(unknown)}; known: {', '.join(known)}")
    names = {o.schema.name for t in tables for o in known[t].outputs}
    return [dg.AssetKey(name) for name in sorted(names)]


def from_raw_config() -> dict:
    """Run config that makes every extracting step read raw pages instead of the service."""
    return {"ops": {asset.op.name: {"config": {"from_raw": True}} for asset in EXTRACTION_ASSETS}}


def run_pipeline(
    settings: Settings,
    start: date,
    end: date,
    tables: tuple[str, ...] = (),
    *,
    from_raw: bool = False,
    catch_up: bool = False,
    heal: Mapping[str, date] | None = None,
    warehouse: bool = True,
) -> RunSummary:
    """One run of the `daily` job over [start, end]: from the service, or from raw pages;
    `catch_up`, each account from its own first day in it (`pipelines/catch_up.py`); then a
    run of the `warehouse` job when it published anything, unless a later run builds it
    (`warehouse=False`: the demo's)."""
    Destination.of(settings).clean_staging()
    summary = RunSummary(start, end, max_credits=settings.max_credits)
    run_config = {**QUIET, **(from_raw_config() if from_raw else {})}
    command = "rebuild" if from_raw else "run"
    with open_instance() as instance:
        result = defs.resolve_job_def("daily").execute_in_process(
            instance=instance,
            run_config=run_config,
            tags={
                "adwh/command": command,
                **NO_RETRY,
                **range_tags(start, end),
                **({CATCH_UP_TAG: "1"} if catch_up else {}),
                **heal_tags(heal or {}),
            },
            raise_on_error=False,
            asset_selection=selection(tables),
        )
        summary.run_id = result.run_id
        read_outcome(instance, result.run_id, summary)
        run = instance.get_run_by_id(result.run_id)
        tags = run.tags if run else {}
        summary.credits = int(tags.get(CREDITS_TAG, 0))
        summary.reconciliation_credits = int(tags.get(RECONCILIATION_CREDITS_TAG, 0))
        summary.run_ids.append(result.run_id)
        if warehouse and summary.tables:
            _build_after(instance, summary, command)
        try:
            tell_runs(instance, summary.run_ids, settings.home)
        except AlertDeliveryError as error:  # the daemon's sensors try again, when one runs
            summary.untold = str(error)
    return summary


@contextmanager
def on_reference_date(settings: Settings, today: date) -> Iterator[Settings]:
    """The runs started meanwhile as on `today` (`ADWH_TODAY`: what the service answers, and
    yesterday, are of that date), the warehouse's first day kept (`ADWH_START_DATE`, by
    default 30 days before the real today): the settings to give them, and the environment
    their resources read (a run reads it when it starts); the environment as before after.
    The demo's mornings (`adwh demo`)."""
    first_day = settings.first_day
    values = {"ADWH_TODAY": today.isoformat(), "ADWH_START_DATE": first_day.isoformat()}
    with in_environment(values):
        yield settings.model_copy(update={"today": today, "start_date": first_day})


def _build_after(instance: dg.DagsterInstance, summary: RunSummary, command: str) -> None:
    """Build the warehouse from the lake in a run of the warehouse location's job, tagged with
    the run it follows; its marts join the summary, whose failure stays the first run's. The
    location is loaded here, and dbt with it, only when a build is due."""
    from assets.warehouse_definitions import WAREHOUSE_JOB
    from assets.warehouse_definitions import defs as warehouse_defs

    result = warehouse_defs.resolve_job_def(WAREHOUSE_JOB).execute_in_process(
        instance=instance,
        run_config={"loggers": QUIET["loggers"]},  # the tables' resources are not its own
        tags={"adwh/command": command, **NO_RETRY, AFTER_TAG: summary.run_id},
        raise_on_error=False,
    )
    built = RunSummary(summary.start, summary.end)
    summary.run_ids.append(result.run_id)
    read_outcome(instance, result.run_id, built)
    summary.tables += built.tables
    summary.failure = summary.failure or built.failure
