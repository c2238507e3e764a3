"""The sandbox's request handling: auth, scopes, accounts, lists, metrics, faults, request log.

Shapes the spec leaves "not shown" and how the sandbox fills them: variant 0, the default.
Variants 1 and up (`SandboxService(..., variant=N)`, `variants.py`) fill them otherwise.

Lists and errors
- metrics lists use the cursor lists' envelope `{object: "list", data, has_more, total_count?}`;
- rows of a metrics list are ordered by period (`order`, default `desc`), then by entity, or with
  `group_by` by group (cluster, connection, country, currency, ad product); with `order_by`,
  every row of the window is sorted by that measure (`order`), nulls last, ties in the default
  order; its allowed values, and those chosen where the spec shows none (adgroup and
  search-term metrics as campaign metrics, vendor metrics its numeric measures), are in
  `ordering.py`; any other value is a 400 naming `order_by`;
- `expand` (every cursor list and item endpoint but countries and accounts): the name of a
  related field (connection, country, brand, campaign, adGroup or the change log's adgroup,
  product, target, portfolioId; arrays: a connection's countries, a cluster's products), dot
  notation nesting up to 4 levels (deeper: 400 naming `expand`); names matching no related
  field are ignored; details in `expand.py`;
- window caps beyond the spec's (target metrics 93 total / 31 daily, history 90): search-term
  metrics as target metrics; every other metrics resource 366 days, or 92 with `daily`;
- `include_total` on a cursor list answers `null` ("could not finish") above 20,000 records;
- rate limiting is simulated only by the fault plan: 429 with `rate_limit_error`, and a
  `Retry-After` header (seconds) on a share of them;
- 403 bodies use `type: invalid_request_error` with `code` `missing_scope` (`param`: the
  scope), `account_required` or `account_not_reachable`; 404 uses `resource_missing`; 400 uses
  `parameter_invalid` (`param` names the parameter), `window_too_large` or
  `too_many_cluster_memberships`.

Records
- portfolio: object "portfolio", id, name, state, budget {policy, amount (null for NO_CAP),
  startDate, endDate (DATE_RANGE only)}, createdAt; list filters: `search` over name, `state`;
- campaign `deliveryStatus` is DELIVERING or NOT_DELIVERING, `deliveryReasons` CAMPAIGN_PAUSED or
  CAMPAIGN_ARCHIVED; objective `type` is ACOS, ROAS, IMPRESSIONS or ORDERS;
- ad group: object "adgroup", id, adGroupId, name, campaign, adProduct, connection, country,
  state, defaultBid (number, null for SB), createdAt, updatedAt. Filters campaign, adProduct,
  connection, country, state; `search` over name;
- target: object "target", id, targetId, adProduct, campaign, adGroup, connection, country,
  state, targetType, negative, the definition fields of spec 2.5 (keywordText, matchType, asin,
  productMatchType, category, themeMatchType, event, lookback, audienceId, contentCategoryId,
  locationId; null where the type has none), expression (the definition, readable), bid (number;
  null for negative targets; for targets under the optimizer, the bid after its last change),
  createdAt, updatedAt. Filters campaign, adGroup, targetType, adProduct, connection, country,
  state; `search` over keywordText and expression;
- product ad: adType "PRODUCT_AD"; deliveryReasons name each level that stops it
  (CAMPAIGN_PAUSED, AD_GROUP_ARCHIVED, AD_PAUSED …); sku is null for vendor products;
- search term: object "search_term", id, searchTerm (what the shopper typed), adProduct (SP or
  SB), campaign, adGroup, target, connection, country, targetType and matchType (the target's),
  createdAt. Filters connection, country, campaign, adGroup, target; `search` over searchTerm;
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

Optimization history
- a data row's `id` is the target's; `entity_type` is "target"; `direction` is raised, lowered
  or unchanged only; `last_reason` and `last_scenario` come from `optimizer.REASONS`; rows are
  ordered by last_change_at (`order`), then id; `total_count` is always present;
- `other_changes` is not paged: one row per (entity, change_type), change_type one of
  harvested_keyword and negative_keyword (on ad groups), placement_adjustment (on the campaign),
  target_blocked and target_quarantined (on targets), ordered like the data rows;
- window: no dates, the 90 days ending on the reference date; only end_date, the 90 days ending
  then; only start_date, up to the reference date;
- a campaign without configuration, or whose configuration opts out with no linked workflow,
  has an empty history.

Change log (/v1/advertising-changes)
- row: object "advertising_change", id, changed_at, entity_type (campaign, adgroup, target,
  product_ad), entity_id, campaign, adgroup (null for campaign changes), connection, country,
  field (state, dailyBudget, name, defaultBid, bid, keyword, negativeKeyword,
  placementTopOfSearch), old_value and new_value (strings: a state, a decimal amount, a name, a
  keyword, a percent; null when there is none), source, actor, result, error (null when
  applied), correlation_id (the nightly run's id on workflow rows, else null);
- actor: `front`, the person's e-mail; `public-api`, `api_key:<prefix>`; `mcp`,
  `oauth_token:<prefix>`; `system`, `system:<process>`; `workflow`, `workflow:<definition id>`;
- newest first; unknown ids or field names match nothing; `entity_type`, `source` and `result`
  must be known values (400 otherwise).
"""

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from functools import partial

