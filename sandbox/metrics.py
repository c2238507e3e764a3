"""Metrics generated on demand, entity-day by entity-day, from hashes.

A metrics row exists only for an entity-day with activity: whether an entity is active on a day,
and every measure it reports, is a pure function of (seed, resource, entity, day). A page of any
window is therefore computed from the days it covers, never from a stored history, which keeps
the `large` preset's memory flat whatever the window.

Measures are generated as integers (minor currency units for money, basis points for shares) and
only turned into the spec's decimal strings and fractions when a row is rendered, so aggregation
is exact. One mechanism aggregates every resource, parameterised by a `MeasureSet`: measures are
either summed (over days, then over the entities of a group) or the latest reported value
(stock, rank, price). A summed or latest measure is `NULL` when no day reported it.

Counting the rows of a period needs only the activity draws, over every entity; the measures
are computed for the rows of the requested page alone (or, with `group_by`, for the active
entities of the periods on the page).
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date
from functools import partial

import numpy as np

from sandbox.catalog import ClusterIndex
from sandbox.hashing import uniform
from sandbox.reference import money, ordinal
from sandbox.restating import NO_RESTATING, Restating

NULL = np.iinfo(np.int64).min  # integer arrays mark "not reported" (net units can be < 0)
Values = dict[str, int | None]


@dataclass(frozen=True)
class RowContext:
    """What rendering one row's measures depends on besides the values."""

    exponent: int
    grouped: bool = False
    stock_visible: bool = True  # stock-like measures: per entity, or grouped by country
    window_days: int | None = None  # the window's length with granularity total, else None


@dataclass(frozen=True)
class MeasureSet:
    """How one family of metrics is generated per entity-day, aggregated and rendered.

    `generate(seed, population, entities, day, reference)` gives one integer array per measure
    (NULL where not reported) for active entities on a day; `reference` is the reference date's
    ordinal, for data that arrives late.
    """

    generate: Callable[..., dict[str, np.ndarray]]
    sums: tuple[str, ...]
    latest: tuple[str, ...]
    render: Callable[[Values, RowContext], dict]


