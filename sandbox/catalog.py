"""The marketplace listings of an account's catalog products, and its keyword clusters.

Seller and vendor listings carry free-form blobs (pricing, buy box, inventory …). Only their
scalar fields are kept per record; the blobs are rendered for the rows of a page
(`seller_details`, `vendor_details`), which keeps the `large` preset's memory small. Product
attributes metrics also use (price, fulfilment, programme, usual stock) live in one
`ProductTable`, so a listing and its metrics tell the same story.
"""

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from sandbox.advertising import CATEGORIES, WORDS, competitor_asin, phrase
from sandbox.hashing import scalar
from sandbox.reference import COUNTRY_BY_ID, money, ordinal, stamp

if TYPE_CHECKING:
    from sandbox.world import Account

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
POSITIVE_PURPOSES = ("core", "long_tail", "competitor", "brand")
NEGATIVE_PURPOSES = ("irrelevant", "low_intent")
NEGATIVE_MODIFIERS = ("cheap", "used", "free", "broken", "diy", "repair", "replacement")
CLUSTER_SHARE_NONE, CLUSTER_SHARE_TWO = 0.2, 0.1


# ---------------------------------------------------------------------- product attributes
@dataclass(frozen=True)
class ProductTable:
    """Per catalog product: what listings and metrics both need."""

    price: np.ndarray  # list price in minor units of the product's currency
    exponent: np.ndarray
    currency: np.ndarray  # ISO codes (object array)
    fba: np.ndarray  # seller products fulfilled by the marketplace
    sourcing: np.ndarray  # vendor products on the sourcing programme (else manufacturing)
    stock: np.ndarray  # usual units in stock
    seller: np.ndarray  # product index of each seller listing, in listing order
    vendor: np.ndarray  # product index of each vendor listing


def product_table(account: "Account") -> ProductTable:
    products = account.products
    countries = [COUNTRY_BY_ID[p["country"]] for p in products]
    exponent = np.array([c.exponent for c in countries])
    u_price, u_fba, u_program, u_stock = account.columns("product-attributes", 4, len(products))
    whole = 10 + (u_price * 70).astype(np.int64)
    is_vendor = np.array([p["type"] == "vendor" for p in products], dtype=bool)
    return ProductTable(
        price=np.where(exponent == 0, whole * 100, whole * 100 - 1),
        exponent=exponent,
        currency=np.array([c.currency for c in countries], dtype=object),
        fba=~is_vendor & (u_fba < 0.7),
        sourcing=is_vendor & (u_program < 0.3),
        stock=(5 + 400 * u_stock**2).astype(np.int64),
        seller=np.flatnonzero(~is_vendor),
        vendor=np.flatnonzero(is_vendor),
    )


def _price(minor: int, exponent: int, currency: str) -> dict:
    return {"amount": money(int(minor), int(exponent)), "currency": currency}


def _brand_names(account: "Account") -> dict[str, str]:
    return {b["id"]: b["name"] for b in account.brands}


def _parent_asin(account: "Account", p: int) -> str | None:
    """About a third of products are variations of a family of four consecutive products."""
    family = p // 4
    if scalar(account.seed, account.index, "family", family) % 3:
        return None
    return competitor_asin(scalar(account.seed, account.index, "parent", family))


