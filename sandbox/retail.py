"""Seller and vendor product metrics (spec 2.9 and 2.10) as `MeasureSet`s.

They are generated, aggregated and paged like the advertising metrics (see `metrics.py`); what
differs is their measures and when those are null:

- seller traffic (sessions, page views, buy box, conversion rate, rank) is not reported on about
  15% of product-days; a product-day that sold nothing still has a row (units 0, sales "0.00");
- the seller economics block is null for every day less than 3 days before the reference date
  (it arrives 48-72 hours late) and on about 3% of older product-days; storage fees are booked
  on the 7th of each month only; fees are positive amounts (costs);
- `conversion_rate` = orders ÷ sessions of the row (spec 2.9), null when sessions are null or
  0: null on a product-day without reported traffic; over a period or a group, all the row's
  orders (those of days without reported traffic too) over the sessions that were reported;
- `days_of_coverage` = last stock ÷ (units ÷ days of the window), with granularity `total` only;
- vendor manufacturing reports ordered, shipped and net received; sourcing reports no ordered
  measures (null); glance views and rank, and the two sellable-unit snapshots, are each missing
  on about 10-12% of product-days.

Stock and the vendor's sellable units are snapshots: a period reports the latest value, a group
the sum of its members' latest values, shown only when `country` is a grouping dimension.
"""

import numpy as np

from sandbox.metrics import (
    NULL,
    MeasureSet,
    Population,
    RowContext,
    Values,
    amount_or_null,
    draws,
    ratio,
    share,
)
from sandbox.reference import from_ordinal, money
from sandbox.spec import ECONOMICS_AMOUNTS, ECONOMICS_LAG_DAYS  # D's economics from D + 3

STORAGE_DAY = 7  # day of the month storage fees are booked on
SHARE_NO_SALE = 0.3
SHARE_NO_TRAFFIC = 0.15
SHARE_NO_ECONOMICS = 0.03


