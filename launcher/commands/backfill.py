"""`adwh backfill`: a range for every account as queued Dagster runs through the webserver,
small accounts packed, followed until the warehouse is built after them."""

import argparse
import sys
from datetime import date

from launcher.commands.run import reading, resolve_range
from launcher.common import (
    EXIT_FAILED,
    FIRST_DAY_HELP,
    LAST_DAY_HELP,
    RunRefusedError,
    counted,
    parse_date,
)
from pipelines.settings import Settings


def register(commands: argparse._SubParsersAction) -> None:
    backfill = commands.add_parser(
        "backfill", help="a range for every account as queued Dagster runs, small accounts packed"
    )
    backfill.add_argument("--start", type=parse_date, required=True, help=FIRST_DAY_HELP)
    backfill.add_argument("--end", type=parse_date, required=True, help=LAST_DAY_HELP)
    backfill.add_argument(
        "--accounts", default="", help="comma-separated accounts (default: all the key reaches)"
    )
    backfill.add_argument(
        "--no-wait",
        action="store_true",
        help="return once the runs are queued (default: follow the runs with a progress "
        "bar until the warehouse is built after them)",
    )
    backfill.set_defaults(handler=handle, tells_refusals=True)


def handle(settings: Settings, args: argparse.Namespace) -> int:
    print(reading(settings), flush=True)
    return command_backfill(settings, args.start, args.end, args.accounts, wait=not args.no_wait)


def command_backfill(
    settings: Settings, start: date, end: date, accounts: str, wait: bool = True
) -> int:
    from launcher.backfill import BackfillError, launch_backfills, runs_page
    from launcher.backfill_watch import watch_backfills

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


def _clock(timestamp: float | None) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(timestamp or 0, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
