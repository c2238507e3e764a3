"""Daily partitions, the daily run's range, and how backfills are cut into runs."""

from datetime import date, timedelta

import dagster as dg

FIRST_PARTITION = "2024-01-01"
# Seller economics arrive 48-72 hours late: the daily run re-fetches the trailing days that
# can still change, so `pending` rows become `available` without a backfill.
LOOKBACK_DAYS = 3
# The strictest daily window the spec names (target metrics): a backfill run never spans more.
BACKFILL_DAYS_PER_RUN = 31

daily_partitions = dg.DailyPartitionsDefinition(start_date=FIRST_PARTITION, timezone="UTC")
backfill_policy = dg.BackfillPolicy.multi_run(max_partitions_per_run=BACKFILL_DAYS_PER_RUN)

RANGE_START_TAG = "dagster/asset_partition_range_start"
RANGE_END_TAG = "dagster/asset_partition_range_end"


def daily_range(today: date) -> tuple[date, date]:
    """Yesterday plus the lookback days before it."""
    yesterday = today - timedelta(days=1)
    return yesterday - timedelta(days=LOOKBACK_DAYS - 1), yesterday


def range_tags(start: date, end: date) -> dict[str, str]:
    return {RANGE_START_TAG: start.isoformat(), RANGE_END_TAG: end.isoformat()}