@dataclass
class Population:
    """The entities one metrics resource reports on, as columns."""

    resource: str
    salt: int
    start: np.ndarray  # first ordinal day with possible activity
    p_active: np.ndarray  # share of days with activity
    scale: np.ndarray  # size of the entity (impressions or units per active day, roughly)
    currency: np.ndarray  # object array of ISO codes
    exponent: np.ndarray  # currency digits
    ad_product: np.ndarray | None  # object array of SP/SB/SD; None for retail metrics
    connection: np.ndarray
    country: np.ndarray
    entity_fields: Callable[[int], dict]
    measures: MeasureSet
    filters: dict[str, np.ndarray] = field(default_factory=dict)  # query parameter → column
    product: np.ndarray | None = None  # catalog product index per entity, -1 when none
    extra: dict[str, np.ndarray] = field(default_factory=dict)  # per-entity generator inputs
    restating: Restating = NO_RESTATING  # recent days' attributed figures still moving
    _codes: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)

    @property
    def size(self) -> int:
        return len(self.start)

    def codes(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(labels, code per entity) of a grouping column, computed once."""
        if name not in self._codes:
            self._codes[name] = np.unique(getattr(self, name), return_inverse=True)
        return self._codes[name]


def draws(seed: int, pop: Population, entities: np.ndarray, day: int, count: int) -> list:
    """`count` uniform columns for the entities on a day (column 0 is the activity draw)."""
    return [uniform(seed, pop.salt * 32 + k, entities, day) for k in range(1, count + 1)]


def activity(seed: int, pop: Population, entities: np.ndarray, day: int, last_day: int):
    """Which of the entities have a row on a day (none after the last day with data)."""
    if day > last_day:
        return np.zeros(len(entities), dtype=bool)
    u = uniform(seed, pop.salt * 32, entities, day)
    return (u < pop.p_active[entities]) & (pop.start[entities] <= day)


# ---------------------------------------------------------------------- advertising measures
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


def advertising_day(
    seed: int, pop: Population, entities: np.ndarray, day: int, reference: int
) -> dict[str, np.ndarray]:
    """Advertising measures of active entities on one day."""
    u_imp, u_click, u_cpc, u_order, u_extra, u_price, u_ntb = draws(seed, pop, entities, day, 7)
    exponent = pop.exponent[entities]
    ad_product = pop.ad_product[entities]
    impressions = np.where(
        u_imp < 0.03, 0, (pop.scale[entities] * (0.3 + 1.4 * u_imp)).astype(np.int64)
    )
    clicks = np.floor(impressions * 0.02 * (2 * u_click) ** 2).astype(np.int64)
    cpc_minor = np.where(exponent == 0, 20 + 180 * u_cpc, 25 + 200 * u_cpc).astype(np.int64)
    orders = np.floor(clicks * 0.12 * (2 * u_order) ** 2).astype(np.int64)
    units = orders + np.where(u_extra < 0.2, orders // 2, 0)
    price = np.where(exponent == 0, 1500 + 6000 * u_price, 1200 + 5000 * u_price).astype(np.int64)
    sales = units * price
    is_sp = ad_product == "SP"
    # Top-of-search impression share (basis points): not reported for SD, nor on thin days.
    tos_reported = (ad_product != "SD") & (impressions >= 20)
    tos = (500 + 6000 * u_click).astype(np.int64)
    return {
        "impressions": impressions,
        "clicks": clicks,
        "cost": clicks * cpc_minor,
        "orders": orders,
        "units": units,
        "sales": sales,
        "new_to_brand_sales": np.where(is_sp, NULL, (sales * (0.2 + 0.5 * u_ntb)).astype(np.int64)),
        "new_to_brand_purchases": np.where(
            is_sp, 0, np.floor(orders * (0.2 + 0.5 * u_ntb)).astype(np.int64)
        ),
        "detail_page_views": (clicks * (1.1 + u_extra)).astype(np.int64),
        "viewable_impressions": np.where(
            is_sp, NULL, (impressions * (0.5 + 0.4 * u_price)).astype(np.int64)
        ),
        "tos_weighted": np.where(tos_reported, tos * impressions, NULL),
        "tos_impressions": np.where(tos_reported, impressions, NULL),
    }


def ratio(numerator: int | None, denominator: int | None) -> float | None:
    """A fraction, or None when either side is unreported or the denominator is zero."""
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def share(weighted: int | None, weight: int | None) -> float | None:
    """A weighted share from basis points times weight, as a fraction with four digits."""
    value = ratio(weighted, weight)
    return None if value is None else round(value / 10_000, 4)


def money_ratio(numerator: int, denominator: int, exponent: int) -> str | None:
    """cost / clicks as a decimal string at the currency's precision, half-even."""
    if denominator == 0:
        return None
    quotient, remainder = divmod(numerator, denominator)
    if 2 * remainder > denominator or (2 * remainder == denominator and quotient % 2 == 1):
        quotient += 1
    return money(quotient, exponent)


def amount_or_null(value: int | None, exponent: int) -> str | None:
    return None if value is None else money(value, exponent)


def advertising_measures(values: Values, ctx: RowContext) -> dict:
    """Render one row's advertising measures in the spec's shape from integer sums."""
    cost, sales, clicks = values["cost"], values["sales"], values["clicks"]
    exponent = ctx.exponent
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
        "new_to_brand_sales": amount_or_null(values["new_to_brand_sales"], exponent),
        "new_to_brand_purchases": values["new_to_brand_purchases"],
        "detail_page_views": values["detail_page_views"],
        "viewable_impressions": values["viewable_impressions"],
    }


def campaign_measures(values: Values, ctx: RowContext) -> dict:
    """Advertising measures plus the impression-weighted top-of-search share (not aggregable)."""
    row = advertising_measures(values, ctx)
    tos = share(values["tos_weighted"], values["tos_impressions"])
    row["top_of_search_is"] = None if ctx.grouped else tos
    return row


ADVERTISING = MeasureSet(
    generate=advertising_day,
    sums=(*ADDITIVE, "tos_weighted", "tos_impressions"),
    latest=(),
    render=advertising_measures,
)
CAMPAIGN = MeasureSet(ADVERTISING.generate, ADVERTISING.sums, (), campaign_measures)


