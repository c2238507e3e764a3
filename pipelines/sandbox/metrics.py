"""Metrics generated on demand, entity-day by entity-day, from hashes.

A metrics row exists only for an entity-day with activity: whether an entity is active on a day,
and every measure it reports, is a pure function of (seed, resource, entity, day). A page of any
window is therefore computed from the days it covers, never from a stored history, which keeps
the `large` preset's memory flat whatever the window.

Measures are generated as integers (minor currency units for money) and only turned into the
spec's decimal strings and fractions when a row is rendered, so aggregation is exact.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date

import numpy as np

from pipelines.sandbox.hashing import uniform
from pipelines.sandbox.periods import periods
from pipelines.sandbox.world import money, ordinal

NULL = -1  # integer arrays mark "not reported" with -1


@dataclass
class Population:
    """The entities one metrics resource reports on, as columns."""

    resource: str
    salt: int
    start: np.ndarray  # first ordinal day with possible activity
    p_active: np.ndarray  # share of days with activity
    scale: np.ndarray  # size of the entity (impressions per active day, roughly)
    currency: np.ndarray  # object array of ISO codes
    exponent: np.ndarray  # currency digits
    ad_product: np.ndarray  # object array of SP/SB/SD
    connection: np.ndarray
    country: np.ndarray
    entity_fields: Callable[[int], dict]

    @property
    def size(self) -> int:
        return len(self.start)


ADDITIVE = (
    "impressions",
    "clicks",
    "cost",
    "orders",
    "units",
    "sales",
    "new_to_brand_sales",
    "new_to_brand_purchases",
    "detail_page_views",
    "viewable_impressions",
)


def advertising_day(seed: int, pop: Population, day: int, last_day: int) -> dict[str, np.ndarray]:
    """Measures of every entity on one day; `active` says which entities have a row."""
    idx = np.arange(pop.size)
    u = [uniform(seed, pop.salt * 32 + k, idx, day) for k in range(8)]
    active = (u[0] < pop.p_active) & (pop.start <= day) & (day <= last_day)
    impressions = np.where(u[1] < 0.03, 0, (pop.scale * (0.3 + 1.4 * u[1])).astype(np.int64))
    clicks = np.floor(impressions * 0.02 * (2 * u[2]) ** 2).astype(np.int64)
    cpc_minor = np.where(pop.exponent == 0, 20 + 180 * u[3], 25 + 200 * u[3]).astype(np.int64)
    cost = clicks * cpc_minor
    orders = np.floor(clicks * 0.12 * (2 * u[4]) ** 2).astype(np.int64)
    units = orders + np.where(u[5] < 0.2, orders // 2, 0)
    price = np.where(pop.exponent == 0, 1500 + 6000 * u[6], 1200 + 5000 * u[6]).astype(np.int64)
    sales = units * price
    is_sp = pop.ad_product == "SP"
    ntb_sales = np.where(is_sp, NULL, (sales * (0.2 + 0.5 * u[7])).astype(np.int64))
    ntb_purchases = np.where(is_sp, 0, np.floor(orders * (0.2 + 0.5 * u[7])).astype(np.int64))
    dpv = (clicks * (1.1 + u[5])).astype(np.int64)
    viewable = np.where(is_sp, NULL, (impressions * (0.5 + 0.4 * u[6])).astype(np.int64))
    # Top-of-search impression share: not reported for SD, nor on thin days.
    tos = np.where((pop.ad_product == "SD") | (impressions < 20), np.nan, 0.05 + 0.6 * u[2])
    return {
        "active": active,
        "impressions": impressions,
        "clicks": clicks,
        "cost": cost,
        "orders": orders,
        "units": units,
        "sales": sales,
        "new_to_brand_sales": ntb_sales,
        "new_to_brand_purchases": ntb_purchases,
        "detail_page_views": dpv,
        "viewable_impressions": viewable,
        "top_of_search_is": tos,
    }


@dataclass
class PeriodTotals:
    """Measures of each entity summed over one period; `active` marks entities with a row."""

    label: date | None
    active: np.ndarray
    sums: dict[str, np.ndarray]
    tos: np.ndarray  # impression-weighted top-of-search share, nan where not reported


def period_totals(
    seed: int, pop: Population, first: date, last: date, reference: date, label: date | None
) -> PeriodTotals:
    last_day = ordinal(reference) - 1
    active = np.zeros(pop.size, dtype=bool)
    sums = {name: np.zeros(pop.size, dtype=np.int64) for name in ADDITIVE}
    nulls = {
        name: np.ones(pop.size, dtype=bool)
        for name in ("new_to_brand_sales", "viewable_impressions")
    }
    tos_weighted = np.zeros(pop.size)
    tos_weight = np.zeros(pop.size)
    for day in range(ordinal(first), ordinal(last) + 1):
        day_values = advertising_day(seed, pop, day, last_day)
        on = day_values["active"]
        active |= on
        for name in ADDITIVE:
            values = day_values[name]
            reported = on & (values != NULL)
            sums[name] += np.where(reported, values, 0)
            if name in nulls:
                nulls[name] &= ~reported
        tos = day_values["top_of_search_is"]
        has_tos = on & ~np.isnan(tos)
        tos_weighted += np.where(has_tos, tos * day_values["impressions"], 0.0)
        tos_weight += np.where(has_tos, day_values["impressions"], 0)
    for name, is_null in nulls.items():
        sums[name] = np.where(is_null, NULL, sums[name])
    with np.errstate(invalid="ignore", divide="ignore"):
        tos = np.where(tos_weight > 0, tos_weighted / tos_weight, np.nan)
    return PeriodTotals(label, active, sums, tos)


def ratio(numerator: int, denominator: int) -> float | None:
    """A fraction, or None when the denominator is zero (never 0)."""
    return None if denominator == 0 else numerator / denominator


def money_ratio(numerator: int, denominator: int, exponent: int) -> str | None:
    """cost / clicks as a decimal string at the currency's precision, half-even."""
    if denominator == 0:
        return None
    quotient, remainder = divmod(numerator, denominator)
    if 2 * remainder > denominator or (2 * remainder == denominator and quotient % 2 == 1):
        quotient += 1
    return money(quotient, exponent)


