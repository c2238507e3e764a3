"""An account's catalog: its brands, its products, what listings and metrics know of each
product (`ProductTable`), and its keyword clusters.

Product attributes metrics also use (price, fulfilment, programme, usual stock) live in one
`ProductTable`, so a listing (`listings.py`) and its metrics (`populations.py`) tell the same
story. Products are spread over the seller and vendor connections' countries.
"""

from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np

from sandbox.connections import of_type
from sandbox.hashing import Draws, scalar
from sandbox.reference import COUNTRY_BY_ID, created_at, ordinal, stamp, timestamp
from sandbox.vocabulary import phrase

BRAND_NAMES = ("Northwind", "Aster", "Kettle & Co", "Brightside", "Umbra", "Solace")
POSITIVE_PURPOSES = ("core", "long_tail", "competitor", "brand")
NEGATIVE_PURPOSES = ("irrelevant", "low_intent")
NEGATIVE_MODIFIERS = ("cheap", "used", "free", "broken", "diy", "repair", "replacement")
CLUSTER_SHARE_NONE, CLUSTER_SHARE_TWO = 0.2, 0.1


def brands(draws: Draws) -> list[dict]:
    return [
        {"object": "product_brand", "id": draws.id_of("brand", i), "name": f"{n} {draws.index}"}
        for i, n in enumerate(BRAND_NAMES)
    ]


def products(
    draws: Draws,
    count: int,
    anchor: date,
    history_days: int,
    connections: list[dict],
    brands: list[dict],
) -> list[dict]:
    """`count` products: a fifth of them the vendor's, the others spread over the sellers."""
    sellers = of_type(connections, "seller")
    vendor = of_type(connections, "vendor")[0]
    rows = []
    for i in range(count):
        is_vendor = draws.unit("product", i, "vendor") < 0.2
        connection = vendor if is_vendor else sellers[i % len(sellers)]
        countries = connection["countries"]
        country = countries[i // len(sellers) % len(countries)]
        asin = "B0" + format(scalar(draws.seed, draws.index, "asin", i) % 36**8, "08X")[:8]
        rows.append(
            {
                "object": "product",
                "id": draws.id_of("product", i),
                "asin": asin.upper().ljust(10, "0")[:10],
                "sku": None if is_vendor else f"SKU-{draws.index}-{i:05d}",
                "title": f"Product {i} of account {draws.index}",
                "ean": None,
                "upc": None,
                "gtin": None,
                "platform": "marketplace",
                "type": "vendor" if is_vendor else "seller",
                "active": draws.unit("product", i, "active") > 0.05,
                "connection": connection["id"],
                "country": country,
                "brand": brands[i % len(brands)]["id"],
                "createdAt": created_at(draws, "product", i, anchor, history_days),
                "updatedAt": timestamp(anchor - timedelta(days=1 + i % 20), i),
            }
        )
    return rows


def by_country(products: list[dict]) -> dict[str, list[int]]:
    """Product positions per country id, in catalog order."""
    groups: dict[str, list[int]] = {}
    for i, p in enumerate(products):
        groups.setdefault(p["country"], []).append(i)
    return groups


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


def product_table(draws: Draws, products: list[dict]) -> ProductTable:
    countries = [COUNTRY_BY_ID[p["country"]] for p in products]
    exponent = np.array([c.exponent for c in countries])
    u_price, u_fba, u_program, u_stock = draws.columns("product-attributes", 4, len(products))
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


def cluster_index(draws: Draws, size: int) -> ClusterIndex:
    """About one cluster per 40 of `size` products (at least 3); 20% of products in none, 10%
    in two."""
    count = max(3, size // 40)
    u_member, u_first, u_other = draws.columns("cluster-members", 3, size)
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
        f"{phrase(scalar(draws.seed, draws.index, 'cluster', c)).title()} {c + 1}"
        for c in range(count)
    ]
    return ClusterIndex([draws.id_of("cluster", c) for c in range(count)], names, first, second)


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


def clusters(draws: Draws, anchor: date, index: ClusterIndex, products: list[dict]) -> list[dict]:
    members = [[] for _ in index.ids]
    for column in (index.first, index.second):
        for p in np.flatnonzero(column >= 0).tolist():
            members[column[p]].append(p)
    last_day = ordinal(anchor) - 1  # dated from the anchor: stable within a quarter
    rows = []
    for c, cluster_id in enumerate(index.ids):
        bits = scalar(draws.seed, draws.index, "cluster-keywords", c)
        members_of = sorted(members[c])
        country = products[members_of[0]]["country"] if members_of else None
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
                "products": [products[p]["id"] for p in members_of],
                "createdAt": stamp(last_day - 200 - c % 90, c * 131),
                "updatedAt": stamp(last_day - c % 30, c * 71),
            }
        )
    return rows
