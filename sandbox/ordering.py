"""`order_by` and `order` on the metrics lists (spec 4.2, 4.4, 4.5).

Without `order_by` rows keep the default order of `metrics.py` (period, then entity or group,
both in `order` direction), which pages lazily. With `order_by` every row of the request is
rendered, chunk by chunk, and only the first `offset + limit` rows in the requested order are
kept, so memory grows with the page's end, not with the population:

- rows of the whole window are sorted together (not within each period), by the measure in
  `order` direction (default `desc`); nulls last in both directions;
- ties keep the default order, so offset pages of one request never overlap or skip;
- money measures compare as decimals of their own currency: amounts are never converted
  (spec reading rule 1), so a JPY row and a USD row compare by their bare numbers;
- allowed values: the spec's lists (campaign-metrics, and "as above" target-metrics and
  product-ad-metrics; seller-product-metrics); where the spec does not show the list, the
  sandbox chooses: adgroup-metrics and search-term-metrics as campaign-metrics (the same
  advertising measures), vendor-product-metrics its numeric measures. Any other value is a
  400 `parameter_invalid` naming `order_by`.
"""

import heapq
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from functools import partial

from sandbox import retail
from sandbox.errors import bad_param
from sandbox.params import Query

Render = Callable[[int, int], list[dict]]
Section = tuple[int, Render]
CHUNK = 5_000  # rows rendered at a time while sorting

ADVERTISING = (  # spec 4.5, campaign-metrics
    "cost",
    "sales",
    "impressions",
    "clicks",
    "orders",
    "units",
    "acos",
    "roas",
    "ctr",
    "cpc",
    "conversion_rate",
)
SELLER = (  # spec 4.4
    "sales",
    "units",
    "orders",
    "sessions",
    "page_views",
    "rank",
    "conversion_rate",
    "net_sales",
    "amazon_fees",
    "margin_before_ads",
    "days_of_coverage",
    "b2b_sales",
)
# Not shown in spec 4.4: the sandbox's choice, every numeric measure of the vendor row.
VENDOR = (*retail.VENDOR.sums, *retail.VENDOR.latest)
ORDER_BY = {
    "campaign-metrics": ADVERTISING,
    "target-metrics": ADVERTISING,  # spec 4.5 "as above"
    "product-ad-metrics": ADVERTISING,  # spec 4.5 "as campaign-metrics"
    "adgroup-metrics": ADVERTISING,  # not shown: as campaign-metrics
    "search-term-metrics": ADVERTISING,  # not shown: as campaign-metrics
    "seller-product-metrics": SELLER,
    "vendor-product-metrics": VENDOR,
}


@dataclass(frozen=True)
class Sort:
    """One metrics request's `order_by` measure and `order` direction."""

    measure: str
    descending: bool

    def key(self, row: dict) -> tuple[int, Decimal | float | int]:
        """Ascending key: the measure in the requested direction, then nulls."""
        value = row.get(self.measure)
        if value is None:
            return (1, 0)
        number = Decimal(value) if isinstance(value, str) else value
        return (0, -number if self.descending else number)


def order_by(query: Query, resource: str, descending: bool) -> Sort | None:
    """The request's sort (spec 4.2), None without `order_by`; 400 on a value not allowed."""
    measure = query.get("order_by")
    if measure is None:
        return None
    allowed = ORDER_BY[resource]
    if measure not in allowed:
        raise bad_param(
            "order_by",
            f"order_by for {resource} must be one of {', '.join(allowed)}; got {measure!r}.",
        )
    return Sort(measure, descending)


def sorted_sections(sections: Iterable[Section], sort: Sort, wanted: int) -> list[Section]:
    """The rows of every section as one section in `sort` order, of which only the first
    `wanted` rows can be rendered (a page never reaches beyond `offset + limit`).

    `heapq.nsmallest` equals `sorted(...)[:wanted]` and is stable, so ties keep the default
    order; it holds `wanted` rows, plus one chunk being rendered.
    """
    total = 0

    def rows() -> Iterator[dict]:
        nonlocal total
        for count, render in sections:
            total += count
            for first in range(0, count, CHUNK):
                yield from render(first, min(first + CHUNK, count))

    top = heapq.nsmallest(wanted, rows(), key=sort.key)
    return [(total, partial(_slice, top))]


def _slice(rows: list[dict], first: int, last: int) -> list[dict]:
    return rows[first:last]
