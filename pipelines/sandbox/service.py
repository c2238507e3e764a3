"""The sandbox's request handling: auth, scopes, accounts, lists, metrics, faults, request log.

Shapes the spec leaves "not shown" and how the sandbox fills them:
- metrics lists use the cursor lists' envelope `{object: "list", data, has_more, total_count?}`;
- rows of a metrics list are ordered by period (`order`, default `desc`), then by entity;
- window caps beyond the spec's (target metrics 93 total / 31 daily, history 90): search-term
  metrics as target metrics; every other metrics resource 366 days, or 92 with `daily`;
- `include_total` on a cursor list answers `null` ("could not finish") above 20,000 records;
- 403 bodies use `type: invalid_request_error` with `code` `missing_scope`, `account_required`
  or `account_not_reachable`.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

import numpy as np

from pipelines.sandbox.errors import ApiError, bad_param, not_found
from pipelines.sandbox.faults import NO_FAULTS, FaultPlan
from pipelines.sandbox.hashing import make_id, unit
from pipelines.sandbox.metrics import Population, entity_rows
from pipelines.sandbox.params import Query
from pipelines.sandbox.periods import GRANULARITIES
from pipelines.sandbox.world import COUNTRIES, COUNTRY_BY_ID, PRESETS, Account, ordinal

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
CURSOR_LIMIT = (1, 100, 20)
METRICS_LIMIT = (1, 1000, 100)
MAX_OFFSET = 9007199254740991
COUNT_GIVES_UP_ABOVE = 20_000


def window_cap(resource: str, granularity: str) -> int:
    """The longest window (days, both ends included) the sandbox accepts."""
    strict = resource in ("target-metrics", "search-term-metrics")
    if granularity == "daily":
        return 31 if strict else 92
    return 93 if strict else 366


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
        faults: FaultPlan = NO_FAULTS,
    ) -> None:
        if preset not in PRESETS:
            raise ValueError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
        self.reference = reference or date.today()
        self.seed = seed
        names = ("Acme Retail", "Borealis Goods", "Cobalt Outfitters")
        self.accounts = [
            Account(seed, i, name, PRESETS[preset if i == 0 else "small"], self.reference)
            for i, name in enumerate(names)
        ]
        self.account_by_id = {a.id: a for a in self.accounts}
        self.keys: dict[str, KeySpec] = {key: KeySpec("business", READ_SCOPES, (0,))}
        self.faults = faults
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
            return route.handler(Context(key, account, Query(query), match.groupdict()))
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

        return [
            route(r"/v1/me", self._me, None, scoped=False),
            route(r"/v1/accounts", self._accounts, "connections:read", scoped=False),
            route(r"/v1/connections", self._list("connections"), "connections:read"),
            route(r"/v1/connections/(?P<id>[^/]+)", self._item("connections"), "connections:read"),
            route(r"/v1/countries", self._countries, "catalog:read"),
            route(r"/v1/countries/(?P<id>[^/]+)", self._country, "catalog:read"),
            route(r"/v1/product-brands", self._list("brands"), "catalog:read"),
            route(r"/v1/product-brands/(?P<id>[^/]+)", self._item("brands"), "catalog:read"),
            route(r"/v1/products", self._list("products"), "catalog:read"),
            route(r"/v1/products/(?P<id>[^/]+)", self._item("products"), "catalog:read"),
            route(r"/v1/portfolios", self._list("portfolios"), "campaigns:read"),
            route(r"/v1/portfolios/(?P<id>[^/]+)", self._item("portfolios"), "campaigns:read"),
            route(r"/v1/campaigns", self._campaigns, "campaigns:read"),
            route(r"/v1/campaigns/(?P<id>[^/]+)", self._campaign, "campaigns:read"),
            route(r"/v1/campaign-metrics", self._metrics("campaign-metrics"), "campaigns:read"),
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
    def _list(self, attribute: str) -> Callable[[Context], dict]:
        def handler(ctx: Context) -> dict:
            records = getattr(ctx.account, attribute)
            return cursor_page(filter_records(records, ctx.query), ctx.query)

        return handler

    def _item(self, attribute: str) -> Callable[[Context], dict]:
        def handler(ctx: Context) -> dict:
            for record in getattr(ctx.account, attribute):
                if record["id"] == ctx.params["id"]:
                    return record
            raise not_found(attribute.rstrip("s"))

        return handler

    def _countries(self, ctx: Context) -> dict:
        records = [country_record(c) for c in COUNTRIES]
        code = ctx.query.get("code")
        if code is not None:
            records = [r for r in records if r["code"] == code]
        return cursor_page(records, ctx.query)

    def _country(self, ctx: Context) -> dict:
        country = COUNTRY_BY_ID.get(ctx.params["id"])
        if country is None:
            raise not_found("country")
        return country_record(country)

    # ------------------------------------------------------------------ campaigns
    def _campaigns(self, ctx: Context) -> dict:
        account = ctx.account
        records = filter_records(account.campaigns, ctx.query)
        page = cursor_page(records, ctx.query)
        if "optimizationConfig" in ctx.query.all("expand"):
            index = {c["id"]: i for i, c in enumerate(account.campaigns)}
            page["data"] = [
                {**r, "optimizationConfig": account.optimization_config(index[r["id"]])}
                for r in page["data"]
            ]
        return page

    def _campaign(self, ctx: Context) -> dict:
        for i, record in enumerate(ctx.account.campaigns):
            if record["id"] == ctx.params["id"]:
                if "optimizationConfig" in ctx.query.all("expand"):
                    return {**record, "optimizationConfig": ctx.account.optimization_config(i)}
                return record
        raise not_found("campaign")

    # ------------------------------------------------------------------ metrics
    def _metrics(self, resource: str) -> Callable[[Context], dict]:
        def handler(ctx: Context) -> dict:
            q = ctx.query
            start, end = q.day("start_date"), q.day("end_date")
            if start > end:
                raise bad_param("start_date", "start_date must not be after end_date.")
            granularity = q.choice("granularity", GRANULARITIES, "total")
            cap = window_cap(resource, granularity)
            days = (end - start).days + 1
            if days > cap:
                raise ApiError(
                    400,
                    f"The window of {days} days exceeds the limit of {cap} days for "
                    f"{resource} with granularity {granularity}.",
                    code="window_too_large",
                    param="end_date",
                )
            low, high, default = METRICS_LIMIT
            limit = q.integer("limit", default, low, high)
            offset = q.integer("offset", 0, 0, MAX_OFFSET)
            descending = q.choice("order", ("asc", "desc"), "desc") == "desc"
            pop = self._population(ctx.account.index, resource)
            mask = population_mask(pop, q)
            rows: list[dict] = []
            total = 0
            for count, render in entity_rows(
                self.seed, pop, start, end, granularity, self.reference, mask, descending
            ):
                if len(rows) < limit and offset < total + count:
                    first = max(0, offset - total)
                    rows.extend(render(first, first + limit - len(rows)))
                total += count
            page = {"object": "list", "data": rows, "has_more": offset + len(rows) < total}
            if q.flag("include_total"):
                page["total_count"] = total
            return page

        return handler

    def _population(self, account_index: int, resource: str) -> Population:
        key = (account_index, resource)
        if key not in self._populations:
            self._populations[key] = build_population(self, self.accounts[account_index], resource)
        return self._populations[key]


def build_population(service: SandboxService, account: Account, resource: str) -> Population:
    """The entities a metrics resource reports on, with their activity and size."""
    if resource != "campaign-metrics":
        raise not_found(resource)
    campaigns = account.campaigns
    activity = {"ENABLED": 0.85, "PAUSED": 0.12, "ARCHIVED": 0.04}
    countries = [COUNTRY_BY_ID[c["country"]] for c in campaigns]
    return Population(
        resource=resource,
        salt=1,
        start=np.array([ordinal(date.fromisoformat(c["startDate"])) for c in campaigns]),
        p_active=np.array([activity.get(c["state"], 0.1) for c in campaigns]),
        scale=np.array([200 + 3000 * unit(service.seed, "scale", c["id"]) for c in campaigns]),
        currency=np.array([c.currency for c in countries], dtype=object),
        exponent=np.array([c.exponent for c in countries]),
        ad_product=np.array([c["adProduct"] for c in campaigns], dtype=object),
        connection=np.array([c["connection"] for c in campaigns], dtype=object),
        country=np.array([c["country"] for c in campaigns], dtype=object),
        entity_fields=lambda i: {
            "object": "campaign_metrics",
            "campaign": campaigns[i]["id"],
            "connection": campaigns[i]["connection"],
            "country": campaigns[i]["country"],
        },
    )


def population_mask(pop: Population, query: Query) -> np.ndarray:
    """Entities kept by the `connection`, `country`, `ad_product` and entity filters."""
    mask = np.ones(pop.size, dtype=bool)
    for name, column in (
        ("connection", pop.connection),
        ("country", pop.country),
        ("ad_product", pop.ad_product),
    ):
        wanted = query.all(name)
        if wanted:
            mask &= np.isin(column, wanted)
    campaign = query.all("campaign")
    if campaign:
        ids = np.array([pop.entity_fields(i)["campaign"] for i in range(pop.size)], dtype=object)
        mask &= np.isin(ids, campaign)
    return mask


def country_record(country) -> dict:
    return {
        "object": "country",
        "id": country.id,
        "code": country.code,
        "name": country.name,
        "marketplaceId": country.marketplace_id,
    }


_FILTERS = ("connection", "country", "brand", "asin", "state", "type", "campaign", "adGroup")


def filter_records(records: list[dict], query: Query) -> list[dict]:
    """Apply the equality filters and `search` the spec lists for cursor lists."""
    out = records
    for name in _FILTERS:
        wanted = query.all(name)
        if wanted:
            out = [r for r in out if r.get(name) in wanted]
    search = query.get("search")
    if search is not None:
        if not 1 <= len(search) <= 200:
            raise bad_param("search", "search must be 1 to 200 characters.")
        needle = search.lower()
        out = [r for r in out if needle in str(r.get("name") or r.get("title") or "").lower()]
    return out


def cursor_page(records: list[dict], query: Query) -> dict:
    """One page of a cursor list: limit, starting_after, ending_before, include_total."""
    low, high, default = CURSOR_LIMIT
    limit = query.integer("limit", default, low, high)
    after, before = query.get("starting_after"), query.get("ending_before")
    if after and before:
        raise bad_param("ending_before", "starting_after and ending_before are exclusive.")
    position = {r["id"]: i for i, r in enumerate(records)}
    if after is not None:
        if after not in position:
            raise bad_param("starting_after", f"No such object: {after}.")
        first = position[after] + 1
        data = records[first : first + limit]
        has_more = first + limit < len(records)
    elif before is not None:
        if before not in position:
            raise bad_param("ending_before", f"No such object: {before}.")
        last = position[before]
        data = records[max(0, last - limit) : last]
        has_more = last - limit > 0
    else:
        data = records[:limit]
        has_more = limit < len(records)
    page: dict = {"object": "list", "data": data, "has_more": has_more}
    if query.flag("include_total"):
        page["total_count"] = len(records) if len(records) <= COUNT_GIVES_UP_ABOVE else None
    return page
