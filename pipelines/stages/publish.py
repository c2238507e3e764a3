"""Publishing: a window's partitions that kept their contract, from the spools to the lake;
the others keep what the lake held before."""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date

import polars as pl

from pipelines.destination import Destination
from pipelines.sources.model import Source
from pipelines.stages.check import keeping_contract, snapshot_keeps_contract
from pipelines.stages.outcome import Outcomes, TableOutcome
from pipelines.stages.typed import Spools
from warehouse.spool import Spool


@dataclass(frozen=True)
class Covered:
    """What a window covers: its days for these accounts, in the run `run_id`. Publishing
    replaces exactly these accounts' rows on these days, so runs over other accounts can
    publish into the same tables at the same time."""

    days: list[date]
    accounts: list[str]
    run_id: str = ""


def publish(
    dest: Destination, source: Source, tables: Spools, covered: Covered, outcomes: Outcomes
) -> None:
    """Publish each table of a window (a snapshot: of its one day)."""
    for output in source.outputs:
        spool = tables[output.schema.name]
        outcome = outcomes[output.schema.name]
        if source.dated:
            publish_dated(dest, spool, covered, outcome)
        else:
            publish_snapshot(dest, spool, covered, outcome)


def publish_dated(dest: Destination, spool: Spool, covered: Covered, outcome: TableOutcome) -> None:
    """Publish the days of the window that keep their contract, in one commit: each slice of
    days is checked, then the good days' rows stream to the lake."""
    if outcome.held_all:
        return
    days = [day for day in covered.days if day not in outcome.held_days]
    if not days:
        return
    schema = spool.schema
    outside = spool.first_date_outside(days)
    if outside is not None:
        outcome.held_back.append(
            f"{schema.name} window {days[0]}..{days[-1]}: a row is dated "
            f"{outside}, outside the requested window"
        )
    good_days: list[date] = []
    for slice_days, frame in spool.slices(days):
        good_days += keeping_contract(schema, frame, slice_days, outcome)[1]

    dates: list[pl.DataFrame] = []  # of the rows published, for the counts per partition

    def good_rows() -> Iterator[pl.DataFrame]:
        """The window's rows on the days that kept their contract, read again slice by slice:
        they go to the lake in one commit, and only one slice is in memory at a time."""
        dates.clear()  # a retried commit streams them again
        for _, frame in spool.slices(good_days):
            good = frame.filter(pl.col("date").is_in(good_days))
            dates.append(good.select("date"))
            yield good

    outcome.files += dest.lake.publish(
        schema, good_rows, good_days, covered.accounts, covered.run_id
    )
    if dates:
        outcome.published(pl.concat(dates))
    outcome.partitions += len(good_days)


def publish_snapshot(
    dest: Destination, spool: Spool, covered: Covered, outcome: TableOutcome
) -> None:
    """Publish current state as the partition of the day it was taken."""
    day = covered.days[0]
    if outcome.held_all or outcome.held_days:
        return
    frame = spool.frame()
    if not snapshot_keeps_contract(spool.schema, frame, day, outcome):
        return
    dated = frame.with_columns(pl.lit(day).alias("date"))
    outcome.files += dest.lake.publish(spool.schema, dated, [day], covered.accounts, covered.run_id)
    outcome.published(dated)
    outcome.partitions = 1