def seller_day(
    seed: int, pop: Population, entities: np.ndarray, day: int, reference: int
) -> dict[str, np.ndarray]:
    """Seller measures of active products on one day."""
    (
        u_sale,
        u_units,
        u_orders,
        u_deal,
        u_traffic,
        u_sessions,
        u_views,
        u_box,
        u_rank,
        u_economics,
        u_refund,
        u_fees,
        u_stock,
        u_b2b,
    ) = draws(seed, pop, entities, day, 14)
    exponent = pop.exponent[entities]
    list_price = pop.extra["price"][entities]
    fba = pop.extra["fba"][entities]
    units = np.where(
        u_sale < SHARE_NO_SALE, 0, 1 + (pop.scale[entities] * 2 * u_units).astype(np.int64)
    )
    orders = units - (np.maximum(units - 1, 0) * 0.3 * u_orders).astype(np.int64)
    price = np.where(u_deal < 0.15, list_price * 85 // 100, list_price)
    sales = units * price
    sessions = units * (3 + (6 * u_sessions).astype(np.int64)) + (25 * u_views).astype(np.int64)
    page_views = sessions + (sessions * 0.6 * u_views).astype(np.int64)
    b2b_units = (units * 0.25 * u_b2b).astype(np.int64)
    b2b_sessions = (sessions * 0.1 * u_b2b).astype(np.int64)
    b2b_page_views = b2b_sessions + b2b_sessions // 3
    stock = (pop.extra["stock"][entities] * (0.5 + u_stock)).astype(np.int64)
    refunded_units = np.where(u_refund < 0.04, 1 + (u_refund < 0.01), 0)
    refunded_sales = refunded_units * list_price
    referral = sales * 15 // 100
    per_unit = np.where(exponent == 0, 350 + 150 * u_fees, 280 + 170 * u_fees).astype(np.int64)
    fulfilment = np.where(fba, units * per_unit, 0)
    storage_day = from_ordinal(day).day == STORAGE_DAY
    storage = np.where(fba & storage_day, stock * np.where(exponent == 0, 4, 3), 0)
    other = np.where(u_fees < 0.1, (u_fees * 2000).astype(np.int64), 0)
    fees = referral + fulfilment + storage + other
    # From the settlement report, not the sales report: it does not reconcile exactly.
    net_sales = ((sales - refunded_sales) * (0.99 + 0.02 * u_economics)).astype(np.int64)
    traffic = u_traffic >= SHARE_NO_TRAFFIC
    economics = (day <= reference - ECONOMICS_LAG_DAYS) & (u_economics >= SHARE_NO_ECONOMICS)

    def when_traffic(values: np.ndarray) -> np.ndarray:
        return np.where(traffic, values, NULL)

    def when_economics(values: np.ndarray) -> np.ndarray:
        return np.where(economics, values, NULL)

    return {
        "sales": sales,
        "units": units,
        "orders": orders,
        "sessions": when_traffic(sessions),
        "page_views": when_traffic(page_views),
        "buy_box_weighted": when_traffic((6000 + (4000 * u_box).astype(np.int64)) * page_views),
        "rank": when_traffic((50 * 4000**u_rank).astype(np.int64)),
        "referral_fee": when_economics(referral),
        "fba_fulfilment_fee": when_economics(fulfilment),
        "storage_fee": when_economics(storage),
        "other_fees": when_economics(other),
        "amazon_fees": when_economics(fees),
        "net_sales": when_economics(net_sales),
        "margin_before_ads": when_economics(net_sales - fees),
        "refunded_sales": when_economics(refunded_sales),
        "net_units": when_economics(units - refunded_units),
        "refunded_units": when_economics(refunded_units),
        "stock": stock,
        "price": price,
        "b2b_sales": b2b_units * price * 95 // 100,
        "b2b_units": b2b_units,
        "b2b_order_items": b2b_units - b2b_units // 4,
        "b2b_sessions": when_traffic(b2b_sessions),
        "b2b_page_views": when_traffic(b2b_page_views),
        "b2b_buy_box_weighted": when_traffic(
            (5000 + (5000 * u_b2b).astype(np.int64)) * b2b_page_views
        ),
    }


def coverage(stock: int | None, units: int | None, window_days: int | None) -> float | None:
    """Days the last stock lasts at the window's average daily units (null if none sold)."""
    if window_days is None or stock is None or not units or units < 0:
        return None
    return round(stock * window_days / units, 1)


def seller_measures(values: Values, ctx: RowContext) -> dict:
    exponent = ctx.exponent
    stock = values["stock"] if ctx.stock_visible else None
    return {
        "sales": money(values["sales"], exponent),
        "units": values["units"],
        "orders": values["orders"],
        "sessions": values["sessions"],
        "page_views": values["page_views"],
        "buy_box_percentage": share(values["buy_box_weighted"], values["page_views"]),
        "conversion_rate": ratio(values["orders"], values["sessions"]),  # spec 2.9
        "rank": None if ctx.grouped else values["rank"],
        **{name: amount_or_null(values[name], exponent) for name in ECONOMICS_AMOUNTS},
        "net_units": values["net_units"],
        "refunded_units": values["refunded_units"],
        "stock": stock,
        "price": None if ctx.grouped else amount_or_null(values["price"], exponent),
        "days_of_coverage": coverage(stock, values["units"], ctx.window_days),
        "b2b_sales": money(values["b2b_sales"], exponent),
        "b2b_units": values["b2b_units"],
        "b2b_order_items": values["b2b_order_items"],
        "b2b_sessions": values["b2b_sessions"],
        "b2b_page_views": values["b2b_page_views"],
        "b2b_buy_box_percentage": share(values["b2b_buy_box_weighted"], values["b2b_page_views"]),
    }


SELLER = MeasureSet(
    generate=seller_day,
    sums=(
        "sales",
        "units",
        "orders",
        "sessions",
        "page_views",
        "buy_box_weighted",
        *ECONOMICS_AMOUNTS,
        "net_units",
        "refunded_units",
        "b2b_sales",
        "b2b_units",
        "b2b_order_items",
        "b2b_sessions",
        "b2b_page_views",
        "b2b_buy_box_weighted",
    ),
    latest=("rank", "stock", "price"),
    render=seller_measures,
)


def vendor_day(
    seed: int, pop: Population, entities: np.ndarray, day: int, reference: int
) -> dict[str, np.ndarray]:
    """Vendor measures of active products on one day."""
    (
        u_order,
        u_ordered,
        u_ship,
        u_shipped,
        u_receive,
        u_received,
        u_views,
        u_traffic,
        u_rank,
        u_inventory,
        u_open,
    ) = draws(seed, pop, entities, day, 11)
    sourcing = pop.extra["sourcing"][entities]
    price = pop.extra["price"][entities]
    cost = price * 6 // 10
    scale = pop.scale[entities]
    ordered = np.where(u_order < 0.2, 0, 1 + (scale * 2 * u_ordered).astype(np.int64))
    shipped = np.where(u_ship < 0.25, 0, (scale * 2 * u_shipped).astype(np.int64))
    received = np.where(u_receive < 0.12, (scale * 8 * u_received).astype(np.int64), 0)
    traffic = u_traffic >= 0.12
    inventory = u_inventory >= 0.1
    on_hand = (pop.extra["stock"][entities] * (0.5 + u_inventory)).astype(np.int64)
    return {
        "ordered_revenue": np.where(sourcing, NULL, ordered * price),
        "ordered_units": np.where(sourcing, NULL, ordered),
        "shipped_revenue": shipped * price,
        "shipped_cogs": shipped * cost,
        "shipped_units": shipped,
        "net_received_revenue": received * cost,
        "net_received_units": received,
        "glance_views": np.where(
            traffic, (ordered + shipped) * 12 + (40 * u_views).astype(np.int64), NULL
        ),
        "rank": np.where(traffic, (50 * 4000**u_rank).astype(np.int64), NULL),
        "on_hand_sellable_units": np.where(inventory, on_hand, NULL),
        "open_order_sellable_units": np.where(inventory, (200 * u_open).astype(np.int64), NULL),
    }


def vendor_measures(values: Values, ctx: RowContext) -> dict:
    exponent = ctx.exponent

    def snapshot(name: str) -> int | None:
        return values[name] if ctx.stock_visible else None

    return {
        "ordered_revenue": amount_or_null(values["ordered_revenue"], exponent),
        "ordered_units": values["ordered_units"],
        "shipped_revenue": money(values["shipped_revenue"], exponent),
        "shipped_cogs": money(values["shipped_cogs"], exponent),
        "shipped_units": values["shipped_units"],
        "net_received_revenue": money(values["net_received_revenue"], exponent),
        "net_received_units": values["net_received_units"],
        "glance_views": values["glance_views"],
        "rank": None if ctx.grouped else values["rank"],
        "on_hand_sellable_units": snapshot("on_hand_sellable_units"),
        "open_order_sellable_units": snapshot("open_order_sellable_units"),
    }


VENDOR = MeasureSet(
    generate=vendor_day,
    sums=(
        "ordered_revenue",
        "ordered_units",
        "shipped_revenue",
        "shipped_cogs",
        "shipped_units",
        "net_received_revenue",
        "net_received_units",
        "glance_views",
    ),
    latest=("rank", "on_hand_sellable_units", "open_order_sellable_units"),
    render=vendor_measures,
)
