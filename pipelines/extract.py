"""Extraction of one source, read top to bottom: fetch → land → type → check → publish.

Dated sources go one window (`pipelines/client/windows.extract_windows`) at a time: each
window's pages are fetched for every account, landed raw, typed into spools, and its
partitions published before the next window is fetched, so memory stays flat and a failure
late in a backfill keeps what was published before it. A partition that breaks its contract
is held back, the others are published, and the outcome names every partition held back.

Accounts fail alone: a run packs many small accounts, and one whose pages cannot be fetched
(after the client's retries) is taken out of the window and not asked for again by this
source; the others' rows are published, and the outcome names the account and why, for the
step to fail on and its retry to fetch that account alone (`assets/runner.py`).

`rebuild_source` runs the same stages from the raw pages already landed, spending no credits.
Each stage is a module of `pipelines/stages/`.
"""

import asyncio
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, date, datetime

from pipelines.client.accounts import AccountRef, no_longer_reached
from pipelines.client.windows import days_of, extract_windows
from pipelines.destination import Destination
from pipelines.session import Session
from pipelines.shaping import Context
from pipelines.sources.model import Source
from pipelines.stages.land import land, reread
from pipelines.stages.outcome import Outcomes, new_outcomes
from pipelines.stages.publish import Covered, publish
from pipelines.stages.restated import replay_restatements
from pipelines.stages.typed import Origin, Typist, spools

# A window is published in this thread while the event loop goes on fetching and typing the
# other sources' pages (the service is not kept waiting on a commit, and Delta's writer and
# Polars work outside the GIL). One thread: one window's commit in memory at a time, as when
# publishing held the loop.
PUBLISHER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="adwh-publish")


async def extract_source(
    session: Session,
    dest: Destination,
    source: Source,
    start: date,
    end: date,
    extracted_at: datetime,
    reference: date,
    run_id: str = "",
    starts: Mapping[str, date] | None = None,
) -> Outcomes:
    """Fetch [start, end] (a dated source) or the snapshot of `start` (current state); with
    `starts`, each account of a dated source from its own first day in that range on (the
    daily job's catch-up, `pipelines/catch_up.py`): accounts that start on the same day are
    fetched and published together, window by window."""
    extraction = Extraction(
        session,
        dest,
        source,
        extracted_at,
        dest.context(reference, run_id),
        new_outcomes(source),
        {a: no_longer_reached(a) for a in session.unreachable},
    )
    if source.optional_scope and source.optional_scope not in session.credential.scopes:
        session.warnings.append(
            f"{source.name}: skipped, the key lacks the scope {source.optional_scope}; "
            "what the warehouse holds of it stays as it is"
        )
        return extraction.outcomes
    groups: dict[date, list[AccountRef]] = {}
    for account in session.accounts:
        own = max(start, starts[account.id]) if starts else start
        groups.setdefault(own, []).append(account)
    oldest = within_retention(session, source, min(groups, default=start), reference)
    for first_day, accounts in sorted(groups.items()):
        await extraction.fetch(accounts, max(first_day, oldest), end)
    for outcome in extraction.outcomes.values():
        outcome.failed_accounts = extraction.failed
    return extraction.outcomes


@dataclass
class Extraction:
    """One source's extraction in a run: what every group of its accounts shares."""

    session: Session
    dest: Destination
    source: Source
    extracted_at: datetime
    context: Context
    outcomes: Outcomes
    # Accounts that failed, and why: not asked for again by this source.
    failed: dict[str, Exception]

    async def fetch(self, group: list[AccountRef], start: date, end: date) -> None:
        """Fetch `group` over [start, end], a window at a time, publishing each window before
        the next."""
        session, dest, source, context = self.session, self.dest, self.source, self.context
        extracted_at, outcomes, failed = self.extracted_at, self.outcomes, self.failed
        if start > end:
            return
        for first, last in extract_windows(start, end) if source.dated else [(start, start)]:
            with spools(dest, source) as tables:
                typist = Typist(dest, source, tables, outcomes)
                accounts = [account for account in group if account.id not in failed]
                for account in accounts:
                    folder = dest.raw.fetch_dir(
                        source.name, account.id, first, last, source.dated, extracted_at
                    )
                    pages = source.stream(session, account, first, last)
                    landed = land(dest.raw, folder, pages, extracted_at, context)
                    try:
                        await typist.type_stream(landed, Origin(account.id, extracted_at, context))
                    except Exception as error:  # the account's alone: reported by the step
                        failed[account.id] = error
                        for spool in tables.values():
                            spool.discard(account.id)
                fetched = [account.id for account in accounts if account.id not in failed]
                if not fetched:
                    continue
                for outcome in outcomes.values() if source.dated else ():
                    for account in fetched:
                        outcome.fetched_window(account, first, last)
                covered = Covered(days_of(first, last), fetched, context.run_id, extracted_at)
                await asyncio.get_running_loop().run_in_executor(
                    PUBLISHER, publish, dest, source, tables, covered, outcomes
                )


def within_retention(session: Session, source: Source, start: date, reference: date) -> date:
    """The first day the service still answers for (spec: history 90 days, changes 12
    months); days before it are not asked for, and the run says so."""
    oldest = source.oldest_answered(reference)
    if oldest is not None and start < oldest:
        session.warnings.append(
            f"{source.name}: the service keeps {source.retention_days} days; days before "
            f"{oldest} were not asked for and keep what the warehouse already holds"
        )
        return oldest
    return start


def rebuild_source(
    dest: Destination, source: Source, start: date, end: date, run_id: str = ""
) -> Outcomes:
    """Re-derive [start, end] from raw: each day from the newest complete fetch covering it;
    current state from each account's newest snapshot taken by `end`; the restatements of
    the days from every fetch, in the order they were fetched."""
    outcomes = new_outcomes(source)
    for first, last in extract_windows(start, end) if source.dated else [(end, end)]:
        fetches = (
            dest.raw.newest_by_day(source.name, first, last)
            if source.dated
            else dest.raw.newest_snapshots(source.name, end)
        )
        if not fetches:
            continue  # raw holds nothing for this window: its partitions stay as they are
        days = sorted({day for fetch in fetches for day in fetch.days})
        with spools(dest, source) as tables:
            typist = Typist(dest, source, tables, outcomes)
            for fetch in fetches:
                reference = date.fromisoformat(fetch.manifest["reference"])
                extracted_at = datetime.fromisoformat(fetch.manifest["extracted_at"])
                context = dest.context(reference, run_id)
                origin = Origin(fetch.account, extracted_at.astimezone(UTC), context)
                pages = reread(dest.raw, fetch, context.pseudonym_key)
                typist.type_pages(pages, origin, keep=fetch.days if source.dated else None)
            accounts = sorted({fetch.account for fetch in fetches})
            covered = Covered(days if source.dated else days[-1:], accounts, run_id)
            publish(dest, source, tables, covered, outcomes)
        if source.dated:  # what each fetch changed, replayed: the raw pages are the record
            replay_restatements(dest, source, first, last)
    return outcomes
