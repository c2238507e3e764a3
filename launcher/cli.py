"""`adwh`: run the pipeline, serve the sandbox, check a key.

Every failure ends in one line on stderr and a non-zero exit; the key never appears.
"""

import argparse
import sys
from importlib.metadata import version

from launcher.commands import COMMANDS
from launcher.common import EXIT_FAILED, EXIT_USAGE, Parser, RunRefusedError, UsageError
from pipelines.client.errors import ServiceError
from pipelines.planning import RangeError
from pipelines.settings import ConfigurationError, HomeSettings, Settings, load_settings

__all__ = ["EXIT_FAILED", "EXIT_USAGE", "main", "parser"]


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
    for command in COMMANDS:
        command.register(commands)
    return root


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


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        settings = load_settings()
        if not getattr(args, "own_home", False):
            old_home_hint(settings)
        return args.handler(settings, args)
    except (ConfigurationError, UsageError, RangeError, ServiceError) as error:
        print(f"adwh: {error}", file=sys.stderr)
        if getattr(args, "tells_refusals", False) and isinstance(error, REFUSALS):
            tell_refused(args, error)
        return EXIT_FAILED if isinstance(error, ServiceError) else EXIT_USAGE
    except KeyboardInterrupt:
        return 130


# What refuses a run (the key, the service's address, a setting, the home; not a mistyped
# argument) is told to the alert destinations.
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
