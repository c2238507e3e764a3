"""Daily facts re-aggregated to any grain without losing the service's meaning.

The service answers `granularity` (daily, weekly, monthly, quarterly, yearly, total) and
`group_by` itself; these functions give the same answer from the daily rows the warehouse keeps,
so an analyst can roll up at any grain (keys of their choice) and get what the service would say:

- a period is labelled with the calendar period's first day (ISO weeks start on Monday); edge
  periods are partial: only the days of the window inside them count;
- sums stay `null` when no row reported the measure, and skip the rows that did not report it
  (a real 0 is a value and stays 0);
- ratios are recomputed from the summed numerator and denominator, never averaged, and are
  `null` on a zero or null denominator; `cpc` is money, rounded half-to-even to the currency's
  digits, as the service sends it;
- money is never added across currencies: `currency` must be one of the keys;
- seller measures that do not add (spec 2.9 rule 7): buy-box shares are weighted by page views;
  `stock` is the sum of each product's latest stock and is `null` unless the grain keeps
  `country` (or the product); `days_of_coverage` is the last stock over the average daily
  units of the window, with `total` only, `null` when nothing sold; `rank`, `price` and
  `fulfillment_channel` are `null` on aggregates and the latest value per product;
- `top_of_search_is` is never summed: impression-weighted per campaign, `null` above it.

Pure functions of frames and plain values: no I/O.
"""

from collections.abc import Sequence
from datetime import date

import polars as pl

from transforms.meaning import ECONOMICS_FIELDS, safe_ratio
from warehouse.schemas import MONEY_PRECISION, MONEY_SCALE
from warehouse.spec import CURRENCY_DIGITS, DEFAULT_CURRENCY_DIGITS

GRAINS = ("daily", "weekly", "monthly", "quarterly", "yearly", "total")
_EVERY = {"daily": "1d", "weekly": "1w", "monthly": "1mo", "quarterly": "1q", "yearly": "1y"}


ADVERTISING_SUMS = (
    "impressions",
    "clicks",
    "orders",
    "units",
    "cost",
    "sales",
    "new_to_brand_sales",
    "new_to_brand_purchases",
    "detail_page_views",
    "viewable_impressions",
)
ADVERTISING_RATIOS = ("acos", "roas", "ctr", "cpc", "conversion_rate")
SELLER_SUMS = (
    "sales",
    "units",
    "orders",
    "sessions",
    "page_views",
    *ECONOMICS_FIELDS,
    "b2b_sales",
    "b2b_units",
    "b2b_order_items",
    "b2b_sessions",
    "b2b_page_views",
)
SELLER_ENTITY = ("account_id", "product", "asin", "sku", "connection", "country")
SELLER_LATEST = ("rank", "price", "fulfillment_channel")


# ---------------------------------------------------------------------- periods
def _check_grain(grain: str) -> None:
    if grain not in GRAINS:
        raise ValueError(f"grain must be one of {', '.join(GRAINS)}; got {grain!r}")


def period_start(day: pl.Expr, grain: str) -> pl.Expr:
    """The first day of the calendar period holding `day`: the day, the Monday of its ISO week,
    the first of its month, quarter or year (the service's `date` for that granularity)."""
    _check_grain(grain)
    if grain == "total":
        raise ValueError("grain total has no period start")
    return day.dt.truncate(_EVERY[grain])


def period_end(start: pl.Expr, grain: str) -> pl.Expr:
    """The last calendar day of the period starting on `start`."""
    _check_grain(grain)
    if grain == "total":
        raise ValueError("grain total has no period end")
    return start.dt.offset_by(_EVERY[grain]).dt.offset_by("-1d")


