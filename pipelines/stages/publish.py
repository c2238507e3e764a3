"""Publishing: a window's partitions that kept their contract, from the spools to the lake;
the others keep what the lake held before."""

from dataclasses import dataclass
from datetime import date, datetime

import polars as pl

from pipelines.destination import Destination
from pipelines.sources.model import Source
from pipelines.stages.check import keeping_contract, snapshot_keeps_contract
from pipelines.stages.outcome import Outcomes, TableOutcome
from pipelines.stages.typed import Spools
from transforms.restatements import largest_share, restatements
from warehouse.coverage import read_coverage
from warehouse.schemas import RESTATEMENTS, Layout, TableSchema
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
            record_restatements(dest, schema, rows, good_days, covered, outcome)
        outcome.files += dest.lake.publish(
            schema, rows, good_days, covered.accounts, covered.run_id
        )
        outcome.published(rows.select("date", "account_id"))
        outcome.partitions += len(good_days)


def record_restatements(
    dest: Destination,
    schema: TableSchema,
    rows: pl.DataFrame,
    days: list[date],
    covered: Covered,
    outcome: TableOutcome,
) -> None:
    """Append to `restatements` what replacing these accounts' `days` with `rows` changes,
    before the replace commits (transforms/restatements.py): a day first published records
    nothing, a day published before (the lake's coverage says so: a day may have had no
    rows) only the cells that differ."""
    again = published_before(dest, schema.name, covered.accounts, days)
    if again.is_empty():
        return
    held = dest.lake.scan(schema.name, days=days, accounts=covered.accounts)
    before = schema.conformed(held).collect().join(again, on=["account_id", "date"], how="semi")
    after = rows.join(again, on=["account_id", "date"], how="semi")
    changed = restatements(schema, before, after, covered.run_id, covered.extracted_at)
    dest.lake.append(RESTATEMENTS, changed, covered.run_id)
    outcome.restated(changed, largest_share(schema, changed, before))


def published_before(
    dest: Destination, table: str, accounts: list[str], days: list[date]
) -> pl.DataFrame:
    """The (account_id, date) pairs of `accounts` x `days` the lake already holds complete."""
    spans = read_coverage(dest.lake, accounts)
    pairs = [
        (account, day)
        for account in accounts
        for day in days
        if any(first <= day <= last for first, last in spans.get((account, table), ()))
    ]
    return pl.DataFrame(pairs, schema={"account_id": pl.String, "date": pl.Date}, orient="row")


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
