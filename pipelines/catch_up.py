"""The daily job's days: for each account and source, every day after what the lake holds
complete, up to yesterday.

A cursor per account and table (`warehouse/coverage.py`) rather than a fixed range: a skipped
run, an outage or a table held back is caught up by the next daily run, and an account the
key newly reaches is fetched from the warehouse's first day (`ADWH_START_DATE`) with no
backfill asked. On top of it, the `ADWH_LOOKBACK_DAYS` most recent days are always read again
(the service restates them), and so is any day whose seller economics are still pending, and
any day whose last attempt failed (`heal`: what Dagster shows red, which the lake cannot tell:
its rows from an earlier run may be whole), so red means "still failing", not "failed once".

The plan is the same function of the lake wherever it is made: before a run, to give the run
its range (the CLI, the schedule's packs), and in the run's step, to fetch each account from
its own first day (`assets/runner.py`). Only the horizon's economics partitions and the
small coverage table are read: the daily run's cost does not grow with the years held.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta

from pipelines.settings import Settings
from pipelines.sources import SOURCES
from pipelines.sources.model import Source
from warehouse.coverage import Spans, first_uncovered, read_coverage, seed_coverage
from warehouse.lake import Lake
from warehouse.schemas import SELLER_PRODUCT_METRICS
from warehouse.spec import ECONOMICS_PENDING, HISTORY_RETENTION_DAYS

# How far back the daily job looks for days it lacks; older gaps are a backfill's
# (`adwh backfill`): the optimization history's retention, so every source can still answer
# for the whole of it.
CATCH_UP_HORIZON_DAYS = HISTORY_RETENTION_DAYS
# How far back from an account's newest seller day the daily job looks for economics still
# pending. A row is `pending` only within 72 hours of the run that fetched it (spec 2.9), and
# every later run reads the lookback again, so pending rows sit near the newest day fetched,
# however long ago that was; the horizon bounds the partitions read, not the age caught up.
PENDING_HORIZON_DAYS = 31
# Tag of a run that fetches each account from its own first day (the daily job's runs).
CATCH_UP_TAG = "adwh/catch-up"
# Tags of such a run: per source, the first day it heals (`adwh/heal.<source>`), decided
# before the run and carried by it, since its own steps would see those days in progress.
HEAL_TAG_PREFIX = "adwh/heal."
PENDING = f"economics_status = '{ECONOMICS_PENDING}'"


@dataclass(frozen=True)
class DailyPlan:
    """Each dated source's first day per account; every one ends yesterday. `heal`: per
    source, the day from which every account is fetched again (its run carries it in tags)."""

    starts: dict[str, dict[str, date]]
    end: date
    heal: Mapping[str, date] = field(default_factory=dict)

    @property
    def accounts(self) -> list[str]:
        return sorted({account for starts in self.starts.values() for account in starts})

    def account_start(self, account: str) -> date:
        return min(starts[account] for starts in self.starts.values())

    @property
    def start(self) -> date:
        days = (day for starts in self.starts.values() for day in starts.values())
        return min(days, default=self.end)


def heal_tags(heal: Mapping[str, date]) -> dict[str, str]:
    """The run tags carrying `heal` (per source, the first day to fetch again)."""
    return {f"{HEAL_TAG_PREFIX}{source}": day.isoformat() for source, day in heal.items()}


def heal_of(tags: Mapping[str, str]) -> dict[str, date]:
    """What a run heals, from its tags."""
    return {
        key.removeprefix(HEAL_TAG_PREFIX): date.fromisoformat(value)
        for key, value in tags.items()
        if key.startswith(HEAL_TAG_PREFIX)
    }


def plan_daily(
    lake: Lake,
    accounts: Iterable[str],
    settings: Settings,
    sources: Iterable[Source] = SOURCES,
    heal: Mapping[str, date] | None = None,
) -> DailyPlan:
    """The plan for `accounts` and `sources` (the dated ones) from what the lake holds now, on
    the settings' day, lookback and first day; `heal`: per source, a day whose last attempt
    failed, from which every account is fetched again."""
    accounts = sorted(accounts)
    seed_coverage(lake)
    coverage = read_coverage(lake, accounts)
    pending = lake.earliest_by_account(
        SELLER_PRODUCT_METRICS.name, PENDING, pending_since(coverage, settings.today), accounts
    )
    return daily_starts(
        coverage,
        pending,
        accounts,
        settings.today,
        settings.lookback_days,
        settings.first_day,
        sources,
        heal,
    )


def pending_since(coverage: Spans, today: date) -> date:
    """The first day pending economics are looked for: PENDING_HORIZON_DAYS before the oldest
    of the accounts' newest seller days (today's, when none is held). A daily job that runs
    40 days late still finds the rows the last run left pending, and asks for them again."""
    newest = [
        spans[-1][1]
        for (_, table), spans in coverage.items()
        if table == SELLER_PRODUCT_METRICS.name
    ]
    return min([today, *newest]) - timedelta(days=PENDING_HORIZON_DAYS)


def daily_starts(
    coverage: Spans,
    pending: Mapping[str, date],
    accounts: Iterable[str],
    today: date,
    lookback_days: int,
    first_day: date,
    sources: Iterable[Source] = SOURCES,
    heal: Mapping[str, date] | None = None,
) -> DailyPlan:
    """Per dated source and account, the earliest of: the lookback's first day, each of the
    source's tables' first day not covered within the horizon (and the source's retention),
    the first day of pending economics, and the source's first day to heal within the horizon.
    An account the coverage has never seen starts on `first_day`; none starts before it."""
    yesterday = today - timedelta(days=1)
    lookback = yesterday - timedelta(days=lookback_days - 1)
    seen = {account for account, _ in coverage}
    heal = heal or {}
    starts: dict[str, dict[str, date]] = {}
    for source in (s for s in sources if s.dated):
        floor = _floor(source, today, first_day)
        healed = max(floor, heal.get(source.name, yesterday))
        starts[source.name] = {
            account: max(
                first_day,
                min(healed, _start(source, account, coverage, pending, lookback, floor, yesterday))
                if account in seen
                else first_day,
            )
            for account in accounts
        }
    return DailyPlan(starts, yesterday, dict(heal or {}))


def _floor(source: Source, today: date, first_day: date) -> date:
    """The first day a gap of `source` is looked for: within the horizon, the source's
    retention and the warehouse's days."""
    floors = [today - timedelta(days=CATCH_UP_HORIZON_DAYS), first_day]
    return max([*floors, source.oldest_answered(today) or first_day])


def _start(
    source: Source,
    account: str,
    coverage: Spans,
    pending: Mapping[str, date],
    lookback: date,
    floor: date,
    yesterday: date,
) -> date:
    start = lookback
    for output in source.outputs:
        name = output.schema.name
        gap = first_uncovered(coverage.get((account, name), []), floor, yesterday)
        if gap is not None:
            start = min(start, gap)
        if name == SELLER_PRODUCT_METRICS.name and account in pending:
            start = min(start, pending[account])
    return start
