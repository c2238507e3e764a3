"""Advertising entities as they are now: campaigns (with the optimizer configuration the
service keeps for them), portfolios, ad groups, targets, product ads and search terms."""

from assets.factory import source_asset
from pipelines.sources import ADVERTISING

ADVERTISING_ASSETS = [source_asset(source, "advertising") for source in ADVERTISING]