# ---------------------------------------------------------------------- seller listings
def seller_products(account: "Account") -> list[dict]:
    """One listing per seller product; a few miss their SKU, title or brand (nullable)."""
    table = account.product_table
    rows = []
    for k, p in enumerate(table.seller.tolist()):
        product = account.products[p]
        u = scalar(account.seed, account.index, "seller-listing", k)
        parent = _parent_asin(account, p)
        parent_sku = f"{product['sku']}-P" if parent and product["sku"] else None
        rows.append(
            {
                "object": "marketplace_seller_product",
                "id": account.id_of("seller-product", k),
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


def seller_details(account: "Account", k: int, expand: list[str]) -> dict:
    """A seller listing with its blobs, rendered for one row of a page."""
    table = account.product_table
    base = account.seller_products[k]
    p = int(table.seller[k])
    bits = scalar(account.seed, account.index, "seller-blobs", k)
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
            "title": account.products[p]["title"],
            "brand": _brand_names(account)[account.products[p]["brand"]],
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
def vendor_products(account: "Account") -> list[dict]:
    table = account.product_table
    rows = []
    for k, p in enumerate(table.vendor.tolist()):
        product = account.products[p]
        rows.append(
            {
                "object": "marketplace_vendor_product",
                "id": account.id_of("vendor-product", k),
                "asin": product["asin"],
                "sku": f"VC-{account.index}-{p:05d}",
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


def vendor_details(account: "Account", k: int, expand: list[str]) -> dict:
    """A vendor listing with its blobs, rendered for one row of a page."""
    table = account.product_table
    base = account.vendor_products[k]
    p = int(table.vendor[k])
    bits = scalar(account.seed, account.index, "vendor-blobs", k)
    exponent, currency = int(table.exponent[p]), table.currency[p]
    record = {
        **base,
        "vendorCentralInfo": {
            "vendorCode": f"V{account.index:02d}{'S' if table.sourcing[p] else 'M'}",
            "program": "sourcing" if table.sourcing[p] else "manufacturing",
            "costPrice": _price(int(table.price[p]) * 6 // 10, exponent, currency),
            "status": "ACTIVE" if base["active"] else "INACTIVE",
        },
        "catalogPublicInfo": {
            "title": base["title"],
            "brand": _brand_names(account)[base["brand"]],
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


def advertising_products(account: "Account") -> list[dict]:
    """One advertising listing per catalog product: eligibility, availability, basis price."""
    table = account.product_table
    brands = _brand_names(account)
    rows = []
    for p, product in enumerate(account.products):
        bits = scalar(account.seed, account.index, "advertising-listing", p)
        eligible = None if bits % 20 == 0 else ("INELIGIBLE" if bits % 10 == 1 else "ELIGIBLE")
        codes = [INELIGIBLE[(bits >> 5) % len(INELIGIBLE)]] if eligible == "INELIGIBLE" else []
        parent = _parent_asin(account, p)
        exponent = int(table.exponent[p])
        rows.append(
            {
                "object": "marketplace_advertising_product",
                "id": account.id_of("advertising-product", p),
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
                "brandName": brands[product["brand"]],
                "variationList": [] if parent is None else [parent],
                "createdAt": product["createdAt"],
                "updatedAt": product["updatedAt"],
            }
        )
    return rows


# ---------------------------------------------------------------------- keyword clusters
@dataclass(frozen=True)
class ClusterIndex:
    """Which clusters each catalog product belongs to: none, one, or two."""

    ids: list[str]
    names: list[str]
    first: np.ndarray  # per product: lowest cluster index, -1 when in none
    second: np.ndarray  # per product: the other cluster, -1 when in at most one

    def memberships(
        self, products: np.ndarray, keep: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(position in `products`, cluster index) of every membership, sorted by position.

        `products` may hold -1 (no catalog product); `keep` (bool per cluster) limits the
        memberships to the clusters of the `cluster` filter.
        """
        valid = products >= 0
        safe = np.where(valid, products, 0)
        positions, clusters = [], []
        for column in (self.first, self.second):
            cluster = np.where(valid, column[safe], -1)
            member = cluster >= 0
            if keep is not None:
                member &= keep[np.maximum(cluster, 0)]
            positions.append(np.flatnonzero(member))
            clusters.append(cluster[member])
        position, cluster = np.concatenate(positions), np.concatenate(clusters)
        order = np.lexsort((cluster, position))
        return position[order], cluster[order]


def cluster_index(account: "Account") -> ClusterIndex:
    """About one cluster per 40 products (at least 3); 20% of products in none, 10% in two."""
    size = len(account.products)
    count = max(3, size // 40)
    u_member, u_first, u_other = account.columns("cluster-members", 3, size)
    a = (u_first * count).astype(np.int64)
    b = (a + 1 + (u_other * (count - 1)).astype(np.int64)) % count
    # Ranks rather than thresholds, so the shares are exact even for a few dozen products.
    rank = np.empty(size)
    rank[np.argsort(u_member, kind="stable")] = np.arange(size) / max(size, 1)
    two = rank >= 1 - CLUSTER_SHARE_TWO
    none = rank < CLUSTER_SHARE_NONE
    first = np.where(none, -1, np.where(two, np.minimum(a, b), a))
    second = np.where(two, np.maximum(a, b), -1)
    names = [
        f"{phrase(scalar(account.seed, account.index, 'cluster', c)).title()} {c + 1}"
        for c in range(count)
    ]
    return ClusterIndex([account.id_of("cluster", c) for c in range(count)], names, first, second)


def _keywords(bits: int, count: int, avoid: set[str], negative: bool, language: str) -> list[dict]:
    """`count` distinct keywords (fewer if the draws collide), none of them in `avoid`."""
    out: dict[str, dict] = {}
    for k in range(count):
        draw = scalar(bits, k)
        text = phrase(draw)
        if negative:
            text = f"{NEGATIVE_MODIFIERS[draw % len(NEGATIVE_MODIFIERS)]} {text.split()[0]}"
        if text in avoid or text in out:
            continue
        purposes = NEGATIVE_PURPOSES if negative else POSITIVE_PURPOSES
        out[text] = {
            "keyword": text,
            "language": language,
            "score": round(0.3 + (draw >> 20) % 70 / 100, 2),
            "purpose": purposes[(draw >> 8) % len(purposes)],
        }
    return list(out.values())


def clusters(account: "Account") -> list[dict]:
    index = account.cluster_index
    members = [[] for _ in index.ids]
    for column in (index.first, index.second):
        for p in np.flatnonzero(column >= 0).tolist():
            members[column[p]].append(p)
    last_day = ordinal(account.anchor) - 1  # dated from the anchor: stable within a quarter
    rows = []
    for c, cluster_id in enumerate(index.ids):
        bits = scalar(account.seed, account.index, "cluster-keywords", c)
        products = sorted(members[c])
        country = account.products[products[0]]["country"] if products else None
        language = COUNTRY_BY_ID[country].language if country else "en"
        positive = _keywords(bits, 4 + bits % 16, set(), False, language)
        negative = _keywords(
            bits >> 8, (bits >> 4) % 6, {k["keyword"] for k in positive}, True, language
        )
        rows.append(
            {
                "object": "cluster",
                "id": cluster_id,
                "name": index.names[c],
                "positiveKeywords": positive,
                "negativeKeywords": negative,
                "products": [account.products[p]["id"] for p in products],
                "createdAt": stamp(last_day - 200 - c % 90, c * 131),
                "updatedAt": stamp(last_day - c % 30, c * 71),
            }
        )
    return rows
