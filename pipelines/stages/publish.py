"""Publishing: a window's partitions that kept their contract, from the spools to the lake;
the others keep what the lake held before."""

from dataclasses import dataclass
from datetime import date, datetime

import polars as pl

from pipelines.destination import Destination
from pipelines.sources.model import Source
from pipelines.stages.check import keeping_contract, snapshot_keeps_contract
from pipelines.stages.outcome import Outcomes, TableOutcome
from pipelines.stages.restated import record_restatements
from pipelines.stages.typed import Spools
from warehouse.schemas import Layout
from warehouse.spool import Spool


@dataclass(frozen=True)
class Covered:
    """What a window covers: its days for these accounts, in the run `run_id`. Publishing
    replaces exactly these accounts' rows on these days, so runs over other accounts can
    publish into the same tables at the same time."""

    days: list[date]
    accounts: list[str]
    run_id: str = ""
    extracted_at: datetime | None = None  # when a run fetched them; None: a rebuild's fetches


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
    """Publish the days of the window that keep their contract, a slice of whole days at a
    time: each slice is checked, then its good days' rows go to the lake in one commit.

    A commit per slice, not per window: Delta's writer holds every file of a commit in memory
    until it commits (about three times the rows' Arrow size), so a month of a large account
    in one commit was most of a run's peak memory. Each day is still replaced whole, in one
    commit, as the days of different windows always were."""
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
    for slice_days, frame in spool.slices(days):
        rows, good_days = keeping_contract(schema, frame, slice_days, outcome)
        if not good_days:
            continue
        if schema.layout is Layout.DAILY_FACT:
            run = (covered.run_id, covered.extracted_at)
            record_restatements(dest, schema, rows, good_days, covered.accounts, run, outcome)
        outcome.files += dest.lake.publish(
            schema, rows, good_days, covered.accounts, covered.run_id
        )
        outcome.published(rows.select("date", "account_id"))
        outcome.partitions += len(good_days)


def publish_snapshot(
    dest: Destination, spool: Spool, covered: Covered, outcome: TableOutcome
) -> None:
    """Publish current state as the partition of the day it was taken, and as the current
    rows of its accounts."""
    day = covered.days[0]
    if outcome.held_all or outcome.held_days:
        return
    frame = spool.frame()
    if not snapshot_keeps_contract(spool.schema, frame, day, outcome):
        return
    dated = frame.with_columns(pl.lit(day).alias("date"))
    lake = dest.lake
    outcome.files += lake.publish(spool.schema, dated, [day], covered.accounts, covered.run_id)
    lake.publish_current(spool.schema, dated, day, covered.accounts, covered.run_id)
    outcome.published(dated)
    outcome.partitions = 1