import numpy as np

from sandbox import automation_api as automation
from sandbox.catalog import seller_details, vendor_details
from sandbox.changes import FIELDS, SOURCES, ChangeLog
from sandbox.errors import ApiError, bad_param, not_found
from sandbox.expand import country_record, expand_item, expand_page
from sandbox.faults import FaultPlan
from sandbox.hashing import make_id
from sandbox.listing import cursor_page, filter_records, position_page, search_text
from sandbox.metrics import GROUP_DIMENSIONS, Grouping, Population, metric_rows
from sandbox.optimizer import ENTITY_TYPES
from sandbox.ordering import order_by, sorted_sections
from sandbox.params import Query
from sandbox.populations import BUILDERS, PRODUCT_RESOURCES
from sandbox.reference import COUNTRIES, COUNTRY_BY_ID, ordinal
from sandbox.restating import Restating, from_environment
from sandbox.spec import (
    AD_PRODUCTS,
    CLUSTER_MEMBERSHIP_LIMIT,
    HISTORY_LIMIT,
    HISTORY_WINDOW_DAYS,
    ID_PATTERN,
    OFFSET_MAX,
)
from sandbox.variants import Variant
from sandbox.windows import metrics_request, offset_page
from sandbox.world import PRESETS, Account

READ_SCOPES = frozenset(
    {
        "catalog:read",
        "campaigns:read",
        "workflows:read",
        "connections:read",
        "tasks:read",
        "skills:read",
        "platform:read",
    }
)
CATALOG, CAMPAIGNS = "catalog:read", "campaigns:read"
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
Detail = Callable[[Account, int, list[str]], dict]


ACCOUNT_NAMES = ("Acme Retail", "Borealis Goods", "Cobalt Outfitters")


def account_names(count: int) -> list[str]:
    """The first `count` accounts' names: the three of the examples, then numbered clients."""
    numbered = (f"Client {i + 1:03d}" for i in range(len(ACCOUNT_NAMES), count))
    return [*ACCOUNT_NAMES[:count], *numbered]


def _account_preset(index: int, preset: str, clients: int, large_clients: int) -> str:
    """An agency's accounts: its `large_clients` first ones large, the others of `preset`.
    Without clients, the examples' first account is of `preset` and the others small."""
    if clients:
        return "large" if index < large_clients else preset
    return preset if index == 0 else "small"


@dataclass(frozen=True)
class KeySpec:
    kind: str  # "business" or "agency"
    scopes: frozenset[str]
    accounts: tuple[int, ...]
    object: str = "api_key"


