"""The catalog's endpoints (spec 4.4, and 4.9's clusters): products, the seller, vendor and
advertising listings, and keyword clusters.

Records
- seller listing blobs: sellerCentralInfo {listingId, status, fulfillmentChannel, quantity,
  openDate}, catalogPublicInfo {title, brand, productType, bulletPoints, itemPackageQuantity},
  pricing {listPrice, landedPrice, businessPrice}, buyboxB2C and buyboxB2B {isWinner, price,
  offerCount} (B2B null without a business offer), fbaInventory {fulfillable, inbound, reserved,
  unfulfillable} and fbaLocalStock {country code: units} (both null when merchant-fulfilled),
  aplusContent {hasAplus, moduleCount}, competitivePriceSummary {lowestPrice, offerCount},
  salesRanks [{category, rank}]; a price inside a blob is {amount: decimal string, currency};
- vendor listing blobs: vendorCentralInfo {vendorCode, program, costPrice, status},
  catalogPublicInfo {title, brand, productType}, aplusContent, inventory {sellableOnHand,
  unsellableOnHand, openPurchaseOrderUnits}, customerFeedback {rating, reviewCount};
- cluster: object "cluster", id, name, positiveKeywords and negativeKeywords ({keyword, language,
  score 0-1, purpose: core, long_tail, competitor or brand; irrelevant or low_intent for
  negatives}), products (catalog product ids), createdAt, updatedAt. List parameters: the
  shared ones, `search` over name, `product` (the clusters holding that catalog product).
"""

from sandbox.assembly import Account
from sandbox.expand import expand_page
from sandbox.listing import cursor_page, search_text
from sandbox.listings import seller_details, vendor_details
from sandbox.routing import CATALOG, Context, item_handler, listing, route

PRODUCT_SEARCH = ("title", "asin", "sku")


def seller_listing(account: Account, k: int, expand: list[str]) -> dict:
    """The k-th seller listing with its blobs."""
    shelf = account.catalog
    brands, listings = account.brands, account.seller_products
    return seller_details(account.draws, shelf.products, shelf.table, brands, listings, k, expand)


def vendor_listing(account: Account, k: int, expand: list[str]) -> dict:
    """The k-th vendor listing with its blobs."""
    shelf = account.catalog
    listings = account.vendor_products
    return vendor_details(account.draws, shelf.table, account.brands, listings, k, expand)


def clusters(ctx: Context) -> dict:
    """Clusters, by name (`search`) or holding a catalog product (`product`)."""
    records = ctx.account.clusters
    needle = search_text(ctx.query)
    if needle is not None:
        records = [r for r in records if needle in r["name"].lower()]
    wanted = ctx.query.all("product")
    if wanted:
        records = [r for r in records if set(wanted) & set(r["products"])]
    return expand_page(ctx.account, ctx.query, cursor_page(records, ctx.query))


ROUTES = (
    *listing(r"/v1/products", "products", CATALOG, search=PRODUCT_SEARCH),
    *listing(
        r"/v1/marketplace-seller-products",
        "seller_products",
        CATALOG,
        search=PRODUCT_SEARCH,
        detail=seller_listing,
    ),
    *listing(
        r"/v1/marketplace-vendor-products",
        "vendor_products",
        CATALOG,
        search=PRODUCT_SEARCH,
        detail=vendor_listing,
    ),
    *listing(
        r"/v1/marketplace-advertising-products",
        "advertising_products",
        CATALOG,
        search=PRODUCT_SEARCH,
    ),
    route(r"/v1/clusters", clusters, CATALOG),
    route(r"/v1/clusters/(?P<id>[^/]+)", item_handler("clusters"), CATALOG),
)
