"""One Dagster multi-asset per source: every table the source's pages feed."""

import warnings

import dagster as dg

from pipelines.extract import Source
from pipelines.partitions import backfill_policy, daily_partitions
from pipelines.resources import ServiceResource, WarehouseResource
from pipelines.runner import contract_check, materialize_source

# Backfill policies are marked beta in Dagster 1.13; we rely on them knowingly.
warnings.filterwarnings("ignore", category=dg.BetaWarning, message=".*backfill_policy.*")


def source_asset(source: Source, group: str) -> dg.AssetsDefinition:
    specs = [
        dg.AssetSpec(
            o.schema.name, group_name=group, kinds={"parquet"}, description=o.schema.description
        )
        for o in source.outputs
    ]

    @dg.multi_asset(
        name=source.name,
        specs=specs,
        check_specs=[contract_check(o.schema.name) for o in source.outputs],
        pool="ads_service",
        partitions_def=daily_partitions if source.dated else None,
        backfill_policy=backfill_policy if source.dated else None,
    )
    def extract(
        context: dg.AssetExecutionContext, service: ServiceResource, warehouse: WarehouseResource
    ):
        yield from materialize_source(context, service, warehouse, source)

    return extract
