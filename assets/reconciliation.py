"""One check per metrics table, after each run: the days it published, per account, summed
per currency and ad product from the lake, against the service's own answer at that grain
(`pipelines/reconcile.py`). A difference fails the check and is recorded in it, naming the
day, currency and both figures; the run's data stays published. A run that published none of
a table's days (the `reconcile` job) compares its partition range for every account."""

from collections.abc import Iterator, Mapping
from datetime import date, timedelta

import dagster as dg

from assets.dated import DATED
from assets.partitions import RANGE_END_TAG, RANGE_START_TAG
from assets.resources import ServiceResource, WarehouseResource
from assets.run_record import PARTITION_TAG
from assets.runner import RECONCILIATION_CREDITS_TAG, record_spent, run_budget
from pipelines.client.credits import CreditBudgetError
from pipelines.fanout import ACCOUNTS_TAG, for_run
from pipelines.reconcile import GRAIN, Plan, Reconciled, reconcile_tables
from pipelines.settings import Settings
from pipelines.sources import METRICS
from transforms.reconcile import LAKE, SERVICE

RECONCILED_CHECK = "reconciled"
SHOWN = 20  # differences listed in a check's metadata; `differences` counts them all

RECONCILED = [output.schema for source in METRICS for output in source.outputs]


@dg.multi_asset_check(
    name="reconciliation",
    specs=[
        dg.AssetCheckSpec(
            RECONCILED_CHECK,
            asset=schema.name,
            description="The run's days equal the service's own sums (group_by=account) to "
            "the cent: money and counts per account, day, currency and ad product.",
        )
        for schema in RECONCILED
    ],
    can_subset=True,
)
def reconciliation(
    context: dg.AssetCheckExecutionContext,
    service: ServiceResource,
    warehouse: WarehouseResource,
) -> Iterator[dg.AssetCheckResult]:
    selected = {key.asset_key.to_user_string() for key in context.selected_asset_check_keys}
    schemas = [schema for schema in RECONCILED if schema.name in selected]
    if _rebuilt_from_raw(context.run.run_config):
        for schema in schemas:
            yield not_reconciled(schema.name, "a rebuild from raw pages asks the service nothing")
        return
    settings = for_run(service.settings(warehouse), context.run.tags, DATED.node_def.name)
    published = published_in_run(context.instance, context.run.run_id)
    every_account = {run_days(context.run.tags, settings): None}
    plans = {schema.name: published.get(schema.name) or every_account for schema in schemas}
    budget = run_budget(context, settings)
    spent_before = budget.spent
    try:
        opened = service.session(settings, packed=ACCOUNTS_TAG in context.run.tags, budget=budget)
        outcomes = reconcile_tables(opened, warehouse.destination(), plans)
    finally:
        record_spent(context, budget, spent_before, RECONCILIATION_CREDITS_TAG)
    stopped = None
    for schema, outcome in zip(schemas, outcomes, strict=True):
        if isinstance(outcome, Exception):
            stopped = outcome if isinstance(outcome, CreditBudgetError) else stopped
            yield not_reconciled(schema.name, outcome)
        else:
            yield check_result(outcome)
    if stopped is not None:
        raise stopped


def _rebuilt_from_raw(run_config: dict) -> bool:
    ops = run_config.get("ops", {})
    return any(op.get("config", {}).get("from_raw") for op in ops.values())


def published_in_run(instance: dg.DagsterInstance, run_id: str) -> dict[str, Plan]:
    """Per table, the days each account's rows were published by the run (the extraction's
    `published_days`, on the range's last partition)."""
    records = instance.get_records_for_run(
        run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION, limit=1_000_000
    ).records
    plans: dict[str, Plan] = {}
    for record in records:
        event = record.event_log_entry.dagster_event
        materialization = event.step_materialization_data.materialization if event else None
        published = materialization.metadata.get("published_days") if materialization else None
        if published is None:
            continue
        plan = plans.setdefault(materialization.asset_key.to_user_string(), {})
        for span, accounts in published.value.items():
            first, _, last = span.partition("..")
            plan[date.fromisoformat(first), date.fromisoformat(last)] = list(accounts)
    return plans


def run_days(tags: Mapping[str, str], settings: Settings) -> tuple[date, date]:
    """The days a run compares that published none (the `reconcile` job): its partition
    range (or partition), else the lookback days up to yesterday."""
    if RANGE_START_TAG in tags and RANGE_END_TAG in tags:
        return date.fromisoformat(tags[RANGE_START_TAG]), date.fromisoformat(tags[RANGE_END_TAG])
    if PARTITION_TAG in tags:
        day = date.fromisoformat(tags[PARTITION_TAG])
        return day, day
    yesterday = settings.today - timedelta(days=1)
    return yesterday - timedelta(days=settings.lookback_days - 1), yesterday


def check_result(outcome: Reconciled) -> dg.AssetCheckResult:
    """Passed when every figure agrees; else the differences, each naming its account, day,
    currency (and ad product), measure and both figures."""
    found = outcome.differences
    lines = [_difference(row) for row in found.head(SHOWN).iter_rows(named=True)]
    metadata: dict[str, object] = {
        "days": outcome.days,
        "groups_compared": outcome.groups,
        "differences": found.height,
    }
    if lines:
        metadata["first_differences"] = dg.MetadataValue.md("\n".join(f"- {x}" for x in lines))
    return dg.AssetCheckResult(
        asset_key=outcome.table,
        check_name=RECONCILED_CHECK,
        passed=not lines,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata=metadata,
        description=f"differs from the service: {lines[0]}" if lines else None,
    )


def not_reconciled(table: str, reason: object) -> dg.AssetCheckResult:
    """A table the check could not compare: a warning, since its data is not known wrong."""
    return dg.AssetCheckResult(
        asset_key=table,
        check_name=RECONCILED_CHECK,
        passed=False,
        severity=dg.AssetCheckSeverity.WARN,
        description=f"not reconciled: {reason}",
    )


def _difference(row: dict) -> str:
    grain = ", ".join(str(row[k]) for k in GRAIN if k in row)
    return f"{grain}: {row['measure']} lake {row[LAKE]}, service {row[SERVICE]}"