@dataclass(frozen=True)
class RequestRecord:
    method: str
    path: str
    query: tuple[tuple[str, str], ...]
    account: str | None
    status: int


@dataclass(frozen=True)
class Route:
    pattern: re.Pattern[str]
    handler: Callable[..., dict]
    scope: str | None
    account_scoped: bool = True


@dataclass
class Context:
    """What a handler needs to answer one request."""

    key: KeySpec
    account: Account | None
    query: Query
    params: dict[str, str] = field(default_factory=dict)


class SandboxService:
    """A deterministic implementation of the spec's read endpoints."""

    def __init__(
        self,
        preset: str = "small",
        reference: date | None = None,
        *,
        seed: int = 1,
        key: str = "sandbox",
        faults: FaultPlan | None = None,
        variant: int = 0,
        clients: int = 0,
        large_clients: int = 0,
        restating: Restating | None = None,
    ) -> None:
        """`clients` N > 0: the key is an agency's, reaching N accounts of `preset` (the
        scale-out tests and benchmark), the first `large_clients` of them of the `large`
        preset instead (an agency's few big sellers); 0: the three accounts of the spec's
        examples. `restating`: recent days' figures revised (restating.py); by default as
        `ADWH_SANDBOX_RESTATE_DAYS` says, else none."""
        if preset not in PRESETS:
            raise ValueError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
        if not 0 <= large_clients <= clients:
            raise ValueError(f"large_clients must be 0 to clients ({clients}), not {large_clients}")
        self.reference = reference or date.today()
        self.seed = seed
        self.variant = Variant.for_number(variant)  # the spec's open choices (variants.py)
        self.restating = from_environment() if restating is None else restating
        self.countries = (*COUNTRIES, *self.variant.countries)
        self.accounts = [
            Account(
                seed,
                i,
                name,
                PRESETS[_account_preset(i, preset, clients, large_clients)],
                self.reference,
                self.variant.marketplaces,
                self.restating,
            )
            for i, name in enumerate(account_names(clients or len(ACCOUNT_NAMES)))
        ]
        self.account_by_id = {a.id: a for a in self.accounts}
        kind, reach = ("agency", tuple(range(clients))) if clients else self.variant.key()
        self.keys: dict[str, KeySpec] = {key: KeySpec(kind, READ_SCOPES, reach)}
        self.faults = self.variant.faults if faults is None else faults
        self.requests: list[RequestRecord] = []
        self._routes = self._build_routes()
        self._populations: dict[tuple[int, str], Population] = {}

    # ------------------------------------------------------------------ configuration
    def add_key(
        self,
        key: str,
        *,
        kind: str = "business",
        scopes: frozenset[str] = READ_SCOPES,
        accounts: tuple[int, ...] = (0,),
    ) -> None:
        """Register another credential (agency keys, narrower scopes) for tests."""
        self.keys[key] = KeySpec(kind, frozenset(scopes), accounts)

    def withdraw(self, account_id: str, key: str | None = None) -> None:
        """The client account takes back its invitation: the agency key (the first, unless
        `key` is named) no longer lists it, and a call naming it gets the spec's explicit 403."""
        self._share(account_id, key, shared=False)

    def invite(self, account_id: str, key: str | None = None) -> None:
        """The client account shares itself with the agency key again."""
        self._share(account_id, key, shared=True)

    def _share(self, account_id: str, key: str | None, shared: bool) -> None:
        name = key or next(iter(self.keys))
        spec = self.keys[name]
        index = self.account_by_id[account_id].index
        reach = {*spec.accounts, index} if shared else set(spec.accounts) - {index}
        self.keys[name] = replace(spec, accounts=tuple(sorted(reach)))

    @property
    def main_account(self) -> Account:
        return self.accounts[0]

    # ------------------------------------------------------------------ dispatch
    def handle(
        self, method: str, path: str, query: list[tuple[str, str]], headers: dict[str, str]
    ) -> tuple[int, dict | None, dict[str, str]]:
        """Answer one request: (status, JSON body or None, extra headers)."""
        account_header = headers.get("service-account")
        try:
            status, body, extra = 200, self._dispatch(method, path, query, headers), {}
        except ApiError as error:
            status, body, extra = error.status, error.body, error.headers
        self.requests.append(RequestRecord(method, path, tuple(query), account_header, status))
        return status, body, extra

    def _dispatch(
        self, method: str, path: str, query: list[tuple[str, str]], headers: dict[str, str]
    ) -> dict | None:
        if path == "/health":
            return None
        if method != "GET":
            raise ApiError(405, f"{method} is not served by the sandbox's read-only surface.")
        key = self._authenticate(headers.get("authorization"))
        for route in self._routes:
            match = route.pattern.fullmatch(path)
            if not match:
                continue
            if route.scope and route.scope not in key.scopes:
                raise ApiError(
                    403,
                    f"This endpoint requires the scope {route.scope}, which the key lacks.",
                    code="missing_scope",
                    param=route.scope,
                )
            account = self._account(key, headers) if route.account_scoped else None
            ctx = Context(key, account, Query(query), match.groupdict())
            return self.variant.serve(self, path, ctx, route.handler)
        raise ApiError(404, f"Unknown path {path}.", code="resource_missing")

    def _authenticate(self, header: str | None) -> KeySpec:
        if not header or not header.startswith("Bearer "):
            raise ApiError(401, "Missing bearer credential.", type_="authentication_error")
        spec = self.keys.get(header.removeprefix("Bearer ").strip())
        if spec is None:
            raise ApiError(
                401,
                "Invalid or revoked credential.",
                type_="authentication_error",
                code="invalid_api_key",
            )
        return spec

    def _account(self, key: KeySpec, headers: dict[str, str]) -> Account:
        chosen = headers.get("service-account")
        if key.kind == "business":
            if chosen and chosen != self.accounts[key.accounts[0]].id:
                raise ApiError(
                    403,
                    f"The key cannot reach account {chosen}.",
                    code="account_not_reachable",
                )
            return self.accounts[key.accounts[0]]
        if not chosen:
            raise ApiError(
                403,
                "Agency keys must name an account with the Service-Account header.",
                code="account_required",
                param="Service-Account",
            )
        account = self.account_by_id.get(chosen)
        if account is None or account.index not in key.accounts:
            raise ApiError(
                403,
                f"The key is not invited to account {chosen}.",
                code="account_not_reachable",
            )
        return account

    def _build_routes(self) -> list[Route]:
        def route(path: str, handler: Callable[..., dict], scope: str | None, scoped=True):
            return Route(re.compile(path), handler, scope, scoped)

        def listing(path: str, attribute: str, scope: str, **options) -> list[Route]:
            return [
                route(path, self._list(attribute, **options), scope),
                route(
                    path + r"/(?P<id>[^/]+)", self._item(attribute, options.get("detail")), scope
                ),
            ]

        products = ("title", "asin", "sku")
        return [
            route(r"/v1/me", self._me, None, scoped=False),
            route(r"/v1/accounts", self._accounts, "connections:read", scoped=False),
            *listing(r"/v1/connections", "connections", "connections:read"),
            route(r"/v1/countries", self._countries, CATALOG),
            route(r"/v1/countries/(?P<id>[^/]+)", self._country, CATALOG),
            *listing(r"/v1/product-brands", "brands", CATALOG),
            *listing(r"/v1/products", "products", CATALOG, search=products),
            *listing(
                r"/v1/marketplace-seller-products",
                "seller_products",
                CATALOG,
                search=products,
                detail=seller_details,
            ),
            *listing(
                r"/v1/marketplace-vendor-products",
                "vendor_products",
                CATALOG,
                search=products,
                detail=vendor_details,
            ),
            *listing(
                r"/v1/marketplace-advertising-products",
                "advertising_products",
                CATALOG,
                search=products,
            ),
            route(r"/v1/clusters", self._clusters, CATALOG),
            route(r"/v1/clusters/(?P<id>[^/]+)", self._item("clusters"), CATALOG),
            *listing(r"/v1/portfolios", "portfolios", CAMPAIGNS),
            route(r"/v1/campaigns", self._campaigns, CAMPAIGNS),
            route(r"/v1/campaigns/(?P<id>[^/]+)", self._campaign, CAMPAIGNS),
            route(
                r"/v1/campaigns/(?P<id>[^/]+)/optimization-history",
                self._optimization_history,
                CAMPAIGNS,
            ),
            *listing(r"/v1/adgroups", "adgroups", CAMPAIGNS),
            *listing(r"/v1/targets", "targets", CAMPAIGNS, search=("keywordText", "expression")),
            *listing(r"/v1/product-ads", "product_ads", CAMPAIGNS, search=("asin", "sku")),
            *listing(r"/v1/search-terms", "search_terms", CAMPAIGNS, search=("searchTerm",)),
            route(r"/v1/advertising-changes", self._advertising_changes, CAMPAIGNS),
            *(
                route(path, partial(handler, self), scope)
                for path, handler, scope in automation.ROUTES
            ),
            *(
                route(f"/v1/{resource}", self._metrics(resource), METRICS_SCOPES[resource])
                for resource in METRICS_SCOPES
            ),
        ]

    # ------------------------------------------------------------------ credential, accounts
    def _me(self, ctx: Context) -> dict:
        key = ctx.key
        return {
            "object": key.object,
            "id": make_id(self.seed, "key", key.kind, *key.accounts),
            "subject_type": key.kind,
            "scopes": sorted(key.scopes),
            "account_required": key.kind == "agency",
            "accounts": [
                {"id": self.accounts[i].id, "name": self.accounts[i].name} for i in key.accounts
            ],
        }

    def _accounts(self, ctx: Context) -> dict:
        key = ctx.key
        records = [
            {
                "object": "account",
                "id": self.accounts[i].id,
                "name": self.accounts[i].name,
                "connections": [c["id"] for c in self.accounts[i].connections],
            }
            for i in key.accounts
        ]
        return cursor_page(records, ctx.query)

    # ------------------------------------------------------------------ generic lists
    def _list(
        self,
        attribute: str,
        search: tuple[str, ...] = ("name", "title"),
        detail: Detail | None = None,
    ) -> Callable[[Context], dict]:
        def handler(ctx: Context) -> dict:
            records = getattr(ctx.account, attribute)
            page = cursor_page(filter_records(records, ctx.query, search), ctx.query)
            if detail is not None:
                expand = ctx.query.all("expand")
                page["data"] = [
                    detail(ctx.account, ctx.account.locate(attribute, r["id"]), expand)
                    for r in page["data"]
                ]
            return expand_page(ctx.account, ctx.query, page)  # spec 2.1, 4.1

        return handler

    def _item(self, attribute: str, detail: Detail | None = None) -> Callable[[Context], dict]:
        def handler(ctx: Context) -> dict:
            position = ctx.account.locate(attribute, ctx.params["id"])
            if position is None:
                raise not_found(attribute.rstrip("s").replace("_", " "))
            if detail is not None:
                record = detail(ctx.account, position, ctx.query.all("expand"))
            else:
                record = getattr(ctx.account, attribute)[position]
            return expand_item(ctx.account, ctx.query, record)  # spec 2.1, 4.1

        return handler

    def _countries(self, ctx: Context) -> dict:
        records = [country_record(c) for c in self.countries]
        code = ctx.query.get("code")
        if code is not None:
            records = [r for r in records if r["code"] == code]
        return cursor_page(records, ctx.query)

    def _country(self, ctx: Context) -> dict:
        country = COUNTRY_BY_ID.get(ctx.params["id"])
        if country not in self.countries:
            raise not_found("country")
        return country_record(country)

    def _clusters(self, ctx: Context) -> dict:
        """Clusters, by name (`search`) or holding a catalog product (`product`)."""
        records = ctx.account.clusters
        needle = search_text(ctx.query)
        if needle is not None:
            records = [r for r in records if needle in r["name"].lower()]
        wanted = ctx.query.all("product")
        if wanted:
            records = [r for r in records if set(wanted) & set(r["products"])]
        return expand_page(ctx.account, ctx.query, cursor_page(records, ctx.query))

    # ------------------------------------------------------------------ campaigns
    def _campaigns(self, ctx: Context) -> dict:
        account = ctx.account
        records = filter_records(account.campaigns, ctx.query)
        page = cursor_page(records, ctx.query)
        if "optimizationConfig" in ctx.query.all("expand"):
            page["data"] = [
                {
                    **r,
                    "optimizationConfig": account.optimization_config(
                        account.locate("campaigns", r["id"])
                    ),
                }
                for r in page["data"]
            ]
        return expand_page(account, ctx.query, page)  # spec 2.1, 4.1

    def _campaign(self, ctx: Context) -> dict:
        position = ctx.account.locate("campaigns", ctx.params["id"])
        if position is None:
            raise not_found("campaign")
        record = ctx.account.campaigns[position]
        if "optimizationConfig" in ctx.query.all("expand"):
            record = {**record, "optimizationConfig": ctx.account.optimization_config(position)}
        return expand_item(ctx.account, ctx.query, record)  # spec 2.1, 4.1

    def _optimization_history(self, ctx: Context) -> dict:
        """Net effect per target of the optimizer's applied changes over a window (spec 2.7)."""
        account, q = ctx.account, ctx.query
        campaign = account.locate("campaigns", ctx.params["id"])
        if campaign is None:
            raise not_found("campaign")
        start, end = history_window(q, self.reference)
        low, high, default = HISTORY_LIMIT
        limit = q.integer("limit", default, low, high)
        offset = q.integer("offset", 0, 0, OFFSET_MAX)
        descending = q.choice("order", ("asc", "desc"), "desc") == "desc"
        history = account.optimizer.history(account, campaign, ordinal(start), ordinal(end))
        rows = sorted(
            history.bids, key=lambda r: (r["last_change_at"], r["id"]), reverse=descending
        )
        others = sorted(
            history.others,
            key=lambda r: (r["last_change_at"], r["entity_id"], r["change_type"]),
            reverse=descending,
        )
        directions = [r["direction"] for r in rows]
        return {
            "object": "list",
            "data": rows[offset : offset + limit],
            "has_more": offset + limit < len(rows),
            "total_count": len(rows),
            "other_changes": others,
            "summary": {
                "targets_touched": len(rows),
                "bid_changes": sum(r["change_count"] for r in rows),
                "raised": directions.count("raised"),
                "lowered": directions.count("lowered"),
                "unchanged": directions.count("unchanged"),
                "other_changes": sum(r["count"] for r in others),
                "window": {"start_date": str(start), "end_date": str(end)},
            },
        }

    def _advertising_changes(self, ctx: Context) -> dict:
        """The change log (spec 4.8), newest first, filtered and paged by cursor."""
        account = ctx.account
        log = account.change_log
        positions = np.flatnonzero(change_mask(log, account, ctx.query))
        chosen, has_more, total = position_page(positions, ctx.query, log.position_of)
        page = {
            "object": "list",
            "data": [log.row(account, int(k)) for k in chosen],
            "has_more": has_more,
        }
        if ctx.query.flag("include_total"):
            page["total_count"] = total
        return expand_page(account, ctx.query, page)  # spec 2.1, 4.1

    # ------------------------------------------------------------------ metrics
    def _metrics(self, resource: str) -> Callable[[Context], dict]:
        def handler(ctx: Context) -> dict:
            q = ctx.query
            window, limit, offset = metrics_request(q, resource, self.reference)
            sort = order_by(q, resource, window.descending)  # spec 4.2; None: default order
            pop = self.population(ctx.account.index, resource)
            keep = cluster_filter(q, ctx.account)
            candidates = np.flatnonzero(population_mask(pop, q, keep, ctx.account))
            grouping = parse_grouping(q, resource, ctx.account, keep)
            if grouping is not None and "cluster" in grouping.dims:
                check_memberships(pop, candidates, grouping)
            sections = metric_rows(self.seed, pop, window, candidates, grouping)
            if sort is not None:
                sections = sorted_sections(sections, sort, offset + limit)
            return offset_page(sections, q, limit, offset)

        return handler

    def population(self, account_index: int, resource: str) -> Population:
        key = (account_index, resource)
        if key not in self._populations:
            self._populations[key] = BUILDERS[resource](self.accounts[account_index])
        return self._populations[key]


