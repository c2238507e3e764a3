"""`adwh demo`: the embedded sandbox's last days, in a home of its own, as a service says them
over a few mornings; then the table and what to try next."""

import argparse
from datetime import timedelta

from launcher.commands.run import command_run, daily_range
from launcher.common import UsageError
from pipelines.settings import DEFAULT_HISTORY_DAYS, Settings, load_settings


def register(commands: argparse._SubParsersAction) -> None:
    demo = commands.add_parser("demo", help="run the last 30 days on the sandbox and show a table")
    # The warehouse's first day by default: after the demo, every Dagster partition is filled.
    demo.add_argument(
        "--days", type=int, default=DEFAULT_HISTORY_DAYS, help="days up to yesterday (%(default)s)"
    )
    demo.set_defaults(handler=handle, own_home=True)


def handle(settings: Settings, args: argparse.Namespace) -> int:
    return command_demo(demo_settings(settings), args.days)


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

    from launcher.execute import on_reference_date
    from launcher.report import print_demo_table
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
