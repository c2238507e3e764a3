"""What changed and why: the optimizer's history (the service forgets it after 90 days; the
warehouse keeps it) and the advertising change log (12 months at the service)."""

from assets.factory import source_asset
from pipelines.sources import HISTORY

HISTORY_ASSETS = [source_asset(source, "history") for source in HISTORY]
