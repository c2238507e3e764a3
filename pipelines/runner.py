"""The body every asset shares: open the service, extract one table, report what happened.

Assets stay thin (which table, which endpoint, a docstring for analysts); this module turns an
extraction into Dagster metadata and a contract check result.
"""

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime, timedelta

import dagster as dg

from pipelines.client.stats import RunStats
from pipelines.extract import TableOutcome, extract_daily_fact, extract_snapshot
from pipelines.resources import ServiceResource, WarehouseResource
from pipelines.session import Session, open_session
from warehouse.contracts import ContractError
from warehouse.schemas import TableSchema

CONTRACT_CHECK = "contract"


def contract_check(schema: TableSchema) -> dg.AssetCheckSpec:
    return dg.AssetCheckSpec(
        CONTRACT_CHECK,
        asset=schema.name,
        description="The table's Pandera contract held on every partition that was published; "
        "a partition that breaks it is held back and named here.",
    )


def _run(
    context: dg.AssetExecutionContext,
    service: ServiceResource,
    warehouse: WarehouseResource,
    schema: TableSchema,
    extract: Callable[[Session], Awaitable[TableOutcome]],
) -> dg.MaterializeResult:
    settings = service.settings(warehouse)

    async def go() -> tuple[TableOutcome | None, RunStats, str | None]:
        async with open_session(
            settings, max_in_flight=service.max_in_flight, preset=service.sandbox_preset
        ) as session:
            try:
                return await extract(session), session.client.stats, None
            except ContractError as error:
                return None, session.client.stats, str(error)

    outcome, stats, broken = asyncio.run(go())
    if outcome is not None and outcome.unknown_fields:
        context.log.warning(
            f"{schema.name}: the service sent fields the warehouse does not know "
            f"({', '.join(sorted(outcome.unknown_fields))}); they are kept in raw/."
        )
    metadata = {**(outcome.as_metadata() if outcome else {}), **stats.as_metadata()}
    check = dg.AssetCheckResult(
        check_name=CONTRACT_CHECK,
        asset_key=schema.name,
        passed=broken is None,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={"held_back": broken or "none"},
    )
    return dg.MaterializeResult(metadata=metadata, check_results=[check])


def materialize_daily_fact(context, service, warehouse, schema) -> dg.MaterializeResult:
    window = context.partition_time_window
    start = window.start.date()
    end = window.end.date() - timedelta(days=1)
    extracted_at = datetime.now(UTC)
    destination = warehouse.destination()
    return _run(
        context,
        service,
        warehouse,
        schema,
        lambda s: extract_daily_fact(s, destination, schema, start, end, extracted_at),
    )


def materialize_snapshot(context, service, warehouse, schema, params=None) -> dg.MaterializeResult:
    today: date = warehouse.settings().today
    extracted_at = datetime.now(UTC)
    destination = warehouse.destination()
    return _run(
        context,
        service,
        warehouse,
        schema,
        lambda s: extract_snapshot(s, destination, schema, today, extracted_at, params),
    )
