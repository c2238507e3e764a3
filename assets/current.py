"""The service as it is now, in one step: the catalog (connections, countries, brands, products
and their marketplace listings, the keyword clusters with a row per cluster product and
keyword), the advertising entities (campaigns with the optimizer configuration the service
keeps for them, portfolios, ad groups, targets, product ads, search terms) and the automation
(workflows and the campaigns each processes, tasks and their suggestions)."""

from assets.factory import extraction_step
from pipelines.sources import ADVERTISING, AUTOMATION, CATALOG

CURRENT_STATE = extraction_step(
    "current_state", {"catalog": CATALOG, "advertising": ADVERTISING, "automation": AUTOMATION}
)
