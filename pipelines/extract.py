"""Extraction of one source: fetch → land raw → type → check contracts → publish to the lake.

A `Source` is one kind of request (a cursor list, a metrics resource, the per-campaign
optimization history …) and the tables its pages feed: the history's `data` and
`other_changes`, or a cluster's products and keywords, come from the same pages, fetched once.

Dated sources are processed one window (at most a month) at a time, and a window's typed
batches are spooled to Parquet (`warehouse/spool.py`) until it is published, so memory stays
flat however long the range and however large the account; each window's partitions are
published before the next is fetched.
A partition that breaks its contract is held back, the others are published, and the outcome
names every partition held back. `rebuild_source` does the same from raw pages, spending no
credits.
"""

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from functools import cached_property
from pathlib import Path

import orjson
import polars as pl

from pipelines.client.accounts import AccountRef
from pipelines.client.paging import Page
from pipelines.session import Session
from transforms.evolution import evolve, unknown_values
from transforms.meaning import pseudonymize_text
from transforms.records import InexactNumber, RecordError, records_to_frame
from warehouse.contracts import ContractError, validate
from warehouse.lake import Lake
from warehouse.raw import RawStore
from warehouse.schema_log import SchemaLog
from warehouse.schemas import Layout, TableSchema
from warehouse.secrets import pseudonym_key
from warehouse.spec import STRICTEST_DAILY_WINDOW_DAYS
from warehouse.spool import Spool

# One window at a time: the strictest daily cap the spec states (warehouse/spec.py).
WINDOW_DAYS = STRICTEST_DAILY_WINDOW_DAYS
BATCH_ROWS = 5_000  # rows typed at once: enough to amortise typing; as dicts, ~20 MB
PageStream = Callable[[Session, AccountRef, date, date], AsyncIterator[tuple[str, Page]]]


@dataclass(frozen=True)
class Context:
    """What shaping may depend on besides the rows: the run's reference date and the key of
    the e-mail pseudonyms; and the run that records any column the service adds. A rebuild
    from raw uses the fetch's own reference date."""

    reference: date
    pseudonym_key: bytes
    run_id: str = ""


def unchanged(frame: pl.DataFrame, context: Context) -> pl.DataFrame:
    return frame


def page_rows(page: Page) -> list[dict]:
    return page.rows


def no_constants(page: Page) -> dict[str, object]:
    return {}


@dataclass(frozen=True)
class Output:
    """One table fed by a source's pages: which records, which constants, which shaping."""

    schema: TableSchema
    records: Callable[[Page], list[dict]] = page_rows
    constants: Callable[[Page], dict[str, object]] = no_constants
    shape: Callable[[pl.DataFrame, Context], pl.DataFrame] = unchanged
    # Fields of the page's rows this output unfolds into its own records (a cluster's
    # `products`): known to the source, though not columns of its sibling tables.
    reads: tuple[str, ...] = ()

    def frame(
        self,
        pages: list[tuple[str, Page]],
        account_id: str,
        extracted_at: datetime,
        context: Context,
    ) -> pl.DataFrame:
        """One typed frame for a batch of pages: typing is vectorised, so a batch costs about
        what one page does. Money that came as a JSON float is re-read from the pages' text."""
        try:
            return self._frame(pages, account_id, extracted_at, context)
        except InexactNumber:
            exact = [(where, page.exact()) for where, page in pages]
            return self._frame(exact, account_id, extracted_at, context)

    def _frame(
        self,
        pages: list[tuple[str, Page]],
        account_id: str,
        extracted_at: datetime,
        context: Context,
    ) -> pl.DataFrame:
        records: list[dict] = []
        constants: dict[str, list] = {}
        for _, page in pages:
            rows = self.records(page)
            records += rows
            for name, value in self.constants(page).items():
                constants.setdefault(name, []).extend([value] * len(rows))
        where = pages[0][0] if len(pages) == 1 else f"{pages[0][0]} .. {pages[-1][0]}"
        frame = records_to_frame(
            records,
            self.schema,
            account_id=account_id,
            extracted_at=extracted_at,
            where=where,
            constants=constants,
        )
        return self.shape(frame, context).select(self.schema.column_names)


