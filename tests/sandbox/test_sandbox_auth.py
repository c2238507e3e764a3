"""Authentication, scopes, agency accounts and 404s (spec sections 5 and 7)."""

import pytest

from sandbox import service as service_module
from sandbox.service import READ_SCOPES, SandboxService
from tests.sandbox.conftest import TODAY, ask, fetch, ok

WINDOW = {"start_date": "2026-11-01", "end_date": "2026-11-07"}
# (path, scope) of every list the warehouse reads; metrics carry their required window.
ROUTES = [
    ("/v1/connections", "connections:read"),
    ("/v1/countries", "catalog:read"),
    ("/v1/product-brands", "catalog:read"),
    ("/v1/products", "catalog:read"),
    ("/v1/marketplace-seller-products", "catalog:read"),
    ("/v1/marketplace-vendor-products", "catalog:read"),
    ("/v1/marketplace-advertising-products", "catalog:read"),
    ("/v1/clusters", "catalog:read"),
    ("/v1/seller-product-metrics", "catalog:read"),
    ("/v1/vendor-product-metrics", "catalog:read"),
    ("/v1/portfolios", "campaigns:read"),
    ("/v1/campaigns", "campaigns:read"),
    ("/v1/adgroups", "campaigns:read"),
    ("/v1/targets", "campaigns:read"),
    ("/v1/product-ads", "campaigns:read"),
    ("/v1/search-terms", "campaigns:read"),
    ("/v1/advertising-changes", "campaigns:read"),
    ("/v1/campaign-metrics", "campaigns:read"),
    ("/v1/adgroup-metrics", "campaigns:read"),
    ("/v1/target-metrics", "campaigns:read"),
    ("/v1/product-ad-metrics", "campaigns:read"),
    ("/v1/search-term-metrics", "campaigns:read"),
]
ITEMS = [
    ("/v1/adgroups", "adgroups"),
    ("/v1/targets", "targets"),
    ("/v1/product-ads", "product_ads"),
    ("/v1/search-terms", "search_terms"),
    ("/v1/clusters", "clusters"),
    ("/v1/marketplace-seller-products", "seller_products"),
    ("/v1/marketplace-vendor-products", "vendor_products"),
    ("/v1/marketplace-advertising-products", "advertising_products"),
    ("/v1/campaigns", "campaigns"),
]


def params_of(path: str) -> dict:
    return WINDOW if path.endswith("-metrics") else {}


@pytest.mark.parametrize(("path", "scope"), ROUTES)
def test_every_list_answers_json_through_the_transport(small, path, scope):
    params = {**params_of(path), "granularity": "daily", "include_total": "true", "limit": "50"}
    response = fetch(small, path, params)
    assert response.status_code == 200
    body = response.json()
    assert body["object"] == "list" and body["data"] and body["total_count"] >= len(body["data"])
    if path.endswith("-metrics"):
        grouped = fetch(small, path, {**params_of(path), "group_by[]": "country"})
        assert grouped.status_code == 200 and grouped.json()["data"]


@pytest.mark.parametrize(("path", "attribute"), ITEMS)
def test_every_item_answers_json_through_the_transport(small, path, attribute):
    record = getattr(small.main_account, attribute)[0]
    params = {"expand[]": ["salesRanks", "customerFeedback", "optimizationConfig"]}
    response = fetch(small, f"{path}/{record['id']}", params)
    assert response.status_code == 200 and response.json()["id"] == record["id"]


def test_histories_answer_json_through_the_transport(small):
    for campaign in small.main_account.campaigns:
        response = fetch(small, f"/v1/campaigns/{campaign['id']}/optimization-history")
        assert response.status_code == 200 and "summary" in response.json()


@pytest.mark.parametrize("header", [None, "Basic abc", "Bearer wrong"])
def test_401_has_the_error_body(small, header):
    headers = {} if header is None else {"authorization": header}
    status, body, _ = small.handle("GET", "/v1/campaigns", [], headers)
    assert status == 401
    error = body["error"]
    assert set(error) == {"type", "code", "message", "param"}
    assert error["type"] == "authentication_error" and error["message"]


def test_health_needs_no_key(small):
    assert ask(small, "/health", key=None) == (200, None)


@pytest.mark.parametrize(("path", "scope"), ROUTES)
def test_403_names_the_missing_scope(small, path, scope):
    small.add_key("narrow", scopes=READ_SCOPES - {scope})
    status, body = ask(small, path, key="narrow", **params_of(path))
    assert status == 403
    assert body["error"]["code"] == "missing_scope"
    assert scope in body["error"]["message"] and body["error"]["param"] == scope


def test_me_needs_no_scope(small):
    small.add_key("bare", scopes=frozenset())
    status, body = ask(small, "/v1/me", key="bare")
    assert status == 200 and body["scopes"] == [] and body["subject_type"] == "business"


@pytest.fixture
def agency(small):
    small.add_key("agency", kind="agency", accounts=(0, 1))
    return small