# ---------------------------------------------------------------------- metrics requests
def history_window(query: Query, reference: date) -> tuple[date, date]:
    """The history's window: the last 90 days by default, never longer (400 naming it)."""
    start, end = query.day("start_date", required=False), query.day("end_date", required=False)
    span = timedelta(days=HISTORY_WINDOW_DAYS - 1)
    if end is None:
        end = reference
    if start is None:
        start = end - span
    if start > end:
        raise bad_param("start_date", "start_date must not be after end_date.")
    days = (end - start).days + 1
    if days > HISTORY_WINDOW_DAYS:
        raise ApiError(
            400,
            f"The window of {days} days exceeds the limit of {HISTORY_WINDOW_DAYS} days for "
            "optimization-history.",
            code="window_too_large",
            param="start_date",
        )
    return start, end


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
    return np.isin(np.array(account.cluster_index.ids, dtype=object), wanted)


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
        clusters = account.cluster_index
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
    clusters = account.cluster_index if "cluster" in ordered else None
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


# ---------------------------------------------------------------------- change log requests
def change_mask(log: ChangeLog, account: Account, query: Query) -> np.ndarray:
    """Rows kept by the change log's filters; unknown ids and values keep nothing."""
    mask = np.ones(len(log), dtype=bool)
    for name, attribute, column in (
        ("campaign", "campaigns", log.campaign),
        ("adgroup", "adgroups", log.adgroup),
    ):
        wanted = query.all(name)
        if wanted:
            mask &= np.isin(column, _positions(account, attribute, wanted))
    entities = query.all("entity")
    if entities:
        found = np.zeros(len(log), dtype=bool)
        kinds = ("campaigns", "adgroups", "targets", "product_ads")
        for entity_type, attribute in enumerate(kinds):
            positions = _positions(account, attribute, entities)
            found |= (log.entity_type == entity_type) & np.isin(log.entity, positions)
        mask &= found
    for name, values, column in (
        ("entity_type", ENTITY_TYPES, log.entity_type),
        ("source", SOURCES, log.source),
    ):
        value = query.choice(name, values, None)
        if value is not None:
            mask &= column == values.index(value)
    result = query.choice("result", ("applied", "failed"), None)
    if result is not None:
        mask &= log.applied == (result == "applied")
    field_name = query.get("field")
    if field_name is not None:
        mask &= log.field == (FIELDS.index(field_name) if field_name in FIELDS else -1)
    correlation = query.get("correlation_id")
    if correlation is not None:
        workflow, day = log.runs(account).get(correlation, (-2, -2))
        mask &= (log.workflow == workflow) & (log.time // 86_400 == day)
    start, end = query.day("start_date", required=False), query.day("end_date", required=False)
    if start is not None and end is not None and start > end:
        raise bad_param("start_date", "start_date must not be after end_date.")
    day = log.time // 86_400
    if start is not None:
        mask &= day >= ordinal(start)
    if end is not None:
        mask &= day <= ordinal(end)
    return mask


def _positions(account: Account, attribute: str, ids: list[str]) -> list[int]:
    """Positions of the ids that name records of the account (others are dropped)."""
    found = (account.locate(attribute, i) for i in ids)
    return [p for p in found if p is not None]
