"""The library beneath Dagster, called as a run's step calls it: for the promises it makes.

What the library decides (paging, windows, retries, isolation per account and source, a
partition replaced exactly, a bad value held back) needs no Dagster run, no dbt build and no
subprocess to be proved: `extract` opens a session on the service the settings name (the
embedded sandbox by default, its faults and tampering as the test set them) and runs
`pipelines.extract.extract_source` for the sources of `tables` into `home`'s lake, as
`assets/runner.py` does for a run's step. What Dagster records, the CLI's lines and the
warehouse are tested through whole runs elsewhere.
"""

import asyncio
from collections.abc import Iterable
from datetime import UTC, date, datetime
from pathlib import Path

from pipelines.client.http import RetryPolicy
from pipelines.destination import Destination
from pipelines.extract import extract_source
from pipelines.session import open_session
from pipelines.settings import Settings, load_settings
from pipelines.sources import SOURCES
from pipelines.sources.model import Source
from pipelines.stages.outcome import Outcomes, TableOutcome
from tests.conftest import FIRST_DAY, TODAY

FAST = RetryPolicy(attempts=20, backoff_base=0.001, backoff_max=0.02)


def sources_of(tables: Iterable[str] | None) -> list[Source]:
    """The sources feeding `tables` (every source for None), in the registry's order."""
    if tables is None:
        return list(SOURCES)
    wanted = set(tables)
    return [s for s in SOURCES if wanted & {o.schema.name for o in s.outputs}]


def settings_for(home: Path, **overrides: object) -> Settings:
    """The settings of a run into `home` on TODAY, over the environment (the `home` fixture's)."""
    return load_settings(
        ADWH_HOME=str(home),
        ADWH_TODAY=TODAY.isoformat(),
        ADWH_START_DATE=FIRST_DAY.isoformat(),
        **overrides,
    )


def extract(
    home: Path,
    start: date,
    end: date,
    tables: Iterable[str] | None = None,
    *,
    retry: RetryPolicy = FAST,
    timeout_seconds: float | None = None,
    **overrides: object,
) -> dict[str, TableOutcome | BaseException]:
    """Extract the sources of `tables` over [start, end] (current state: TODAY's snapshot)
    into `home`, side by side as a run's step does; each table's outcome, or the exception
    its source failed with."""
    import httpx

    settings = settings_for(home, **overrides)
    destination = Destination.of(settings)
    destination.clean_staging()
    sources = sources_of(tables)
    timeout = httpx.Timeout(timeout_seconds) if timeout_seconds else None
    extracted_at = datetime.now(UTC)

    async def go() -> list[Outcomes | BaseException]:
        async with open_session(settings, retry=retry, timeout=timeout) as session:
            return await asyncio.gather(
                *(
                    extract_source(
                        session,
                        destination,
                        source,
                        start if source.dated else settings.today,
                        end if source.dated else settings.today,
                        extracted_at,
                        settings.today,
                    )
                    for source in sources
                ),
                return_exceptions=True,
            )

    results: dict[str, TableOutcome | BaseException] = {}
    for source, outcome in zip(sources, asyncio.run(go()), strict=True):
        for output in source.outputs:
            name = output.schema.name
            results[name] = outcome if isinstance(outcome, BaseException) else outcome[name]
    return results
