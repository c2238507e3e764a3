"""Daily performance facts, one asset per metrics resource, partitioned by day."""

import warnings

import dagster as dg

from pipelines.partitions import backfill_policy, daily_partitions
from pipelines.resources import ServiceResource, WarehouseResource
from pipelines.runner import contract_check, materialize_daily_fact
from warehouse.schemas import CAMPAIGN_METRICS, TableSchema

# Backfill policies are marked beta in Dagster 1.13; we rely on them knowingly.
warnings.filterwarnings("ignore", category=dg.BetaWarning, message=".*backfill_policy.*")


def daily_fact_asset(schema: TableSchema) -> dg.AssetsDefinition:
    @dg.asset(
        name=schema.name,
        group_name="metrics",
        pool="ads_service",
        kinds={"duckdb", "parquet"},
        partitions_def=daily_partitions,
        backfill_policy=backfill_policy,
        check_specs=[contract_check(schema)],
        description=schema.description,
    )
    def fact(
        context: dg.AssetExecutionContext, service: ServiceResource, warehouse: WarehouseResource
    ) -> dg.MaterializeResult:
        return materialize_daily_fact(context, service, warehouse, schema)

    return fact


METRICS_ASSETS = [daily_fact_asset(schema) for schema in (CAMPAIGN_METRICS,)]
