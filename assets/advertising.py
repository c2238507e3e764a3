"""Advertising entities as they are now: campaigns (with the optimizer configuration the
service keeps for them), portfolios, ad groups, targets, product ads and search terms."""

from assets.factory import family_asset
from pipelines.sources import ADVERTISING

ADVERTISING_ASSETS = [family_asset("advertising", ADVERTISING)]
