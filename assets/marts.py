"""`warehouse.duckdb` and its marts: every table of the lake loaded into a new file, the dbt
models (`warehouse/dbt`) built and tested in it, then the file swapped in.

The assets are read from the dbt project's manifest: each model is an asset downstream of the
tables and models it reads (dbt sources are the table assets, same names), each dbt test an
asset check on its model. The manifest is read as JSON here, not through dagster-dbt, which
imports dbt-core and its selection graph wherever the definitions load: 2.3 s of the 4.7 s every
run process spent starting (bench/SPEED.md), extraction runs included, which never run dbt. For
the same reason the build's code (DuckDB, the loader, dbt) is imported by the step that builds,
not by this module: an extraction run loads the definitions and never builds.
dbt itself runs in process (`warehouse/marts.py` says why), and its results are reported here.
The whole file is built at once whatever is selected: analysts hold the old file open, so
nothing is built in place; a selection of some marts builds every model and reports the
selected ones.
"""

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import dagster as dg
import orjson

from assets.resources import WarehouseResource
from pipelines.sources import SOURCES
from warehouse.dbt_project import prepared_manifest
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


def _name(unique_id: str) -> str:
    """A model's or a source's name: its asset key (the pipeline's tables are dbt sources)."""
    node = MANIFEST["nodes"].get(unique_id) or MANIFEST["sources"][unique_id]
    return node["name"]


def _model(node: dict[str, Any]) -> dg.AssetSpec:
    """Models under `models/marts/` are the marts, those under `models/history/` the entity
    histories; `warehouse_tables` and the intermediate models describe or serve them."""
    folders = node["fqn"][1:-1]
    columns = [
        dg.TableColumn(c["name"], type=c.get("data_type") or "?", description=c["description"])
        for c in node["columns"].values()
    ]
    return dg.AssetSpec(
        node["name"],
        deps=[_name(parent) for parent in node["depends_on"]["nodes"]],
        description=node["description"],
        group_name=next((GROUPS[f] for f in GROUPS if f in folders), "warehouse"),
        kinds={"dbt", "duckdb"},
        owners=OWNERS,
        code_version=node["checksum"]["checksum"],
        skippable=True,
        metadata={
            "dagster/table_name": f"{node['database']}.{node['schema']}.{node['name']}",
            "dagster/column_schema": dg.TableSchema(columns=columns),
            "dbt_materialized": node["config"]["materialized"],
            "dbt_unique_id": node["unique_id"],
        },
    )


def _test(node: dict[str, Any]) -> dg.AssetCheckSpec:
    """A dbt test as a check on the model it tests, described by the test and its arguments."""
    test = node.get("test_metadata") or {"name": node["name"], "kwargs": {}}
    arguments = [
        f"{key}={_argument(value)}" for key, value in test["kwargs"].items() if key != "model"
    ]
    return dg.AssetCheckSpec(
        node["name"],
        asset=_name(node["attached_node"]),
        description=node["description"] or f"dbt test {test['name']}({'; '.join(arguments)})",
        blocking=True,
        metadata={"dbt_unique_id": node["unique_id"]},
    )


def _argument(value: object) -> str:
    """A test's argument as the check's description shows it: a list's items, a mapping's pairs
    (a ratio and its denominator)."""
    if isinstance(value, dict):
        return ", ".join(f"{key}: {item}" for key, item in value.items())
    return ", ".join(value) if isinstance(value, list) else str(value)


def _of(kind: str) -> list[dict[str, Any]]:
    nodes = (n for n in MANIFEST["nodes"].values() if n["resource_type"] == kind)
    return sorted(nodes, key=lambda node: node["unique_id"])


@dg.multi_asset(
    name="warehouse_marts",
    specs=[_model(node) for node in _of("model")],
    check_specs=[_test(node) for node in _of("test")],
    can_subset=True,
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
    # The build's code, imported here and not with the definitions (see the module's docstring).
    from warehouse.build import build_warehouse
    from warehouse.marts import MartError

    destination = warehouse.destination()
    try:
        built = build_warehouse(
            destination.home, destination.lake, TABLES, run_id=context.run.run_id, tidy=True
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
