"""`adwh rebuild`: the lake and the warehouse re-derived from the raw pages, with no request."""

import argparse

from launcher.commands.run import command_run
from launcher.common import FIRST_DAY_HELP, UsageError, parse_date
from pipelines.planning import check_first_day
from pipelines.settings import Settings


def register(commands: argparse._SubParsersAction) -> None:
    rebuild = commands.add_parser("rebuild", help="re-derive lake and warehouse from raw pages")
    rebuild.add_argument("--start", type=parse_date, required=True, help=FIRST_DAY_HELP)
    rebuild.add_argument(
        "--end",
        type=parse_date,
        required=True,
        help="last date (YYYY-MM-DD), inclusive; may be today",
    )
    rebuild.set_defaults(handler=handle, tells_refusals=True)


def handle(settings: Settings, args: argparse.Namespace) -> int:
    """May end today: the current state's snapshot day."""
    if args.start > args.end:
        raise UsageError(f"--start {args.start} is after --end {args.end}")
    check_first_day(settings, args.start)
    print(f"adwh: rebuilding {settings.home} from its raw pages, reading no service")
    return command_run(settings, args.start, args.end, from_raw=True)
