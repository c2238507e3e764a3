"""Cursor lists (spec 4.1) and the records they serve (spec 2.4, 2.5, 2.8, 2.11)."""

from collections import Counter

import pytest

from sandbox import listing
from sandbox.advertising import TARGET_TYPES
from tests.sandbox.conftest import ask, is_money, ok

ALLOWED_TYPES = {
    "SP": {"KEYWORD", "PRODUCT", "PRODUCT_CATEGORY"},
    "SB": {"KEYWORD", "PRODUCT", "PRODUCT_CATEGORY", "THEME"},
    "SD": set(TARGET_TYPES),
}


# ---------------------------------------------------------------------- paging
@pytest.mark.parametrize("limit", [0, 101, "x"])
def test_cursor_limit_is_1_to_100(medium, limit):
    status, body = ask(medium, "/v1/targets", limit=limit)
    assert status == 400 and body["error"]["param"] == "limit"


def test_cursor_limit_defaults_to_20_and_accepts_its_bounds(medium):
    assert len(ok(medium, "/v1/targets")["data"]) == 20
    assert len(ok(medium, "/v1/targets", limit=1)["data"]) == 1
    assert len(ok(medium, "/v1/targets", limit=100)["data"]) == 100


def test_starting_after_walks_every_record_once_then_stops(medium):
    ids, cursor = [], None
    while True:
        params = {"limit": 100, "campaign": medium.main_account.campaigns[3]["id"]}
        if cursor:
            params["starting_after"] = cursor
        page = ok(medium, "/v1/targets", **params)
        ids += [t["id"] for t in page["data"]]
        if not page["has_more"]:
            break
        cursor = ids[-1]
    expected = [
        t["id"]
        for t in medium.main_account.targets
        if t["campaign"] == medium.main_account.campaigns[3]["id"]
    ]
    assert ids == expected


def test_ending_before_returns_the_previous_page(medium):
    first = ok(medium, "/v1/product-ads", limit=10)["data"]
    second = ok(medium, "/v1/product-ads", limit=10, starting_after=first[-1]["id"])
    back = ok(medium, "/v1/product-ads", limit=10, ending_before=second["data"][0]["id"])
    assert back["data"] == first and back["has_more"] is False
    assert second["has_more"] is True


def test_unknown_cursors_and_both_cursors_are_400(medium):
    assert ask(medium, "/v1/targets", starting_after="0" * 24)[0] == 400
    first = medium.main_account.targets[0]["id"]
    status, _ = ask(medium, "/v1/targets", starting_after=first, ending_before=first)
    assert status == 400


def test_include_total_is_a_number_null_or_absent(medium, monkeypatch):
    assert "total_count" not in ok(medium, "/v1/search-terms")
    assert "total_count" not in ok(medium, "/v1/search-terms", include_total="false")
    counted = ok(medium, "/v1/search-terms", include_total="true")["total_count"]
    assert counted == len(medium.main_account.search_terms)
    monkeypatch.setattr(listing, "COUNT_GIVES_UP_ABOVE", 100)
    page = ok(medium, "/v1/search-terms", include_total="true")
    assert "total_count" in page and page["total_count"] is None
    assert ask(medium, "/v1/search-terms", include_total="yes")[0] == 400


def test_search_is_case_insensitive_and_bounded(medium):
    term = medium.main_account.search_terms[5]["searchTerm"]
    found = ok(medium, "/v1/search-terms", search=term.upper(), limit=100)["data"]
    assert found and all(term in t["searchTerm"] for t in found)
    assert ask(medium, "/v1/search-terms", search="x" * 201)[0] == 400
    asin = medium.main_account.product_ads[0]["asin"]
    assert ok(medium, "/v1/product-ads", search=asin.lower())["data"]


def test_filters_narrow_lists(medium):
    account = medium.main_account
    group = account.adgroups[7]["id"]
    targets = ok(medium, "/v1/targets", adGroup=group, limit=100)["data"]
    assert targets and {t["adGroup"] for t in targets} == {group}
    asin = account.product_ads[3]["asin"]
    ads = ok(medium, "/v1/product-ads", asin=asin, limit=100)["data"]
    assert {a["asin"] for a in ads} == {asin}
    paused = ok(medium, "/v1/adgroups", state="PAUSED", limit=100)["data"]
    assert paused and {g["state"] for g in paused} == {"PAUSED"}


# ---------------------------------------------------------------------- advertising records
def test_about_two_ad_groups_per_campaign_and_sb_has_no_default_bid(medium):
    account = medium.main_account
    per_campaign = len(account.adgroups) / len(account.campaigns)
    assert 1.6 < per_campaign < 2.4
    for group in account.adgroups:
        if group["adProduct"] == "SB":
            assert group["defaultBid"] is None
        else:
            assert isinstance(group["defaultBid"], int | float) and group["defaultBid"] > 0


