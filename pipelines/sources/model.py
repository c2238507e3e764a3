"""What a source is: one kind of request and the tables its pages feed.

A `Source` is one kind of request (a cursor list, a metrics resource, the per-campaign
optimization history …); each `Output` is one table fed by its pages: the history's `data` and
`other_changes`, or a cluster's products and keywords, come from the same pages, fetched once.
The list of every source is `pipelines/sources/__init__.py`; the stages that move their pages
are `pipelines/stages/`.
"""

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

import polars as pl

from pipelines.client.accounts import AccountRef
from pipelines.client.paging import Page
from pipelines.session import Session
from pipelines.shaping import Context
from transforms.records import InexactNumber, records_to_frame
from warehouse.schemas import Layout, TableSchema

PageStream = Callable[[Session, AccountRef, date, date], AsyncIterator[tuple[str, Page]]]


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
    # A scope the warehouse can do without (spec 5.3): a key lacking it skips this source.
    optional_scope: str | None = None

    @property
    def layout(self) -> Layout:
        return self.outputs[0].schema.layout

    @property
    def dated(self) -> bool:
        return self.layout is not Layout.SNAPSHOT

    def oldest_answered(self, today: date) -> date | None:
        """The first day the service still answers for on `today` (spec: optimization history
        90 days, change log 12 months); None: the spec states no retention."""
        if self.retention_days is None:
            return None
        return today - timedelta(days=self.retention_days)
