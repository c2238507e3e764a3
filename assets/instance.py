"""Dagster's instance under `$ADWH_HOME/dagster`, shared by `adwh` and `dagster dev`.

Every run a user makes (`adwh run`, `adwh rebuild`, the schedule, a backfill from the UI) is
recorded in one instance, so the UI shows what the CLI did. The repository's `dagster.yaml`
names the classes below; each resolves its folder from `ADWH_HOME` when it is loaded, so
`dagster dev` started from the repository root and `adwh` started anywhere agree on where the
history lives, whatever `ADWH_HOME` is, and nothing lands in the source tree.

The event log is one SQLite database whose connections are pooled. Dagster's default opens a
new engine, connection and transaction for every event (~12 ms each here), and a range run
records one materialization per table and partition: thousands for a year. Pooled, an event
costs ~4 ms (bench/RESULTS.md). Dagster hands a range run's partition events (the planned
ones when the run starts, the materializations when a step ends) to the storage in batches
when `DAGSTER_EVENT_BATCH_SIZE` is set, as the deployment sets it for PostgreSQL; here a batch
is one transaction, and each asset's planned events or materializations in it one insert
(640 materializations: 1.5 -> 0.3 s), so the record stays and its cost goes.
"""

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cached_property
from itertools import groupby
from pathlib import Path

import dagster as dg
import sqlalchemy
from dagster import AssetKey
from dagster._core.events import DagsterEventType
from dagster._core.events.log import EventLogEntry
from dagster._core.storage.event_log import (
    ConsolidatedSqliteEventLogStorage,
    SqlEventLogStorageTable,
)
from dagster._core.storage.local_compute_log_manager import LocalComputeLogManager
from dagster._core.storage.root import LocalArtifactStorage
from dagster._core.storage.runs import SqliteRunStorage
from dagster._core.storage.schedules import SqliteScheduleStorage
from dagster._core.storage.sqlite_storage import DagsterSqliteStorage
from dagster._serdes import ConfigurableClassData

from pipelines.settings import HomeSettings

# The repository's instance configuration, also used by `adwh` started elsewhere.
CONFIG_DIR = Path(__file__).parent
SQLITE_BUSY_TIMEOUT_SECONDS = 30
# Events per batch: a year's partitions of one table in a few statements. Read by Dagster's
# instance at every event; a value the user set wins.
os.environ.setdefault("DAGSTER_EVENT_BATCH_SIZE", "500")
# Asset events whose run of one asset is written as one statement: each only adds its row and
# tags, and the asset's row holds the last of each kind (checks and failures are stored apart).
ONE_STATEMENT = {
    DagsterEventType.ASSET_MATERIALIZATION,
    DagsterEventType.ASSET_OBSERVATION,
    DagsterEventType.ASSET_MATERIALIZATION_PLANNED,
}


def _kind_and_asset(event: EventLogEntry) -> tuple[DagsterEventType, AssetKey | None]:
    dagster_event = event.get_dagster_event()
    return dagster_event.event_type, dagster_event.asset_key


def dagster_dir() -> Path:
    """`$ADWH_HOME/dagster`, absolute: run workers may start in another folder."""
    return (HomeSettings().home / "dagster").resolve()


class PooledSqliteEventLogStorage(ConsolidatedSqliteEventLogStorage):
    """Dagster's single-database SQLite event log, with one engine and a connection pool.

    WAL lets `dagster dev` read while a run writes; `synchronous=NORMAL` in WAL mode loses no
    committed event on a process crash (only, at worst, the last ones on a power cut)."""

    @cached_property
    def _engine(self) -> sqlalchemy.Engine:
        engine = sqlalchemy.create_engine(
            self._conn_string, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS}
        )

        @sqlalchemy.event.listens_for(engine, "connect")
        def _tune(connection, _record) -> None:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")

        return engine

    @cached_property
    def _batch(self) -> threading.local:
        """The connection of the batch this thread is writing, if any."""
        return threading.local()

    @contextmanager
    def _connect(self) -> Iterator[sqlalchemy.Connection]:
        held = getattr(self._batch, "connection", None)
        if held is not None:  # inside a batch: its transaction, committed once at its end
            yield held
            return
        with self._engine.connect() as connection, connection.begin():
            yield connection

    def store_event_batch(self, events: Sequence[EventLogEntry]) -> None:
        """A batch in one transaction. A run of one asset's events of one kind (a range run's
        partitions, planned or materialized) is one insert and its tags another, and the
        asset's row is updated once, from the last: what dagster-postgres does for
        materializations; Dagster reads back the same rows either way."""
        with self._connect() as connection:
            self._batch.connection = connection
            try:
                for (kind, _), run in groupby(events, key=_kind_and_asset):
                    if kind in ONE_STATEMENT:
                        self._store_asset_events(connection, list(run))
                    else:
                        for event in run:
                            self.store_event(event)
            finally:
                self._batch.connection = None

    def _store_asset_events(
        self, connection: sqlalchemy.Connection, events: list[EventLogEntry]
    ) -> None:
        inserted = connection.execute(
            self.prepare_insert_event_batch(events).returning(SqlEventLogStorageTable.c.id)
        )
        # SQLite gives new rows increasing ids in insertion order; the order in which
        # RETURNING lists them is not promised.
        ids = sorted(row[0] for row in inserted)
        self._store_asset_event_tags(connection, events, ids)
        self._store_asset_event(connection, events[-1], ids[-1])

    @cached_property
    def _found(self) -> set[tuple[str, str]]:
        return set()

    def _remembered(self, thing: tuple[str, str], probe: Callable[[], bool]) -> bool:
        """Migrations only add tables and columns: what was found once stays found."""
        if thing not in self._found and probe():
            self._found.add(thing)
        return thing in self._found

    def has_table(self, table_name: str) -> bool:
        """Dagster asks before storing every asset event whether a table exists, and answers
        with a new engine and connection each time (a quarter of an event's cost)."""

        def probe() -> bool:
            with self._engine.connect() as connection:
                return bool(self._engine.dialect.has_table(connection, table_name))

        return self._remembered(("table", table_name), probe)

    def _has_asset_key_col_on_connection(self, conn: sqlalchemy.Connection, column: str) -> bool:
        """Asked by every asset event, answered by reading the table's columns."""
        parent = super()._has_asset_key_col_on_connection
        return self._remembered(("asset_keys column", column), lambda: parent(conn, column))

    def dispose(self) -> None:
        super().dispose()
        if "_engine" in self.__dict__:
            self._engine.dispose()


