"""`warehouse.duckdb` and its marts: every table of the lake loaded into a new file, the dbt
models (`warehouse/dbt`) built and tested in it, then the file swapped in.

The marts are dagster-dbt's `@dbt_assets` over the project's manifest: each model an asset
downstream of the tables and models it reads (the pipeline's tables are dbt sources, and each
source table is the table asset of its name, `WarehouseTranslator`), each dbt test a blocking
check on its model. The manifest is parsed again when a file of the project is newer
(`warehouse/dbt_project.py`), in every process that loads this module, so a fresh clone and an
edited model need no build step; the image prepares it once (`deploy/Dockerfile`).

dagster-dbt imports dbt-core (1.5 s of CPU a process), so this module is loaded by the
warehouse's code location only (`assets/warehouse_definitions.py`): extraction runs load the
other one and never import dbt. dbt itself runs in process (`warehouse/marts.py` says why:
through dagster-dbt's `dbt` subprocess a build took twice as long), and its results are
reported here. Nothing is built in place, since analysts hold the old file open: the file is
copied, brought up to the lake and swapped in; a selection of some marts builds those marts
(with their tests) in the copy, the others kept as they were.
"""

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import dagster as dg
import orjson
from dagster_dbt import DagsterDbtTranslator, DagsterDbtTranslatorSettings, DbtProject, dbt_assets

from assets.resources import WarehouseResource
from pipelines.sources import SOURCES
from warehouse.dbt_project import DBT_PROJECT, TARGET, prepared_manifest
from warehouse.schemas import RESTATEMENTS

if TYPE_CHECKING:
    from warehouse.marts import NodeResult

# What the warehouse loads from the lake: every table the service feeds, and what the runs
# record of its restatements.
TABLES = [*(o.schema for s in SOURCES for o in s.outputs), RESTATEMENTS]
OWNERS = ["team:ads-warehouse"]
# The Dagster group of the models of each folder (others: "warehouse"); the entity histories
# apart from the "history" group, which holds the service's own logs.
GROUPS = {"marts": "marts", "history": "entity_history"}
MANIFEST: dict[str, Any] = orjson.loads(prepared_manifest().read_bytes())
MANIFEST_PROJECT = MANIFEST["metadata"]["project_name"]
DBT = DbtProject(DBT_PROJECT, target_path=TARGET.relative_to(DBT_PROJECT))
MODELS = {n["name"] for n in MANIFEST["nodes"].values() if n["resource_type"] == "model"}


class WarehouseTranslator(DagsterDbtTranslator):
    """The project's nodes as the warehouse names them: a model by its name, a source table
    by the table's (its `lake` source and its `snapshots` source are both the table asset);
    models grouped by folder, described and typed by their docs."""

    def __init__(self) -> None:
        super().__init__(DagsterDbtTranslatorSettings(enable_duplicate_source_asset_keys=True))

    def get_asset_key(self, dbt_resource_props: Mapping[str, Any]) -> dg.AssetKey:
        return dg.AssetKey(dbt_resource_props["name"])

    def get_group_name(self, dbt_resource_props: Mapping[str, Any]) -> str:
        folders = dbt_resource_props["fqn"][1:-1]
        return next((GROUPS[f] for f in GROUPS if f in folders), "warehouse")

    def get_description(self, dbt_resource_props: Mapping[str, Any]) -> str:
        return dbt_resource_props["description"]

    def get_owners(self, dbt_resource_props: Mapping[str, Any]) -> list[str]:
        return OWNERS

    def get_metadata(self, dbt_resource_props: Mapping[str, Any]) -> dict[str, Any]:
        """The relation and its documented columns (the types DuckDB holds are reported when a
        build materializes the model: the manifest has none)."""
        node = dbt_resource_props
        columns = [
            dg.TableColumn(c["name"], type=c.get("data_type") or "?", description=c["description"])
            for c in node.get("columns", {}).values()
        ]
        metadata: dict[str, Any] = {
            "dagster/table_name": f"{node['database']}.{node['schema']}.{node['name']}",
            "dagster/column_schema": dg.TableSchema(columns=columns),
        }
        if node["resource_type"] == "model":
            metadata["dbt_materialized"] = node["config"]["materialized"]
        return metadata

    def get_asset_check_spec(
        self,
        asset_spec: dg.AssetSpec,
        manifest: Mapping[str, Any],
        unique_id: str,
        project: DbtProject | None,
    ) -> dg.AssetCheckSpec | None:
        """dagster-dbt's check, described by the test and its arguments when the test has no
        description of its own."""
        spec = super().get_asset_check_spec(asset_spec, manifest, unique_id, project)
        if spec is None or spec.description:
            return spec
        node = manifest["nodes"][unique_id]
        test = node.get("test_metadata") or {"name": node["name"], "kwargs": {}}
        arguments = [
            f"{key}={_argument(value)}" for key, value in test["kwargs"].items() if key != "model"
        ]
        return dg.AssetCheckSpec(
            spec.name,
            asset=spec.asset_key,
            description=node["description"] or f"dbt test {test['name']}({'; '.join(arguments)})",
            blocking=spec.blocking,
            metadata=spec.metadata,
        )


