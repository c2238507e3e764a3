"""One Dagster multi-asset per extraction step: every table its sources' pages feed.

Dagster's in-process executor runs a run's steps one after another, so every source that can
share a step does: they run side by side through one session, the service kept busy while a
cursor list walks page by page, and a step's fixed costs (its session, its events) are paid
once. A step maps to one partitions definition, so there are two: the current state and the
dated facts (four steps, one per family, took 0.5 s more of a daily run's 8). Each table
stays its own asset, in its family's group (selectable, with its own contract check);
selecting one table runs the source that feeds it.
"""

import warnings
from collections.abc import Sequence

import dagster as dg

from assets.alerting import FRESHNESS_POLICY
from assets.partitions import backfill_policy, daily_partitions
from assets.resources import ServiceResource, WarehouseResource
from assets.runner import (
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
        **({"service_endpoint": f"/v1/{schema.resource}"} if schema.resource else {}),
        "lake_layout": "/".join(
            ("$ADWH_HOME/lake", schema.name, *(f"{key}=…" for key in schema.lake_partitions))
        ),
    }


def extraction_step(name: str, families: dict[str, Sequence[Source]]) -> dg.AssetsDefinition:
    """One step extracting every source of `families` (group name: its sources)."""
    grouped = [(family, source) for family, sources in families.items() for source in sources]
    sources = [source for _, source in grouped]
    (dated,) = {source.dated for source in sources}  # one partitioning per step
    outputs = [(family, output) for family, source in grouped for output in source.outputs]
    specs = [
        dg.AssetSpec(
            o.schema.name,
            group_name=family,
            kinds={"deltalake", "parquet", "polars"},  # the lake's format, its files', our engine
            description=o.schema.description,
            metadata=table_metadata(o.schema),
            owners=OWNERS,
            tags={"layout": o.schema.layout.value},
            skippable=True,
            freshness_policy=FRESHNESS_POLICY,
        )
        for family, o in outputs
    ]

    @dg.multi_asset(
        name=name,
        specs=specs,
        check_specs=[contract_check(o.schema.name) for _, o in outputs],
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
