"""The warehouse's code location: `warehouse.duckdb` and its dbt marts (`assets/marts.py`), the
job that builds them, and the sensor that starts it once the tables changed.

A code location of its own because dagster-dbt imports dbt-core: every process that loads a
location pays for everything in it, and the extraction runs, many a day, load the other one
(`assets/definitions.py`) and never build. The marts depend on the tables of that location by
their keys, so the UI draws one lineage across both; the sensor and the alert sensors read the
one instance both write.
"""

import dagster as dg

from assets.automation import warehouse_refresh_sensor
from assets.marts import warehouse_marts
from assets.resources import WarehouseResource
from pipelines.sources import SOURCES

# The job's name, which `adwh run` and the UI's launchpad know it by.
WAREHOUSE_JOB = "warehouse"
# The tables the extraction location materializes: a newer one than the warehouse is a build due.
TABLE_KEYS = [dg.AssetKey(output.schema.name) for source in SOURCES for output in source.outputs]

warehouse_job = dg.define_asset_job(
    WAREHOUSE_JOB,
    selection=dg.AssetSelection.assets(warehouse_marts),
    description="The DuckDB warehouse and its marts from what the lake holds now: after the "
    "tables' runs (the warehouse_refresh sensor, and `adwh run` after its own), or by hand.",
)

defs = dg.Definitions(
    assets=[warehouse_marts],
    jobs=[warehouse_job],
    sensors=[warehouse_refresh_sensor(TABLE_KEYS, list(warehouse_marts.keys), WAREHOUSE_JOB)],
    resources={"warehouse": WarehouseResource()},
    # The build runs in the run's own process: one step, and DuckDB's one writer.
    executor=dg.in_process_executor,
)
