"""Ad groups, targets, product ads and search terms, built from an account's campaigns.

Attributes are drawn a column at a time (`Draws.columns`), so the `large` preset's 50,000
targets build in well under a second. Each kind has a small columnar table of its integer links
(ad group → campaign, target → ad group …), which metrics and the optimizer use, and plain
records in the spec's shape, which the lists serve.
"""

from dataclasses import dataclass
from datetime import date

import numpy as np

from sandbox.campaigns import ARCHIVED, ENABLED, PAUSED, SB, SD, STATES, CampaignTable
from sandbox.hashing import Draws
from sandbox.reference import amount, ordinal, stamp
from sandbox.spec import TARGET_LOOKBACK_DAYS
from sandbox.vocabulary import CATEGORIES, competitor_asin, phrase

TARGET_TYPES = (
    "KEYWORD",
    "PRODUCT",
    "PRODUCT_CATEGORY",
    "THEME",
    "PRODUCT_AUDIENCE",
    "AUDIENCE",
    "CONTENT_CATEGORY",
    "LOCATION",
)
KEYWORD, PRODUCT, PRODUCT_CATEGORY = range(3)
# Share of each target type per ad product, in TARGET_TYPES order; zero where spec 4.6 does not
# allow the type for that ad product.
_TYPE_SHARES = np.array(
    [
        [0.60, 0.30, 0.10, 0.00, 0.00, 0.00, 0.00, 0.00],
        [0.55, 0.20, 0.10, 0.15, 0.00, 0.00, 0.00, 0.00],
        [0.10, 0.30, 0.15, 0.10, 0.15, 0.10, 0.05, 0.05],
    ]
)
NEGATIVE_SHARE = 0.12  # of keyword and product targets
_KEYWORD_MATCH = ("BROAD", "PHRASE", "EXACT")
_NEGATIVE_MATCH = ("NEGATIVE_EXACT", "NEGATIVE_PHRASE")


def states(parent: np.ndarray, u: np.ndarray, enabled: float, paused: float) -> np.ndarray:
    """Own state codes drawn from `u`; a child of an archived parent is archived too."""
    own = np.where(u < enabled, ENABLED, np.where(u < enabled + paused, PAUSED, ARCHIVED))
    return np.where(parent == ARCHIVED, ARCHIVED, own)


def _created(start: np.ndarray, anchor: date, u: np.ndarray) -> np.ndarray:
    """A creation day in the 30 days from `start` (an ordinal), before the anchor (the first
    day of the reference date's quarter), so every reference date of the quarter agrees."""
    span = np.maximum(ordinal(anchor) - 1 - start, 1)
    return start + (u * np.minimum(span, 30)).astype(np.int64)


def _updated(anchor: date, j: np.ndarray | int, spread: int) -> np.ndarray | int:
    """A last-update day a few days before the anchor (`spread` days of spread), for records
    whose updates the change log does not tell."""
    return ordinal(anchor) - 1 - j % spread


# ---------------------------------------------------------------------- ad groups
@dataclass(frozen=True)
class AdGroupTable:
    campaign: np.ndarray  # campaign index; ad groups of a campaign are contiguous
    state: np.ndarray
    created: np.ndarray  # ordinal day
    default_bid: np.ndarray  # minor units; -1 for SB, whose ad groups have none


def adgroup_table(draws: Draws, anchor: date, campaigns: CampaignTable) -> AdGroupTable:
    """One to three ad groups per campaign (about two)."""
    (u_count,) = draws.columns("adgroup-count", 1, len(campaigns.state))
    owner = np.repeat(np.arange(len(campaigns.state)), 1 + (u_count * 3).astype(np.int64))
    u_state, u_day, u_bid = draws.columns("adgroup", 3, len(owner))
    return AdGroupTable(
        campaign=owner,
        state=states(campaigns.state[owner], u_state, 0.8, 0.13),
        created=_created(campaigns.start[owner], anchor, u_day),
        default_bid=np.where(
            campaigns.ad_product[owner] == SB, -1, 30 + (u_bid * 120).astype(np.int64)
        ),
    )