# ---------------------------------------------------------------------- aggregation
def accumulate(
    seed: int, pop: Population, entities: np.ndarray, first: date, last: date, reference: date
) -> dict[str, np.ndarray]:
    """Each measure of the given entities over [first, last], generated day by day: summed, or
    the latest reported; NULL where no day of the period reported it."""
    measures = pop.measures
    size = len(entities)
    sums = {name: np.zeros(size, dtype=np.int64) for name in measures.sums}
    seen = {name: np.zeros(size, dtype=bool) for name in measures.sums}
    latest = {name: np.full(size, NULL, dtype=np.int64) for name in measures.latest}
    today = ordinal(reference)
    for day in range(ordinal(first), ordinal(last) + 1):
        on = np.flatnonzero(activity(seed, pop, entities, day, today - 1))
        if not len(on):
            continue
        values = measures.generate(seed, pop, entities[on], day, today)
        values = pop.restating.revise(values, day, today, NULL)
        for name in measures.sums:
            reported = values[name] != NULL
            sums[name][on[reported]] += values[name][reported]
            seen[name][on[reported]] = True
        for name in measures.latest:
            reported = values[name] != NULL
            latest[name][on[reported]] = values[name][reported]
    out = {name: np.where(seen[name], sums[name], NULL) for name in measures.sums}
    return out | latest


def period_activity(
    seed: int, pop: Population, entities: np.ndarray, first: date, last: date, reference: date
) -> np.ndarray:
    """Which of the entities have data on at least one day of [first, last]."""
    active = np.zeros(len(entities), dtype=bool)
    last_day = ordinal(reference) - 1
    for day in range(ordinal(first), min(ordinal(last), last_day) + 1):
        active |= activity(seed, pop, entities, day, last_day)
    return active


def combine(values: dict[str, np.ndarray], members: np.ndarray, groups: np.ndarray, count: int):
    """Sum each measure over the members of each group; NULL where no member reported it.

    Latest measures are summed too: the sum of each member's latest stock is the group's stock.
    Sums go through float64, exact for integers below 2**53, far above any sum here.
    """
    out = {}
    for name, column in values.items():
        value = column[members]
        reported = value != NULL
        total = np.bincount(groups[reported], weights=value[reported], minlength=count)
        seen = np.bincount(groups[reported], minlength=count) > 0
        out[name] = np.where(seen, np.rint(total).astype(np.int64), NULL)
    return out


def as_values(values: dict[str, np.ndarray], i: int) -> Values:
    return {name: None if column[i] == NULL else int(column[i]) for name, column in values.items()}


# ---------------------------------------------------------------------- grouping
GROUP_DIMENSIONS = ("connection", "country", "cluster")


