"""What changed and why: the optimizer's history (the service forgets it after 90 days; the
warehouse keeps it) and the advertising change log (12 months at the service)."""

from assets.factory import family_asset
from pipelines.sources import HISTORY

HISTORY_ASSETS = [family_asset("history", HISTORY)]