def _argument(value: object) -> str:
    """A test's argument as the check's description shows it: a list's items, a mapping's pairs
    (a ratio and its denominator)."""
    if isinstance(value, dict):
        return ", ".join(f"{key}: {item}" for key, item in value.items())
    return ", ".join(value) if isinstance(value, list) else str(value)


@dbt_assets(
    manifest=MANIFEST,  # parsed once, here: dagster-dbt would read the file again
    project=DBT,
    name="warehouse_marts",
    dagster_dbt_translator=WarehouseTranslator(),
    pool="duckdb_writer",
)
def warehouse_marts(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource
) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    """Load what changed in the lake into a copy of the warehouse, build and test the marts
    in it, swap it in; a failed model or test leaves the old warehouse in place and fails the
    step naming it.

    The lake's housekeeping runs here, not after each extraction: runs of other accounts may
    still be rewriting a partition whose replaced files a vacuum would remove under them, or
    that a clustering would rewrite beside them, and this step starts once no run is in
    progress (`assets/automation.py`)."""
    # The build's code, imported by the step that builds, not with the definitions.
    from warehouse.build import build_warehouse
    from warehouse.marts import MartError

    destination = warehouse.destination()
    selected = {key.to_user_string() for key in context.selected_asset_keys}
    whole = selected >= MODELS
    try:
        built = build_warehouse(
            destination.home,
            destination.lake,
            TABLES,
            run_id=context.run.run_id,
            tidy=True,
            models=None if whole else selected,
        )
    except MartError as error:
        yield from _reported(context, error.results, only=dg.AssetCheckResult)
        raise
    context.log.info(
        f"lake: {built.tended.clustered} files clustered by account, "
        f"{built.tended.vacuumed} replaced files removed"
    )
    read = [f"{t.table}: {'all' if t.whole else t.days} days" for t in built.loaded if t.days]
    context.log.info(f"loaded from the lake: {'; '.join(read) or 'nothing changed'}")
    models = [r.name for r in built.results if r.resource_type == "model" and r.status != "kept"]
    tests = sum(r.resource_type == "test" for r in built.results)
    context.log.info(
        f"dbt built {len(models)} models ({', '.join(models) or 'none'}) and ran {tests} tests; "
        "the other models read the new rows as they are"
    )
    yield from _reported(context, built.results, columns=built.columns)


def column_schema(model: str, columns: list[tuple[str, str]]) -> dg.TableSchema:
    """Every column of `model` as DuckDB holds it, with its description from the dbt docs: the
    types come from DuckDB because the manifest has none, and a column the docs lost track of
    still shows (tests/warehouse/test_marts.py keeps the docs and the models in step)."""
    node = MANIFEST["nodes"].get(f"model.{MANIFEST_PROJECT}.{model}", {})
    described = {name: c["description"] for name, c in node.get("columns", {}).items()}
    return dg.TableSchema(
        columns=[
            dg.TableColumn(name, type=data_type, description=described.get(name) or None)
            for name, data_type in columns
        ]
    )


def _reported(
    context: dg.AssetExecutionContext,
    results: "list[NodeResult]",
    only: type = object,
    columns: dict[str, list[tuple[str, str]]] | None = None,
) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    """The build's node results as Dagster's: a model brought up to date (built by dbt, its
    rows recomputed, or a view kept: it reads the new rows) is its asset materialized, with
    its columns, a test its asset check (named after the test); only what the run selected."""
    for result in results:
        metadata: dict[str, object] = {"dbt status": result.status, "seconds": result.seconds}
        if result.resource_type == "model":
            if columns and result.name in columns:
                metadata["dagster/column_schema"] = column_schema(result.name, columns[result.name])
            event = dg.MaterializeResult(asset_key=dg.AssetKey(result.name), metadata=metadata)
            selected = event.asset_key in context.selected_asset_keys
        else:
            model = dg.AssetKey(result.model)
            event = dg.AssetCheckResult(
                asset_key=model,
                check_name=result.name,
                passed=result.status == "pass",
                metadata={**metadata, "failing rows": result.failures},
            )
            key = dg.AssetCheckKey(model, result.name)
            selected = key in context.selected_asset_check_keys
        if selected and isinstance(event, only):
            yield event
