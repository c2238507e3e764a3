"""Advertising entities as they are now: campaigns (with their optimizer configuration)."""

from assets.factory import source_asset
from pipelines.sources import SOURCES

ADVERTISING = [source_asset(s, "advertising") for s in SOURCES if s.name in ("campaigns",)]
