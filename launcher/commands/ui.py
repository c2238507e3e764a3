"""`adwh ui`: the Dagster UI and its daemon over the home's instance (`launcher/ui.py`)."""

import argparse
import sys
from pathlib import Path

from launcher.common import UsageError
from pipelines.settings import Settings


def register(commands: argparse._SubParsersAction) -> None:
    ui = commands.add_parser(
        "ui",
        help="the Dagster UI and its daemon (dg dev) over the instance in $ADWH_HOME/dagster",
    )
    ui.add_argument("--port", type=int, default=3000, help="on 127.0.0.1 (%(default)s)")
    ui.add_argument(
        "--verbose", action="store_true", help="Dagster's INFO lines too (every sensor tick)"
    )
    ui.set_defaults(handler=handle)


def handle(_settings: Settings, args: argparse.Namespace) -> int:
    return command_ui(args.port, args.verbose)


def command_ui(port: int, verbose: bool) -> int:
    """`dg dev`, Dagster's way to run a project locally, on the repository's workspace.yaml
    (the tables' code location and the warehouse's; without it `dg dev` loads the project's
    one), with DAGSTER_HOME at the instance `adwh` records to. Warnings only unless `verbose`
    (`launcher/ui.py`): Dagster's daemon logs two INFO lines per sensor tick (every 10 or 30 s),
    which the UI's tick history shows anyway, and each run's worker its every event, which
    the run's page shows; so the URL is printed here."""
    from assets.instance import PROJECT_ROOT, dagster_home
    from launcher import ui

    dg = Path(sys.executable).parent / "dg"
    if not dg.exists():
        raise UsageError(f"Dagster's dg is not installed ({dg}): uv sync --group ui")
    home = dagster_home()
    print(f"adwh: the Dagster UI at http://127.0.0.1:{port}, its instance in {home}", flush=True)
    workspace = PROJECT_ROOT / "workspace.yaml"
    return ui.command_ui(dg, port, verbose, ui.ui_environment(home), workspace)
