"""One extraction step: the sources a run's step extracts, side by side through one session, each
over its range, into the lake; what they made complete recorded in the lake's coverage.

The Dagster asset (`assets/runner.py`) and the library's tests (`tests/library.py`) both run a
step through `extract_step`, so what the tests prove of the library is what a run's step does:
the same gate on sources at once, the same claim of the home, the same daily plan.
"""

import asyncio
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from functools import partial

from pipelines.catch_up import plan_daily
from pipelines.client.stats import RunStats, counting
from pipelines.destination import Destination
from pipelines.extract import extract_source
from pipelines.home import claim
from pipelines.progress import report, shown
from pipelines.session import Session
from pipelines.settings import Settings
from pipelines.sources.model import Source
from pipelines.stages.outcome import Outcomes, complete_spans
from warehouse.coverage import record_coverage

# Sources of a step extracted at once: cursor lists are sequential by nature, so several
# walking side by side keep the service busy; more would only hold more windows in memory.
SOURCES_AT_ONCE = 4


@dataclass(frozen=True)
class StepOutcome:
    """Per source (in the order given): its tables' outcomes, or the error it failed with
    whole, and what its requests counted; the session's warnings for the run's log."""

    outcomes: list[Outcomes | BaseException]
    stats: list[RunStats]
    warnings: list[str]


def extract_step(
    opened: AbstractAsyncContextManager[Session],
    settings: Settings,
    destination: Destination,
    sources: Sequence[Source],
    ranges: Sequence[tuple[date, date]],
    run_id: str,
    *,
    catch_up: bool = False,
    heal: Mapping[str, date] | None = None,
) -> StepOutcome:
    """Extract each source over its range (a current-state source: the snapshot of the range's
    first day) through the session `opened` opens for `settings`' accounts. `catch_up`: the
    daily job's run, each account of a dated source from its own first day in the range
    (`pipelines/catch_up.py`), each source of `heal` from the day it heals. A source's failure
    is its outcome; the other sources go on."""
    extracted_at = datetime.now(UTC)

    async def go() -> StepOutcome:
        async with opened as session:
            claim(settings, session.credential)  # the home is this service's from now on
            accounts = [account.id for account in session.accounts]
            plan = (
                plan_daily(destination.lake, accounts, settings, sources, heal)
                if catch_up and any(source.dated for source in sources)
                else None
            )
            gate = asyncio.Semaphore(SOURCES_AT_ONCE)
            stats = [RunStats(on_page=partial(report, source.name)) for source in sources]

            async def one(source: Source, span: tuple[date, date], counts: RunStats) -> Outcomes:
                start, end = span
                async with gate:
                    with counting(counts), shown(source.name):
                        return await extract_source(
                            session,
                            destination,
                            source,
                            start,
                            end,
                            extracted_at,
                            settings.today,
                            run_id,
                            plan.starts.get(source.name) if plan else None,
                        )

            outcomes = await asyncio.gather(
                *(one(*args) for args in zip(sources, ranges, stats, strict=True)),
                return_exceptions=True,
            )
            return StepOutcome(outcomes, stats, session.warnings)

    done = asyncio.run(go())
    complete = [outcome for outcome in done.outcomes if isinstance(outcome, dict)]
    record_coverage(destination.lake, complete_spans(complete))
    return done
