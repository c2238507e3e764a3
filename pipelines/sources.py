"""Every source the warehouse extracts, and the tables each one feeds.

This is the one list that assets, the CLI and `adwh rebuild` are generated from.
"""

from pipelines.extract import Output, Source
from pipelines.streams import cursor_list, daily_metrics
from warehouse.schemas import CAMPAIGN_METRICS, CAMPAIGNS, TableSchema


def metrics(schema: TableSchema) -> Source:
    return Source(schema.name, daily_metrics(schema.resource), (Output(schema),))


def listing(schema: TableSchema, params: dict | None = None) -> Source:
    return Source(schema.name, cursor_list(f"/v1/{schema.resource}", params), (Output(schema),))


SOURCES: tuple[Source, ...] = (
    listing(CAMPAIGNS, {"expand[]": "optimizationConfig"}),
    metrics(CAMPAIGN_METRICS),
)
SNAPSHOT_SOURCES = tuple(s for s in SOURCES if not s.dated)
DATED_SOURCES = tuple(s for s in SOURCES if s.dated)
