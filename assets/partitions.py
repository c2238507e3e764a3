"""Daily partitions, from the warehouse's first day, and how backfills are cut into runs."""

from datetime import date

import dagster as dg

from pipelines.settings import CalendarSettings, ConfigurationError
from warehouse.spec import STRICTEST_DAILY_WINDOW_DAYS


def first_partition() -> date:
    """The first Dagster partition: the warehouse's first day (`ADWH_START_DATE`, by default
    30 days before today). Read when the definitions load, since Dagster fixes a partitions
    definition then; a bad value fails the load naming the variable."""
    from pydantic import ValidationError

    try:
        return CalendarSettings().first_day
    except ValidationError as error:
        raise ConfigurationError(error.errors()[0]["msg"].removeprefix("Value error, ")) from None


# The strictest daily window the spec names (target metrics): a backfill run never spans more.
BACKFILL_DAYS_PER_RUN = STRICTEST_DAILY_WINDOW_DAYS

daily_partitions = dg.DailyPartitionsDefinition(
    start_date=first_partition().isoformat(), timezone="UTC"
)
backfill_policy = dg.BackfillPolicy.multi_run(max_partitions_per_run=BACKFILL_DAYS_PER_RUN)

RANGE_START_TAG = "dagster/asset_partition_range_start"
RANGE_END_TAG = "dagster/asset_partition_range_end"


def range_tags(start: date, end: date) -> dict[str, str]:
    return {RANGE_START_TAG: start.isoformat(), RANGE_END_TAG: end.isoformat()}