@pytest.mark.parametrize("path", ["/v1/me", "/v1/accounts"])
def test_agency_key_needs_no_account_on_me_and_accounts(agency, path):
    status, body = ask(agency, path, key="agency")
    assert status == 200
    accounts = body["accounts"] if path == "/v1/me" else body["data"]
    assert [a["id"] for a in accounts] == [agency.accounts[0].id, agency.accounts[1].id]


@pytest.mark.parametrize(("path", "scope"), ROUTES)
def test_agency_key_must_name_an_account(agency, path, scope):
    status, body = ask(agency, path, key="agency", **params_of(path))
    assert status == 403 and body["error"]["code"] == "account_required"


def test_agency_key_reaches_each_invited_account(agency):
    for account in agency.accounts[:2]:
        body = ok(agency, "/v1/campaigns", key="agency", account=account.id, limit=100)
        assert [c["id"] for c in body["data"]] == [c["id"] for c in account.campaigns]


def test_an_uninvited_account_is_an_explicit_403_not_an_empty_list(agency):
    uninvited = agency.accounts[2].id
    status, body = ask(agency, "/v1/campaigns", key="agency", account=uninvited)
    assert status == 403
    assert (
        body["error"]["code"] == "account_not_reachable" and uninvited in body["error"]["message"]
    )
    status, body = ask(agency, "/v1/campaigns", key="agency", account="f" * 24)
    assert status == 403


def test_a_business_key_refuses_another_account_header(small):
    status, body = ask(small, "/v1/campaigns", account=small.accounts[1].id)
    assert status == 403 and body["error"]["code"] == "account_not_reachable"


@pytest.mark.parametrize(("path", "attribute"), ITEMS)
def test_items_answer_the_record_and_404_for_missing_or_foreign_ids(small, path, attribute):
    mine = getattr(small.accounts[0], attribute)[0]
    assert ok(small, f"{path}/{mine['id']}")["id"] == mine["id"]
    foreign = getattr(small.accounts[1], attribute)[0]["id"]
    for missing in (foreign, "0" * 24, "not-an-id"):
        status, body = ask(small, f"{path}/{missing}")
        assert status == 404 and body["error"]["code"] == "resource_missing"


def test_the_history_of_a_foreign_or_missing_campaign_is_404(small):
    foreign = small.accounts[1].campaigns[0]["id"]
    for campaign in (foreign, "0" * 24):
        status, _ = ask(small, f"/v1/campaigns/{campaign}/optimization-history")
        assert status == 404


def test_unknown_paths_are_404(small):
    assert ask(small, "/v1/nothing-here")[0] == 404


def test_each_account_has_its_own_entities(small):
    first, second = small.accounts[0], small.accounts[1]
    assert {t["id"] for t in first.targets}.isdisjoint({t["id"] for t in second.targets})
    assert first.reference == second.reference == TODAY


def test_clients_make_the_key_an_agency_reaching_each_of_n_accounts():
    agency = SandboxService("small", TODAY, clients=5)
    status, me = ask(agency, "/v1/me")
    assert status == 200 and me["account_required"] is True
    listed = ok(agency, "/v1/accounts", limit=100)["data"]
    assert [a["name"] for a in listed] == [
        "Acme Retail",
        "Borealis Goods",
        "Cobalt Outfitters",
        "Client 004",
        "Client 005",
    ]
    assert len({a["id"] for a in listed}) == 5
    first, last = (ok(agency, "/v1/campaigns", account=a["id"], limit=100) for a in listed[::4])
    assert first["data"] and last["data"]
    assert {c["id"] for c in first["data"]}.isdisjoint(c["id"] for c in last["data"])


def test_large_clients_make_an_agency_of_a_few_large_accounts_among_small_ones():
    agency = SandboxService("small", TODAY, clients=4, large_clients=1)
    listed = ok(agency, "/v1/accounts", limit=100)["data"]
    campaigns = [ok(agency, "/v1/campaigns", account=a["id"], limit=100) for a in listed]
    assert campaigns[0]["has_more"] and len(campaigns[0]["data"]) == 100  # large: 2,000
    assert all(not page["has_more"] and len(page["data"]) == 16 for page in campaigns[1:])
    with pytest.raises(ValueError, match="large_clients"):
        SandboxService("small", TODAY, clients=2, large_clients=3)


def test_every_path_has_one_route_so_the_order_of_the_families_is_free():
    """`service.ROUTES` gathers the resource families' routes; no path matches two of them, so
    the order they are gathered in changes no answer."""
    routes = service_module.ROUTES
    patterns = {route.pattern.pattern for route in routes}
    assert len(patterns) == len(routes)
    for pattern in patterns:
        path = pattern.replace("(?P<id>[^/]+)", "0123456789abcdef01234567")
        matching = [r.pattern.pattern for r in routes if r.pattern.fullmatch(path)]
        assert matching == [pattern]
