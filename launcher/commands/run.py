"""`adwh run`: a date range, or the daily job (yesterday, what is missing, the lookback); the
checks every run passes before it writes anything, which `rebuild` and `demo` share."""

import argparse
import asyncio
import sys
from collections.abc import Mapping
from datetime import date
from pathlib import Path

from filelock import FileLock, Timeout

from launcher.common import (
    EXIT_FAILED,
    FIRST_DAY_HELP,
    LAST_DAY_HELP,
    RunRefusedError,
    UsageError,
    parse_date,
)
from pipelines.planning import check_range, check_retention
from pipelines.settings import Settings


def register(commands: argparse._SubParsersAction) -> None:
    run = commands.add_parser("run", help="materialize every asset for a date range")
    run.add_argument("--start", type=parse_date, help=FIRST_DAY_HELP + "; neither: the daily run")
    run.add_argument("--end", type=parse_date, help=LAST_DAY_HELP)
    run.add_argument("--tables", default="", help="comma-separated tables (default: all)")
    run.set_defaults(handler=handle, tells_refusals=True)


def handle(settings: Settings, args: argparse.Namespace) -> int:
    print(reading(settings), flush=True)
    tables = tuple(t.strip() for t in args.tables.split(",") if t.strip())
    check_tables(tables)
    if args.start is None and args.end is None:  # the daily run
        start, end, heal = daily_range(settings, tables)
        return command_run(settings, start, end, tables=tables, catch_up=True, heal=heal)
    start, end = resolve_range(settings, args.start, args.end)
    return command_run(settings, start, end, tables=tables)


def reading(settings: Settings) -> str:
    """A run's first line: the service it reads, and the home it writes."""
    from pipelines.home import service_of

    return f"adwh: reading {service_of(settings).name} into {settings.home}"


def resolve_range(settings: Settings, start: date | None, end: date | None) -> tuple[date, date]:
    """The dates a run covers, as given, checked (`pipelines/planning.py`)."""
    if start is None or end is None:
        raise UsageError("give both --start and --end, or neither for the daily run")
    check_range(settings, start, end)
    return start, end


def daily_range(settings: Settings, tables: tuple[str, ...]) -> tuple[date, date, dict[str, date]]:
    """From the earliest day any account lacks in `tables` (`pipelines/catch_up.py`), or whose
    last attempt failed (`assets/healing.py`), to yesterday, and per source the day it heals
    from: the run then fetches each account from its own first day."""
    from assets.healing import plan_the_day
    from assets.instance import open_instance
    from pipelines.destination import Destination
    from pipelines.sources import sources_of

    accounts = check_service(settings)
    lake = Destination.of(settings).lake
    with open_instance() as instance:
        plan = plan_the_day(instance, settings, lake, accounts, sources_of(tables))
    return plan.start, plan.end, dict(plan.heal)


def check_service(settings: Settings) -> list[str]:
    """Before a run is started: the sandbox plug-in must be installed when no service is set,
    the service must answer, the key must be accepted and reach the accounts `ADS_ACCOUNT_IDS`
    names. A refused key, a wrong address or a typo fails here in one line, leaving
    `$ADWH_HOME` as it was, instead of in every asset of a run that could not start its work
    (whose planned partitions Dagster would then show failed). The session is opened as the
    run's `service` resource is configured (its retries and timeouts); returns the accounts
    the run extracts."""
    from launcher.execute import configured_service
    from pipelines.plugin import load_plugin

    if settings.uses_sandbox:
        load_plugin(settings.sandbox)

    async def go() -> list[str]:
        async with configured_service().session(settings) as session:
            return [account.id for account in session.accounts]

    return asyncio.run(go())


def check_tables(tables: tuple[str, ...]) -> None:
    """Refuse a table name the warehouse does not have, before anything else is asked."""
    from launcher.execute import selection

    try:
        selection(tables)
    except ValueError as error:
        raise UsageError(str(error)) from None


def writable_home(home: Path) -> Path:
    try:
        home.mkdir(parents=True, exist_ok=True)
        probe = home / ".write-probe"
        probe.write_text("")
        probe.unlink()
    except OSError as error:
        raise RunRefusedError(f"ADWH_HOME {home} is not writable: {error.strerror}") from None
    return home


def command_run(
    settings: Settings,
    start: date,
    end: date,
    *,
    from_raw: bool = False,
    tables: tuple[str, ...] = (),
    catch_up: bool = False,
    heal: Mapping[str, date] | None = None,
    brief: bool = False,
    warehouse: bool = True,
) -> int:
    """`catch_up`: the daily run, each account from its own first day in [start, end], each
    source of `heal` from the day it heals;
    `brief`: the summary in one line (the demo's), not a line per table;
    `warehouse`: False when a later run builds it."""
    from launcher.execute import run_pipeline
    from launcher.report import print_brief, print_summary
    from pipelines.destination import Destination
    from pipelines.progress import live
    from pipelines.sources import sources_of
    from warehouse.secrets import PseudonymKeyError

    if not from_raw:
        check_retention(settings, end, tables)
    if not from_raw and not catch_up:  # the daily range was planned through the same check
        check_service(settings)
    destination = Destination.of(settings)  # a secret's pseudonym key, checked
    home = writable_home(settings.home)
    try:  # before any request: a run with another key would fail at its first page
        destination.context(settings.today)
    except PseudonymKeyError as error:
        raise RunRefusedError(str(error)) from None
    try:
        with (
            FileLock(home / ".adwh.lock", timeout=0),
            # a rebuild reads no page from the service: nothing would move
            live(sys.stderr.isatty() and not from_raw, len(sources_of(tables))),
        ):
            summary = run_pipeline(
                settings,
                start,
                end,
                tables,
                from_raw=from_raw,
                catch_up=catch_up,
                heal=heal,
                warehouse=warehouse,
            )
    except Timeout:
        raise RunRefusedError(f"another adwh run is using {home}; try again when it ends") from None
    (print_brief if brief else print_summary)(summary)
    if summary.untold:
        print(f"adwh: not told to the alert destinations: {summary.untold}", file=sys.stderr)
    for line in summary.tables:
        changes = line.metadata.get("schema_changes", "none")
        if changes != "none":
            print(f"adwh: {line.table}: {changes}", file=sys.stderr)
    if summary.failure:
        print(f"adwh: {summary.failure}", file=sys.stderr)
        return EXIT_FAILED
    return 0
