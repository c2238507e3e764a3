"""Extraction of one table: fetch → land raw → type → check contract → publish.

Daily facts are processed one capped window at a time, so memory stays flat however long the
range; each window's partitions are published (lake, then DuckDB) before the next is fetched.
A partition that breaks its contract is not published; the others are, and the run then fails
naming every partition it held back.
"""

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

import polars as pl

from pipelines.client.paging import cursor_pages
from pipelines.client.windowed import windowed_pages
from pipelines.client.windows import split
from pipelines.session import Session
from transforms.records import RecordError, records_to_frame, unknown_fields
from warehouse.contracts import ContractError, validate
from warehouse.lake import Lake
from warehouse.raw import RawStore
from warehouse.schemas import TableSchema
from warehouse.store import Store

DEFAULT_DAILY_WINDOW = 31


@dataclass(frozen=True)
class Destination:
    """Everything a run writes, under `$ADWH_HOME`."""

    home: Path

    @property
    def lake(self) -> Lake:
        return Lake(self.home / "lake", self.home / "staging")

    @property
    def store(self) -> Store:
        return Store(self.home / "warehouse.duckdb")

    @property
    def raw(self) -> RawStore:
        return RawStore(self.home / "raw")


@dataclass
class TableOutcome:
    table: str
    rows: int = 0
    partitions: int = 0
    files: int = 0
    unknown_fields: set[str] = field(default_factory=set)
    held_back: list[str] = field(default_factory=list)

    def as_metadata(self) -> dict[str, object]:
        return {
            "rows": self.rows,
            "partitions": self.partitions,
            "lake_files": self.files,
            "unknown_fields": ", ".join(sorted(self.unknown_fields)) or "none",
        }


def empty_frame(schema: TableSchema) -> pl.DataFrame:
    return pl.DataFrame(schema=schema.polars_schema)


def days_of(start: date, end: date) -> list[date]:
    return [start + timedelta(days=i) for i in range((end - start).days + 1)]


async def extract_daily_fact(
    session: Session,
    dest: Destination,
    schema: TableSchema,
    start: date,
    end: date,
    extracted_at: datetime,
) -> TableOutcome:
    outcome = TableOutcome(schema.name)
    window_days = session.caps.cap(schema.resource, "daily") or DEFAULT_DAILY_WINDOW
    for first, last in split(start, end, window_days):
        frames = []
        for account in session.accounts:
            folder = dest.raw.window_dir(schema.name, account.id, first, last)
            dest.raw.start(folder)
            number = 0
            async for (w_first, w_last), page in windowed_pages(
                session.client,
                session.caps,
                schema.resource,
                first,
                last,
                account=account.header,
            ):
                number += 1
                dest.raw.write(folder, number, page.body)
                frames.append(
                    records_to_frame(
                        page.rows,
                        schema,
                        account_id=account.id,
                        extracted_at=extracted_at,
                        where=f"window {w_first}..{w_last}, page {number}",
                    )
                )
                outcome.unknown_fields |= unknown_fields(page.rows, schema)
        frame = pl.concat(frames) if frames else empty_frame(schema)
        publish_daily(dest, schema, frame, first, last, outcome)
    if outcome.held_back:
        raise ContractError("; ".join(outcome.held_back))
    return outcome


def publish_daily(
    dest: Destination,
    schema: TableSchema,
    frame: pl.DataFrame,
    first: date,
    last: date,
    outcome: TableOutcome,
) -> None:
    """Publish the window's partitions that keep their contract; hold back the others."""
    outside = frame.filter((pl.col("date") < first) | (pl.col("date") > last))
    if len(outside):
        raise RecordError(
            schema.name,
            "date",
            outside["date"][0],
            f"row dated outside the requested window {first}..{last}",
        )
    good_days, good_frames = [], []
    by_day = {key[0]: part for key, part in frame.partition_by("date", as_dict=True).items()}
    for day in days_of(first, last):
        part = by_day.get(day, empty_frame(schema))
        try:
            validate(schema, part, day.isoformat())
        except ContractError as error:
            outcome.held_back.append(str(error))
            continue
        good_days.append(day)
        good_frames.append(part)
    good = pl.concat(good_frames) if good_frames else empty_frame(schema)
    outcome.files += dest.lake.publish(schema, good, good_days)
    dest.store.replace_dates(schema, good, good_days)
    outcome.rows += good.height
    outcome.partitions += len(good_days)


async def extract_snapshot(
    session: Session,
    dest: Destination,
    schema: TableSchema,
    today: date,
    extracted_at: datetime,
    params: dict | None = None,
) -> TableOutcome:
    """Current state: every record of a cursor list, replacing the table whole."""
    outcome = TableOutcome(schema.name)
    frames = []
    for account in session.accounts:
        folder = dest.raw.snapshot_dir(schema.name, account.id, today)
        dest.raw.start(folder)
        number = 0
        async for page in cursor_pages(
            session.client, f"/v1/{schema.resource}", params, account.header
        ):
            number += 1
            dest.raw.write(folder, number, page.body)
            frames.append(
                records_to_frame(
                    page.rows,
                    schema,
                    account_id=account.id,
                    extracted_at=extracted_at,
                    where=f"snapshot {today}, page {number}",
                )
            )
            outcome.unknown_fields |= unknown_fields(page.rows, schema)
    frame = pl.concat(frames) if frames else empty_frame(schema)
    validate(schema, frame, f"snapshot {today}")
    outcome.files += dest.lake.publish(
        schema, dest.lake.snapshot_frame(schema, frame, today), [today]
    )
    dest.store.replace_all(schema, frame)
    outcome.rows, outcome.partitions = frame.height, 1
    return outcome
