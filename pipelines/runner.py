"""The body every asset shares: open the service, extract one source, report what happened.

Assets stay thin (which source, which group, a description for analysts); this module turns an
extraction into Dagster metadata and one contract check result per table.
"""

import asyncio
from datetime import UTC, date, datetime, timedelta
from functools import partial

import dagster as dg

from pipelines.client.stats import RunStats
from pipelines.extract import Outcomes, Source, extract_source
from pipelines.progress import report
from pipelines.resources import ServiceResource, WarehouseResource
from pipelines.session import open_session

CONTRACT_CHECK = "contract"


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


def materialize_source(
    context: dg.AssetExecutionContext,
    service: ServiceResource,
    warehouse: WarehouseResource,
    source: Source,
) -> list[dg.MaterializeResult]:
    settings = service.settings(warehouse)
    start, end = date_range(context, source, settings.today)
    destination = warehouse.destination()
    extracted_at = datetime.now(UTC)

    async def go() -> tuple[Outcomes, RunStats, list[str]]:
        async with open_session(
            settings,
            max_in_flight=service.max_in_flight,
            preset=service.sandbox_preset,
            timeout=service.http_timeout(),
            retry=service.retry_policy(),
        ) as session:
            session.client.stats.on_page = partial(report, source.name)
            outcomes = await extract_source(
                session, destination, source, start, end, extracted_at, settings.today
            )
            return outcomes, session.client.stats, session.warnings

    outcomes, stats, warnings = asyncio.run(go())
    for warning in warnings:
        context.log.warning(warning)
    results = []
    for name, outcome in outcomes.items():
        if outcome.unknown_fields:
            context.log.warning(
                f"{name}: the service sent fields the warehouse does not know "
                f"({', '.join(sorted(outcome.unknown_fields))}); they are kept in raw/."
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
        results.append(
            dg.MaterializeResult(
                asset_key=name,
                metadata={
                    **outcome.as_metadata(),
                    **stats.as_metadata(),
                    "start": str(start),
                    "end": str(end),
                },
                check_results=[check],
            )
        )
    return results
