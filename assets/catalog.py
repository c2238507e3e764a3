"""The catalog as it is now: connections, countries, brands, products and their marketplace
listings, and the service's keyword clusters (with one row per cluster product and keyword)."""

from assets.factory import family_asset
from pipelines.sources import CATALOG

CATALOG_ASSETS = [family_asset("catalog", CATALOG)]