def adgroup_names(table: AdGroupTable, campaigns: list[dict]) -> list[str]:
    """Each ad group's name when created: its campaign's first name and its rank in it."""
    first = np.searchsorted(table.campaign, table.campaign)
    return [
        f"{campaigns[c]['name']} · ad group {j - first[j] + 1}"
        for j, c in enumerate(table.campaign.tolist())
    ]


def base_adgroups(
    draws: Draws,
    anchor: date,
    table: AdGroupTable,
    campaigns: list[dict],
    campaign_table: CampaignTable,
) -> list[dict]:
    """The ad groups before any change by people and programs (`changes.Edits` adds them);
    `campaigns` the base campaigns."""
    exponents = campaign_table.exponent
    names = adgroup_names(table, campaigns)
    rows = []
    for j, c in enumerate(table.campaign.tolist()):
        campaign = campaigns[c]
        created = stamp(table.created[j], j * 97)
        rows.append(
            {
                "object": "adgroup",
                "id": draws.id_of("adgroup", j),
                "adGroupId": str(2 * 10**12 + j * 7_919 + draws.index),
                "name": names[j],
                "campaign": campaign["id"],
                "adProduct": campaign["adProduct"],
                "connection": campaign["connection"],
                "country": campaign["country"],
                "state": STATES[table.state[j]],
                "defaultBid": None
                if table.default_bid[j] < 0
                else amount(int(table.default_bid[j]), int(exponents[c])),
                "createdAt": created,
                "updatedAt": max(stamp(_updated(anchor, j, 15), j * 61), created),
            }
        )
    return rows


# ---------------------------------------------------------------------- targets
@dataclass(frozen=True)
class TargetTable:
    adgroup: np.ndarray  # ad group index; targets of an ad group are contiguous
    campaign: np.ndarray
    kind: np.ndarray  # index into TARGET_TYPES
    negative: np.ndarray
    state: np.ndarray
    base_bid: np.ndarray  # minor units before any optimizer change; -1 for negative targets


def target_table(
    draws: Draws, count: int, groups: AdGroupTable, campaigns: CampaignTable
) -> TargetTable:
    """`count` targets spread at random over the ad groups, types as spec 4.6 allows."""
    u_group, u_kind, u_negative, u_state, u_bid = draws.columns("target", 5, count)
    adgroup = np.sort((u_group * len(groups.campaign)).astype(np.int64))
    campaign = groups.campaign[adgroup]
    shares = np.cumsum(_TYPE_SHARES, axis=1)[campaigns.ad_product[campaign]]
    kind = np.argmax(u_kind[:, None] < shares - 1e-9, axis=1)
    negative = (kind <= PRODUCT) & (u_negative < NEGATIVE_SHARE)
    return TargetTable(
        adgroup=adgroup,
        campaign=campaign,
        kind=kind,
        negative=negative,
        state=states(groups.state[adgroup], u_state, 0.75, 0.15),
        base_bid=np.where(negative, -1, 20 + (u_bid * 230).astype(np.int64)),
    )


def _definition(ad_product: int, kind: int, negative: bool, bits: int) -> dict:
    """The target's definition fields (keyword, ASIN, audience …) for its type."""
    fields: dict = dict.fromkeys(
        (
            "keywordText",
            "matchType",
            "asin",
            "productMatchType",
            "category",
            "themeMatchType",
            "event",
            "lookback",
            "audienceId",
            "contentCategoryId",
            "locationId",
        )
    )
    pick = (bits >> 40) % 1024
    if kind == KEYWORD:
        text = phrase(bits)
        matches = _NEGATIVE_MATCH if negative else _KEYWORD_MATCH
        fields.update(keywordText=text, matchType=matches[pick % len(matches)])
        expression = text
    elif kind == PRODUCT:
        fields["asin"] = competitor_asin(bits)
        expression = f'asin="{fields["asin"]}"'
        if ad_product == SD:
            fields["productMatchType"] = ("PRODUCT_EXACT", "PRODUCT_SIMILAR")[pick % 2]
    elif kind == PRODUCT_CATEGORY:
        fields["category"] = CATEGORIES[pick % len(CATEGORIES)]
        expression = f'category="{fields["category"]}"'
        if ad_product == SD:
            expression += f" price<{20 + pick % 80} rating>{3 + pick % 2}"
    elif TARGET_TYPES[kind] == "THEME":
        fields["themeMatchType"] = (
            "INTERESTED_AUDIENCE"
            if ad_product == SD
            else ("KEYWORDS_RELATED_TO_YOUR_BRAND", "KEYWORDS_RELATED_TO_YOUR_LANDING_PAGES")[
                pick % 2
            ]
        )
        expression = fields["themeMatchType"]
    elif TARGET_TYPES[kind] == "PRODUCT_AUDIENCE":
        event, lookback = (
            ("PURCHASE", "VIEW")[pick % 2],
            TARGET_LOOKBACK_DAYS[pick % len(TARGET_LOOKBACK_DAYS)],
        )
        fields.update(asin=competitor_asin(bits), event=event, lookback=lookback)
        expression = f'{event.lower()}s asin="{fields["asin"]}" lookback={lookback}'
    else:
        name = {
            "AUDIENCE": "audienceId",
            "CONTENT_CATEGORY": "contentCategoryId",
            "LOCATION": "locationId",
        }[TARGET_TYPES[kind]]
        fields[name] = str(10**9 + bits % 10**9)
        expression = f'{name.removesuffix("Id")}="{fields[name]}"'
    fields["expression"] = expression
    return fields


