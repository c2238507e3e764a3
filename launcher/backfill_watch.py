"""`adwh backfill`'s progress: its runs followed through the webserver (they are the daemon's,
in other processes or on other machines) with a bar, until the warehouse is built after them."""

import time

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from launcher.backfill import Launched, State, follow, refresh_sensor_running
from pipelines.settings import Settings

# How often the webserver is asked (one query of the runs and backfills: milliseconds).
POLL_SECONDS = 2.0


def watch_backfills(settings: Settings, launched: list[Launched]) -> tuple[State, bool]:
    """Follow the runs of `launched` with a bar until each has ended (retries included), then
    until the warehouse_refresh sensor has built the warehouse after them; return the last
    state, and whether the sensor was on (off: the warehouse is not waited for)."""
    building = refresh_sensor_running(settings)
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description:<22}"),
        BarColumn(bar_width=24),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
    )
    with progress:
        runs = progress.add_task("runs", total=sum(b.runs for b in launched))
        warehouse = None
        while True:
            state = follow(settings, launched)
            total = max(state.expected_runs, len(state.runs))
            progress.update(runs, total=total, completed=state.finished_runs)
            if state.runs_done and not building:
                return state, building
            if state.runs_done and warehouse is None:
                warehouse = progress.add_task("building the warehouse", total=1)
            if state.warehouse_fresh:
                progress.update(warehouse, completed=1)
                return state, building
            time.sleep(POLL_SECONDS)