@dataclass(frozen=True)
class Source:
    """A request kind and the tables it feeds; `name` is its folder under raw/."""

    name: str
    stream: PageStream
    outputs: tuple[Output, ...]
    retention_days: int | None = None  # how far back the service still answers

    @property
    def layout(self) -> Layout:
        return self.outputs[0].schema.layout

    @property
    def dated(self) -> bool:
        return self.layout is not Layout.SNAPSHOT


@dataclass(frozen=True)
class Destination:
    """Everything a run writes, under `$ADWH_HOME`."""

    home: Path

    @property
    def lake(self) -> Lake:
        return Lake(self.home / "lake", self.home / "staging")

    @property
    def raw(self) -> RawStore:
        return RawStore(self.home / "raw")

    @cached_property
    def schemas(self) -> SchemaLog:
        return SchemaLog(self.home)

    def context(self, reference: date, run_id: str = "") -> Context:
        return Context(reference, pseudonym_key(self.home), run_id)


@dataclass
class TableOutcome:
    table: str
    rows: int = 0
    partitions: int = 0
    files: int = 0
    schema_changes: list[str] = field(default_factory=list)
    held_back: list[str] = field(default_factory=list)
    held_days: set[date] = field(default_factory=set)  # partitions with a bad value
    held_all: bool = False  # a bad value whose partition cannot be told
    rows_by_day: dict[date, int] = field(default_factory=dict)  # published, per partition

    def hold(self, day: date | None, message: str) -> None:
        """Keep a partition's previous state: something in it cannot be published."""
        self.held_back.append(message if day is None else f"{message} [partition {day}]")
        if day is None:
            self.held_all = True
        else:
            self.held_days.add(day)

    def published(self, frame: pl.DataFrame) -> None:
        """Count a published frame's rows, in all and per partition."""
        self.rows += frame.height
        for day, rows in frame.group_by("date").len().iter_rows():
            self.rows_by_day[day] = self.rows_by_day.get(day, 0) + rows

    def partition_metadata(self, day: date) -> dict[str, object]:
        """What one partition of a run holds: its own rows, and whether it was held back."""
        return {"rows": self.rows_by_day.get(day, 0), "held_back": int(day in self.held_days)}

    def as_metadata(self) -> dict[str, object]:
        return {
            "rows": self.rows,
            "partitions": self.partitions,
            "lake_files": self.files,
            "schema_changes": "; ".join(self.schema_changes) or "none",
            "held_back": len(self.held_back),
        }


Outcomes = dict[str, TableOutcome]


def days_of(start: date, end: date) -> list[date]:
    return [start + timedelta(days=i) for i in range((end - start).days + 1)]


def month_windows(start: date, end: date) -> list[tuple[date, date]]:
    days = days_of(start, end)
    return [
        (days[i], days[min(i + WINDOW_DAYS, len(days)) - 1])
        for i in range(0, len(days), WINDOW_DAYS)
    ]


def concat(schema: TableSchema, frames: list[pl.DataFrame]) -> pl.DataFrame:
    return pl.concat(frames) if frames else pl.DataFrame(schema=schema.polars_schema)


# ---------------------------------------------------------------------------- publishing
def publish_dated(
    dest: Destination,
    schema: TableSchema,
    spool: Spool,
    days: list[date],
    outcome: TableOutcome,
) -> None:
    """Publish the partitions of `days` that keep their contract; hold back the others."""
    if outcome.held_all:
        return
    days = [day for day in days if day not in outcome.held_days]
    if not days:
        return
    outside = spool.first_date_outside(days)
    if outside is not None:
        outcome.held_back.append(
            f"{schema.name} window {days[0]}..{days[-1]}: a row is dated "
            f"{outside}, outside the requested window"
        )
    for slice_days, frame in spool.slices(days):
        good, good_days = _keeping_contract(schema, frame, slice_days, outcome)
        outcome.files += dest.lake.publish(schema, good, good_days)
        outcome.published(good)
        outcome.partitions += len(good_days)


