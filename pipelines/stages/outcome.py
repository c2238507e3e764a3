"""What extracting one table did: rows and partitions published, and what was held back."""

from dataclasses import dataclass, field
from datetime import date, timedelta

import polars as pl

from pipelines.sources.model import Source
from transforms.restatements import money_moved, summary
from warehouse.coverage import Span, Spans, spans_of_days
from warehouse.schemas import TABLES
from warehouse.spec import currency_digits


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
    rows_by_account: dict[str, int] = field(default_factory=dict)  # published, per account
    # Accounts whose pages could not be fetched, and why: their rows keep the lake's state.
    failed_accounts: dict[str, Exception] = field(default_factory=dict)
    # The days each account was fetched for, first and last (a dated source's).
    fetched: dict[str, Span] = field(default_factory=dict)
    # What the run's replaces changed in days already published (`restatements`' rows), and
    # the largest share of a day's money one moved (what a restatement alert compares).
    restatements: list[pl.DataFrame] = field(default_factory=list)
    largest_restatement: dict[str, object] | None = None

    def fetched_window(self, account: str, first: date, last: date) -> None:
        """Note that `account` was fetched for a window: windows come in order, so its days
        run from its first window's first day to the last window's last."""
        self.fetched[account] = (self.fetched.get(account, (first, last))[0], last)

    def complete_spans(self) -> dict[str, list[Span]]:
        """Per account, the days now complete in the lake: fetched and published, less the
        partitions held back; none for an account that failed, nor when a bad value's
        partition could not be told."""
        if self.held_all:
            return {}
        complete: dict[str, list[Span]] = {}
        for account, (first, last) in self.fetched.items():
            if account in self.failed_accounts:
                continue
            days = (first + timedelta(days=n) for n in range((last - first).days + 1))
            complete[account] = spans_of_days(d for d in days if d not in self.held_days)
        return complete

    def published_days(self) -> dict[str, list[str]]:
        """The accounts whose days the run made complete, by span (`first..last`): what the
        reconciliation checks compare with the service."""
        by_span: dict[str, list[str]] = {}
        for account, spans in sorted(self.complete_spans().items()):
            for first, last in spans:
                by_span.setdefault(f"{first}..{last}", []).append(account)
        return by_span

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
        for account, rows in frame.group_by("account_id").len().iter_rows():
            self.rows_by_account[account] = self.rows_by_account.get(account, 0) + rows

    def restated(self, cells: pl.DataFrame, largest: dict[str, object] | None) -> None:
        """Keep the cells a replace changed, for the run's summary and metadata, and the
        largest share of a day's money moved so far."""
        if not cells.is_empty():
            self.restatements.append(cells)
        held = self.largest_restatement
        if largest is not None and (held is None or largest["share"] > held["share"]):
            self.largest_restatement = largest

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
            "rows_by_account": dict(sorted(self.rows_by_account.items())),  # JSON in the UI
            "failed_accounts": ", ".join(sorted(self.failed_accounts)) or "none",
            **({"published_days": self.published_days()} if self.fetched else {}),
            **self.restated_metadata(),
        }

    def restated_metadata(self) -> dict[str, object]:
        """What the run's replaces changed in days already published: the summary line's
        words, the cells, and the money moved per column and currency (JSON in the UI)."""
        if not self.restatements:
            return {"restated": "none"}
        cells = pl.concat(self.restatements)
        schema = TABLES[self.table]
        moved: dict[str, dict[str, str]] = {}
        for column, currency, change in money_moved(schema, cells).iter_rows():
            moved.setdefault(column, {})[currency] = f"{change:+.{currency_digits(currency)}f}"
        return {
            "restated": summary(schema, cells),
            "restated_days": cells["date"].n_unique(),
            "restated_cells": cells.height,
            "money_restated": moved,
            "largest_restatement": self.largest_restatement or "none",
        }


Outcomes = dict[str, TableOutcome]


def new_outcomes(source: Source) -> Outcomes:
    return {output.schema.name: TableOutcome(output.schema.name) for output in source.outputs}


def complete_spans(outcomes: list[Outcomes]) -> Spans:
    """What a run made complete, per (account, table): for the lake's coverage."""
    return {
        (account, name): spans
        for outcome in outcomes
        for name, table in outcome.items()
        for account, spans in table.complete_spans().items()
    }
