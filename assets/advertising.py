"""Advertising entities as they are now: campaigns (with their optimizer configuration)."""

import dagster as dg

from pipelines.resources import ServiceResource, WarehouseResource
from pipelines.runner import contract_check, materialize_snapshot
from warehouse.schemas import CAMPAIGNS


@dg.asset(
    name=CAMPAIGNS.name,
    group_name="advertising",
    pool="ads_service",
    kinds={"duckdb", "parquet"},
    check_specs=[contract_check(CAMPAIGNS)],
    description=CAMPAIGNS.description,
)
def campaigns(
    context: dg.AssetExecutionContext, service: ServiceResource, warehouse: WarehouseResource
) -> dg.MaterializeResult:
    """Every campaign of every extracted account, one row each (`/v1/campaigns`)."""
    return materialize_snapshot(
        context, service, warehouse, CAMPAIGNS, {"expand[]": "optimizationConfig"}
    )
