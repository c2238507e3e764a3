"""What every resource family of the service shares: the key a request carries, the context a
handler answers from, routes, and the generic cursor list and item handlers.

A family is a module of handlers and its `ROUTES`: `reference_api.py` (spec 4.3),
`catalog_api.py` (4.4 and clusters), `advertising_api.py` (4.5), `history_api.py` (4.7),
`changes_api.py` (4.8), `metrics_api.py` (the metrics lists) and `automation_api.py` (4.9).
`service.py` gathers them, authenticates, picks the account and dispatches. A handler reads the
service only through its context's `Host`, so no family imports the service.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Protocol

from sandbox.assembly import Account
from sandbox.errors import not_found
from sandbox.expand import expand_item, expand_page
from sandbox.listing import cursor_page, filter_records
from sandbox.params import Query
from sandbox.reference import Country
from sandbox.variants import Variant

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
CATALOG, CAMPAIGNS, CONNECTIONS = "catalog:read", "campaigns:read", "connections:read"


@dataclass(frozen=True)
class KeySpec:
    kind: str  # "business" or "agency"
    scopes: frozenset[str]
    accounts: tuple[int, ...]
    object: str = "api_key"


class Host(Protocol):
    """What a handler reads of the service beside the request's account."""

    seed: int
    reference: date
    variant: Variant
    countries: tuple[Country, ...]
    accounts: list[Account]


@dataclass
class Context:
    """What a handler needs to answer one request."""

    host: Host
    key: KeySpec
    account: Account | None
    query: Query
    params: dict[str, str] = field(default_factory=dict)


Handler = Callable[[Context], dict]
Detail = Callable[[Account, int, list[str]], dict]  # a listing's record rendered for one row


@dataclass(frozen=True)
class Route:
    pattern: re.Pattern[str]
    handler: Handler
    scope: str | None
    account_scoped: bool = True


def route(path: str, handler: Handler, scope: str | None, scoped: bool = True) -> Route:
    return Route(re.compile(path), handler, scope, scoped)


def listing(
    path: str,
    name: str,
    scope: str,
    search: tuple[str, ...] = ("name", "title"),
    detail: Detail | None = None,
) -> list[Route]:
    """A cursor list of one of the account's lists (`assembly.LISTS`) and its item endpoint."""
    return [
        route(path, list_handler(name, search, detail), scope),
        route(path + r"/(?P<id>[^/]+)", item_handler(name, detail), scope),
    ]


def list_handler(
    name: str, search: tuple[str, ...] = ("name", "title"), detail: Detail | None = None
) -> Handler:
    """A page of the account's list `name`: filtered, searched over `search`, each row rendered
    by `detail` when given, related fields expanded (spec 2.1, 4.1)."""

    def handler(ctx: Context) -> dict:
        records = ctx.account.records(name)
        page = cursor_page(filter_records(records, ctx.query, search), ctx.query)
        if detail is not None:
            expand = ctx.query.all("expand")
            page["data"] = [
                detail(ctx.account, ctx.account.locate(name, r["id"]), expand) for r in page["data"]
            ]
        return expand_page(ctx.account, ctx.query, page)  # spec 2.1, 4.1

    return handler


def item_handler(name: str, detail: Detail | None = None) -> Handler:
    """The record of the account's list `name` the path names (404 when none)."""

    def handler(ctx: Context) -> dict:
        position = ctx.account.locate(name, ctx.params["id"])
        if position is None:
            raise not_found(name.rstrip("s").replace("_", " "))
        if detail is not None:
            record = detail(ctx.account, position, ctx.query.all("expand"))
        else:
            record = ctx.account.records(name)[position]
        return expand_item(ctx.account, ctx.query, record)  # spec 2.1, 4.1

    return handler
