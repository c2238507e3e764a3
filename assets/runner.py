"""The body every extraction step shares: extract its sources (from the service, or again from the
raw pages already landed), report each table.

Assets stay thin (which sources, which group, a description for analysts); this module turns
extractions into Dagster metadata (each partition its own rows) and one contract check result
per table.
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

import dagster as dg
from pydantic import Field

from assets.resources import ServiceResource, WarehouseResource
from pipelines.catch_up import CATCH_UP_TAG, heal_of
from pipelines.client.credits import CreditBudget, CreditBudgetError
from pipelines.client.stats import RunStats
from pipelines.extract import rebuild_source
from pipelines.fanout import ACCOUNTS_TAG, for_run, retry_tag
from pipelines.home import service_of
from pipelines.settings import Settings
from pipelines.sources.model import Source
from pipelines.stages.outcome import Outcomes
from pipelines.step import extract_step
from warehouse.schemas import RESTATEMENTS

CONTRACT_CHECK = "contract"
StepContext = dg.AssetExecutionContext | dg.AssetCheckExecutionContext
# What the run's reads have cost so far, in credits (pipelines/client/credits.py).
CREDITS_TAG = "adwh/credits"
# What of it the reconciliation spent (its `group_by` sums): no table's reads, a line of its own.
RECONCILIATION_CREDITS_TAG = "adwh/credits.reconciliation"


class ExtractConfig(dg.Config):
    """How a run gets its pages."""

    from_raw: bool = Field(
        default=False,
        description="Re-derive the tables from the raw pages landed by earlier runs, sending "
        "no request (`adwh rebuild`): after a fix to a transform or a contract.",
    )


def contract_check(table: str) -> dg.AssetCheckSpec:
    return dg.AssetCheckSpec(
        CONTRACT_CHECK,
        asset=table,
        description="The table's Pandera contract held on every partition of the run; a "
        "partition that breaks it is not published, and is named here.",
    )


def date_range(context: dg.AssetExecutionContext, source: Source, today: date) -> tuple[date, date]:
    if not source.dated:
        return today, today
    window = context.partition_time_window
    return window.start.date(), window.end.date() - timedelta(days=1)


def selected_tables(context: dg.AssetExecutionContext) -> set[str]:
    return {key.to_user_string() for key in context.selected_asset_keys}


def selected_sources(context: dg.AssetExecutionContext, sources: Sequence[Source]) -> list[Source]:
    """The sources feeding any asset the run selected (a source always feeds all its tables)."""
    selected = selected_tables(context)
    return [s for s in sources if any(o.schema.name in selected for o in s.outputs)]


def materialize_sources(
    context: dg.AssetExecutionContext,
    config: ExtractConfig,
    service: ServiceResource,
    warehouse: WarehouseResource,
    sources: list[Source],
) -> Iterator[dg.MaterializeResult | dg.AssetObservation]:
    """Extract `sources` side by side and report each table.

    What one (account, source) pair meets fails that pair alone: every other pair is published
    and its tables reported materialized. A table the pair feeds is not reported (Dagster marks
    it failed, with the step's error, once the step raises): its partitions lack that
    account's rows. The step then fails naming each pair, after tagging the run with the
    failed accounts, so the retry fetches them alone (`pipelines/fanout.py`)."""
    step = context.assets_def.node_def.name
    settings = for_run(service.settings(warehouse), context.run.tags, step)
    ranges = [date_range(context, source, settings.today) for source in sources]
    if config.from_raw:
        outcomes, stats = _from_raw(context, warehouse, sources, ranges), None
    else:
        outcomes, stats = _from_service(context, service, warehouse, settings, sources, ranges)
    failures = failed_pairs(sources, outcomes)
    selected = selected_tables(context)
    for i, (outcome, (start, end)) in enumerate(zip(outcomes, ranges, strict=True)):
        if isinstance(outcome, BaseException):
            continue
        counts = stats[i] if stats else RunStats()
        complete = {name: table for name, table in outcome.items() if not table.failed_accounts}
        yield from _results(context, selected, complete, counts, start, end)
        partial = {name: table for name, table in outcome.items() if table.failed_accounts}
        yield from _partly_published(selected, partial, counts, start, end)
    yield from _restated([o for o in outcomes if not isinstance(o, BaseException)])
    for failure in failures:
        if isinstance(failure.error, CreditBudgetError):
            raise failure.error  # not the accounts' fault: a retry would only spend it again
    accounts = sorted({f.account for f in failures if f.account is not None})
    if accounts and all(f.account is not None for f in failures):
        # a source failed whole needs every account in its retry: no tag then
        context.instance.add_run_tags(context.run.run_id, {retry_tag(step): ",".join(accounts)})
    if failures:
        raise PairsFailedError(failures)


@dataclass(frozen=True)
class PairFailure:
    """What one source met for one account (`None`: for every account of the step)."""

    source: str
    account: str | None
    error: BaseException

    def __str__(self) -> str:
        who = f"account {self.account}, source {self.source}" if self.account else self.source
        return f"{who}: {self.error}"


def failed_pairs(
    sources: Sequence[Source], outcomes: Sequence[Outcomes | BaseException]
) -> list[PairFailure]:
    """Each (account, source) pair that failed, with its error; a source that failed whole
    (outside any one account's pages) is one failure for all its accounts."""
    failures = []
    for source, outcome in zip(sources, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            failures.append(PairFailure(source.name, None, outcome))
            continue
        failed = {a: e for table in outcome.values() for a, e in table.failed_accounts.items()}
        failures += [PairFailure(source.name, a, e) for a, e in sorted(failed.items())]
    return failures


class PairsFailedError(RuntimeError):
    """Some (account, source) pairs could not be extracted; every other pair was published.
    One line: each pair with its request and cause (the error alone would not say which
    account of a pack, or which source of the step, it was)."""

    def __init__(self, failures: Sequence[PairFailure]) -> None:
        self.failures = list(failures)
        named = "; ".join(str(failure) for failure in failures)
        super().__init__(
            named if len(failures) == 1 else f"{len(failures)} sources failed: {named}"
        )


def _from_service(
    context: dg.AssetExecutionContext,
    service: ServiceResource,
    warehouse: WarehouseResource,
    settings: Settings,
    sources: list[Source],
    ranges: list[tuple[date, date]],
) -> tuple[list[Outcomes | BaseException], list[RunStats]]:
    """Fetch every source through one session (`pipelines/step.py`); `settings` are the run's
    (an account-tagged run reaches only its account), its credits what the run has left."""
    budget = run_budget(context, settings)
    spent_before = budget.spent
    context.log.info(f"reading {service_of(settings).name} into {settings.home}")
    opened = service.session(settings, packed=ACCOUNTS_TAG in context.run.tags, budget=budget)
    try:
        done = extract_step(
            opened,
            settings,
            warehouse.destination(),
            sources,
            ranges,
            context.run.run_id,
            catch_up=CATCH_UP_TAG in context.run.tags,
            heal=heal_of(context.run.tags),
        )
    finally:
        record_spent(context, budget, spent_before)
    for warning in done.warnings:
        context.log.warning(warning)
    return done.outcomes, done.stats


def run_budget(context: StepContext, settings: Settings) -> CreditBudget:
    """`ADWH_MAX_CREDITS` less what the run's earlier steps spent (the run's `adwh/credits`
    tag, in the instance every step of a run shares), so the cap is the run's, not a step's."""
    run = context.instance.get_run_by_id(context.run.run_id)
    spent = int(run.tags.get(CREDITS_TAG, 0)) if run else 0
    return CreditBudget(settings.max_credits, spent)


def record_spent(
    context: StepContext, budget: CreditBudget, before: int, own_tag: str | None = None
) -> None:
    """The run's credits so far, for its later steps and its summary; and, under `own_tag`,
    what this step spent, where the summary gives it a line of its own."""
    if budget.spent != before:
        tags = {CREDITS_TAG: str(budget.spent)}
        if own_tag is not None:
            tags[own_tag] = str(budget.spent - before)
        context.instance.add_run_tags(context.run.run_id, tags)


def _from_raw(
    context: dg.AssetExecutionContext,
    warehouse: WarehouseResource,
    sources: list[Source],
    ranges: list[tuple[date, date]],
) -> list[Outcomes | BaseException]:
    """Re-derive every source from raw pages: no session, no request, no credit."""
    destination = warehouse.destination()
    outcomes: list[Outcomes | BaseException] = []
    for source, (start, end) in zip(sources, ranges, strict=True):
        try:
            outcomes.append(rebuild_source(destination, source, start, end, context.run.run_id))
        except Exception as error:  # reported after the other sources, like a fetch failure
            outcomes.append(error)
    return outcomes


def _partly_published(
    selected: set[str], outcomes: Outcomes, stats: RunStats, start: date, end: date
) -> Iterator[dg.AssetObservation]:
    """What a table whose source failed for some accounts did publish (the other accounts'
    rows, in the lake and built into the warehouse after the run): observed, not materialized,
    since its partitions lack the failed accounts' rows and Dagster marks it failed."""
    for name, outcome in outcomes.items():
        if name in selected:
            metadata = {**outcome.as_metadata(), **stats.as_metadata()}
            yield dg.AssetObservation(
                asset_key=name, metadata={**metadata, "start": str(start), "end": str(end)}
            )


def _restated(outcomes: list[Outcomes]) -> Iterator[dg.AssetObservation]:
    """What the step's replaces recorded in `restatements`, observed on that asset (it is
    written by the daily facts' steps, never materialized on its own), so the UI shows when it
    last changed and how: the cells and days per table."""
    tables = {
        name: table.restated_metadata()
        for outcome in outcomes
        for name, table in outcome.items()
        if table.restatements
    }
    if tables:
        cells = sum(int(said["restated_cells"]) for said in tables.values())
        yield dg.AssetObservation(
            asset_key=RESTATEMENTS.name,
            metadata={
                "cells": cells,
                "tables": {name: said["restated"] for name, said in sorted(tables.items())},
            },
        )


def _results(
    context: dg.AssetExecutionContext,
    selected: set[str],
    outcomes: Outcomes,
    stats: RunStats,
    start: date,
    end: date,
) -> Iterator[dg.MaterializeResult]:
    """One materialization per table and partition, each carrying its own rows; what the run
    did as a whole (requests, range, schema changes) is on the range's last partition, the
    one the UI shows as the latest. Carried by every partition alike, it was most of what
    Dagster wrote and serialized per event, hundreds of times per run."""
    for name, outcome in outcomes.items():
        if name not in selected:
            continue
        for change in outcome.schema_changes:
            context.log.warning(f"{name}: {change} (the service sent a field the registry lacks)")
        figures = {
            **outcome.as_metadata(),
            **stats.as_metadata(),
            "start": str(start),
            "end": str(end),
        }
        partitioned = context.assets_def.partitions_def is not None
        if partitioned:
            keys = context.partition_keys
            for day in keys:
                own = outcome.partition_metadata(date.fromisoformat(day))
                context.add_asset_metadata(
                    {**figures, **own} if day == keys[-1] else own,
                    asset_key=name,
                    partition_key=day,
                )
        check = dg.AssetCheckResult(
            check_name=CONTRACT_CHECK,
            asset_key=name,
            passed=not outcome.held_back,
            severity=dg.AssetCheckSeverity.ERROR,
            metadata={
                "held_back": "; ".join(outcome.held_back) or "none",
                "partitions_checked": outcome.partitions + len(outcome.held_back),
            },
        )
        yield dg.MaterializeResult(
            asset_key=name, metadata={} if partitioned else figures, check_results=[check]
        )
