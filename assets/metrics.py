"""Daily performance facts, one asset per metrics resource, partitioned by day."""

from assets.factory import family_asset
from pipelines.sources import METRICS

METRICS_ASSETS = [family_asset("metrics", METRICS)]
