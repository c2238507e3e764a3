"""Dagster's instance under `$ADWH_HOME/dagster`, shared by `adwh` and `adwh ui`.

Every run a user makes (`adwh run`, `adwh rebuild`, the schedule, a backfill) is recorded in one
instance, so the UI shows what the CLI did. It is kept the way Dagster's docs keep a local
instance: `DAGSTER_HOME` names a folder holding `dagster.yaml`, and Dagster's own SQLite
storage, artifacts and step logs live beneath it. `adwh` opens the instance of `$DAGSTER_HOME`
when the user set one, else of `$ADWH_HOME/dagster`, where it writes the project's
configuration (the top-level `dagster.yaml`), so `adwh` and `adwh ui` (`dg dev`, started with
that DAGSTER_HOME) agree whatever `ADWH_HOME` is, and nothing lands in the source tree.

Dagster's SQLite storage costs a run about half as much again as a pooled, batched subclass
of it did (bench/SPEED.md, "Issue 46"); that subclass reached into Dagster's private modules,
and went.
"""

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg

from pipelines.settings import HomeSettings

# The project's root (where `dg` reads pyproject.toml), and the instance's configuration in it.
PROJECT_ROOT = Path(__file__).parents[1]
CONFIG = PROJECT_ROOT / "dagster.yaml"


def dagster_dir() -> Path:
    """`$ADWH_HOME/dagster`, absolute: run workers may start in another folder."""
    return (HomeSettings().home / "dagster").resolve()


def dagster_home() -> Path:
    """The DAGSTER_HOME of the instance `adwh` records to: the user's when set, else
    `$ADWH_HOME/dagster` holding this configuration (written when it differs)."""
    if os.environ.get("DAGSTER_HOME"):
        return Path(os.environ["DAGSTER_HOME"])
    home = dagster_dir()
    home.mkdir(parents=True, exist_ok=True)
    config = CONFIG.read_text()
    target = home / "dagster.yaml"
    if not target.exists() or target.read_text() != config:
        target.write_text(config)
    return home


@contextmanager
def open_instance() -> Iterator[dg.DagsterInstance]:
    """The instance of `dagster_home()`, as Dagster opens it from DAGSTER_HOME. The variable is
    set only while Dagster reads it, so a process that opens the instances of several homes
    (the tests) opens each one's."""
    home = str(dagster_home())
    before = os.environ.get("DAGSTER_HOME")
    os.environ["DAGSTER_HOME"] = home
    try:
        instance = dg.DagsterInstance.get()
    finally:
        if before is None:
            del os.environ["DAGSTER_HOME"]
        else:
            os.environ["DAGSTER_HOME"] = before
    with instance:
        yield instance