def targets(
    draws: Draws,
    anchor: date,
    table: TargetTable,
    groups: AdGroupTable,
    campaign_table: CampaignTable,
    campaigns: list[dict],
    adgroups: list[dict],
    bids: np.ndarray,
) -> list[dict]:
    """Every target's record; `campaigns` and `adgroups` the base records (ids and links),
    `bids` each target's bid after the optimizer's last applied change (minor units)."""
    exponents = campaign_table.exponent
    ad_products = campaign_table.ad_product
    bits = draws.bits("target-definition", len(table.kind))
    (u_day,) = draws.columns("target-day", 1, len(table.kind))
    created = _created(groups.created[table.adgroup], anchor, u_day)
    adgroup_ids = [g["id"] for g in adgroups]
    rows = []
    for t in range(len(table.kind)):
        c, kind, negative = int(table.campaign[t]), int(table.kind[t]), bool(table.negative[t])
        campaign = campaigns[c]
        record = {
            "object": "target",
            "id": draws.id_of("target", t),
            "targetId": str(3 * 10**12 + t * 7_919 + draws.index),
            "adProduct": campaign["adProduct"],
            "campaign": campaign["id"],
            "adGroup": adgroup_ids[table.adgroup[t]],
            "connection": campaign["connection"],
            "country": campaign["country"],
            "state": STATES[table.state[t]],
            "targetType": TARGET_TYPES[kind],
            "negative": negative,
        }
        record.update(_definition(int(ad_products[c]), kind, negative, int(bits[t])))
        record["bid"] = None if negative else amount(int(bids[t]), int(exponents[c]))
        record["createdAt"] = stamp(created[t], t * 89)
        # Dated from the anchor even for targets under the optimizer: their bid moves nightly,
        # and the optimizer's changes are told by the history and the log, not by this date.
        updated = stamp(_updated(anchor, t, 20), t * 53)
        record["updatedAt"] = max(updated, record["createdAt"])
        rows.append(record)
    return rows


# ---------------------------------------------------------------------- product ads
@dataclass(frozen=True)
class ProductAdTable:
    adgroup: np.ndarray
    campaign: np.ndarray
    product: np.ndarray  # catalog product index, from the campaign's country
    state: np.ndarray


def product_ad_table(
    draws: Draws,
    groups: AdGroupTable,
    campaign_table: CampaignTable,
    campaigns: list[dict],
    products_by_country: dict[str, list[int]],
) -> ProductAdTable:
    """One to six product ads per SP or SD ad group (SB has none), each of a catalog product
    of its campaign's country; `campaigns` the base records."""
    ad_products = campaign_table.ad_product[groups.campaign]
    eligible = np.flatnonzero(ad_products != SB)
    (u_count,) = draws.columns("product-ad-count", 1, len(eligible))
    adgroup = np.repeat(eligible, 1 + (u_count * 6).astype(np.int64))
    campaign = groups.campaign[adgroup]
    u_product, u_state = draws.columns("product-ad", 2, len(adgroup))
    countries = [c["country"] for c in campaigns]
    country = np.array([countries[c] for c in campaign.tolist()], dtype=object)
    product = np.full(len(adgroup), -1)
    for country_id, pool in products_by_country.items():
        here = country == country_id
        product[here] = np.asarray(pool)[(u_product[here] * len(pool)).astype(np.int64)]
    kept = product >= 0  # a country without catalog products has nothing to advertise
    return ProductAdTable(
        adgroup=adgroup[kept],
        campaign=campaign[kept],
        product=product[kept],
        state=states(groups.state[adgroup], u_state, 0.8, 0.12)[kept],
    )


