"""One Dagster multi-asset per source family: every table its sources' pages feed.

A family's sources run in one step, side by side through one session, so the service is kept
busy while a cursor list walks page by page; Dagster's in-process executor would otherwise run
them one after another. Each table stays its own asset (selectable, with its own contract check);
selecting one table runs the source that feeds it.
"""

import warnings
from collections.abc import Sequence

import dagster as dg

from pipelines.extract import Source
from pipelines.partitions import backfill_policy, daily_partitions
from pipelines.resources import ServiceResource, WarehouseResource
from pipelines.runner import contract_check, materialize_sources, selected_sources

# Backfill policies are marked beta in Dagster 1.13; we rely on them knowingly.
warnings.filterwarnings("ignore", category=dg.BetaWarning, message=".*backfill_policy.*")


def family_asset(family: str, sources: Sequence[Source]) -> dg.AssetsDefinition:
    (dated,) = {source.dated for source in sources}  # one partitioning per step
    outputs = [output for source in sources for output in source.outputs]
    specs = [
        dg.AssetSpec(
            o.schema.name,
            group_name=family,
            kinds={"parquet"},
            description=o.schema.description,
            skippable=True,
        )
        for o in outputs
    ]

    @dg.multi_asset(
        name=family,
        specs=specs,
        check_specs=[contract_check(o.schema.name) for o in outputs],
        can_subset=True,
        pool="ads_service",
        partitions_def=daily_partitions if dated else None,
        backfill_policy=backfill_policy if dated else None,
    )
    def extract(
        context: dg.AssetExecutionContext, service: ServiceResource, warehouse: WarehouseResource
    ):
        yield from materialize_sources(
            context, service, warehouse, selected_sources(context, sources)
        )

    return extract
