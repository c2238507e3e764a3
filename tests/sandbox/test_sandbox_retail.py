"""Seller (spec 2.9) and vendor (spec 2.10) product metrics: fields, null rules, economics lag."""

from datetime import date, timedelta
from decimal import Decimal

import pytest

from tests.sandbox.conftest import TODAY, every_row, is_money
from warehouse.spec import ECONOMICS_AMOUNTS, ECONOMICS_FIELDS, ECONOMICS_UNITS

SELLER_FIELDS = {
    "object",
    "product",
    "asin",
    "sku",
    "connection",
    "country",
    "cluster",
    "cluster_name",
    "currency",
    "date",
    "sales",
    "units",
    "orders",
    "sessions",
    "page_views",
    "buy_box_percentage",
    "conversion_rate",
    "rank",
    *ECONOMICS_FIELDS,
    "stock",
    "fulfillment_channel",
    "price",
    "days_of_coverage",
    "b2b_sales",
    "b2b_units",
    "b2b_order_items",
    "b2b_sessions",
    "b2b_page_views",
    "b2b_buy_box_percentage",
}
TRAFFIC = ("sessions", "page_views", "buy_box_percentage", "conversion_rate", "rank")
FEES = ECONOMICS_AMOUNTS[:4]  # referral, fulfilment, storage, other: amazon_fees sums them
VENDOR_FIELDS = {
    "object",
    "product",
    "asin",
    "program",
    "connection",
    "country",
    "cluster",
    "cluster_name",
    "currency",
    "date",
    "ordered_revenue",
    "ordered_units",
    "shipped_revenue",
    "shipped_cogs",
    "shipped_units",
    "net_received_revenue",
    "net_received_units",
    "glance_views",
    "rank",
    "on_hand_sellable_units",
    "open_order_sellable_units",
}
LAST_MONTH = {"start_date": str(TODAY - timedelta(30)), "end_date": str(TODAY - timedelta(1))}


@pytest.fixture(scope="module")
def seller_days(medium) -> list[dict]:
    return every_row(medium, "/v1/seller-product-metrics", granularity="daily", **LAST_MONTH)


@pytest.fixture(scope="module")
def vendor_days(medium) -> list[dict]:
    return every_row(medium, "/v1/vendor-product-metrics", granularity="daily", **LAST_MONTH)


def share(rows: list[dict], test) -> float:
    return sum(1 for r in rows if test(r)) / len(rows)


def test_seller_rows_have_every_field_and_no_ad_product(seller_days):
    assert seller_days
    for row in seller_days:
        assert set(row) == SELLER_FIELDS
        assert row["object"] == "seller_product_metrics"
        assert row["fulfillment_channel"] in ("FBA", "FBM")
        for name in ("sales", "price", "b2b_sales"):
            assert is_money(row[name], row["currency"])


def test_traffic_is_missing_on_about_15_percent_of_rows_and_all_together(seller_days):
    missing = share(seller_days, lambda r: r["sessions"] is None)
    assert 0.11 < missing < 0.19
    for row in seller_days:
        reported = [row[name] is not None for name in ("sessions", "page_views", "rank")]
        assert len(set(reported)) == 1
        assert (row["buy_box_percentage"] is None) == (not row["page_views"])
        if row["sessions"]:
            assert row["conversion_rate"] == pytest.approx(row["orders"] / row["sessions"])
        else:
            assert row["conversion_rate"] is None


def test_a_product_day_that_sold_nothing_still_has_a_row(seller_days):
    idle = [r for r in seller_days if r["units"] == 0]
    assert idle and all(Decimal(r["sales"]) == 0 and r["sales"] == "0.00" for r in idle)


def test_economics_are_null_within_72_hours_of_the_reference_date(seller_days):
    for row in seller_days:
        age = (TODAY - date.fromisoformat(row["date"])).days
        if age < 3:
            assert all(row[name] is None for name in ECONOMICS_AMOUNTS + ECONOMICS_UNITS)
    three_days_old = [r for r in seller_days if r["date"] == str(TODAY - timedelta(3))]
    assert share(three_days_old, lambda r: r["net_sales"] is not None) > 0.9


def test_economics_are_missing_on_a_few_older_days_and_add_up_otherwise(seller_days):
    older = [r for r in seller_days if (TODAY - date.fromisoformat(r["date"])).days >= 3]
    assert 0.01 < share(older, lambda r: r["net_sales"] is None) < 0.06
    for row in older:
        present = [row[name] is not None for name in ECONOMICS_AMOUNTS + ECONOMICS_UNITS]
        assert len(set(present)) == 1
        if row["net_sales"] is None:
            continue
        fees = sum(Decimal(row[name]) for name in FEES)
        assert Decimal(row["amazon_fees"]) == fees
        assert Decimal(row["margin_before_ads"]) == Decimal(row["net_sales"]) - fees
        assert row["net_units"] == row["units"] - row["refunded_units"]
        for name in ECONOMICS_AMOUNTS:
            assert is_money(row[name], row["currency"])


def test_storage_fees_are_booked_on_one_day_of_the_month(seller_days):
    charged = {r["date"] for r in seller_days if r["storage_fee"] not in (None, "0.00")}
    assert charged and {d[-2:] for d in charged} == {"07"}


def test_days_of_coverage_needs_total_granularity_and_a_sale(medium, seller_days):
    assert all(row["days_of_coverage"] is None for row in seller_days)
    one_day = {"start_date": "2026-11-01", "end_date": "2026-11-01"}
    for window, days in ((LAST_MONTH, 30), (one_day, 1)):
        totals = every_row(medium, "/v1/seller-product-metrics", **window)
        assert any(r["units"] == 0 for r in totals) or days == 30
        for row in totals:
            if row["units"] == 0:
                assert row["days_of_coverage"] is None
            else:
                expected = row["stock"] * days / row["units"]
                assert row["days_of_coverage"] == pytest.approx(expected, abs=0.051)


def test_vendor_rows_have_their_fields_and_no_sales_or_sessions(vendor_days):
    for row in vendor_days:
        assert set(row) == VENDOR_FIELDS
        assert row["currency"] == "JPY"
        for name in ("shipped_revenue", "shipped_cogs", "net_received_revenue"):
            assert is_money(row[name], "JPY") and "." not in row[name]


def test_sourcing_reports_no_ordered_measures(vendor_days):
    programs = {r["program"] for r in vendor_days}
    assert programs == {"manufacturing", "sourcing"}
    for row in vendor_days:
        ordered = (row["ordered_revenue"], row["ordered_units"])
        if row["program"] == "sourcing":
            assert ordered == (None, None)
        else:
            assert is_money(row["ordered_revenue"], "JPY") and isinstance(row["ordered_units"], int)


def test_vendor_traffic_and_inventory_are_sometimes_unreported(vendor_days):
    assert 0.07 < share(vendor_days, lambda r: r["glance_views"] is None) < 0.17
    assert all((r["glance_views"] is None) == (r["rank"] is None) for r in vendor_days)
    missing = share(vendor_days, lambda r: r["on_hand_sellable_units"] is None)
    assert 0.05 < missing < 0.15
    assert all(
        (r["on_hand_sellable_units"] is None) == (r["open_order_sellable_units"] is None)
        for r in vendor_days
    )