def _keeping_contract(
    schema: TableSchema, frame: pl.DataFrame, days: list[date], outcome: TableOutcome
) -> tuple[pl.DataFrame, list[date]]:
    """The rows and days that keep the contract. The window is checked whole (one Pandera
    call); only when it fails is it checked day by day, to hold back just the broken days."""
    try:
        validate(schema, frame, f"{days[0]}..{days[-1]}")
        return frame, days
    except ContractError:
        pass
    by_day = {key[0]: part for key, part in frame.partition_by("date", as_dict=True).items()}
    good_days, good_frames = [], []
    for day in days:
        part = by_day.get(day, concat(schema, []))
        try:
            validate(schema, part, day.isoformat())
        except ContractError as error:
            outcome.held_back.append(str(error))
            continue
        good_days.append(day)
        good_frames.append(part)
    return concat(schema, good_frames), good_days


def publish_snapshot(
    dest: Destination, schema: TableSchema, frame: pl.DataFrame, day: date, outcome: TableOutcome
) -> None:
    if outcome.held_all or outcome.held_days:
        return
    try:
        validate(schema, frame, f"snapshot {day}")
    except ContractError as error:
        outcome.held_back.append(str(error))
        return
    dated = frame.with_columns(pl.lit(day).alias("date"))
    outcome.files += dest.lake.publish(schema, dated, [day])
    outcome.published(dated)
    outcome.partitions = 1


Spools = dict[str, Spool]


@contextmanager
def spools(dest: Destination, source: Source) -> Iterator[Spools]:
    """One spool per table the source feeds, removed once the window is published; each
    starts from its table's schema as evolved so far."""
    opened = {
        o.schema.name: Spool(dest.home / "staging", dest.schemas.schema(o.schema))
        for o in source.outputs
    }
    try:
        yield opened
    finally:
        for spool in opened.values():
            spool.close()


def _publish(
    dest: Destination,
    source: Source,
    frames: Spools,
    days: list[date],
    outcomes: Outcomes,
) -> None:
    for output in source.outputs:
        spool = frames[output.schema.name]
        outcome = outcomes[output.schema.name]
        if source.dated:
            publish_dated(dest, spool.schema, spool, days, outcome)
        else:
            publish_snapshot(dest, spool.schema, spool.frame(), days[0], outcome)


# ---------------------------------------------------------------------------- from the service
def _row_day(output: Output, record: dict, page: Page) -> date | None:
    """The partition a record belongs to, read as plainly as possible (it failed typing)."""
    for value in (record.get("date"), output.constants(page).get("date")):
        try:
            return date.fromisoformat(str(value)[:10])
        except ValueError:
            continue
    return None


def _typed(
    output: Output,
    pages: list[tuple[str, Page]],
    account_id: str,
    extracted_at: datetime,
    context: Context,
    outcome: TableOutcome,
) -> pl.DataFrame:
    """A batch's typed frame. When a value is bad, the batch is retyped record by record: the
    rows of the bad value's partition are held back, the others still go through, and the raw
    pages are kept whole."""
    try:
        return output.frame(pages, account_id, extracted_at, context)
    except RecordError:
        pass
    single_output = Output(output.schema, page_rows, output.constants, output.shape)
    good = []
    for where, page in pages:
        exact = page.exact()
        for record in output.records(exact):
            single = [(where, Page(page.path, page.params, {**exact.body, "data": [record]}))]
            try:
                good.append(single_output.frame(single, account_id, extracted_at, context))
            except RecordError as error:
                outcome.hold(_row_day(output, record, page), str(error))
    return concat(output.schema, good)


class Batches:
    """Pages gathered until they hold BATCH_ROWS rows, then handed to `flush` together."""

    def __init__(self, flush: Callable[[list[tuple[str, Page]]], None]) -> None:
        self.flush = flush
        self.pages: list[tuple[str, Page]] = []
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