class HomeStorage(DagsterSqliteStorage):
    """Runs, events and schedules under `$ADWH_HOME/dagster` (or `base_dir` if given)."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None) -> None:
        self.base_dir = base_dir
        self._run_storage = SqliteRunStorage.from_local(os.path.join(base_dir, "runs"))
        self._event_log_storage = PooledSqliteEventLogStorage(os.path.join(base_dir, "events"))
        self._schedule_storage = SqliteScheduleStorage.from_local(
            os.path.join(base_dir, "schedules")
        )
        self._inst_data = inst_data
        super(DagsterSqliteStorage, self).__init__()

    @classmethod
    def config_type(cls) -> dict:
        return {"base_dir": dg.Field(dg.StringSource, is_required=False)}

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData, config_value: dict):
        return cls.from_local(config_value.get("base_dir") or str(dagster_dir()), inst_data)

    @property
    def event_storage_data(self) -> ConfigurableClassData | None:
        return None

    @property
    def run_storage_data(self) -> ConfigurableClassData | None:
        return None

    @property
    def schedule_storage_data(self) -> ConfigurableClassData | None:
        return None


class HomeArtifactStorage(LocalArtifactStorage):
    """Dagster's local artifacts under `$ADWH_HOME/dagster`."""

    @classmethod
    def config_type(cls) -> dict:
        return {}

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData | None, config_value: dict):
        return LocalArtifactStorage(str(dagster_dir()), inst_data=inst_data)


class HomeComputeLogManager(LocalComputeLogManager):
    """Each step's stdout and stderr under `$ADWH_HOME/dagster/logs`."""

    @classmethod
    def config_type(cls) -> dict:
        return {}

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData | None, config_value: dict):
        return LocalComputeLogManager(str(dagster_dir() / "logs"), inst_data=inst_data)


@contextmanager
def open_instance() -> Iterator[dg.DagsterInstance]:
    """The instance `dagster dev` reads: `$DAGSTER_HOME` when the user set one, else the
    repository's configuration with its storage under `$ADWH_HOME/dagster`."""
    if os.environ.get("DAGSTER_HOME"):
        with dg.DagsterInstance.get() as instance:
            yield instance
        return
    from dagster._core.instance.ref import InstanceRef

    home = dagster_dir()
    home.mkdir(parents=True, exist_ok=True)
    ref = InstanceRef.from_dir(str(home), config_dir=str(CONFIG_DIR))
    with dg.DagsterInstance.from_ref(ref) as instance:
        yield instance


def ui_dagster_home() -> Path:
    """The DAGSTER_HOME `adwh ui` starts Dagster with: the user's when set, else
    `$ADWH_HOME/dagster` holding this configuration (written when it differs), so that
    Dagster's own home is the instance every `adwh` command records to, as Dagster's docs ask
    of a persistent local instance."""
    if os.environ.get("DAGSTER_HOME"):
        return Path(os.environ["DAGSTER_HOME"])
    home = dagster_dir()
    home.mkdir(parents=True, exist_ok=True)
    config = (CONFIG_DIR / "dagster.yaml").read_text()
    target = home / "dagster.yaml"
    if not target.exists() or target.read_text() != config:
        target.write_text(config)
    return home
