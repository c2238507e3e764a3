"""The DuckDB warehouse analysts query, rebuilt from the lake after the tables change."""

import dagster as dg

from pipelines.automation import WAREHOUSE_REFRESH
from pipelines.resources import WarehouseResource
from pipelines.sources import SOURCES
from warehouse.build import build_warehouse

TABLES = [o.schema for s in SOURCES for o in s.outputs]


@dg.asset(
    name="warehouse_duckdb",
    group_name="warehouse",
    deps=[schema.name for schema in TABLES],
    pool="duckdb_writer",
    kinds={"duckdb"},
    automation_condition=WAREHOUSE_REFRESH,
)
def warehouse_duckdb(warehouse: WarehouseResource) -> dg.MaterializeResult:
    """`warehouse.duckdb`: every table of the lake (current-state tables at their latest
    snapshot) and the marts, built beside the old file and swapped in, so analysts who hold the
    old file open are never blocked and never see a half-built warehouse."""
    path = build_warehouse(warehouse.settings().home, TABLES)
    return dg.MaterializeResult(
        metadata={"path": str(path.resolve()), "bytes": path.stat().st_size}
    )