@dataclass(frozen=True)
class Grouping:
    """A `group_by`: the dimensions (empty for `account`) and, with `cluster`, the clusters."""

    dims: tuple[str, ...]
    clusters: ClusterIndex | None = None
    keep: np.ndarray | None = None  # bool per cluster: those of the `cluster` filter

    def members(self, pop: Population, entities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(position in `entities`, cluster or -1) of each membership of a group."""
        if "cluster" in self.dims:
            return self.clusters.memberships(pop.product[entities], self.keep)
        return np.arange(len(entities)), np.full(len(entities), -1)

    def keys(self, pop: Population, entities: np.ndarray, clusters: np.ndarray) -> np.ndarray:
        """One integer per membership that orders groups by dimension, currency, ad product."""
        key = np.zeros(len(entities), dtype=np.int64)
        names = [d for d in self.dims if d != "cluster"] + ["currency"]
        if pop.ad_product is not None:
            names.append("ad_product")
        if "cluster" in self.dims:
            key = clusters.astype(np.int64)
        for name in names:
            labels, codes = pop.codes(name)
            key = key * len(labels) + codes[entities]
        return key


@dataclass
class Groups:
    """The groups of one period: each membership's group, and one member to label each."""

    entities: np.ndarray  # active entities of the period
    position: np.ndarray  # per membership: position in `entities`
    cluster: np.ndarray  # per membership: cluster, -1 when not grouped by cluster
    group: np.ndarray  # per membership: group number, in key order
    label: np.ndarray  # per group: one of its memberships
    count: int


def find_groups(grouping: Grouping, pop: Population, entities: np.ndarray) -> Groups:
    position, cluster = grouping.members(pop, entities)
    keys = grouping.keys(pop, entities[position], cluster)
    unique, label, group = np.unique(keys, return_index=True, return_inverse=True)
    return Groups(entities, position, cluster, group, label, len(unique))


# ---------------------------------------------------------------------- rows
Period = tuple[date | None, date, date]  # (label, first day, last day)


@dataclass(frozen=True)
class Window:
    """The periods of a request and how its rows are ordered."""

    spans: list[Period]
    reference: date
    descending: bool
    window_days: int | None  # set with granularity total: days_of_coverage needs it


def metric_rows(
    seed: int,
    pop: Population,
    window: Window,
    candidates: np.ndarray,
    grouping: Grouping | None,
) -> Iterator[tuple[int, Callable[[int, int], list[dict]]]]:
    """For each period in order: (row count, function rendering rows [a, b) of that period)."""
    spans = window.spans[::-1] if window.descending else window.spans
    for label, first, last in spans:
        active = candidates[period_activity(seed, pop, candidates, first, last, window.reference)]
        period = (label, first, last)
        if grouping is None:
            chosen = active[::-1] if window.descending else active
            yield len(chosen), partial(_entity_page, seed, pop, window, period, chosen)
        else:
            groups = find_groups(grouping, pop, active)
            yield groups.count, partial(_group_page, seed, pop, window, period, grouping, groups)


def _finish(row: dict, pop: Population, entity: int, label: date | None) -> dict:
    row["currency"] = pop.currency[entity]
    if pop.ad_product is not None:
        row["ad_product"] = pop.ad_product[entity]
    if label is not None:
        row["date"] = str(label)
    return row


def _entity_page(
    seed: int, pop: Population, window: Window, period: Period, chosen: np.ndarray, a: int, b: int
) -> list[dict]:
    """Rows [a, b) of one period, one per entity: measures computed for those entities only."""
    label, first, last = period
    entities = chosen[a:b]
    totals = accumulate(seed, pop, entities, first, last, window.reference)
    rows = []
    for j, entity in enumerate(entities.tolist()):
        ctx = RowContext(int(pop.exponent[entity]), window_days=window.window_days)
        row = pop.entity_fields(entity)
        row.update(pop.measures.render(as_values(totals, j), ctx))
        rows.append(_finish(row, pop, entity, label))
    return rows


def _group_page(
    seed: int,
    pop: Population,
    window: Window,
    period: Period,
    grouping: Grouping,
    groups: Groups,
    a: int,
    b: int,
) -> list[dict]:
    """Rows [a, b) of one period, one per group: every active entity's measures, combined."""
    label, first, last = period
    order = np.arange(groups.count)
    if window.descending:
        order = order[::-1]
    wanted = order[a:b]
    if not len(wanted):
        return []
    totals = accumulate(seed, pop, groups.entities, first, last, window.reference)
    values = combine(totals, groups.position, groups.group, groups.count)
    blank = dict.fromkeys(pop.entity_fields(int(groups.entities[0])))
    rows = []
    for g in wanted.tolist():
        member = groups.label[g]
        entity = int(groups.entities[groups.position[member]])
        row = {**blank, "object": pop.entity_fields(entity)["object"]}
        for dim in grouping.dims:
            if dim == "cluster":
                cluster = int(groups.cluster[member])
                row["cluster"] = grouping.clusters.ids[cluster]
                row["cluster_name"] = grouping.clusters.names[cluster]
            else:
                row[dim] = getattr(pop, dim)[entity]
        ctx = RowContext(
            int(pop.exponent[entity]),
            grouped=True,
            stock_visible="country" in grouping.dims,
            window_days=window.window_days,
        )
        row.update(pop.measures.render(as_values(values, g), ctx))
        rows.append(_finish(row, pop, entity, label))
    return rows
