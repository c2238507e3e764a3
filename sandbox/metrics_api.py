"""The metrics lists (spec 4.2, 4.4, 4.5): rows of a population (`populations.py`) over a
window's periods (`metrics.py`, `windows.py`), filtered, grouped (`group_by`), sorted
(`order_by`, `ordering.py`) and paged by offset.

Metrics rows
- adgroup-metrics: object, ad_group, campaign, connection, country, the advertising measures,
  currency, ad_product, date; filters campaign, ad_group (and connection, country, ad_product);
- search-term-metrics: object, search_term (id), search_term_text, target, match_type, campaign,
  ad_group, connection, country, then as adgroup-metrics; filters also target, search_term;
- product-ad rows, seller rows and vendor rows carry their product's first cluster (the
  lowest-numbered, first listed by /v1/clusters) as cluster and cluster_name;
- seller rows carry fulfillment_channel (FBA or FBM); fees are positive amounts (costs);
  conversion_rate is orders / sessions of the row, grouped or over any period too (spec 2.9);
- vendor-product-metrics: object, product, asin, program (manufacturing or sourcing),
  connection, country, cluster, cluster_name, currency, date, ordered_revenue and ordered_units
  (null for sourcing), shipped_revenue, shipped_cogs, shipped_units, net_received_revenue,
  net_received_units, glance_views and rank (null when unreported), on_hand_sellable_units and
  open_order_sellable_units (the period's latest snapshot, null when unreported; grouped, summed
  and shown only when `country` is a dimension, as seller stock);
- grouped rows keep `object`; entity fields are null except the grouping dimensions (cluster
  fills cluster and cluster_name); `group_by=account` adds no account field;
- the 2000-membership check counts each distinct catalog product in scope once per cluster it
  belongs to (among those of the `cluster` filter, when given); every row has a catalog product,
  so no row is dropped as unmatched.
"""

import re

import numpy as np

from sandbox.assembly import Account
from sandbox.errors import ApiError, bad_param
from sandbox.metrics import GROUP_DIMENSIONS, Grouping, Population, metric_rows
from sandbox.ordering import order_by, sorted_sections
from sandbox.params import Query
from sandbox.populations import PRODUCT_RESOURCES
from sandbox.routing import CAMPAIGNS, CATALOG, Context, Handler, route
from sandbox.spec import AD_PRODUCTS, CLUSTER_MEMBERSHIP_LIMIT, ID_PATTERN, METRICS_RESOURCES
from sandbox.windows import metrics_request, offset_page

METRICS_SCOPES = {
    "campaign-metrics": CAMPAIGNS,
    "adgroup-metrics": CAMPAIGNS,
    "target-metrics": CAMPAIGNS,
    "product-ad-metrics": CAMPAIGNS,
    "search-term-metrics": CAMPAIGNS,
    "seller-product-metrics": CATALOG,
    "vendor-product-metrics": CATALOG,
}
AD_PRODUCTS_OF = {"product-ad-metrics": ("SP", "SD")}  # SB has no product ads
ID = re.compile(ID_PATTERN)
ASIN = re.compile(r"^[A-Z0-9]{10}$")


def metrics(resource: str) -> Handler:
    """The handler of one metrics list."""

    def handler(ctx: Context) -> dict:
        q, account = ctx.query, ctx.account
        window, limit, offset = metrics_request(q, resource, ctx.host.reference)
        sort = order_by(q, resource, window.descending)  # spec 4.2; None: default order
        pop = account.population(resource)
        keep = cluster_filter(q, account)
        candidates = np.flatnonzero(population_mask(pop, q, keep, account))
        grouping = parse_grouping(q, resource, account, keep)
        if grouping is not None and "cluster" in grouping.dims:
            check_memberships(pop, candidates, grouping)
        sections = metric_rows(ctx.host.seed, pop, window, candidates, grouping)
        if sort is not None:
            sections = sorted_sections(sections, sort, offset + limit)
        return offset_page(sections, q, limit, offset)

    return handler


def _check_values(query: Query, name: str, pattern: re.Pattern[str], what: str) -> list[str]:
    values = query.all(name)
    for value in values:
        if not pattern.match(value):
            raise bad_param(name, f"{name} must be {what}; got {value!r}.")
    return values


def cluster_filter(query: Query, account: Account) -> np.ndarray | None:
    """Per cluster: kept by the `cluster` filter; None without it. Unknown ids keep nothing."""
    wanted = _check_values(query, "cluster", ID, "an identifier (24 hex characters)")
    if not wanted:
        return None
    return np.isin(np.array(account.catalog.cluster_index.ids, dtype=object), wanted)


def population_mask(
    pop: Population, query: Query, keep: np.ndarray | None, account: Account
) -> np.ndarray:
    """Entities kept by the resource's filters (connection, country, ad_product, campaign …)."""
    allowed = AD_PRODUCTS_OF.get(pop.resource, AD_PRODUCTS)
    mask = np.ones(pop.size, dtype=bool)
    for name, column in pop.filters.items():
        if name == "ad_product":
            wanted = query.all(name)
            for value in wanted:
                if value not in allowed:
                    raise bad_param(name, f"ad_product must be one of {', '.join(allowed)}.")
        elif name == "asin":
            wanted = _check_values(query, name, ASIN, "an ASIN (10 letters or digits)")
        else:
            wanted = _check_values(query, name, ID, "an identifier (24 hex characters)")
        if wanted:
            mask &= np.isin(column, wanted)
    if keep is not None and pop.product is not None:
        clusters = account.catalog.cluster_index
        position, _ = clusters.memberships(pop.product, keep)
        in_clusters = np.zeros(pop.size, dtype=bool)
        in_clusters[position] = True
        mask &= in_clusters
    return mask


def parse_grouping(
    query: Query, resource: str, account: Account, keep: np.ndarray | None
) -> Grouping | None:
    """`group_by` (spec 4.2): `account` alone, or any of connection, country and cluster."""
    dims = set(query.all("group_by"))
    if not dims:
        return None
    unknown = dims - {"account", *GROUP_DIMENSIONS}
    if unknown:
        raise bad_param(
            "group_by",
            f"group_by must be account or {', '.join(GROUP_DIMENSIONS)}; "
            f"got {', '.join(sorted(unknown))}.",
        )
    if "account" in dims and len(dims) > 1:
        raise bad_param("group_by", "group_by=account cannot be combined with other groupings.")
    if "cluster" in dims and resource not in PRODUCT_RESOURCES:
        raise bad_param(
            "group_by",
            f"group_by=cluster is available on {', '.join(PRODUCT_RESOURCES)} only.",
        )
    ordered = tuple(d for d in GROUP_DIMENSIONS if d in dims)
    clusters = account.catalog.cluster_index if "cluster" in ordered else None
    return Grouping(ordered, clusters, keep)


def check_memberships(pop: Population, candidates: np.ndarray, grouping: Grouping) -> None:
    """Refuse group_by=cluster over more product-cluster memberships than the limit."""
    products = np.unique(pop.product[candidates])
    position, _ = grouping.clusters.memberships(products, grouping.keep)
    if len(position) > CLUSTER_MEMBERSHIP_LIMIT:
        raise ApiError(
            400,
            f"group_by=cluster covers {len(position)} product-cluster memberships, over the "
            f"limit of {CLUSTER_MEMBERSHIP_LIMIT}; narrow it with the cluster filter.",
            code="too_many_cluster_memberships",
            param="cluster",
        )


ROUTES = tuple(
    route(f"/v1/{resource}", metrics(resource), METRICS_SCOPES[resource])
    for resource in METRICS_RESOURCES
)
