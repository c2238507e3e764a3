"""One check per metrics table, after each run: the days it published, per account, summed
per currency and ad product from the lake, against the service's own answer at that grain
(`pipelines/reconcile.py`). A difference fails the check and is recorded in it, naming the
day, currency and both figures; the run's data stays published. A run that published none of
a table's days (the `reconcile` job) compares its partition range for every account."""

from collections.abc import Iterator

import dagster as dg

from assets.dated import DATED
from pipelines.client.credits import CreditBudgetError
from pipelines.fanout import ACCOUNTS_TAG, for_run
from pipelines.reconcile import (
    RECONCILED_CHECK,
    check_result,
    not_reconciled,
    published_in_run,
    reconcile_tables,
    run_days,
)
from pipelines.resources import ServiceResource, WarehouseResource
from pipelines.runner import record_spent, run_budget
from pipelines.sources import METRICS

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
        outcomes = reconcile_tables(
            settings,
            service,
            warehouse.destination(),
            plans,
            budget,
            packed=ACCOUNTS_TAG in context.run.tags,
        )
    finally:
        record_spent(context, budget, spent_before)
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