def product_ads(
    draws: Draws,
    anchor: date,
    table: ProductAdTable,
    campaigns: list[dict],
    groups: list[dict],
    products: list[dict],
) -> list[dict]:
    """Every product ad's record; `campaigns` and `groups` as of the reference date, whose
    states stop delivery."""
    rows = []
    for k in range(len(table.adgroup)):
        group, product = groups[table.adgroup[k]], products[table.product[k]]
        state = STATES[table.state[k]]
        levels = (
            ("CAMPAIGN", campaigns[table.campaign[k]]["state"]),
            ("AD_GROUP", group["state"]),
            ("AD", state),
        )
        reasons = [f"{level}_{value}" for level, value in levels if value != "ENABLED"]
        rows.append(
            {
                "object": "product_ad",
                "id": draws.id_of("product-ad", k),
                "adProduct": group["adProduct"],
                "adId": str(4 * 10**12 + k * 7_919 + draws.index),
                "connection": group["connection"],
                "country": group["country"],
                "campaign": group["campaign"],
                "adGroup": group["id"],
                "product": product["id"],
                "asin": product["asin"],
                "sku": product["sku"],
                "state": state,
                "adType": "PRODUCT_AD",
                "deliveryStatus": "DELIVERING" if not reasons else "NOT_DELIVERING",
                "deliveryReasons": reasons,
                "createdAt": group["createdAt"],
                "updatedAt": max(stamp(_updated(anchor, k, 25), k * 41), group["createdAt"]),
            }
        )
    return rows


# ---------------------------------------------------------------------- search terms
@dataclass(frozen=True)
class SearchTermTable:
    target: np.ndarray
    adgroup: np.ndarray
    campaign: np.ndarray


def search_term_table(
    draws: Draws, table: TargetTable, campaign_table: CampaignTable
) -> SearchTermTable:
    """Zero to two shopper queries per positive keyword, product or category target of SP/SB."""
    ad_products = campaign_table.ad_product[table.campaign]
    eligible = np.flatnonzero((ad_products != SD) & ~table.negative & (table.kind <= 2))
    (u_count,) = draws.columns("search-term-count", 1, len(eligible))
    counts = (u_count < 0.6).astype(np.int64) + (u_count < 0.2)
    target = np.repeat(eligible, counts)
    return SearchTermTable(target, table.adgroup[target], table.campaign[target])


def _shopper_text(target: dict, bits: int) -> str:
    """What a shopper typed: the keyword, widened by its match type, an ASIN, or a phrase."""
    if target["keywordText"]:
        if target["matchType"] == "EXACT":
            return target["keywordText"]
        extra = phrase(bits, 2).split()[0]
        before = bits % 2 == 0
        return f"{extra} {target['keywordText']}" if before else f"{target['keywordText']} {extra}"
    if target["asin"]:
        return target["asin"].lower()
    return phrase(bits, 2)


def search_terms(draws: Draws, table: SearchTermTable, targets: list[dict]) -> list[dict]:
    bits = draws.bits("search-term", len(table.target))
    rows = []
    for s in range(len(table.target)):
        target = targets[table.target[s]]
        rows.append(
            {
                "object": "search_term",
                "id": draws.id_of("search-term", s),
                "searchTerm": _shopper_text(target, int(bits[s])),
                "adProduct": target["adProduct"],
                "campaign": target["campaign"],
                "adGroup": target["adGroup"],
                "target": target["id"],
                "connection": target["connection"],
                "country": target["country"],
                "targetType": target["targetType"],
                "matchType": target["matchType"],
                "createdAt": target["createdAt"],
            }
        )
    return rows
