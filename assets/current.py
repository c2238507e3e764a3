"""The service as it is now, in one step: the catalog (connections, countries, brands, products
and their marketplace listings, the keyword clusters with a row per cluster product and
keyword), the advertising entities (campaigns with the optimizer configuration the service
keeps for them, portfolios, ad groups, targets, product ads, search terms) and the automation
(workflows and the campaigns each processes, tasks and their suggestions).

The step is named `snapshot`, after the `dated` step, on purpose. Dagster 1.13 sets a ranged
run's partitions from the partitioning of the asset of the last step in step-key order
(`RunDomain.create_run`), whatever the others' partitioning. The run then plans every
unpartitioned table once for each day of the range: a 90-day run planned 2,970 materializations
instead of 1,136, 23 s of SQLite writes (ARCHITECTURE.md, "Where a dependency's public API
stops"). An unpartitioned step last keeps one planned event per current-state table."""

from assets.factory import extraction_step
from pipelines.sources import ADVERTISING, AUTOMATION, CATALOG

CURRENT_STATE = extraction_step(
    "snapshot", {"catalog": CATALOG, "advertising": ADVERTISING, "automation": AUTOMATION}
)
