"""Which days the daily job fetches again because their last attempt failed.

Dagster shows a partition red while the last run that tried it failed, even when the lake
still holds that day whole from an earlier run (a failed run leaves what was published
intact): the lake's coverage, which the catch-up reads (`pipelines/catch_up.py`), cannot see
it. Read here from Dagster's own partition status, per dated table, within the catch-up's
horizon (older days are a backfill's, and the service may no longer answer for them); the
daily job then fetches those days again for every account, so a red day turns green once the
service answers again, and red means "still failing", never "failed once".
"""

from collections.abc import Iterable
from datetime import date, timedelta

import dagster as dg

from assets.dated import DATED
from pipelines.catch_up import CATCH_UP_HORIZON_DAYS, DailyPlan, plan_daily
from pipelines.settings import Settings
from pipelines.sources import SOURCES
from pipelines.sources.model import Source
from warehouse.lake import Lake


def days_to_heal(
    instance: dg.DagsterInstance, settings: Settings, sources: Iterable[Source] = SOURCES
) -> dict[str, date]:
    """Per dated source among `sources`, the first day within the horizon on which any of its
    tables' partitions failed at its last attempt."""
    yesterday = settings.today - timedelta(days=1)
    first = max(settings.first_day, settings.today - timedelta(days=CATCH_UP_HORIZON_DAYS))
    days = [(first + timedelta(days=n)).isoformat() for n in range((yesterday - first).days + 1)]
    if not days:  # the warehouse's first day is today: nothing has been attempted
        return {}
    source_of = {o.schema.name: s.name for s in sources if s.dated for o in s.outputs}
    heal: dict[str, date] = {}
    for key in DATED.keys:
        source = source_of.get(key.to_user_string())
        if source is None:
            continue
        status = instance.get_status_by_partition(key, days, DATED.partitions_def) or {}
        failed = [day for day in days if status.get(day) is dg.AssetPartitionStatus.FAILED]
        if failed:
            day = date.fromisoformat(failed[0])
            heal[source] = min(day, heal.get(source, day))
    return heal


def plan_the_day(
    instance: dg.DagsterInstance,
    settings: Settings,
    lake: Lake,
    accounts: Iterable[str],
    sources: Iterable[Source] = SOURCES,
) -> DailyPlan:
    """The daily job's plan, as the schedule and `adwh run` start its runs: each account of
    each dated source from the first day the lake lacks (`pipelines/catch_up.py`), or the day
    its last attempt failed."""
    sources = list(sources)
    heal = days_to_heal(instance, settings, sources)
    return plan_daily(lake, accounts, settings, sources, heal)
