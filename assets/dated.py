"""What happened day by day, in one step partitioned by day: the performance facts, one asset
per metrics resource, each workflow's performance beside its objective, and what changed and
why (the optimizer's history, which the service forgets after 90 days and the warehouse keeps;
the advertising and store change logs, 12 months at the service)."""

import dagster as dg

from assets.factory import OWNERS, extraction_step, table_metadata
from pipelines.sources import AUTOMATION_FACTS, HISTORY, METRICS, STORES
from warehouse.schemas import RESTATEMENTS, TABLES, Layout

DATED = extraction_step(
    "dated",
    {"metrics": METRICS, "automation": AUTOMATION_FACTS, "history": (*HISTORY, *STORES)},
)

# What the daily facts' replaces record of the days they restate (pipelines/stages/publish.py):
# written by the step above as it replaces days it had published, never materialized on its
# own, so it is declared for lineage (facts -> restatements -> mart_restatements) and described.
RESTATED_FACTS = [o.schema.name for s in (*METRICS, *AUTOMATION_FACTS) for o in s.outputs]
RESTATEMENTS_RECORD = dg.AssetSpec(
    RESTATEMENTS.name,
    deps=[name for name in RESTATED_FACTS if TABLES[name].layout is Layout.DAILY_FACT],
    group_name="history",
    kinds={"deltalake", "parquet", "polars"},
    description=RESTATEMENTS.description,
    metadata=table_metadata(RESTATEMENTS),
    owners=OWNERS,
    tags={"layout": RESTATEMENTS.layout.value},
)
