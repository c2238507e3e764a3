"""The warehouse checked against the service that fed it: a run's days of each metrics table,
summed per account, day, currency and ad product from the lake, against the service's own
answer at that grain (`group_by=account`, spec 4.2: one request per capped window).

What is compared are the measures a grouped row sums (money and counts); those it recomputes or
leaves null (`cpc`, `price`, `rank`, `stock`: spec 2.9 rule 7, 4.2) are not. The lake is read,
not the frames the run published, so a row changed behind the pipeline's back is found.
"""

import asyncio
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime

import polars as pl

from pipelines.client.accounts import AccountRef
from pipelines.client.paging import Page
from pipelines.client.windowed import windowed_pages
from pipelines.client.windows import days_of
from pipelines.destination import Destination
from pipelines.session import Session
from transforms.reconcile import differences, reported_sums
from transforms.records import InexactNumber, records_to_frame
from warehouse.schemas import TABLES, Kind, TableSchema
from warehouse.spec import NOT_SUMMED_IN_GROUPS

GRAIN = ("account_id", "date", "currency", "ad_product")
GROUPED = {"group_by": "account"}


# The days to compare, each span with the accounts whose days they are (None: every account
# the session reaches).
Plan = dict[tuple[date, date], list[str] | None]


@dataclass(frozen=True)
class Reconciled:
    """One table's comparison: the days compared, how many groups the service answered, and
    what differs."""

    table: str
    days: str
    groups: int
    differences: pl.DataFrame


def grain(schema: TableSchema) -> list[str]:
    return [name for name in GRAIN if name in schema.column_names]


def measures(schema: TableSchema) -> list[str]:
    """The registry's money and count fields a grouped row sums."""
    return [
        c.name
        for c in schema.columns
        if c.kind in (Kind.MONEY, Kind.COUNT) and c.source and c.name not in NOT_SUMMED_IN_GROUPS
    ]


async def reconcile(
    session: Session, dest: Destination, schema: TableSchema, plan: Plan
) -> Reconciled:
    """`schema`'s table over each span of `plan` for its accounts, lake against service."""
    groups, found, days = 0, [], []
    for (start, end), ids in sorted(plan.items()):
        accounts = [a for a in session.accounts if ids is None or a.id in ids]
        if not accounts:
            continue
        answered, differing = await _reconcile_span(session, dest, schema, start, end, accounts)
        groups += answered
        found.append(differing)
        days.append(f"{start}..{end} ({len(accounts)} account{'s' * (len(accounts) > 1)})")
    differences_found = pl.concat(found, how="diagonal") if found else pl.DataFrame()
    return Reconciled(schema.name, "; ".join(days) or "none", groups, differences_found)


async def _reconcile_span(
    session: Session,
    dest: Destination,
    schema: TableSchema,
    start: date,
    end: date,
    accounts: list[AccountRef],
) -> tuple[int, pl.DataFrame]:
    """The groups the service answered and what differs, over [start, end]: first the span's
    totals (a request per account, a credit per currency and ad product), then, for an account
    whose totals differ, day by day to name the days."""
    evolved = dest.schemas.schema(schema)  # a widened column types the service's sums too
    figures, by_day = measures(schema), grain(schema)
    in_total = [key for key in by_day if key != "date"]
    lake = lake_rows(dest, evolved, [a.id for a in accounts], start, end)
    totals = await _answer(session, evolved, in_total, figures, (start, end), accounts)
    found = differences(reported_sums(lake, in_total, figures).collect(), totals, in_total, figures)
    if found.is_empty():
        return totals.height, found
    differing = set(found["account_id"])
    retold = [a for a in accounts if a.id in differing]
    daily = await _answer(session, evolved, by_day, figures, (start, end), retold)
    held = reported_sums(lake.filter(pl.col("account_id").is_in(differing)), by_day, figures)
    named = differences(held.collect(), daily, by_day, figures)
    return totals.height + daily.height, found if named.is_empty() else named


async def _answer(
    session: Session,
    schema: TableSchema,
    keys: list[str],
    figures: list[str],
    days: tuple[date, date],
    accounts: list[AccountRef],
) -> pl.DataFrame:
    """The service's sums per account and `keys` over `days` (`date` among the keys: daily),
    in as many capped windows as the service asks, added up."""
    typed_as = replace(
        schema,
        columns=tuple(
            column if column.name in keys else replace(column, required=False)
            for column in schema.columns
            if column.name in keys or column.name in figures
        ),
    )
    frames = [typed_as.concat([])]
    for account in accounts:
        async for _, page in windowed_pages(
            session.client,
            session.caps,
            schema.resource,
            *days,
            granularity="daily" if "date" in keys else "total",
            params=GROUPED,
            account=account.header,
        ):
            frames.append(_typed(page, typed_as, account.id))
    return reported_sums(pl.concat(frames).lazy(), keys, figures).collect()


def _typed(page: Page, schema: TableSchema, account: str) -> pl.DataFrame:
    """A page of grouped rows typed like the table's (money exact, in any shape the spec
    allows); their entity fields are null and not read."""
    where = f"{page.path} (group_by=account)"
    now = datetime.now(UTC)
    try:
        return records_to_frame(
            page.rows, schema, account_id=account, extracted_at=now, where=where
        )
    except InexactNumber:
        rows = page.exact().rows
        return records_to_frame(rows, schema, account_id=account, extracted_at=now, where=where)


def lake_rows(
    dest: Destination, schema: TableSchema, accounts: list[str], start: date, end: date
) -> pl.LazyFrame:
    """The lake's rows of `accounts` over [start, end] (only the files of those days that may
    hold those accounts are read)."""
    rows = dest.lake.scan(schema.name, days=days_of(start, end), accounts=accounts)
    if rows is None:
        return pl.LazyFrame(schema=schema.polars_schema)
    return schema.conformed(rows)


def reconcile_tables(
    opened: AbstractAsyncContextManager[Session], dest: Destination, plans: dict[str, Plan]
) -> list[Reconciled | BaseException]:
    """Every table of `plans` reconciled side by side, through the session `opened` opens; a
    table the service could not answer for is its error, the others are compared."""

    async def go() -> list[Reconciled | BaseException]:
        async with opened as session:
            return await asyncio.gather(
                *(reconcile(session, dest, TABLES[name], plan) for name, plan in plans.items()),
                return_exceptions=True,
            )

    return asyncio.run(go())