def _type_batch(
    dest: Destination,
    source: Source,
    pages: list[tuple[str, Page]],
    account_id: str,
    extracted_at: datetime,
    context: Context,
    frames: Spools,
    outcomes: Outcomes,
    keep: list[date] | None = None,
) -> None:
    """Type a batch of pages into each table the source feeds, first adding a column for
    every field the service sent that the table does not have yet (or widening one).
    `keep`: the days a rebuild takes from this fetch (a newer one covers the others)."""
    unfolded = frozenset(name for output in source.outputs for name in output.reads)
    for output in source.outputs:
        spool, outcome = frames[output.schema.name], outcomes[output.schema.name]
        records = [record for _, page in pages for record in output.records(page)]
        changes = evolve(spool.schema, unknown_values(records, output.schema, unfolded))
        if changes:
            spool.schema = spool.schema.extended(tuple(c.column for c in changes))
            dest.lake.conform(spool.schema)
        frame = _typed(
            replace(output, schema=spool.schema),
            pages,
            account_id,
            extracted_at,
            context,
            outcome,
        )
        if changes:
            first = _first_date(frame, [c.column.name for c in changes], context)
            recorded = dest.schemas.record(spool.schema.name, changes, first, context.run_id)
            outcome.schema_changes += [change.describe() for change in recorded]
        if keep is not None:
            frame = frame.filter(pl.col("date").is_in(keep))
        spool.append(frame)


def _first_date(frame: pl.DataFrame, columns: list[str], context: Context) -> date | None:
    """The first partition holding a value of the new columns (a snapshot: the run's day)."""
    if "date" not in frame.columns:
        return context.reference
    holding = frame.filter(pl.any_horizontal(pl.col(c).is_not_null() for c in columns))
    return holding["date"].min() if holding.height else None


def private(page: Page, key: bytes) -> Page:
    """The page with every e-mail address replaced by its keyed pseudonym, in its bytes and
    its decoded body alike: nothing after this point, the raw landing included, sees one."""
    content = page.content or orjson.dumps(page.body)
    hidden = pseudonymize_text(content, key)
    if hidden == content:
        return Page(page.path, page.params, page.body, content)
    return Page(page.path, page.params, orjson.loads(hidden), hidden)


async def _land(
    dest: Destination,
    source: Source,
    folder: Path,
    pages: AsyncIterator[tuple[str, Page]],
    account_id: str,
    extracted_at: datetime,
    context: Context,
    frames: Spools,
    outcomes: Outcomes,
) -> None:
    """Land every page raw as it arrives, then type the pages in batches of rows."""
    dest.raw.start(folder)
    batches = Batches(
        lambda batch: _type_batch(
            dest, source, batch, account_id, extracted_at, context, frames, outcomes
        )
    )
    number = 0
    async for where, received in pages:
        number += 1
        page = private(received, context.pseudonym_key)
        dest.raw.write(folder, number, page.path, page.params, page.content)
        batches.add(f"{where}, page {number}", page)
        # Pages already fetched are handed over without a pause; let the event loop send the
        # next requests and read answers between them, so the service never waits on us.
        await asyncio.sleep(0)
    batches.close()
    dest.raw.finish(
        folder,
        {
            "extracted_at": extracted_at.isoformat(),
            "pages": number,
            "reference": context.reference.isoformat(),
        },
    )


