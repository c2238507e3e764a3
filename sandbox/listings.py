"""The marketplace listings of an account's catalog products: seller, vendor and advertising.

Seller and vendor listings carry free-form blobs (pricing, buy box, inventory …). Only their
scalar fields are kept per record; the blobs are rendered for the rows of a page
(`seller_details`, `vendor_details`), which keeps the `large` preset's memory small. Prices,
fulfilment, programme and stock come from the catalog's `ProductTable`, as metrics' do.
"""

from sandbox.catalog import ProductTable
from sandbox.hashing import Draws, scalar
from sandbox.reference import COUNTRY_BY_ID, money
from sandbox.vocabulary import CATEGORIES, WORDS, competitor_asin, phrase

# (availability, cumulative share); the rest (5%) is not reported (null).
AVAILABILITY = (
    ("IN_STOCK", 0.70),
    ("IN_STOCK_SCARCE", 0.78),
    ("OUT_OF_STOCK", 0.86),
    ("PREORDER", 0.89),
    ("LEADTIME", 0.93),
    ("AVAILABLE_DATE", 0.95),
)
INELIGIBLE = (
    ("ITEM_NOT_BUYABLE", "The product has no buyable offer."),
    ("ADULT_PRODUCT", "Adult products cannot be advertised."),
    ("NOT_IN_BUYBOX", "The product does not hold the buy box."),
)


def _price(minor: int, exponent: int, currency: str) -> dict:
    return {"amount": money(int(minor), int(exponent)), "currency": currency}


def _brand_names(brands: list[dict]) -> dict[str, str]:
    return {b["id"]: b["name"] for b in brands}


def _parent_asin(draws: Draws, p: int) -> str | None:
    """About a third of products are variations of a family of four consecutive products."""
    family = p // 4
    if scalar(draws.seed, draws.index, "family", family) % 3:
        return None
    return competitor_asin(scalar(draws.seed, draws.index, "parent", family))


# ---------------------------------------------------------------------- seller listings
def seller_products(draws: Draws, products: list[dict], table: ProductTable) -> list[dict]:
    """One listing per seller product; a few miss their SKU, title or brand (nullable)."""
    rows = []
    for k, p in enumerate(table.seller.tolist()):
        product = products[p]
        u = scalar(draws.seed, draws.index, "seller-listing", k)
        parent = _parent_asin(draws, p)
        parent_sku = f"{product['sku']}-P" if parent and product["sku"] else None
        rows.append(
            {
                "object": "marketplace_seller_product",
                "id": draws.id_of("seller-product", k),
                "asin": product["asin"],
                "sku": None if u % 100 < 3 else product["sku"],
                "title": None if u % 97 < 5 else product["title"],
                "active": product["active"],
                "connection": product["connection"],
                "country": product["country"],
                "brand": None if u % 89 < 4 else product["brand"],
                "suppressed": u % 83 < 3,
                "amazonStatus": "BUYABLE" if product["active"] else "DISCOVERABLE",
                "publicParentSKU": None,
                "publicParentASIN": parent,
                "publicIsParentASIN": False,
                "backendParentSKU": parent_sku,
                "backendParentASIN": parent,
                "backendIsParentASIN": False,
                "createdAt": product["createdAt"],
                "updatedAt": product["updatedAt"],
            }
        )
    return rows


def _sales_ranks(bits: int, p: int) -> list[dict]:
    return [
        {"category": CATEGORIES[p % len(CATEGORIES)], "rank": 50 + bits % 90_000},
        {
            "category": f"{CATEGORIES[p % len(CATEGORIES)]} / {WORDS[p % len(WORDS)]}",
            "rank": 1 + bits % 900,
        },
    ]