def periods(start: date, end: date, grain: str) -> pl.DataFrame:
    """The periods of a window, as the service cuts them: `date` (the calendar label, null for
    total), `first_day` and `last_day` inside the window, `days`, and `partial` (the window
    does not cover the whole calendar period)."""
    _check_grain(grain)
    if start > end:
        raise ValueError(f"start {start} is after end {end}")
    days = pl.DataFrame({"day": pl.date_range(start, end, "1d", eager=True)})
    if grain == "total":
        return pl.DataFrame(
            {
                "date": [None],
                "first_day": [start],
                "last_day": [end],
                "days": [(end - start).days + 1],
                "partial": [False],
            },
            schema={
                "date": pl.Date,
                "first_day": pl.Date,
                "last_day": pl.Date,
                "days": pl.Int64,
                "partial": pl.Boolean,
            },
        )
    return (
        days.group_by(period_start(pl.col("day"), grain).alias("date"))
        .agg(
            pl.col("day").min().alias("first_day"),
            pl.col("day").max().alias("last_day"),
            pl.len().cast(pl.Int64).alias("days"),
        )
        .with_columns(
            (
                (pl.col("first_day") > pl.col("date"))
                | (pl.col("last_day") < period_end(pl.col("date"), grain))
            ).alias("partial")
        )
        .sort("date")
    )


# ---------------------------------------------------------------------- meaning-keeping pieces
def reported_sum(column: str | pl.Expr, name: str | None = None) -> pl.Expr:
    """Sum of the reported values; `null` when no value was reported (never 0)."""
    expr = pl.col(column) if isinstance(column, str) else column
    out = pl.when(expr.is_not_null().any()).then(expr.sum())
    return out.alias(name or (column if isinstance(column, str) else expr.meta.output_name()))


def currency_digits(currency: pl.Expr) -> pl.Expr:
    """Digits after the decimal point of the currency's amounts (JPY 0, most 2)."""
    return currency.replace_strict(
        CURRENCY_DIGITS, default=DEFAULT_CURRENCY_DIGITS, return_dtype=pl.Int64
    )


def money_ratio(numerator: pl.Expr, denominator: pl.Expr, currency: pl.Expr) -> pl.Expr:
    """numerator / denominator as money of `currency`, rounded half-to-even to its digits (the
    service's `cpc`), computed on integers so nothing is lost; null on a zero or null
    denominator or a null numerator."""
    digits = currency_digits(currency)
    step = digits.replace_strict(
        {d: 10 ** (MONEY_SCALE - d) for d in range(MONEY_SCALE + 1)}, return_dtype=pl.Int128
    )  # one unit of the currency's last digit, in units of the money scale
    units = (numerator.cast(pl.Decimal(38, MONEY_SCALE)) * 10**MONEY_SCALE).cast(pl.Int128)
    whole = denominator.cast(pl.Int128)
    whole = pl.when(whole == 0).then(None).otherwise(whole)
    divisor = whole.abs() * step
    quotient = units.abs() // divisor
    twice_rest = (units.abs() % divisor) * 2
    up = (twice_rest > divisor) | ((twice_rest == divisor) & (quotient % 2 == 1))
    rounded = (quotient + up.cast(pl.Int128)) * units.sign() * whole.sign() * step
    return (rounded.cast(pl.Decimal(38, MONEY_SCALE)) / 10**MONEY_SCALE).cast(
        pl.Decimal(MONEY_PRECISION, MONEY_SCALE)
    )


def weighted_share(share: str, weight: str) -> tuple[pl.Expr, pl.Expr]:
    """(sum of share * weight, sum of weight) over the rows reporting both: a weighted mean."""
    both = pl.col(share).is_not_null() & pl.col(weight).is_not_null()
    return (
        reported_sum((pl.col(share) * pl.col(weight)).filter(both), f"_{share}_weighted"),
        reported_sum(pl.col(weight).filter(both), f"_{share}_weight"),
    )


