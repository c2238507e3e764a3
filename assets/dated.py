"""What happened day by day, in one step partitioned by day: the performance facts, one asset
per metrics resource, and what changed and why (the optimizer's history, which the service
forgets after 90 days and the warehouse keeps; the advertising change log, 12 months at the
service)."""

from assets.factory import extraction_step
from pipelines.sources import HISTORY, METRICS

DATED = extraction_step("dated", {"metrics": METRICS, "history": HISTORY})
