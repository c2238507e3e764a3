"""One Dagster multi-asset per source family: every table its sources' pages feed.

A family's sources run in one step, side by side through one session, so the service is kept
busy while a cursor list walks page by page; Dagster's in-process executor would otherwise run
them one after another. Each table stays its own asset (selectable, with its own contract check);
selecting one table runs the source that feeds it.
"""

import warnings
from collections.abc import Sequence

import dagster as dg

from pipelines.partitions import backfill_policy, daily_partitions
from pipelines.resources import ServiceResource, WarehouseResource
from pipelines.runner import (
    ExtractConfig,
    contract_check,
    materialize_sources,
    selected_sources,
)
from pipelines.sources.model import Source
from warehouse.column_docs import column_types
from warehouse.schemas import TableSchema

# Backfill policies are marked beta in Dagster 1.13; we rely on them knowingly.
warnings.filterwarnings("ignore", category=dg.BetaWarning, message=".*backfill_policy.*")

OWNERS = ["team:ads-warehouse"]


def table_metadata(schema: TableSchema) -> dict[str, object]:
    """What the UI shows before any run: the columns (from the registry), the natural key,
    where the rows come from and where they land."""
    return {
        "dagster/column_schema": dg.TableSchema(
            columns=[
                dg.TableColumn(name, type=duckdb_type, description=description)
                for name, duckdb_type, description in column_types(schema)
            ]
        ),
        "dagster/table_name": schema.name,
        "natural_key": ", ".join(schema.natural_key),
        "service_endpoint": f"/v1/{schema.resource}",
        "lake_layout": "/".join(
            ("$ADWH_HOME/lake", schema.name, *(f"{key}=…" for key in schema.lake_partitions))
        ),
    }


def family_asset(family: str, sources: Sequence[Source]) -> dg.AssetsDefinition:
    (dated,) = {source.dated for source in sources}  # one partitioning per step
    outputs = [output for source in sources for output in source.outputs]
    specs = [
        dg.AssetSpec(
            o.schema.name,
            group_name=family,
            kinds={"polars", "parquet"},
            description=o.schema.description,
            metadata=table_metadata(o.schema),
            owners=OWNERS,
            tags={"layout": o.schema.layout.value},
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
        context: dg.AssetExecutionContext,
        config: ExtractConfig,
        service: ServiceResource,
        warehouse: WarehouseResource,
    ):
        yield from materialize_sources(
            context, config, service, warehouse, selected_sources(context, sources)
        )

    return extract