def test_targets_follow_the_allowed_types_and_negatives_have_no_bid(medium):
    account = medium.main_account
    assert len(account.targets) == 5_000
    states = Counter(t["state"] for t in account.targets)
    assert {"ENABLED", "PAUSED", "ARCHIVED"} <= set(states)
    for target in account.targets:
        assert target["targetType"] in ALLOWED_TYPES[target["adProduct"]]
        assert (target["bid"] is None) == target["negative"]
        assert target["expression"]
        if target["targetType"] == "KEYWORD":
            assert target["keywordText"] and target["matchType"]
    negatives = [t for t in account.targets if t["negative"]]
    assert 0.05 < len(negatives) / len(account.targets) < 0.15
    groups = {g["id"] for g in account.adgroups}
    assert {t["adGroup"] for t in account.targets} <= groups


def test_product_ads_belong_to_sp_and_sd_and_sell_in_the_campaigns_country(medium):
    account = medium.main_account
    products = {p["id"]: p for p in account.products}
    assert account.product_ads
    for ad in account.product_ads:
        assert ad["adProduct"] in ("SP", "SD")
        product = products[ad["product"]]
        assert product["country"] == ad["country"] and product["asin"] == ad["asin"]
        assert ad["sku"] == product["sku"]


def test_search_terms_come_from_positive_sp_and_sb_targets(medium):
    account = medium.main_account
    targets = {t["id"]: t for t in account.targets}
    for term in account.search_terms:
        target = targets[term["target"]]
        assert not target["negative"] and target["adProduct"] in ("SP", "SB")
        assert term["adGroup"] == target["adGroup"] and term["searchTerm"]
        if target["matchType"] == "EXACT":
            assert term["searchTerm"] == target["keywordText"]


# ---------------------------------------------------------------------- catalog records
def test_seller_listings_carry_blobs_and_sales_ranks_only_when_expanded(medium):
    account = medium.main_account
    assert len(account.seller_products) == sum(p["type"] == "seller" for p in account.products)
    plain = ok(medium, "/v1/marketplace-seller-products", limit=5)["data"]
    for record in plain:
        assert "salesRanks" not in record
        assert isinstance(record["sellerCentralInfo"], dict)
        assert is_money(record["pricing"]["listPrice"]["amount"], "USD")
    expanded = ok(medium, "/v1/marketplace-seller-products", ("expand[]", "salesRanks"), limit=5)
    assert all(isinstance(r["salesRanks"], list) for r in expanded["data"])
    item = ok(medium, f"/v1/marketplace-seller-products/{plain[0]['id']}")
    assert item == plain[0]
    nullable = Counter(r["sku"] is None for r in account.seller_products)
    assert nullable[True] > 0


def test_vendor_listings_expand_feedback_and_use_yen(medium):
    page = ok(medium, "/v1/marketplace-vendor-products", ("expand[]", "customerFeedback"))
    for record in page["data"]:
        assert record["vendorCentralInfo"]["program"] in ("manufacturing", "sourcing")
        assert is_money(record["vendorCentralInfo"]["costPrice"]["amount"], "JPY")
        assert "rating" in record["customerFeedback"] and "salesRanks" not in record


def test_advertising_listings_use_the_spec_enums_and_nullables(medium):
    account = medium.main_account
    records = account.advertising_products
    assert len(records) == len(account.products)
    availability = {r["availability"] for r in records}
    assert None in availability and availability - {None} <= {
        "IN_STOCK",
        "IN_STOCK_SCARCE",
        "OUT_OF_STOCK",
        "PREORDER",
        "LEADTIME",
        "AVAILABLE_DATE",
    }
    assert {r["eligibilityStatus"] for r in records} == {"ELIGIBLE", "INELIGIBLE", None}
    prices = [r["basisPrice"] for r in records]
    assert None in prices
    assert all(isinstance(p["amount"], int | float) for p in prices if p)
    for record in records:
        assert (record["eligibilityStatus"] == "INELIGIBLE") == bool(record["ineligibilityCodes"])


def test_clusters_group_products_with_overlap_and_gaps(medium):
    account = medium.main_account
    clusters = account.clusters
    assert len(clusters) == len(account.products) // 40
    memberships = Counter(p for c in clusters for p in c["products"])
    none = len(account.products) - len(memberships)
    two = sum(count == 2 for count in memberships.values())
    assert 0.14 < none / len(account.products) < 0.26
    assert 0.06 < two / len(account.products) < 0.14
    assert max(memberships.values()) == 2
    for cluster in clusters:
        positive = {k["keyword"] for k in cluster["positiveKeywords"]}
        negative = {k["keyword"] for k in cluster["negativeKeywords"]}
        assert positive.isdisjoint(negative)
        assert len(positive) <= 100 and len(negative) <= 50
        for keyword in cluster["positiveKeywords"] + cluster["negativeKeywords"]:
            assert set(keyword) == {"keyword", "language", "score", "purpose"}
            assert (
                keyword["keyword"] == keyword["keyword"].lower() and len(keyword["keyword"]) <= 80
            )


def test_small_accounts_have_at_least_three_clusters(small):
    assert len(small.main_account.clusters) == 3


def test_clusters_filter_by_product_and_search_by_name(medium):
    cluster = medium.main_account.clusters[2]
    by_product = ok(medium, "/v1/clusters", product=cluster["products"][0])["data"]
    assert cluster["id"] in {c["id"] for c in by_product}
    by_name = ok(medium, "/v1/clusters", search=cluster["name"].upper())["data"]
    assert [c["id"] for c in by_name] == [cluster["id"]]
