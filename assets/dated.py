"""What happened day by day, in one step partitioned by day: the performance facts, one asset
per metrics resource, each workflow's performance beside its objective, and what changed and
why (the optimizer's history, which the service forgets after 90 days and the warehouse keeps;
the advertising and store change logs, 12 months at the service)."""

from assets.factory import extraction_step
from pipelines.sources import AUTOMATION_FACTS, HISTORY, METRICS, STORES

DATED = extraction_step(
    "dated",
    {"metrics": METRICS, "automation": AUTOMATION_FACTS, "history": (*HISTORY, *STORES)},
)
