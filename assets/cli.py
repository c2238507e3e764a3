"""`adwh`: run the pipeline, serve the sandbox, check a key.

Every failure ends in one line on stderr and a non-zero exit; the key never appears.
"""

import argparse
import asyncio
import subprocess
import sys
from collections.abc import Mapping
from datetime import date, timedelta
from importlib.metadata import version
from pathlib import Path
from typing import NoReturn

from filelock import FileLock, Timeout

from pipelines.client.errors import ServiceError
from pipelines.settings import (
    DEFAULT_HISTORY_DAYS,
    SANDBOX_KEY,
    SANDBOX_PRESETS,
    ConfigurationError,
    HomeSettings,
    Settings,
    load_settings,
)

EXIT_USAGE = 2
EXIT_FAILED = 1


class UsageError(ValueError):
    """Bad input from the user; the message is the one line they see."""


class RunRefusedError(UsageError):
    """A run that cannot start where it was asked to (its home, its lock, its secrets, the
    webserver): not a typo of the person at the terminal, but what a scheduled `adwh run` meets
    unattended, so it is told to the alert destinations as well."""


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (`adwh: …`) like every other failure, not the
    usage block: schedulers and log collectors keep the last line, and it must say why."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"adwh: {message} (see {self.prog} --help)\n")