def seller_details(
    draws: Draws,
    products: list[dict],
    table: ProductTable,
    brands: list[dict],
    listings: list[dict],
    k: int,
    expand: list[str],
) -> dict:
    """The k-th seller listing with its blobs, rendered for one row of a page."""
    base = listings[k]
    p = int(table.seller[k])
    bits = scalar(draws.seed, draws.index, "seller-blobs", k)
    exponent, currency = int(table.exponent[p]), table.currency[p]
    price, fba, stock = int(table.price[p]), bool(table.fba[p]), int(table.stock[p])
    country = COUNTRY_BY_ID[base["country"]]
    has_b2b = bits % 4 == 0
    record = {
        **base,
        "sellerCentralInfo": {
            "listingId": f"{bits % 10**10:010d}",
            "status": "Active" if base["active"] else "Inactive",
            "fulfillmentChannel": "AMAZON" if fba else "MERCHANT",
            "quantity": 0 if fba else stock,
            "openDate": base["createdAt"],
        },
        "catalogPublicInfo": {
            "title": products[p]["title"],
            "brand": _brand_names(brands)[products[p]["brand"]],
            "productType": CATEGORIES[p % len(CATEGORIES)],
            "bulletPoints": [phrase(bits), phrase(bits >> 3)],
            "itemPackageQuantity": 1 + (bits >> 7) % 3,
        },
        "pricing": {
            "listPrice": _price(price, exponent, currency),
            "landedPrice": _price(price + (0 if fba else price // 10), exponent, currency),
            "businessPrice": _price(price * 95 // 100, exponent, currency) if has_b2b else None,
        },
        "buyboxB2C": {
            "isWinner": bits % 10 < 8,
            "price": _price(price - (bits >> 9) % 3 * price // 50, exponent, currency),
            "offerCount": 1 + (bits >> 11) % 6,
        },
        "buyboxB2B": {
            "isWinner": bits % 10 < 7,
            "price": _price(price * 95 // 100, exponent, currency),
        }
        if has_b2b
        else None,
        "fbaInventory": {
            "fulfillable": stock,
            "inbound": (bits >> 13) % 60,
            "reserved": (bits >> 17) % 12,
            "unfulfillable": (bits >> 21) % 4,
        }
        if fba
        else None,
        "aplusContent": {"hasAplus": bits % 3 != 0, "moduleCount": (bits >> 23) % 7},
        "competitivePriceSummary": {
            "lowestPrice": _price(price * (85 + (bits >> 25) % 15) // 100, exponent, currency),
            "offerCount": 1 + (bits >> 29) % 9,
        },
        "fbaLocalStock": {country.code: stock} if fba else None,
    }
    if "salesRanks" in expand:
        record["salesRanks"] = _sales_ranks(bits, p)
    return record


# ---------------------------------------------------------------------- vendor listings
def vendor_products(draws: Draws, products: list[dict], table: ProductTable) -> list[dict]:
    rows = []
    for k, p in enumerate(table.vendor.tolist()):
        product = products[p]
        rows.append(
            {
                "object": "marketplace_vendor_product",
                "id": draws.id_of("vendor-product", k),
                "asin": product["asin"],
                "sku": f"VC-{draws.index}-{p:05d}",
                "title": product["title"],
                "active": product["active"],
                "connection": product["connection"],
                "country": product["country"],
                "brand": product["brand"],
                "createdAt": product["createdAt"],
                "updatedAt": product["updatedAt"],
            }
        )
    return rows


def vendor_details(
    draws: Draws,
    table: ProductTable,
    brands: list[dict],
    listings: list[dict],
    k: int,
    expand: list[str],
) -> dict:
    """The k-th vendor listing with its blobs, rendered for one row of a page."""
    base = listings[k]
    p = int(table.vendor[k])
    bits = scalar(draws.seed, draws.index, "vendor-blobs", k)
    exponent, currency = int(table.exponent[p]), table.currency[p]
    record = {
        **base,
        "vendorCentralInfo": {
            "vendorCode": f"V{draws.index:02d}{'S' if table.sourcing[p] else 'M'}",
            "program": "sourcing" if table.sourcing[p] else "manufacturing",
            "costPrice": _price(int(table.price[p]) * 6 // 10, exponent, currency),
            "status": "ACTIVE" if base["active"] else "INACTIVE",
        },
        "catalogPublicInfo": {
            "title": base["title"],
            "brand": _brand_names(brands)[base["brand"]],
            "productType": CATEGORIES[p % len(CATEGORIES)],
        },
        "aplusContent": {"hasAplus": bits % 3 != 0, "moduleCount": (bits >> 5) % 7},
        "inventory": {
            "sellableOnHand": int(table.stock[p]),
            "unsellableOnHand": (bits >> 9) % 8,
            "openPurchaseOrderUnits": (bits >> 13) % 200,
        },
    }
    if "salesRanks" in expand:
        record["salesRanks"] = _sales_ranks(bits, p)
    if "customerFeedback" in expand:
        record["customerFeedback"] = {
            "rating": round(3 + (bits >> 17) % 21 / 10, 1),
            "reviewCount": (bits >> 23) % 2_000,
        }
    return record


# ---------------------------------------------------------------------- advertising listings
def _availability(bits: int) -> str | None:
    draw = (bits >> 8) % 1000 / 1000
    return next((name for name, share in AVAILABILITY if draw < share), None)


def advertising_products(
    draws: Draws, products: list[dict], table: ProductTable, brands: list[dict]
) -> list[dict]:
    """One advertising listing per catalog product: eligibility, availability, basis price."""
    names = _brand_names(brands)
    rows = []
    for p, product in enumerate(products):
        bits = scalar(draws.seed, draws.index, "advertising-listing", p)
        eligible = None if bits % 20 == 0 else ("INELIGIBLE" if bits % 10 == 1 else "ELIGIBLE")
        codes = [INELIGIBLE[(bits >> 5) % len(INELIGIBLE)]] if eligible == "INELIGIBLE" else []
        parent = _parent_asin(draws, p)
        exponent = int(table.exponent[p])
        rows.append(
            {
                "object": "marketplace_advertising_product",
                "id": draws.id_of("advertising-product", p),
                "asin": product["asin"],
                "sku": product["sku"],
                "title": product["title"],
                "active": product["active"],
                "connection": product["connection"],
                "country": product["country"],
                "brand": product["brand"],
                "availability": _availability(bits),
                "eligibilityStatus": eligible,
                "ineligibilityCodes": [code for code, _ in codes],
                "ineligibilityReasons": [reason for _, reason in codes],
                "basisPrice": None
                if bits % 13 == 0
                else {
                    "amount": round(int(table.price[p]) / 10**exponent, exponent),
                    "currency": table.currency[p],
                },
                "bestSellerRank": None if bits % 11 == 0 else 50 + (bits >> 12) % 150_000,
                "firstAvailabilityDate": None if bits % 17 == 0 else product["createdAt"],
                "categoryName": CATEGORIES[p % len(CATEGORIES)],
                "brandName": names[product["brand"]],
                "variationList": [] if parent is None else [parent],
                "createdAt": product["createdAt"],
                "updatedAt": product["updatedAt"],
            }
        )
    return rows
