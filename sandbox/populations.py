"""What each metrics resource reports on: its entities as a `Population`, built from the
account's stages (`stages.py`); `assembly.py` builds each once, when a request first needs it.

An entity's activity follows its base state (an entity is only as enabled as its campaign and
ad group): the state before any change the log shows, not the state on the reference date, so
a past day's figures do not move when the reference date does. Its size is drawn once per
entity. Product-based rows carry their product's first cluster (the lowest-numbered of its
clusters) as `cluster` and `cluster_name`. The levels are generated independently: target rows
do not add up to their campaign's row.
"""

from collections.abc import Callable
from datetime import date

import numpy as np

from sandbox.advertising import ProductAdTable
from sandbox.hashing import Draws, unit
from sandbox.metrics import ADVERTISING, CAMPAIGN, MeasureSet, Population
from sandbox.reference import COUNTRY_BY_ID, ordinal
from sandbox.restating import Restating
from sandbox.retail import SELLER, VENDOR
from sandbox.stages import Catalog, Structure, Tree

PRODUCT_RESOURCES = ("product-ad-metrics", "seller-product-metrics", "vendor-product-metrics")


def _objects(values: list) -> np.ndarray:
    return np.array(values, dtype=object)


def _campaign_columns(campaigns: list[dict]) -> dict[str, np.ndarray]:
    """Per campaign (base records): the columns its children inherit."""
    countries = [COUNTRY_BY_ID[c["country"]] for c in campaigns]
    return {
        "campaign": _objects([c["id"] for c in campaigns]),
        "currency": _objects([c.currency for c in countries]),
        "exponent": np.array([c.exponent for c in countries]),
        "ad_product": _objects([c["adProduct"] for c in campaigns]),
        "connection": _objects([c["connection"] for c in campaigns]),
        "country": _objects([c["country"] for c in campaigns]),
    }


def _advertising(
    draws: Draws,
    restating: Restating,
    structure: Structure,
    resource: str,
    salt: int,
    campaign: np.ndarray,
    state: np.ndarray,
    activity: tuple[float, float, float],
    scale: tuple[float, float],
    entity_fields: Callable[[int], dict],
    filters: dict[str, np.ndarray],
    product: np.ndarray | None = None,
    measures: MeasureSet = ADVERTISING,
) -> Population:
    """A population of campaign children: state codes pick the activity, sizes are drawn."""
    columns = _campaign_columns(structure.base_campaigns)
    inherited = {name: column[campaign] for name, column in columns.items()}
    (u_scale,) = draws.columns(f"scale-{resource}", 1, len(campaign))
    low, high = scale
    return Population(
        resource=resource,
        salt=salt,
        start=structure.campaign_table.start[campaign],
        p_active=np.asarray(activity)[state],
        scale=low + (high - low) * u_scale,
        currency=inherited["currency"],
        exponent=inherited["exponent"],
        ad_product=inherited["ad_product"],
        connection=inherited["connection"],
        country=inherited["country"],
        entity_fields=entity_fields,
        measures=measures,
        restating=restating,
        filters={
            "connection": inherited["connection"],
            "country": inherited["country"],
            "ad_product": inherited["ad_product"],
            "campaign": inherited["campaign"],
            **filters,
        },
        product=product,
    )


def campaign_population(draws: Draws, restating: Restating, structure: Structure) -> Population:
    campaigns = structure.base_campaigns
    table = structure.campaign_table  # base states and start days (see the module docstring)
    activity = np.array([0.85, 0.12, 0.04])  # ENABLED, PAUSED, ARCHIVED
    columns = _campaign_columns(campaigns)
    return Population(
        resource="campaign-metrics",
        salt=1,
        start=table.start,
        p_active=activity[table.state],
        scale=np.array([200 + 3000 * unit(draws.seed, "scale", c["id"]) for c in campaigns]),
        currency=columns["currency"],
        exponent=columns["exponent"],
        ad_product=columns["ad_product"],
        connection=columns["connection"],
        country=columns["country"],
        entity_fields=lambda i: {
            "object": "campaign_metrics",
            "campaign": campaigns[i]["id"],
            "connection": campaigns[i]["connection"],
            "country": campaigns[i]["country"],
        },
        measures=CAMPAIGN,
        restating=restating,
        filters={
            name: columns[name] for name in ("connection", "country", "ad_product", "campaign")
        },
    )


