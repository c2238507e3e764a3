"""Daily performance facts, one asset per metrics resource, partitioned by day."""

from assets.factory import source_asset
from pipelines.sources import METRICS

METRICS_ASSETS = [source_asset(source, "metrics") for source in METRICS]
