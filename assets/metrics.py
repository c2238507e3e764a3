"""Daily performance facts, one asset per metrics resource, partitioned by day."""

from assets.factory import source_asset
from pipelines.sources import SOURCES

METRICS = [source_asset(s, "metrics") for s in SOURCES if s.name.endswith("_metrics")]
