"""An account's connections: its seller and vendor accounts, advertising profiles and stores.

Seller and vendor connections hold the catalog's products (`catalog.py`), the advertising
profiles its campaigns (`campaigns.py`), active stores their change log (`automation.py`). A
sandbox variant's extra marketplaces add a seller account and an ads profile each
(`variants.py`), so its products and campaigns sell in that currency.
"""

from datetime import date

from sandbox.hashing import Draws, make_id
from sandbox.reference import created_at

# (type, name, country codes); the advertising profiles are where campaigns live.
_CONNECTIONS = (
    ("seller", "Seller Central NA", ("US",)),
    ("seller", "Seller Central EU", ("DE", "GB")),
    ("vendor", "Vendor Central JP", ("JP",)),
    ("adv-profile", "Ads profile US", ("US",)),
    ("adv-profile", "Ads profile EU", ("DE", "GB")),
    ("adv-profile", "Ads profile JP", ("JP",)),
    ("store_a", "Web store", ()),
)


def connection_specs(marketplaces: tuple[str, ...]) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """Today's connections, then a seller account and an ads profile per extra marketplace."""
    extra = (
        (kind, f"{label} {code}", (code,))
        for code in marketplaces
        for kind, label in (("seller", "Seller Central"), ("adv-profile", "Ads profile"))
    )
    return (*_CONNECTIONS, *extra)


def connections(
    draws: Draws, anchor: date, history_days: int, marketplaces: tuple[str, ...]
) -> list[dict]:
    """Every connection's record; the web store is active on every other account."""
    return [
        {
            "object": "connection",
            "id": draws.id_of("connection", i),
            "type": kind,
            "name": name,
            "active": kind != "store_a" or draws.index % 2 == 0,
            "countries": [make_id("country", code) for code in codes],
            "createdAt": created_at(draws, "connection", i, anchor, history_days),
        }
        for i, (kind, name, codes) in enumerate(connection_specs(marketplaces))
    ]


def of_type(connections: list[dict], kind: str) -> list[dict]:
    return [c for c in connections if c["type"] == kind]
