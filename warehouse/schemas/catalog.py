"""The account, its connections and reference data, and its catalog (spec 2.8, 4.3, 4.4): what
the service knows of the products, as each console lists them, and the keyword clusters that
group them (read with the catalog's scope, spec 4.9). Current state, one row per record."""

from warehouse.schemas.columns import Kind, field
from warehouse.schemas.tables import PLACE, TIMESTAMPS, snapshot

ACCOUNTS = snapshot(
    "accounts",
    "accounts",
    "The accounts extracted, one row each, with their names (spec 2.8). An agency key reaches "
    "several; `connections` lists the connections each one shares.",
    field("id", Kind.ID, required=True),
    field("name", Kind.STRING),
    field("connections", Kind.STRINGS),
)
CONNECTIONS = snapshot(
    "connections",
    "connections",
    "Connections of the account (seller, vendor, advertising profiles, stores) as they are now.",
    field("id", Kind.ID, required=True),
    field("type", Kind.STRING),
    field("name", Kind.STRING),
    field("active", Kind.BOOL),
    field("countries", Kind.STRINGS),
    field("createdAt", Kind.TIMESTAMP),
)
COUNTRIES = snapshot(
    "countries",
    "countries",
    "Marketplace countries: two-letter code, name, marketplace id.",
    field("id", Kind.ID, required=True),
    field("code", Kind.STRING),
    field("name", Kind.STRING),
    field("marketplaceId", Kind.STRING),
)
BRANDS = snapshot(
    "brands",
    "product-brands",
    "Product brands of the account's catalog.",
    field("id", Kind.ID, required=True),
    field("name", Kind.STRING),
)
PRODUCTS = snapshot(
    "products",
    "products",
    "Catalog products: identifiers (ASIN, SKU, EAN …), brand, place.",
    field("id", Kind.ID, required=True),
    field("asin", Kind.STRING),
    field("sku", Kind.STRING),
    field("title", Kind.STRING),
    field("ean", Kind.STRING),
    field("upc", Kind.STRING),
    field("gtin", Kind.STRING),
    field("platform", Kind.STRING),
    field("type", Kind.STRING),
    field("active", Kind.BOOL),
    *PLACE,
    field("brand", Kind.ID),
    *TIMESTAMPS,
)
SELLER_PRODUCTS = snapshot(
    "seller_products",
    "marketplace-seller-products",
    "Seller listings as the marketplace shows them; the named blobs (pricing, buy box, FBA "
    "inventory …) are kept as JSON because their inner shape is not specified.",
    field("id", Kind.ID, required=True),
    field("asin", Kind.STRING),
    field("sku", Kind.STRING),
    field("title", Kind.STRING),
    field("active", Kind.BOOL),
    *PLACE,
    field("brand", Kind.ID),
    *(
        field(blob, Kind.JSON)
        for blob in (
            "sellerCentralInfo",
            "catalogPublicInfo",
            "pricing",
            "buyboxB2C",
            "buyboxB2B",
            "fbaInventory",
            "aplusContent",
            "competitivePriceSummary",
            "fbaLocalStock",
            "salesRanks",
        )
    ),
    field("suppressed", Kind.BOOL),
    field("amazonStatus", Kind.STRING),
    field("publicParentSKU", Kind.STRING),
    field("publicParentASIN", Kind.STRING),
    field("publicIsParentASIN", Kind.BOOL),
    field("backendParentSKU", Kind.STRING),
    field("backendParentASIN", Kind.STRING),
    field("backendIsParentASIN", Kind.BOOL),
    *TIMESTAMPS,
)
VENDOR_PRODUCTS = snapshot(
    "vendor_products",
    "marketplace-vendor-products",
    "Vendor listings; free-form blobs kept as JSON.",
    field("id", Kind.ID, required=True),
    field("asin", Kind.STRING),
    field("sku", Kind.STRING),
    field("title", Kind.STRING),
    field("active", Kind.BOOL),
    *PLACE,
    field("brand", Kind.ID),
    *(
        field(blob, Kind.JSON)
        for blob in (
            "vendorCentralInfo",
            "catalogPublicInfo",
            "aplusContent",
            "inventory",
            "salesRanks",
            "customerFeedback",
        )
    ),
    *TIMESTAMPS,
)
ADVERTISING_PRODUCTS = snapshot(
    "advertising_products",
    "marketplace-advertising-products",
    "Products as the advertising console sees them: availability, eligibility, basis price.",
    field("id", Kind.ID, required=True),
    field("asin", Kind.STRING),
    field("sku", Kind.STRING),
    field("title", Kind.STRING),
    field("active", Kind.BOOL),
    *PLACE,
    field("brand", Kind.ID),
    field("availability", Kind.STRING),
    field("eligibilityStatus", Kind.STRING),
    field("ineligibilityCodes", Kind.STRINGS),
    field("ineligibilityReasons", Kind.STRINGS),
    field("basisPrice.amount", Kind.MONEY),
    field("basisPrice.currency", Kind.STRING),
    field("bestSellerRank", Kind.COUNT),
    field("firstAvailabilityDate", Kind.TIMESTAMP),
    field("categoryName", Kind.STRING),
    field("brandName", Kind.STRING),
    field("variationList", Kind.STRINGS),
    *TIMESTAMPS,
)

CLUSTERS = snapshot(
    "clusters",
    "clusters",
    "Keyword clusters kept by the service: a named group of products with keywords.",
    field("id", Kind.ID, required=True),
    field("name", Kind.STRING),
    *TIMESTAMPS,
)
CLUSTER_PRODUCTS = snapshot(
    "cluster_products",
    "clusters",
    "One row per cluster and product. A product may sit in several clusters and counts in "
    "full in each one's figures.",
    field("cluster", Kind.ID, required=True),
    field("product", Kind.ID, required=True),
    key=("account_id", "cluster", "product"),
)
CLUSTER_KEYWORDS = snapshot(
    "cluster_keywords",
    "clusters",
    "One row per cluster and keyword; `polarity` is positive or negative.",
    field("cluster", Kind.ID, required=True),
    field("polarity", Kind.STRING, enum=("positive", "negative"), required=True),
    field("keyword", Kind.STRING, required=True),
    field("language", Kind.STRING),
    field("score", Kind.NUMBER),
    field("purpose", Kind.STRING),
    key=("account_id", "cluster", "polarity", "keyword"),
)