def adgroup_population(
    draws: Draws, restating: Restating, structure: Structure, tree: Tree, groups: list[dict]
) -> Population:
    """`groups`: the base ad groups (their ids and links only)."""
    table = tree.adgroup_table
    state = np.maximum(table.state, structure.campaign_table.state[table.campaign])
    return _advertising(
        draws,
        restating,
        structure,
        "adgroup-metrics",
        2,
        table.campaign,
        state,
        (0.8, 0.1, 0.03),
        (100, 1600),
        lambda i: {
            "object": "adgroup_metrics",
            "ad_group": groups[i]["id"],
            "campaign": groups[i]["campaign"],
            "connection": groups[i]["connection"],
            "country": groups[i]["country"],
        },
        {"ad_group": _objects([g["id"] for g in groups])},
    )


def target_population(
    draws: Draws, restating: Restating, structure: Structure, tree: Tree, targets: list[dict]
) -> Population:
    """Positive targets only: a negative target has no bid and no metrics."""
    table = tree.target_table
    members = np.flatnonzero(~table.negative)
    group_state = tree.adgroup_table.state[table.adgroup[members]]
    campaign_state = structure.campaign_table.state[table.campaign[members]]
    state = np.maximum(np.maximum(table.state[members], group_state), campaign_state)
    member_list = members.tolist()

    def fields(i: int) -> dict:
        target = targets[member_list[i]]
        return {
            "object": "target_metrics",
            "target": target["id"],
            "target_type": target["targetType"],
            "match_type": target["matchType"],
            "target_expression": target["expression"],
            "campaign": target["campaign"],
            "ad_group": target["adGroup"],
            "connection": target["connection"],
            "country": target["country"],
        }

    return _advertising(
        draws,
        restating,
        structure,
        "target-metrics",
        3,
        table.campaign[members],
        state,
        (0.45, 0.06, 0.02),
        (10, 400),
        fields,
        {
            "ad_group": _objects([targets[t]["adGroup"] for t in member_list]),
            "target": _objects([targets[t]["id"] for t in member_list]),
        },
    )


def product_ad_population(
    draws: Draws,
    restating: Restating,
    structure: Structure,
    tree: Tree,
    catalog: Catalog,
    table: ProductAdTable,
    ads: list[dict],
) -> Population:
    clusters = catalog.cluster_index
    state = np.maximum(table.state, tree.adgroup_table.state[table.adgroup])
    state = np.maximum(state, structure.campaign_table.state[table.campaign])

    def fields(i: int) -> dict:
        ad = ads[i]
        cluster = int(clusters.first[table.product[i]])
        return {
            "object": "product_ad_metrics",
            "product_ad": ad["id"],
            "product": ad["product"],
            "asin": ad["asin"],
            "campaign": ad["campaign"],
            "ad_group": ad["adGroup"],
            "cluster": None if cluster < 0 else clusters.ids[cluster],
            "cluster_name": None if cluster < 0 else clusters.names[cluster],
            "connection": ad["connection"],
            "country": ad["country"],
        }

    return _advertising(
        draws,
        restating,
        structure,
        "product-ad-metrics",
        4,
        table.campaign,
        state,
        (0.6, 0.08, 0.02),
        (30, 600),
        fields,
        {
            "ad_group": _objects([a["adGroup"] for a in ads]),
            "product_ad": _objects([a["id"] for a in ads]),
            "product": _objects([a["product"] for a in ads]),
            "asin": _objects([a["asin"] for a in ads]),
        },
        product=table.product,
    )


