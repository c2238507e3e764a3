"""The library beneath Dagster, called as a run's step calls it: for the promises it makes.

What the library decides (paging, windows, retries, isolation per account and source, a
partition replaced exactly, a bad value held back) needs no Dagster run, no dbt build and no
subprocess to be proved: `extract` opens a session on the service the settings name (the
embedded sandbox by default, its faults and tampering as the test set them) and runs
a run's extraction step (`pipelines/step.py`) for the sources of `tables` into `home`'s lake,
as `assets/runner.py` does. What Dagster records, the CLI's lines and the
warehouse are tested through whole runs elsewhere.
"""

from collections.abc import Iterable
from datetime import date, timedelta
from pathlib import Path

from pipelines.client.credits import CreditBudget
from pipelines.client.http import RetryPolicy
from pipelines.destination import Destination
from pipelines.extract import rebuild_source
from pipelines.reconcile import Reconciled, reconcile_tables
from pipelines.session import open_session
from pipelines.settings import Settings, load_settings
from pipelines.sources import sources_of
from pipelines.stages.outcome import TableOutcome
from pipelines.step import extract_step
from warehouse.lake import Lake

FAST = RetryPolicy(attempts=20, backoff_base=0.001, backoff_max=0.02)


def settings_for(home: Path, **overrides: object) -> Settings:
    """The settings of a run into `home`, over the environment: the `home` fixture's (today
    and the first day fixed, no real service) and what the test set on top."""
    return load_settings(ADWH_HOME=str(home), **overrides)


def lake(home: Path) -> Lake:
    """The lake of `home`, where the settings put it."""
    return Destination.of(settings_for(home)).lake


def extract(
    home: Path,
    start: date,
    end: date,
    tables: Iterable[str] | None = None,
    *,
    daily: bool = False,
    retry: RetryPolicy = FAST,
    timeout_seconds: float | None = None,
    budget: CreditBudget | None = None,
    run_id: str = "library",
    **overrides: object,
) -> dict[str, TableOutcome | BaseException]:
    """Extract the sources of `tables` over [start, end] (current state: the settings' day's
    snapshot) into `home`, side by side as a run's step does, and record what they made
    complete in the lake's coverage, as the step does; `daily`, each account of a dated
    source from its own first day as the daily job plans it (`pipelines/catch_up.py`). Each
    table's outcome, or the exception its source failed with; what the reads cost is counted
    in `budget`, and the columns it adds are recorded with `run_id`."""
    import httpx

    settings = settings_for(home, **overrides)
    destination = Destination.of(settings)
    destination.clean_staging()
    sources = sources_of(tables)
    timeout = httpx.Timeout(timeout_seconds) if timeout_seconds else None
    opened = open_session(settings, retry=retry, timeout=timeout, budget=budget)
    ranges = [(start, end) if source.dated else (settings.today,) * 2 for source in sources]
    outcomes = extract_step(
        opened, settings, destination, sources, ranges, run_id, catch_up=daily
    ).outcomes
    results: dict[str, TableOutcome | BaseException] = {}
    for source, outcome in zip(sources, outcomes, strict=True):
        for output in source.outputs:
            name = output.schema.name
            results[name] = outcome if isinstance(outcome, BaseException) else outcome[name]
    return results


def daily(home: Path, tables: Iterable[str] | None = None, **overrides: object) -> dict:
    """The daily job's extraction (`adwh run` without a range): each account of each dated
    source from the first day the lake lacks, or the lookback, or pending economics, up to
    yesterday, as `pipelines/catch_up.py` plans it."""
    settings = settings_for(home, **overrides)
    yesterday = settings.today - timedelta(days=1)
    return extract(home, settings.first_day, yesterday, tables, daily=True, **overrides)


def rebuild(
    home: Path, start: date, end: date, tables: Iterable[str] | None = None
) -> dict[str, TableOutcome]:
    """The sources of `tables` published again from `home`'s raw pages over [start, end]
    (current state: the snapshots taken by `end`), as `adwh rebuild`'s step does, asking the
    service nothing. Each table's outcome."""
    destination = Destination.of(settings_for(home))
    return {
        table: outcome
        for source in sources_of(tables)
        for table, outcome in rebuild_source(destination, source, start, end).items()
    }


def reconcile(
    home: Path,
    start: date,
    end: date,
    tables: Iterable[str],
    *,
    budget: CreditBudget | None = None,
    **overrides: object,
) -> dict[str, Reconciled | BaseException]:
    """The lake's days [start, end] of `tables` against the service's grouped sums, every
    account, as a run's reconciliation check compares them (`assets/reconciliation.py`)."""
    settings = settings_for(home, **overrides)
    plans = {table: {(start, end): None} for table in tables}
    opened = open_session(settings, retry=FAST, budget=budget)
    outcomes = reconcile_tables(opened, Destination.of(settings), plans)
    return dict(zip(plans, outcomes, strict=True))


def succeeded(
    outcomes: dict[str, TableOutcome | BaseException],
) -> dict[str, TableOutcome]:
    """`outcomes`, each table extracted and published whole: no source failed, no account
    failed, nothing held back (what a run's exit 0 says)."""
    failed = {table: failure(outcome) for table, outcome in outcomes.items() if failure(outcome)}
    assert failed == {}, failed
    return outcomes  # type: ignore[return-value]


def failure(outcome: TableOutcome | BaseException) -> str:
    """What went wrong with a table, as the run's line would say it: its source's error, its
    accounts' errors, or what it held back; "" when nothing did."""
    if isinstance(outcome, BaseException):
        return str(outcome)
    errors = [f"{account}: {error}" for account, error in outcome.failed_accounts.items()]
    return "; ".join([*errors, *outcome.held_back])
