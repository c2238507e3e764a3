"""`adwh history` and `adwh lake`: a lake table's versions, its housekeeping, time travel and
the migration from a Hive Parquet lake (`pipelines/lake_commands.py`)."""

import argparse
from pathlib import Path

from launcher.common import UsageError
from pipelines.settings import Settings


def register(commands: argparse._SubParsersAction) -> None:
    history = commands.add_parser("history", help="the versions of a lake table")
    history.add_argument("table", help="a lake table, e.g. campaign_metrics")
    history.add_argument("--limit", type=int, help="the newest N versions only")
    history.set_defaults(handler=lake_command)
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
    lake.set_defaults(handler=lake_command)


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