async def extract_source(
    session: Session,
    dest: Destination,
    source: Source,
    start: date,
    end: date,
    extracted_at: datetime,
    reference: date,
    run_id: str = "",
) -> Outcomes:
    """Fetch [start, end] (a dated source) or the snapshot of `start` (current state)."""
    outcomes = {o.schema.name: TableOutcome(o.schema.name) for o in source.outputs}
    context = dest.context(reference, run_id)
    if source.retention_days is not None:
        oldest = reference - timedelta(days=source.retention_days)
        if start < oldest:
            session.warnings.append(
                f"{source.name}: the service keeps {source.retention_days} days; days before "
                f"{oldest} were not asked for and keep what the warehouse already holds"
            )
            start = oldest
    if start > end:
        return outcomes
    windows = month_windows(start, end) if source.dated else [(start, start)]
    for first, last in windows:
        with spools(dest, source) as frames:
            for account in session.accounts:
                folder = (
                    dest.raw.window_dir(source.name, account.id, first, last)
                    if source.dated
                    else dest.raw.snapshot_dir(source.name, account.id, first)
                )
                await _land(
                    dest,
                    source,
                    folder,
                    source.stream(session, account, first, last),
                    account.id,
                    extracted_at,
                    context,
                    frames,
                    outcomes,
                )
            _publish(dest, source, frames, days_of(first, last), outcomes)
    return outcomes


# ---------------------------------------------------------------------------- from raw
def _raw_frames(
    dest: Destination,
    source: Source,
    folder: Path,
    account: str,
    manifest: dict,
    frames: Spools,
    outcomes: Outcomes,
    keep: list[date] | None,
    run_id: str,
) -> None:
    extracted_at = datetime.fromisoformat(manifest["extracted_at"]).astimezone(UTC)
    context = dest.context(date.fromisoformat(manifest["reference"]), run_id)
    batches = Batches(
        lambda batch: _type_batch(
            dest, source, batch, account, extracted_at, context, frames, outcomes, keep
        )
    )
    for number, (file, path, params, content) in enumerate(dest.raw.read(folder), start=1):
        page = private(Page(path, params, orjson.loads(content), content), context.pseudonym_key)
        if page.content != content:  # landed in clear by an earlier version: hide it now
            dest.raw.rewrite(file, path, params, page.content)
        batches.add(f"raw {folder}, page {number}", page)
    batches.close()


def rebuild_source(
    dest: Destination, source: Source, start: date, end: date, run_id: str = ""
) -> Outcomes:
    """Re-derive [start, end] from raw: for each day, the newest complete fetch covering it."""
    outcomes = {o.schema.name: TableOutcome(o.schema.name) for o in source.outputs}
    fetches = sorted(dest.raw.fetches(source.name), key=lambda f: f[2]["extracted_at"])
    if not source.dated:
        # Current state as of `end`: each account's newest snapshot fetched by then. A run
        # fetches it on its reference date, usually after the dates it extracted.
        newest: dict[str, tuple[str, Path, dict]] = {}
        for fetch in fetches:
            if _snapshot_day(fetch[1]) <= end:
                current = newest.get(fetch[0])
                if current is None or _snapshot_day(fetch[1]) >= _snapshot_day(current[1]):
                    newest[fetch[0]] = fetch
        if newest:
            day = max(_snapshot_day(folder) for _, folder, _ in newest.values())
            with spools(dest, source) as frames:
                for account, folder, manifest in newest.values():
                    _raw_frames(
                        dest, source, folder, account, manifest, frames, outcomes, None, run_id
                    )
                _publish(dest, source, frames, [day], outcomes)
        return outcomes
    for first, last in month_windows(start, end):
        newest: dict[tuple[str, date], Path] = {}
        for account, folder, _ in fetches:
            lo, hi = _window_of(folder)
            for day in days_of(max(lo, first), min(hi, last)):
                newest[(account, day)] = folder
        covered = sorted({day for _, day in newest})
        if not covered:
            continue  # raw holds nothing for this window: leave its partitions as they are
        with spools(dest, source) as frames:
            for account, folder, manifest in fetches:
                mine = [d for (a, d), f in newest.items() if a == account and f == folder]
                if mine:
                    _raw_frames(
                        dest, source, folder, account, manifest, frames, outcomes, mine, run_id
                    )
            _publish(dest, source, frames, covered, outcomes)
    return outcomes


def _snapshot_day(folder: Path) -> date:
    return date.fromisoformat(folder.name.removeprefix("snapshot="))


def _window_of(folder: Path) -> tuple[date, date]:
    first, _, last = folder.name.split("=", 1)[1].partition("_")
    return date.fromisoformat(first), date.fromisoformat(last or first)
