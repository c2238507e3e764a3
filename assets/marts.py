"""`warehouse.duckdb` and its marts: every table of the lake loaded into a new file, the dbt
models (`warehouse/dbt`) built and tested in it, then the file swapped in.

dagster-dbt reads the project's manifest for the assets: each mart is an asset downstream of the
tables it reads (dbt sources are the table assets), and each dbt test is an asset check. dbt
itself runs in process (`warehouse/marts.py` says why), and its results are reported here. The
whole file is built at once whatever is selected: analysts hold the old file open, so nothing is
built in place; a selection of some marts builds every model and reports the selected ones.
"""

from collections.abc import Iterator, Mapping
from typing import Any

import dagster as dg
from dagster_dbt import DagsterDbtTranslator, DbtProject, dbt_assets

from pipelines.resources import WarehouseResource
from pipelines.sources import SOURCES
from warehouse.build import build_warehouse
from warehouse.marts import DBT_PROJECT, MartError, prepared_manifest

TABLES = [o.schema for s in SOURCES for o in s.outputs]
MARTS_PROJECT = DbtProject(project_dir=DBT_PROJECT, profiles_dir=DBT_PROJECT)


class WarehouseTranslator(DagsterDbtTranslator):
    """dbt's sources are the pipeline's table assets (same names); models are the marts."""

    def get_asset_key(self, dbt_resource_props: Mapping[str, Any]) -> dg.AssetKey:
        return dg.AssetKey(dbt_resource_props["name"])

    def get_group_name(self, dbt_resource_props: Mapping[str, Any]) -> str:
        """Models under `models/marts/` are the marts; `warehouse_tables` describes the file."""
        return "marts" if "marts" in dbt_resource_props["fqn"][1:-1] else "warehouse"

    def get_owners(self, dbt_resource_props: Mapping[str, Any]) -> list[str]:
        return ["team:ads-warehouse"]


@dbt_assets(
    manifest=prepared_manifest(),
    project=MARTS_PROJECT,
    dagster_dbt_translator=WarehouseTranslator(),
    name="warehouse_marts",
    pool="duckdb_writer",
)
def warehouse_marts(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource
) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    """Load what changed in the lake into a copy of the warehouse, build and test the marts
    in it, swap it in; a failed model or test leaves the old warehouse in place and fails the
    step naming it.

    The lake's vacuum runs here, not after each extraction: runs of other accounts may still be
    rewriting a partition whose replaced files a vacuum would remove under them, and this step
    starts once no run is in progress (`pipelines/automation.py`)."""
    destination = warehouse.destination()
    removed = destination.lake.tidy(table.name for table in TABLES)
    context.log.info(f"lake vacuumed: {removed} replaced files removed")
    try:
        built = build_warehouse(
            destination.home, destination.lake, TABLES, run_id=context.run.run_id
        )
    except MartError as error:
        yield from _reported(context, error.results, only=dg.AssetCheckResult)
        raise
    read = [f"{t.table}: {'all' if t.whole else t.days} days" for t in built.loaded if t.days]
    context.log.info(f"loaded from the lake: {'; '.join(read) or 'nothing changed'}")
    yield from _reported(context, built.results)


def _reported(
    context: dg.AssetExecutionContext, results: list[Any], only: type = object
) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    """dbt's node results as Dagster's: a model built is its asset materialized, a test its
    asset check (named as dagster-dbt names it); only what the run selected."""
    for result in results:
        node = result.node
        metadata = {"dbt status": str(result.status), "seconds": round(result.execution_time, 3)}
        if node.resource_type == "model":
            event = dg.MaterializeResult(asset_key=dg.AssetKey(node.name), metadata=metadata)
            selected = event.asset_key in context.selected_asset_keys
        else:
            model = dg.AssetKey(node.attached_node.split(".")[-1])
            event = dg.AssetCheckResult(
                asset_key=model,
                check_name=node.name,
                passed=str(result.status) == "pass",
                metadata={**metadata, "failing rows": result.failures or 0},
            )
            key = dg.AssetCheckKey(model, node.name)
            selected = key in context.selected_asset_check_keys
        if selected and isinstance(event, only):
            yield event
