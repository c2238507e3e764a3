"""The sandbox's service: credentials and scopes, the account a request is for, dispatch to the
resource families, faults' configuration, and the request log.

Each family of endpoints is a module of handlers (`routing.py` lists them): the records and rows
each one serves, and what it fills where the spec says "not shown", are told there. Variant 0,
the default, fills every "not shown" one way; variants 1 and up (`SandboxService(...,
variant=N)`, `variants.py`) fill them otherwise.

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
"""

from dataclasses import dataclass, replace
from datetime import date

from sandbox import (
    advertising_api,
    automation_api,
    catalog_api,
    changes_api,
    history_api,
    metrics_api,
    reference_api,
)
from sandbox.assembly import PRESETS, Account, assemble
from sandbox.errors import ApiError
from sandbox.faults import FaultPlan
from sandbox.params import Query
from sandbox.reference import COUNTRIES
from sandbox.restating import Restating, from_environment
from sandbox.routing import READ_SCOPES, Context, KeySpec, Route
from sandbox.variants import Variant

# Every family's routes; their paths never overlap, so their order does not matter.
ROUTES: tuple[Route, ...] = (
    *reference_api.ROUTES,
    *catalog_api.ROUTES,
    *advertising_api.ROUTES,
    *history_api.ROUTES,
    *changes_api.ROUTES,
    *automation_api.ROUTES,
    *metrics_api.ROUTES,
)
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
class RequestRecord:
    method: str
    path: str
    query: tuple[tuple[str, str], ...]
    account: str | None
    status: int


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
            assemble(
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
        for route in ROUTES:
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
            ctx = Context(self, key, account, Query(query), match.groupdict())
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