def search_term_population(
    draws: Draws, restating: Restating, structure: Structure, tree: Tree, terms: list[dict]
) -> Population:
    table = tree.search_term_table
    targets = tree.target_table
    state = np.maximum(targets.state[table.target], tree.adgroup_table.state[table.adgroup])
    state = np.maximum(state, structure.campaign_table.state[table.campaign])

    def fields(i: int) -> dict:
        term = terms[i]
        return {
            "object": "search_term_metrics",
            "search_term": term["id"],
            "search_term_text": term["searchTerm"],
            "target": term["target"],
            "match_type": term["matchType"],
            "campaign": term["campaign"],
            "ad_group": term["adGroup"],
            "connection": term["connection"],
            "country": term["country"],
        }

    return _advertising(
        draws,
        restating,
        structure,
        "search-term-metrics",
        5,
        table.campaign,
        state,
        (0.3, 0.04, 0.01),
        (5, 150),
        fields,
        {
            "ad_group": _objects([t["adGroup"] for t in terms]),
            "target": _objects([t["target"] for t in terms]),
            "search_term": _objects([t["id"] for t in terms]),
        },
    )


def _retail(
    draws: Draws,
    restating: Restating,
    catalog: Catalog,
    resource: str,
    salt: int,
    listings: list[dict],
    products: np.ndarray,
    activity: tuple[float, float],
    scale: tuple[float, float],
    fields: Callable[[int, dict, dict], dict],
    measures: MeasureSet,
) -> Population:
    """A population of listings (seller or vendor), one entity per listing."""
    table = catalog.table
    clusters = catalog.cluster_index
    records = catalog.products
    product_list = products.tolist()
    active = np.array([records[p]["active"] for p in product_list], dtype=bool)
    (u_scale,) = draws.columns(f"scale-{resource}", 1, len(product_list))
    low, high = scale
    connection = _objects([records[p]["connection"] for p in product_list])
    country = _objects([records[p]["country"] for p in product_list])

    def entity_fields(i: int) -> dict:
        product = records[product_list[i]]
        cluster = int(clusters.first[product_list[i]])
        row = {
            "object": resource.replace("-", "_"),
            "product": product["id"],
            "asin": product["asin"],
        }
        return fields(i, row, listings[i]) | {
            "connection": product["connection"],
            "country": product["country"],
            "cluster": None if cluster < 0 else clusters.ids[cluster],
            "cluster_name": None if cluster < 0 else clusters.names[cluster],
        }

    return Population(
        resource=resource,
        salt=salt,
        start=np.array(
            [ordinal(date.fromisoformat(records[p]["createdAt"][:10])) for p in product_list]
        ),
        p_active=np.where(active, activity[0], activity[1]),
        scale=low + (high - low) * u_scale,
        currency=table.currency[products],
        exponent=table.exponent[products],
        ad_product=None,
        connection=connection,
        country=country,
        entity_fields=entity_fields,
        measures=measures,
        restating=restating,
        filters={
            "connection": connection,
            "country": country,
            "product": _objects([records[p]["id"] for p in product_list]),
            "asin": _objects([records[p]["asin"] for p in product_list]),
        },
        product=products,
        extra={
            "price": table.price[products],
            "fba": table.fba[products],
            "sourcing": table.sourcing[products],
            "stock": table.stock[products],
        },
    )


def seller_population(
    draws: Draws, restating: Restating, catalog: Catalog, listings: list[dict]
) -> Population:
    table = catalog.table
    return _retail(
        draws,
        restating,
        catalog,
        "seller-product-metrics",
        6,
        listings,
        table.seller,
        (0.93, 0.08),
        (0.3, 12),
        lambda i, row, listing: (
            row
            | {
                "sku": listing["sku"],
                "fulfillment_channel": "FBA" if table.fba[table.seller[i]] else "FBM",
            }
        ),
        SELLER,
    )


def vendor_population(
    draws: Draws, restating: Restating, catalog: Catalog, listings: list[dict]
) -> Population:
    table = catalog.table
    return _retail(
        draws,
        restating,
        catalog,
        "vendor-product-metrics",
        7,
        listings,
        table.vendor,
        (0.95, 0.1),
        (1, 25),
        lambda i, row, listing: (
            row | {"program": "sourcing" if table.sourcing[table.vendor[i]] else "manufacturing"}
        ),
        VENDOR,
    )
