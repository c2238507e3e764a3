"""The key, its accounts and the reference data (spec 4.3): `/v1/me`, `/v1/accounts`,
connections, countries and product brands.

Countries are the same for every account (a variant may open more marketplaces, `variants.py`);
`/v1/me` and `/v1/accounts` answer without choosing an account.
"""

from sandbox.errors import not_found
from sandbox.expand import country_record
from sandbox.hashing import make_id
from sandbox.listing import cursor_page
from sandbox.reference import COUNTRY_BY_ID
from sandbox.routing import CATALOG, CONNECTIONS, Context, listing, route


def me(ctx: Context) -> dict:
    """The credential's description (spec 2.8): its kind, scopes and the accounts it reaches."""
    key, accounts = ctx.key, ctx.host.accounts
    return {
        "object": key.object,
        "id": make_id(ctx.host.seed, "key", key.kind, *key.accounts),
        "subject_type": key.kind,
        "scopes": sorted(key.scopes),
        "account_required": key.kind == "agency",
        "accounts": [{"id": accounts[i].id, "name": accounts[i].name} for i in key.accounts],
    }


def accounts(ctx: Context) -> dict:
    key, reached = ctx.key, ctx.host.accounts
    records = [
        {
            "object": "account",
            "id": reached[i].id,
            "name": reached[i].name,
            "connections": [c["id"] for c in reached[i].connections],
        }
        for i in key.accounts
    ]
    return cursor_page(records, ctx.query)


def countries(ctx: Context) -> dict:
    records = [country_record(c) for c in ctx.host.countries]
    code = ctx.query.get("code")
    if code is not None:
        records = [r for r in records if r["code"] == code]
    return cursor_page(records, ctx.query)


def country(ctx: Context) -> dict:
    found = COUNTRY_BY_ID.get(ctx.params["id"])
    if found not in ctx.host.countries:
        raise not_found("country")
    return country_record(found)


ROUTES = (
    route(r"/v1/me", me, None, scoped=False),
    route(r"/v1/accounts", accounts, CONNECTIONS, scoped=False),
    *listing(r"/v1/connections", "connections", CONNECTIONS),
    route(r"/v1/countries", countries, CATALOG),
    route(r"/v1/countries/(?P<id>[^/]+)", country, CATALOG),
    *listing(r"/v1/product-brands", "brands", CATALOG),
)
