"""The warehouse checked against the service: after each run, one check per metrics table
compares the lake's sums with the service's own (`group_by=account`); a row changed in the lake
behind the pipeline's back fails it, naming day, currency and both figures, and the check is
recorded while the data stays published; a table the service will not compare is a warning
naming the cause."""

from datetime import date
from decimal import Decimal

import dagster as dg
import polars as pl
from deltalake import DeltaTable

from assets.definitions import defs
from assets.instance import open_instance
from assets.partitions import range_tags
from assets.reconciliation import RECONCILED, RECONCILED_CHECK
from launcher.cli import main
from sandbox.faults import FaultPlan

START, END = date(2026, 11, 18), date(2026, 11, 22)
CHANGED = date(2026, 11, 20)


def reconciled(instance: dg.DagsterInstance, run_id: str) -> dict[str, dg.AssetCheckEvaluation]:
    records = instance.get_records_for_run(
        run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION, limit=1000
    ).records
    evaluations = [r.event_log_entry.dagster_event.event_specific_data for r in records]
    return {
        e.asset_key.to_user_string(): e for e in evaluations if e.check_name == RECONCILED_CHECK
    }


def reconcile_job() -> dict[str, dg.AssetCheckEvaluation]:
    """The `reconcile` job over START..END on the home's instance, as the UI launches it: its
    reconciliation checks, by table."""
    with open_instance() as instance:
        result = defs.resolve_job_def("reconcile").execute_in_process(
            instance=instance, tags=range_tags(START, END), raise_on_error=False
        )
        return reconciled(instance, result.run_id)


def test_a_row_changed_in_the_lake_fails_the_check_naming_day_currency_and_figures(embedded, home):
    metrics = ["--tables", ",".join(schema.name for schema in RECONCILED)]  # what is checked
    assert main(["run", "--start", START.isoformat(), "--end", END.isoformat(), *metrics]) == 0
    with open_instance() as instance:
        (run,) = instance.get_runs(dg.RunsFilter(job_name="daily"))  # then its warehouse's
        after_run = reconciled(instance, run.run_id)
    assert sorted(after_run) == sorted(s.name for s in RECONCILED)
    assert all(e.passed for e in after_run.values()), after_run

    lake = str(home / "lake" / "campaign_metrics")
    rows = pl.read_delta(lake).filter(pl.col("date") == CHANGED, pl.col("cost") > 0)
    row = rows.row(0, named=True)
    grain = (
        (pl.col("account_id") == row["account_id"])
        & (pl.col("date") == CHANGED)
        & (pl.col("currency") == row["currency"])
        & (pl.col("ad_product") == row["ad_product"])
    )
    served = pl.read_delta(lake).filter(grain)["cost"].sum()
    DeltaTable(lake).update(
        predicate=f"campaign = '{row['campaign']}' AND date = '{CHANGED}' "
        f"AND currency = '{row['currency']}' AND ad_product = '{row['ad_product']}'",
        updates={"cost": "cost + 0.01"},
    )

    checks = reconcile_job()
    changed = checks.pop("campaign_metrics")
    assert not changed.passed and changed.severity is dg.AssetCheckSeverity.ERROR
    named = f"{CHANGED}, {row['currency']}, {row['ad_product']}: cost"
    assert f"{named} lake {served + Decimal('0.01')}, service {served}" in changed.description
    assert changed.metadata["differences"].value == 1
    assert all(e.passed for e in checks.values()), checks
    kept = pl.read_delta(lake).filter(grain)["cost"].sum()
    assert kept == served + Decimal("0.01")  # the check reports; it changes nothing

    # The service refuses the table's grouped sums: the check says so, as a warning (the data
    # is not known wrong), and compares the others.
    embedded.faults = FaultPlan(broken_routes=(("/v1/campaign-metrics", 404),))
    checks = reconcile_job()
    unasked = checks.pop("campaign_metrics")
    assert not unasked.passed and unasked.severity is dg.AssetCheckSeverity.WARN
    assert unasked.description.startswith("not reconciled: ") and " 404 " in unasked.description
    assert all(e.passed for e in checks.values()), checks
