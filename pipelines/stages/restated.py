"""Restatements: what a replace changes in days already published, recorded before it commits,
and the same record replayed from the raw pages by a rebuild.

A run compares the rows the lake holds of the days it replaces with the rows replacing them
(`record_restatements`, called by the publish stage). The raw pages keep every fetch of every
window (`warehouse/raw.py`), so a rebuild replays them in the order they were fetched, each
fetch of a day against the one before it (`replay_restatements`): the same cells, values,
times and runs as the runs recorded, for the days it rebuilds, whatever the lake lost.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime

import polars as pl

from pipelines.destination import Destination
from pipelines.sources.model import Source
from pipelines.stages.check import keeping_contract
from pipelines.stages.land import reread
from pipelines.stages.outcome import TableOutcome, new_outcomes
from pipelines.stages.typed import Origin, Typist, spools
from transforms.restatements import largest_share, restatements
from warehouse.coverage import read_coverage
from warehouse.raw import Fetch
from warehouse.schemas import RESTATEMENTS, Layout, TableSchema

DAY_KEY = ["account_id", "date"]


def record_restatements(
    dest: Destination,
    schema: TableSchema,
    rows: pl.DataFrame,
    days: list[date],
    accounts: list[str],
    run: tuple[str, datetime | None],
    outcome: TableOutcome,
) -> None:
    """Append to `restatements` what replacing `accounts`' `days` with `rows` changes, before
    the replace commits (transforms/restatements.py): a day first published records nothing,
    a day published before (the lake's coverage says so: a day may have had no rows) only
    the cells that differ. `run`: the replacing run's id and when it fetched."""
    again = published_before(dest, schema.name, accounts, days)
    if again.is_empty():
        return
    held = dest.lake.scan(schema.name, days=days, accounts=accounts)
    before = schema.conformed(held).collect().join(again, on=DAY_KEY, how="semi")
    after = rows.join(again, on=DAY_KEY, how="semi")
    changed = restatements(schema, before, after, *run)
    dest.lake.append(RESTATEMENTS, changed, run[0])
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


def replay_restatements(dest: Destination, source: Source, first: date, last: date) -> int:
    """Re-derive the restatements of [first, last] of a dated source's daily facts from every
    fetch the raw pages keep, and replace what the lake records of those days and accounts;
    return the cells recorded. A day's first fetch records nothing; each later fetch what
    differs from the fetch before it, as its run recorded it."""
    facts = [o.schema for o in source.outputs if o.schema.layout is Layout.DAILY_FACT]
    fetches = dest.raw.every_fetch(source.name, first, last) if facts else []
    if not fetches:
        return 0
    accounts = sorted({fetch.account for fetch in fetches})
    replayed: list[pl.DataFrame] = []
    for account in accounts:
        said: dict[str, Said] = {}
        for fetch in (f for f in fetches if f.account == account):
            for schema, rows, days in fetched_rows(dest, source, fetch, facts):
                before = said.setdefault(schema.name, Said(schema.concat([]), set()))
                again = pl.col("date").is_in(sorted(before.days & set(days)))
                old = schema.conformed(before.rows.lazy()).collect()
                replayed.append(
                    restatements(schema, old.filter(again), rows.filter(again), *fetched_by(fetch))
                )
                before.take(rows, days)
    cells = pl.concat(replayed)
    dest.lake.republish_restatements([s.name for s in facts], cells, accounts, first, last)
    return cells.height


@dataclass
class Said:
    """What the fetches replayed so far said of one table's days: each day's rows as last
    fetched, and the days fetched (a day may have had no rows)."""

    rows: pl.DataFrame
    days: set[date]

    def take(self, rows: pl.DataFrame, days: list[date]) -> None:
        """A newer fetch's rows replace its days' (the lake's replace, replayed)."""
        kept = self.rows.filter(~pl.col("date").is_in(days))
        self.rows = pl.concat([kept, rows], how="diagonal_relaxed")
        self.days |= set(days)


def fetched_by(fetch: Fetch) -> tuple[str, datetime]:
    """The run that made a fetch, and when it fetched (its manifest's)."""
    extracted_at = datetime.fromisoformat(fetch.manifest["extracted_at"]).astimezone(UTC)
    return fetch.manifest.get("run_id", ""), extracted_at


def fetched_rows(
    dest: Destination, source: Source, fetch: Fetch, facts: list[TableSchema]
) -> Iterator[tuple[TableSchema, pl.DataFrame, list[date]]]:
    """One fetch's rows of its days, per table of `facts`, typed as its run typed them, in
    the table's schema as evolved; only the days that kept the contract (those its run
    published), with those days."""
    outcomes = new_outcomes(source)
    reference = date.fromisoformat(fetch.manifest["reference"])
    run_id, extracted_at = fetched_by(fetch)
    context = dest.context(reference, run_id)
    with spools(dest, source) as tables:
        typist = Typist(dest, source, tables, outcomes)
        origin = Origin(fetch.account, extracted_at, context)
        typist.type_pages(reread(dest.raw, fetch, context.pseudonym_key), origin, fetch.days)
        for fact in facts:
            spool = tables[fact.name]
            rows, days = keeping_contract(
                spool.schema, spool.frame(), list(fetch.days), outcomes[fact.name]
            )
            yield spool.schema, rows, days