# ---------------------------------------------------------------------- shared preparation
def _prepare(
    frame: pl.DataFrame,
    keys: Sequence[str],
    grain: str,
    start: date | None,
    end: date | None,
) -> tuple[pl.DataFrame, list[str]]:
    """Rows of the window with `_day` (the row's day) and `date` (its period's label); the
    columns to group by."""
    _check_grain(grain)
    keys = list(keys)
    if "currency" not in keys:
        raise ValueError("currency must be one of the keys: amounts of two currencies never add")
    if "date" in keys:
        raise ValueError("date is not a key: choose the grain instead")
    missing = [k for k in keys if k not in frame.columns]
    if missing:
        raise ValueError(f"keys not in the frame: {', '.join(missing)}")
    rows = frame.with_columns(pl.col("date").alias("_day"))
    if start is not None:
        rows = rows.filter(pl.col("_day") >= start)
    if end is not None:
        rows = rows.filter(pl.col("_day") <= end)
    if grain == "total":
        return rows.drop("date"), keys
    return rows.with_columns(period_start(pl.col("_day"), grain).alias("date")), [*keys, "date"]


def _finish(frame: pl.DataFrame, group: list[str]) -> pl.DataFrame:
    return frame.drop([c for c in frame.columns if c.startswith("_")]).sort(group, nulls_last=True)


# ---------------------------------------------------------------------- advertising
def rollup_advertising(
    frame: pl.DataFrame,
    keys: Sequence[str],
    grain: str = "daily",
    *,
    start: date | None = None,
    end: date | None = None,
) -> pl.DataFrame:
    """Daily advertising rows (campaign, ad group, target, product-ad or search-term metrics)
    re-aggregated per `keys` and period of `grain`, with ratios recomputed from the sums.

    `keys` must include `currency`; add `ad_product` to keep the service's split by ad product.
    `start`/`end` cut the window (edge periods are then partial, like the service's).
    """
    rows, group = _prepare(frame, keys, grain, start, end)
    sums = [reported_sum(c) for c in ADVERTISING_SUMS if c in rows.columns]
    extra: list[pl.Expr] = []
    per_campaign = "top_of_search_is" in rows.columns and "campaign" in keys
    if per_campaign:
        extra += weighted_share("top_of_search_is", "impressions")
    out = rows.group_by(group).agg(*sums, *extra)
    out = out.with_columns(
        safe_ratio(pl.col("cost"), pl.col("sales")).alias("acos"),
        safe_ratio(pl.col("sales"), pl.col("cost")).alias("roas"),
        safe_ratio(pl.col("clicks"), pl.col("impressions")).alias("ctr"),
        money_ratio(pl.col("cost"), pl.col("clicks"), pl.col("currency")).alias("cpc"),
        safe_ratio(pl.col("orders"), pl.col("clicks")).alias("conversion_rate"),
    )
    if "top_of_search_is" in rows.columns:
        share = (
            safe_ratio(pl.col("_top_of_search_is_weighted"), pl.col("_top_of_search_is_weight"))
            .round(4)
            .alias("top_of_search_is")
            if per_campaign
            else pl.lit(None, pl.Float64).alias("top_of_search_is")
        )
        out = out.with_columns(share)
    return _finish(out, group)