def _date(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {value!r}") from None


FIRST_DAY_HELP = "first date (YYYY-MM-DD), on or after ADWH_START_DATE"
LAST_DAY_HELP = "last date (YYYY-MM-DD), inclusive, at most yesterday (from ADWH_TODAY)"


def where_things_are() -> str:
    """The help's last lines: the home and the settings file in force, as this environment
    sets them (both are said by every run too)."""
    from pipelines.settings import demo_home, settings_file

    try:
        home = str(load_settings(HomeSettings).home)
    except ConfigurationError as error:
        home = f"unusable: {error}"
    file = settings_file()
    if file is None:
        shown = "none"
    else:
        shown = f"{file}{'' if file.exists() else ' (none yet)'}; the environment wins over it"
    return (
        f"home (ADWH_HOME): {home}\n"
        f"the demo's home, unless ADWH_HOME is set: {demo_home()}\n"
        f"settings file (ADWH_ENV_FILE): {shown}"
    )


def parser() -> argparse.ArgumentParser:
    root = Parser(
        prog="adwh",
        description=__doc__,
        epilog=where_things_are(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    root.add_argument("--version", action="version", version=f"adwh {version('ads-warehouse')}")
    commands = root.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="materialize every asset for a date range")
    run.add_argument("--start", type=_date, help=FIRST_DAY_HELP + "; neither: the daily run")
    run.add_argument("--end", type=_date, help=LAST_DAY_HELP)
    run.add_argument("--tables", default="", help="comma-separated tables (default: all)")
    backfill = commands.add_parser(
        "backfill", help="a range for every account as queued Dagster runs, small accounts packed"
    )
    backfill.add_argument("--start", type=_date, required=True, help=FIRST_DAY_HELP)
    backfill.add_argument("--end", type=_date, required=True, help=LAST_DAY_HELP)
    backfill.add_argument(
        "--accounts", default="", help="comma-separated accounts (default: all the key reaches)"
    )
    backfill.add_argument(
        "--no-wait",
        action="store_true",
        help="return once the runs are queued (default: follow the runs with a progress "
        "bar until the warehouse is built after them)",
    )
    rebuild = commands.add_parser("rebuild", help="re-derive lake and warehouse from raw pages")
    rebuild.add_argument("--start", type=_date, required=True, help=FIRST_DAY_HELP)
    rebuild.add_argument(
        "--end", type=_date, required=True, help="last date (YYYY-MM-DD), inclusive; may be today"
    )
    demo = commands.add_parser("demo", help="run the last 30 days on the sandbox and show a table")
    # The warehouse's first day by default: after the demo, every Dagster partition is filled.
    demo.add_argument(
        "--days", type=int, default=DEFAULT_HISTORY_DAYS, help="days up to yesterday (%(default)s)"
    )
    commands.add_parser("check", help="check the key: accounts, scopes, what is missing")
    home = commands.add_parser("home", help="where the home is, and the service it belongs to")
    home_commands = home.add_subparsers(dest="home_command")
    home_move = home_commands.add_parser(
        "move", help="move the home to a new address of the same service (a proxy moved, say)"
    )
    home_move.add_argument("--to", required=True, help="the service's new address (https://…)")
    ui = commands.add_parser(
        "ui", help="the Dagster UI and its daemon (dg dev) over the instance in $ADWH_HOME/dagster"
    )
    ui.add_argument("--port", type=int, default=3000, help="on 127.0.0.1 (%(default)s)")
    ui.add_argument(
        "--verbose", action="store_true", help="Dagster's INFO lines too (every sensor tick)"
    )
    sql = commands.add_parser(
        "sql",
        help="DuckDB's shell on the warehouse, read-only, in $ADWH_HOME (lake/… paths resolve)",
    )
    sql.add_argument("query", nargs="?", help="SQL to run (default: the shell, or SQL on stdin)")
    history = commands.add_parser("history", help="the versions of a lake table")
    history.add_argument("table", help="a lake table, e.g. campaign_metrics")
    history.add_argument("--limit", type=int, help="the newest N versions only")
    lake = commands.add_parser("lake", help="the lake's housekeeping, time travel, migration")
    lake_commands = lake.add_subparsers(dest="lake_command", required=True)
    optimize = lake_commands.add_parser("optimize", help="compact each partition's small files")
    optimize.add_argument("tables", nargs="*", help="default: every table")
    vacuum = lake_commands.add_parser("vacuum", help="remove files of versions no longer kept")
    vacuum.add_argument("tables", nargs="*", help="default: every table")
    vacuum.add_argument("--keep-hours", type=int, help="default: ADWH_LAKE_KEEP_HOURS (0)")
    export = lake_commands.add_parser("export", help="a table as of a version, to Parquet")
    export.add_argument("table", help="a lake table, e.g. campaign_metrics")
    export.add_argument("--version", type=int, required=True, help="its version (adwh history)")
    export.add_argument("--output", type=Path, required=True, help="the Parquet file to write")
    migrate = lake_commands.add_parser("migrate", help="convert a Hive Parquet lake to Delta")
    migrate.add_argument("--from", dest="source", type=Path, help="default: $ADWH_HOME/lake")
    sandbox = commands.add_parser("sandbox", help="the embedded sandbox service")
    sandbox_commands = sandbox.add_subparsers(dest="sandbox_command", required=True)
    serve = sandbox_commands.add_parser("serve", help="serve the sandbox on 127.0.0.1")
    serve.add_argument("--port", type=int, default=8765, help="on 127.0.0.1 (%(default)s)")
    serve.add_argument(
        "--preset", choices=SANDBOX_PRESETS, default="small", help="how much data (%(default)s)"
    )
    serve.add_argument("--key", default=SANDBOX_KEY, help="the bearer key it accepts (%(default)s)")
    serve.add_argument(
        "--variant",
        type=int,
        default=0,
        help="0: our sandbox; N > 0: the spec's open choices made otherwise, seeded by N",
    )
    serve.add_argument(
        "--clients",
        type=int,
        default=0,
        help="N > 0: the key is an agency's reaching N client accounts of --preset",
    )
    serve.add_argument(
        "--large-clients",
        type=int,
        default=0,
        help="K: the first K of the --clients accounts are of the large preset instead",
    )
    serve.add_argument(
        "--restate-days",
        type=int,
        help="N > 0: attributed orders and sales of the N most recent days are revised from one "
        "reference date to the next, as in an attribution window (default: "
        "ADWH_SANDBOX_RESTATE_DAYS, else none)",
    )
    return root


def resolve_range(settings: Settings, start: date | None, end: date | None) -> tuple[date, date]:
    """The dates a run covers, as given, checked."""
    if start is None or end is None:
        raise UsageError("give both --start and --end, or neither for the daily run")
    if start > end:
        raise UsageError(f"--start {start} is after --end {end}")
    yesterday = settings.today - timedelta(days=1)
    if end > yesterday:
        raise UsageError(
            f"--end {end} is after yesterday ({yesterday}, from {settings.today_source})"
        )
    check_first_day(settings, start)
    return start, end


def check_first_day(settings: Settings, start: date) -> None:
    """Refuse a range before the warehouse's first day: it has no Dagster partition."""
    if start < settings.first_day:
        raise UsageError(
            f"--start {start} is before the warehouse's first day ({settings.first_day}); "
            "set ADWH_START_DATE to reach further back"
        )


def daily_range(settings: Settings, tables: tuple[str, ...]) -> tuple[date, date, dict[str, date]]:
    """From the earliest day any account lacks in `tables` (`pipelines/catch_up.py`), or whose
    last attempt failed (`assets/healing.py`), to yesterday, and per source the day it heals
    from: the run then fetches each account from its own first day."""
    from assets.healing import days_to_heal
    from assets.instance import open_instance
    from pipelines.catch_up import plan_daily
    from pipelines.destination import Destination
    from pipelines.sources import sources_of

    sources = sources_of(tables)
    accounts = check_service(settings)
    with open_instance() as instance:
        heal = days_to_heal(instance, settings, sources)
    plan = plan_daily(Destination.of(settings).lake, accounts, settings, sources, heal)
    return plan.start, plan.end, heal


def check_retention(settings: Settings, end: date, tables: tuple[str, ...]) -> None:
    """Refuse a range the service no longer answers for a table the user named.

    The spec keeps the optimization history 90 days and the change log 12 months. A run of
    every table still fetches the others and keeps what the warehouse holds for those two
    (a warning), but naming one of them for a range wholly before its retention can only
    fetch nothing, so it is refused before anything is written. The spec states no retention
    for metrics or current state; those are not refused."""
    from pipelines.sources import SOURCES

    for source in SOURCES:
        named = [o.schema.name for o in source.outputs if o.schema.name in tables]
        if source.retention_days is None or not named:
            continue
        oldest = settings.today - timedelta(days=source.retention_days)
        if end < oldest:
            raise UsageError(
                f"{', '.join(named)}: the service keeps {source.retention_days} days, back to "
                f"{oldest} (from {settings.today_source} {settings.today}); --end {end} is "
                "before that"
            )


def check_service(settings: Settings) -> list[str]:
    """Before a run is started: the sandbox plug-in must be installed when no service is set,
    the service must answer, the key must be accepted and reach the accounts `ADS_ACCOUNT_IDS`
    names. A refused key, a wrong address or a typo fails here in one line, leaving
    `$ADWH_HOME` as it was, instead of in every asset of a run that could not start its work
    (whose planned partitions Dagster would then show failed). The session is opened as the
    run's `service` resource is configured (its retries and timeouts); returns the accounts
    the run extracts."""
    from assets.execute import configured_service
    from pipelines.plugin import load_plugin

    if settings.uses_sandbox:
        load_plugin(settings.sandbox)

    async def go() -> list[str]:
        async with configured_service().session(settings) as session:
            return [account.id for account in session.accounts]

    return asyncio.run(go())


def check_tables(tables: tuple[str, ...]) -> None:
    """Refuse a table name the warehouse does not have, before anything else is asked."""
    from assets.execute import selection

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
    from assets.execute import run_pipeline
    from assets.report import print_brief, print_summary
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


def command_backfill(
    settings: Settings, start: date, end: date, accounts: str, wait: bool = True
) -> int:
    from assets.backfill import BackfillError, launch_backfills, runs_page
    from assets.backfill_watch import watch_backfills

    start, end = resolve_range(settings, start, end)
    chosen = [a.strip() for a in accounts.split(",") if a.strip()]
    try:
        launched = launch_backfills(settings, start, end, chosen or None)
        reached = sum(len(pack.accounts) for pack in launched)
        runs = sum(pack.runs for pack in launched)
        print(
            f"{start}..{end}: {counted(runs, 'run')} queued for {counted(reached, 'account')} "
            f"in {counted(len(launched), 'pack')}"
        )
        print("follow them in the UI:")
        print(runs_page(settings.dagster_url, launched[0].request))
        if not wait:
            print("the warehouse_refresh sensor builds the warehouse after the last run")
            return 0
        state, building = watch_backfills(settings, launched)
    except BackfillError as error:
        raise RunRefusedError(str(error)) from None
    lost = state.lost_runs
    print(state.summary())
    if building:
        print(f"warehouse built at {_clock(state.warehouse_built)}")
        print(f"warehouse: {settings.home / 'warehouse.duckdb'}")
    else:
        print(
            "the warehouse_refresh sensor is off: the warehouse was not built "
            "(dagster sensor start warehouse_refresh, or adwh run)"
        )
    if lost:
        named = ", ".join(f"{settings.dagster_url}/runs/{run.run_id}" for run in lost[:3])
        print(f"adwh: {len(lost)} runs failed: {named}", file=sys.stderr)
        return EXIT_FAILED
    return 0


def counted(number: int, thing: str) -> str:
    """`1 run`, `2 runs`."""
    return f"{number} {thing}{'' if number == 1 else 's'}"


def _clock(timestamp: float | None) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(timestamp or 0, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


# The days the sandbox still revises in the demo's first run (its attribution window): within
# the recent days the next morning's daily job reads again (ADWH_LOOKBACK_DAYS, 3 by default),
# so that job settles them all.
DEMO_RESTATED_DAYS = 2
# The mornings the demo runs the daily job on after its first run, the last one today: each
# takes its day's snapshot of the current-state tables, so the entity histories (history_<t>)
# hold days of changes, as those of a warehouse run every day do.
DEMO_MORNINGS = 3


def command_demo(settings: Settings, days: int) -> int:
    """The embedded sandbox's days as a service says them on the morning before the first of
    DEMO_MORNINGS, its latest days' attributed figures still moving; then the daily job on each
    morning up to today: the first says what the service restated meanwhile, and records it
    (`restatements`, `mart_restatements`); each keeps its day's snapshot (`history_<t>`)."""
    import contextlib
    import io

    from assets.execute import on_reference_date
    from assets.report import print_demo_table
    from pipelines.destination import Destination
    from pipelines.plugin import restating

    if not settings.uses_sandbox:
        raise UsageError("adwh demo runs on the embedded sandbox; unset ADS_API_BASE_URL")
    if days <= DEMO_MORNINGS:
        raise UsageError(f"--days must be more than the demo's {DEMO_MORNINGS} mornings")
    mornings = [settings.today - timedelta(days=n) for n in reversed(range(DEMO_MORNINGS))]
    before = mornings[0] - timedelta(days=1)
    start = settings.today - timedelta(days=days)
    end = before - timedelta(days=1)
    # Where it writes is said by the table's `lake:` and `warehouse:` lines, whole paths on
    # lines of their own: here, a home of any length would push the line past 80 columns.
    print(f"adwh: {start}..{end} of the embedded sandbox (no key needed)")
    # Only the last morning builds the warehouse, from every day and snapshot the lake holds.
    with restating(DEMO_RESTATED_DAYS), on_reference_date(settings, before) as then:
        status = command_run(then, start, end, brief=True, warehouse=False)
    for morning in mornings:
        if status != 0:
            break
        # The first morning's lines; the others' in one (their summaries are in the instance).
        quiet = contextlib.redirect_stdout(io.StringIO())
        if morning == mornings[0]:
            latest = f"the service's latest {DEMO_RESTATED_DAYS} days settled since"
            print(f"adwh: the daily job on {morning}, {latest}")
            quiet = contextlib.nullcontext()
        elif morning == mornings[1]:
            later = " and ".join(str(day) for day in mornings[1:])
            print(f"adwh: the daily job on {later} too: a snapshot a day")
        with on_reference_date(settings, morning) as then, quiet:
            first, last, heal = daily_range(then, ())
            last_morning = morning == mornings[-1]
            status = command_run(
                then, first, last, catch_up=True, heal=heal, brief=True, warehouse=last_morning
            )
    if status == 0:
        print_demo_table(settings.home, Destination.of(settings).lake.url)
        print_next_steps(settings)
    return status


def print_next_steps(settings: Settings) -> None:
    """What to try after the demo: in its home, which the other commands find only when told
    (their default is the home a real service's data goes to)."""
    from pipelines.settings import demo_home

    steps = ".venv/bin/adwh sql (query the warehouse), make dagster (the Dagster UI)"
    if settings.home == demo_home():
        print("next, in the demo's home:")
        print(f"  export ADWH_HOME={settings.home}")
        print(f"  {steps}")
    else:
        print(f"next: {steps}")


def skipped_without_scopes(scopes: tuple[str, ...]) -> dict[str, list[str]]:
    """The optional scopes the key lacks, and the tables a run skips for each."""
    from pipelines.sources import SOURCES

    skipped: dict[str, list[str]] = {}
    for source in SOURCES:
        if source.optional_scope and source.optional_scope not in scopes:
            names = [output.schema.name for output in source.outputs]
            skipped.setdefault(source.optional_scope, []).extend(names)
    return skipped


def command_check(settings: Settings) -> int:
    from pipelines.home import standing
    from pipelines.session import open_session

    async def go() -> int:
        async with open_session(settings) as session:
            credential = session.credential
            print(f"key: {credential.object} ({credential.subject_type})")
            print(f"scopes: {', '.join(credential.scopes) or 'none'}")
            for account in session.accounts:
                print(f"account: {account.id} {account.name or ''}".rstrip())
            for scope, tables in skipped_without_scopes(credential.scopes).items():
                print(f"without {scope} these tables are skipped: {', '.join(tables)}")
            if credential.missing_scopes:
                print(f"missing scopes the warehouse needs: {', '.join(credential.missing_scopes)}")
                return EXIT_FAILED
            print("the key has every scope the warehouse needs")
            writable, said = standing(settings, credential)
            print(said)
            return 0 if writable else EXIT_FAILED

    return asyncio.run(go())


def command_ui(port: int, verbose: bool) -> int:
    """`dg dev`, Dagster's way to run a project locally, from the repository's root, with
    DAGSTER_HOME at the instance `adwh` records to. Warnings only unless `verbose`
    (`assets/ui.py`): Dagster's daemon logs two INFO lines per sensor tick (every 10 or 30 s),
    which the UI's tick history shows anyway, and each run's worker its every event, which
    the run's page shows; so the URL is printed here."""
    from assets import ui
    from assets.instance import PROJECT_ROOT, dagster_home

    dg = Path(sys.executable).parent / "dg"
    if not dg.exists():
        raise UsageError(f"Dagster's dg is not installed ({dg}): uv sync --group ui")
    home = dagster_home()
    print(f"adwh: the Dagster UI at http://127.0.0.1:{port}, its instance in {home}", flush=True)
    # In the project's root: dg reads its pyproject.toml there.
    return ui.command_ui(dg, port, verbose, ui.ui_environment(home), PROJECT_ROOT)


def command_sql(settings: Settings, query: str | None) -> int:
    """DuckDB's shell (the 1.x CLI `make` installs) on the warehouse, read-only, started in
    `$ADWH_HOME`: the README's queries run as written whatever the home, the lake's relative
    paths (`lake/…`) included. Read-only, so a build meanwhile is not made to copy the file."""
    from pipelines.settings import demo_home
    from warehouse.build import WAREHOUSE_FILE

    shell = Path(sys.executable).parent / "duckdb"
    if not shell.exists():
        raise UsageError(f"DuckDB's shell is not installed ({shell}): uv sync --group shell")
    if not (settings.home / WAREHOUSE_FILE).exists():
        demo = demo_home()
        elsewhere = (
            f"; the demo's is in its own home: export ADWH_HOME={demo}"
            if (demo / WAREHOUSE_FILE).exists()
            else ""
        )
        raise UsageError(f"no warehouse in {settings.home} yet: adwh run builds it{elsewhere}")
    # The query as `-c`'s command: given alone, a query that starts with a comment (`-- …`) is
    # read by the shell as an option it does not know.
    command = [str(shell), "-readonly", WAREHOUSE_FILE, *(["-c", query] if query else [])]
    return subprocess.run(command, cwd=settings.home).returncode


def command_serve(
    settings: Settings,
    port: int,
    preset: str,
    key: str,
    variant: int = 0,
    clients: int = 0,
    large_clients: int = 0,
    restate_days: int | None = None,
) -> int:
    from pipelines.plugin import load_plugin

    if variant < 0:
        raise UsageError(f"--variant must be 0 or more, got {variant}")
    if clients < 0:
        raise UsageError(f"--clients must be 0 or more, got {clients}")
    if not 0 <= large_clients <= clients:
        raise UsageError(f"--large-clients must be 0 to --clients ({clients}), got {large_clients}")
    if restate_days is not None and restate_days < 0:
        raise UsageError(f"--restate-days must be 0 or more, got {restate_days}")
    plugin = load_plugin(settings.sandbox)
    shown = f", variant {variant}" if variant else ""
    shown += f", an agency of {clients} accounts" if clients else ""
    shown += f" ({large_clients} large)" if large_clients else ""
    shown += f", restating {restate_days} days" if restate_days else ""
    print(
        f"sandbox ({preset}{shown}, reference {settings.today}) on http://127.0.0.1:{port}",
        flush=True,
    )
    plugin.serve(
        port=port,
        preset=preset,
        key=key,
        variant=variant,
        today=settings.today,
        clients=clients,
        large_clients=large_clients,
        restate_days=restate_days,
    )
    return 0


def lake_command(settings: Settings, args: argparse.Namespace) -> int:
    from pipelines import lake_commands as run
    from warehouse.migrate import MigrationError

    try:
        if args.command == "history":
            return run.command_history(settings, args.table, args.limit)
        if args.lake_command == "optimize":
            return run.command_optimize(settings, args.tables)
        if args.lake_command == "vacuum":
            return run.command_vacuum(settings, args.tables, args.keep_hours)
        if args.lake_command == "export":
            return run.command_export(settings, args.table, args.version, args.output)
        return run.command_migrate(settings, args.source)
    except (run.LakeCommandError, MigrationError) as error:
        raise UsageError(str(error)) from None


def reading(settings: Settings) -> str:
    """A run's first line: the service it reads, and the home it writes."""
    from pipelines.home import service_of

    return f"adwh: reading {service_of(settings).name} into {settings.home}"


def demo_settings(settings: Settings) -> Settings:
    """The demo's home, unless one is set: its own (`demo_home()`), so the embedded sandbox's
    data never occupies the default home a real service's data goes to. Set in the
    environment, which the demo's runs read as every run does."""
    import os

    from pipelines.settings import demo_home

    if "home" in settings.model_fields_set:
        return settings
    os.environ["ADWH_HOME"] = str(demo_home())
    return load_settings()


def old_home_hint(settings: Settings) -> None:
    """A home at an earlier version's default (`./data`, from the folder `adwh` starts in) is
    no longer found by default: say, in one line, how to keep using it."""
    from pipelines.settings import OLD_DEFAULT_HOME

    old = OLD_DEFAULT_HOME.absolute()
    if "home" in settings.model_fields_set or old == settings.home:
        return
    if (old / "warehouse.duckdb").exists() or (old / "lake").is_dir():
        print(
            f"adwh: {old} holds a home of an earlier version, whose default was ./data; this "
            f"runs on {settings.home}: to keep using it, export ADWH_HOME={old}",
            file=sys.stderr,
        )


def command_home(settings: Settings, move_to: str | None) -> int:
    """`adwh home`: where the home is, and the service it belongs to; `--to`: moved to a new
    address of the same service, once the service there says the key is the home's."""
    from pipelines import home
    from pipelines.session import open_session

    print(f"home: {settings.home}")
    if move_to is not None:
        moved = load_settings(ADS_API_BASE_URL=move_to)

        async def credential() -> object:
            async with open_session(moved) as session:
                return session.credential

        before, after = home.move(moved, asyncio.run(credential()))
        print(f"moved: from {before.name} to {after.name}")
        return 0
    holder = home.recorded(settings.home)
    if holder is None:
        print("service: none recorded yet; its first run records the one it reads")
        return 0
    accounts = counted(len(holder.accounts), "account")
    print(f"service: {holder.name}, key {holder.kind} {holder.credential or ''}".rstrip())
    print(f"reaching {accounts}, recorded {holder.recorded_at}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        settings = load_settings()
        if args.command == "demo":
            settings = demo_settings(settings)
        if args.command != "sandbox":
            old_home_hint(settings)
        if args.command in ("run", "backfill"):
            print(reading(settings), flush=True)
        if args.command == "run":
            tables = tuple(t.strip() for t in args.tables.split(",") if t.strip())
            check_tables(tables)
            if args.start is None and args.end is None:  # the daily run
                start, end, heal = daily_range(settings, tables)
                return command_run(settings, start, end, tables=tables, catch_up=True, heal=heal)
            start, end = resolve_range(settings, args.start, args.end)
            return command_run(settings, start, end, tables=tables)
        if args.command == "backfill":
            return command_backfill(
                settings, args.start, args.end, args.accounts, wait=not args.no_wait
            )
        if args.command == "rebuild":  # may end today: the current state's snapshot day
            if args.start > args.end:
                raise UsageError(f"--start {args.start} is after --end {args.end}")
            check_first_day(settings, args.start)
            print(f"adwh: rebuilding {settings.home} from its raw pages, reading no service")
            return command_run(settings, args.start, args.end, from_raw=True)
        if args.command == "demo":
            return command_demo(settings, args.days)
        if args.command == "check":
            return command_check(settings)
        if args.command == "home":
            return command_home(settings, getattr(args, "to", None))
        if args.command == "ui":
            return command_ui(args.port, args.verbose)
        if args.command == "sql":
            return command_sql(settings, args.query)
        if args.command in ("history", "lake"):
            return lake_command(settings, args)
        return command_serve(
            settings,
            args.port,
            args.preset,
            args.key,
            args.variant,
            args.clients,
            args.large_clients,
            args.restate_days,
        )
    except (ConfigurationError, UsageError, ServiceError) as error:
        print(f"adwh: {error}", file=sys.stderr)
        if args.command in RUN_COMMANDS and isinstance(error, REFUSALS):
            tell_refused(args, error)
        return EXIT_FAILED if isinstance(error, ServiceError) else EXIT_USAGE
    except KeyboardInterrupt:
        return 130


# The commands that start runs: what refuses them (the key, the service's address, a setting,
# the home; not a mistyped argument) is told to the alert destinations.
RUN_COMMANDS = ("run", "backfill", "rebuild")
REFUSALS = (RunRefusedError, ConfigurationError, ServiceError)


def tell_refused(args: argparse.Namespace, error: Exception) -> None:
    """Tell the alert destinations that a run was refused; what cannot be told is said on
    stderr, after the refusal itself."""
    from pipelines.notify import AlertDeliveryError
    from pipelines.notify import tell_refused as tell

    days = f"{args.start}..{args.end}" if args.start else "the daily range"
    try:
        tell(args.command, days, error)
    except (ConfigurationError, AlertDeliveryError, OSError) as untold:
        print(f"adwh: not told to the alert destinations: {untold}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