def measures(values: dict[str, int], exponent: int) -> dict:
    """Render one row's measures in the spec's shape from integer sums."""
    cost, sales, clicks = values["cost"], values["sales"], values["clicks"]
    ntb = values["new_to_brand_sales"]
    viewable = values["viewable_impressions"]
    return {
        "impressions": values["impressions"],
        "clicks": clicks,
        "orders": values["orders"],
        "units": values["units"],
        "cost": money(cost, exponent),
        "sales": money(sales, exponent),
        "cpc": money_ratio(cost, clicks, exponent),
        "ctr": ratio(clicks, values["impressions"]),
        "acos": ratio(cost, sales),
        "roas": ratio(sales, cost),
        "conversion_rate": ratio(values["orders"], clicks),
        "new_to_brand_sales": None if ntb == NULL else money(ntb, exponent),
        "new_to_brand_purchases": values["new_to_brand_purchases"],
        "detail_page_views": values["detail_page_views"],
        "viewable_impressions": None if viewable == NULL else viewable,
    }


def entity_rows(
    seed: int,
    pop: Population,
    start: date,
    end: date,
    granularity: str,
    reference: date,
    mask: np.ndarray,
    descending: bool,
) -> Iterator[tuple[int, Callable[[int, int], list[dict]]]]:
    """For each period in order: (row count, function rendering rows [a, b) of that period)."""
    spans = list(periods(start, end, granularity))
    if descending:
        spans.reverse()
    for label, first, last in spans:
        totals = period_totals(seed, pop, first, last, reference, label)
        chosen = np.flatnonzero(totals.active & mask)
        if descending:
            chosen = chosen[::-1]

        def render(a: int, b: int, totals: PeriodTotals = totals, chosen: np.ndarray = chosen):
            rows = []
            for i in chosen[a:b]:
                values = {name: int(totals.sums[name][i]) for name in ADDITIVE}
                row = pop.entity_fields(int(i))
                row.update(measures(values, int(pop.exponent[i])))
                if pop.resource == "campaign-metrics":
                    tos = totals.tos[i]
                    row["top_of_search_is"] = None if np.isnan(tos) else float(tos)
                row["currency"] = pop.currency[i]
                row["ad_product"] = pop.ad_product[i]
                if totals.label is not None:
                    row["date"] = str(totals.label)
                rows.append(row)
            return rows

        yield len(chosen), render
