"""Daily partitions, the daily run's range, and how backfills are cut into runs."""

from datetime import date, timedelta

import dagster as dg

from warehouse.lake import Lake
from warehouse.spec import STRICTEST_DAILY_WINDOW_DAYS

FIRST_PARTITION = "2024-01-01"
# The strictest daily window the spec names (target metrics): a backfill run never spans more.
BACKFILL_DAYS_PER_RUN = STRICTEST_DAILY_WINDOW_DAYS

daily_partitions = dg.DailyPartitionsDefinition(start_date=FIRST_PARTITION, timezone="UTC")
backfill_policy = dg.BackfillPolicy.multi_run(max_partitions_per_run=BACKFILL_DAYS_PER_RUN)

RANGE_START_TAG = "dagster/asset_partition_range_start"
RANGE_END_TAG = "dagster/asset_partition_range_end"


# How far back the daily run looks for economics still pending; older ones are `missing`.
PENDING_HORIZON_DAYS = 31


def daily_range(today: date, lookback_days: int, pending_since: date | None) -> tuple[date, date]:
    """The `lookback_days` days up to yesterday, reaching back further to the oldest day whose
    seller economics are still pending (a skipped daily run must not strand them)."""
    yesterday = today - timedelta(days=1)
    start = yesterday - timedelta(days=lookback_days - 1)
    horizon = today - timedelta(days=PENDING_HORIZON_DAYS)
    if pending_since is not None and horizon <= pending_since < start:
        start = pending_since
    return start, yesterday


def range_tags(start: date, end: date) -> dict[str, str]:
    return {RANGE_START_TAG: start.isoformat(), RANGE_END_TAG: end.isoformat()}


def pending_economics_since(lake: Lake, today: date) -> date | None:
    """The oldest day within the horizon whose seller economics the lake still holds as
    pending. Only the horizon's partitions are read: the daily run's cost must not grow with
    the years held."""
    horizon = today - timedelta(days=PENDING_HORIZON_DAYS)
    return lake.earliest("seller_product_metrics", "economics_status = 'pending'", horizon)
