"""Typing: landed pages → typed frames, a batch of rows at a time, spooled until published.

Each batch first gains a column for every field the service sent that its table lacks (schema
evolution, logged); then it is typed whole (vectorised). A bad value makes just that batch
retyped record by record, so only the bad value's partition is held back.
"""

from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import date, datetime

import polars as pl

from pipelines.client.paging import Page
from pipelines.destination import Destination
from pipelines.shaping import Context
from pipelines.sources.model import Output, Source, page_rows
from pipelines.stages.land import Located
from pipelines.stages.outcome import Outcomes, TableOutcome
from transforms.evolution import evolve, unknown_values
from transforms.records import RecordError
from warehouse.spool import Spool

BATCH_ROWS = 5_000  # rows typed at once: enough to amortise typing; as dicts, ~20 MB

Spools = dict[str, Spool]


@dataclass(frozen=True)
class Origin:
    """Where a fetch's pages came from: its account, when it was fetched, its context."""

    account_id: str
    extracted_at: datetime
    context: Context


@contextmanager
def spools(dest: Destination, source: Source) -> Iterator[Spools]:
    """One spool per table the source feeds, removed once the window is published; each
    starts from its table's schema as evolved so far."""
    opened = {
        o.schema.name: Spool(dest.staging, dest.schemas.schema(o.schema)) for o in source.outputs
    }
    try:
        yield opened
    finally:
        for spool in opened.values():
            spool.close()


class Batches:
    """Pages gathered until they hold BATCH_ROWS rows, then handed to `flush` together."""

    def __init__(self, flush: Callable[[list[Located]], None]) -> None:
        self.flush = flush
        self.pages: list[Located] = []
        self.rows = 0

    def add(self, where: str, page: Page) -> None:
        self.pages.append((where, page))
        self.rows += len(page.rows)
        if self.rows >= BATCH_ROWS:
            self.close()

    def close(self) -> None:
        if self.pages:
            self.flush(self.pages)
        self.pages, self.rows = [], 0


class Typist:
    """Types the pages of one window's fetches into the spools of the tables they feed."""

    def __init__(
        self, dest: Destination, source: Source, tables: Spools, outcomes: Outcomes
    ) -> None:
        self.dest, self.source, self.tables, self.outcomes = dest, source, tables, outcomes
        self.unfolded = frozenset(name for output in source.outputs for name in output.reads)

    async def type_stream(self, pages: AsyncIterator[Located], origin: Origin) -> None:
        batches = Batches(lambda batch: self._type(batch, origin, None))
        async for where, page in pages:
            batches.add(where, page)
        batches.close()

    def type_pages(
        self, pages: Iterable[Located], origin: Origin, keep: tuple[date, ...] | None
    ) -> None:
        """`keep`: the days a rebuild takes from this fetch (a newer one covers the others)."""
        batches = Batches(lambda batch: self._type(batch, origin, keep))
        for where, page in pages:
            batches.add(where, page)
        batches.close()

    def _type(self, batch: list[Located], origin: Origin, keep: tuple[date, ...] | None) -> None:
        for output in self.source.outputs:
            spool = self.tables[output.schema.name]
            frame = self._evolved_frame(output, spool, batch, origin)
            if keep is not None:
                frame = frame.filter(pl.col("date").is_in(keep))
            spool.append(frame, origin.account_id)

    def _evolved_frame(
        self, output: Output, spool: Spool, batch: list[Located], origin: Origin
    ) -> pl.DataFrame:
        """The batch typed in the table's schema, first extended by every field the service
        sent that it lacks (or widened for one), each change logged with its first day."""
        outcome = self.outcomes[output.schema.name]
        records = [record for _, page in batch for record in output.records(page)]
        changes = evolve(spool.schema, unknown_values(records, output.schema, self.unfolded))
        if changes:
            spool.schema = spool.schema.extended(tuple(c.column for c in changes))
            self.dest.lake.conform(spool.schema)
        frame = typed(replace(output, schema=spool.schema), batch, origin, outcome)
        if changes:
            first = first_date(frame, [c.column.name for c in changes], origin.context)
            recorded = self.dest.schemas.record(
                spool.schema.name, changes, first, origin.context.run_id
            )
            outcome.schema_changes += [change.describe() for change in recorded]
        return frame


def typed(
    output: Output, pages: list[Located], origin: Origin, outcome: TableOutcome
) -> pl.DataFrame:
    """A batch's typed frame. When a value is bad, the batch is retyped record by record: the
    rows of the bad value's partition are held back, the others still go through, and the raw
    pages are kept whole."""
    fetched = (origin.account_id, origin.extracted_at, origin.context)
    try:
        return output.frame(pages, *fetched)
    except RecordError:
        pass
    single_output = Output(output.schema, page_rows, output.constants, output.shape)
    good = []
    for where, page in pages:
        exact = page.exact()
        for record in output.records(exact):
            single = [(where, Page(page.path, page.params, {**exact.body, "data": [record]}))]
            try:
                good.append(single_output.frame(single, *fetched))
            except RecordError as error:
                outcome.hold(row_day(output, record, page), str(error))
    return output.schema.concat(good)


def row_day(output: Output, record: dict, page: Page) -> date | None:
    """The partition a record belongs to, read as plainly as possible (it failed typing)."""
    for value in (record.get("date"), output.constants(page).get("date")):
        try:
            return date.fromisoformat(str(value)[:10])
        except ValueError:
            continue
    return None


def first_date(frame: pl.DataFrame, columns: list[str], context: Context) -> date | None:
    """The first partition holding a value of the new columns (a snapshot: the run's day)."""
    if "date" not in frame.columns:
        return context.reference
    holding = frame.filter(pl.any_horizontal(pl.col(c).is_not_null() for c in columns))
    return holding["date"].min() if holding.height else None