# ---------------------------------------------------------------------- seller
def rollup_seller(
    frame: pl.DataFrame,
    keys: Sequence[str],
    grain: str = "daily",
    *,
    start: date | None = None,
    end: date | None = None,
) -> pl.DataFrame:
    """Daily seller product rows re-aggregated per `keys` and period of `grain` (spec 2.9).

    Sums are summed (null where no row reported them); `conversion_rate` is orders over
    sessions of the aggregated row, the service's definition (spec 2.9): the orders of days
    without reported traffic count too, and it is null when no row reported sessions (the
    marts' `conversion_rate_reported_traffic` is the other reading); buy-box shares are
    weighted by (B2B) page views; `stock` sums each product's latest stock when the keys keep
    `country` or `product`, else null; `days_of_coverage` (grain total only) is stock * days of
    the window / units, null when nothing sold; `rank`, `price`, `fulfillment_channel` are each
    product's latest when the keys name the product, else null. The window defaults to the
    rows' first and last day when `start`/`end` are not given.
    """
    rows, group = _prepare(frame, keys, grain, start, end)
    entity = [c for c in SELLER_ENTITY if c in rows.columns]
    per_product = "product" in keys or all(
        c in keys for c in ("asin", "sku", "connection", "country")
    )
    stock_visible = "stock" in rows.columns and ("country" in keys or per_product)
    if stock_visible:
        latest_day = (
            pl.when(pl.col("stock").is_not_null())
            .then(pl.col("_day"))
            .max()
            .over([*group, *entity], mapping_strategy="group_to_rows")
        )
        rows = rows.with_columns(
            pl.when(pl.col("_day") == latest_day).then(pl.col("stock")).alias("_latest_stock")
        )
    aggregates = [reported_sum(c) for c in SELLER_SUMS if c in rows.columns]
    for share, weight in (
        ("buy_box_percentage", "page_views"),
        ("b2b_buy_box_percentage", "b2b_page_views"),
    ):
        if share in rows.columns:
            aggregates += weighted_share(share, weight)
    if stock_visible:
        aggregates.append(reported_sum("_latest_stock", "stock"))
    for name in SELLER_LATEST:
        if name in rows.columns and per_product:
            aggregates.append(pl.col(name).sort_by("_day").drop_nulls().last().alias(name))
    out = rows.group_by(group).agg(*aggregates)
    out = out.with_columns(
        safe_ratio(pl.col("orders"), pl.col("sessions")).alias("conversion_rate"),  # spec 2.9
        *(
            safe_ratio(pl.col(f"_{share}_weighted"), pl.col(f"_{share}_weight"))
            .round(4)
            .alias(share)
            for share in ("buy_box_percentage", "b2b_buy_box_percentage")
            if f"_{share}_weight" in out.columns
        ),
    )
    if "stock" in rows.columns:
        if not stock_visible:
            out = out.with_columns(pl.lit(None, pl.Int64).alias("stock"))
        out = out.with_columns(_coverage(rows, grain, start, end).alias("days_of_coverage"))
    for name in SELLER_LATEST:
        if name in rows.columns and not per_product:
            out = out.with_columns(pl.lit(None, rows.schema[name]).alias(name))
    return _finish(out, group)


def _coverage(rows: pl.DataFrame, grain: str, start: date | None, end: date | None) -> pl.Expr:
    """Days the last stock lasts at the window's average daily units: grain total only."""
    if grain != "total" or rows.is_empty():
        return pl.lit(None, pl.Float64)
    first = start or rows["_day"].min()
    last = end or rows["_day"].max()
    window_days = (last - first).days + 1
    units = pl.col("units")
    return (
        pl.when(units > 0)
        .then(pl.col("stock").cast(pl.Float64) * window_days / units.cast(pl.Float64))
        .round(1)
    )


# ---------------------------------------------------------------------- clusters
def with_clusters(frame: pl.DataFrame, cluster_products: pl.DataFrame) -> pl.DataFrame:
    """Each row once per cluster its product belongs to (`cluster` column), so a product in
    several clusters counts in full in each; rows of products in no cluster are left out, as
    the service's `group_by=cluster` does. The rows' own `cluster`/`cluster_name` (the
    product's first cluster only) are replaced."""
    on = ["product"]
    if "account_id" in frame.columns and "account_id" in cluster_products.columns:
        on.insert(0, "account_id")
    members = cluster_products.select([*on, "cluster"]).unique()
    rows = frame.drop([c for c in ("cluster", "cluster_name") if c in frame.columns])
    return rows.join(members, on=on, how="inner")


def unclustered(frame: pl.DataFrame, cluster_products: pl.DataFrame) -> pl.DataFrame:
    """The rows whose product is in no cluster (or unknown): with the de-duplicated clustered
    rows they make up every row exactly once."""
    on = ["product"]
    if "account_id" in frame.columns and "account_id" in cluster_products.columns:
        on.insert(0, "account_id")
    members = cluster_products.select(on).unique()
    return frame.join(members, on=on, how="anti", nulls_equal=False)
