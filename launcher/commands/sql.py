"""`adwh sql`: DuckDB's shell on the warehouse, read-only, from the home."""

import argparse
import subprocess
import sys
from pathlib import Path

from launcher.common import UsageError
from pipelines.settings import Settings


def register(commands: argparse._SubParsersAction) -> None:
    sql = commands.add_parser(
        "sql",
        help="DuckDB's shell on the warehouse, read-only, in $ADWH_HOME (lake/… paths resolve)",
    )
    sql.add_argument("query", nargs="?", help="SQL to run (default: the shell, or SQL on stdin)")
    sql.set_defaults(handler=lambda settings, args: command_sql(settings, args.query))


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
