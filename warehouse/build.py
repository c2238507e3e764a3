"""The DuckDB warehouse, brought up to date from the lake in a file nobody reads, swapped in.

Analysts keep `warehouse.duckdb` open for hours, and DuckDB lets no process write a file that
another holds. So a run never writes the file analysts read: it brings another generation of
the file up to the lake (`warehouse/load.py` loads only the days whose lake files changed),
builds and tests the marts in it, and renames it over the current one. Open sessions keep
reading the old file, a consistent state; new ones see the new one; a crash or a failed mart
test leaves the current file untouched and a temporary file that the next build removes.

The generation written is the one before the current file (a hard link kept at each swap,
`.warehouse.duckdb.previous`): it is one build behind, and its own record of the lake files it
holds makes the load read again the days changed by both builds, not the years held. Copying
the current file whole (what every build did) grew with the warehouse: 670 MiB for a year of
`large`. A copy is still the start when there is no previous generation, or when a reader
still holds it open (DuckDB's lock says so): that reader keeps its file.

The marts are then built by dbt, in the file: every model in a file this project never built,
else what the days read again change (`warehouse/marts.py` plans it).
"""

import contextlib
import os
import shutil
import uuid
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import duckdb
from filelock import FileLock

from warehouse.dbt_project import models_in_order, project_digest
from warehouse.lake import Lake, Tended, loaded_from, sql_string
from warehouse.load import Loaded, held_versions, refresh
from warehouse.marts import NodeResult, build_marts, narrowed, plan
from warehouse.schema_log import SchemaLog
from warehouse.schemas import (
    DUCKDB_TYPES,
    MONEY_SCALE,
    Kind,
    Layout,
    TableSchema,
    snapshots_of,
)
from warehouse.spec import (
    CURRENCY_DIGITS,
    DEFAULT_CURRENCY_DIGITS,
    ECONOMICS_AVAILABLE,
    ECONOMICS_MISSING,
    ECONOMICS_PENDING,
)

WAREHOUSE_FILE = "warehouse.duckdb"
PREVIOUS_FILE = f".{WAREHOUSE_FILE}.previous"
# The storage format the file is written in: DuckDB's oldest that has all the warehouse uses
# (decimals, comments, macros, views), so that every DuckDB from 1.0 opens it (the 1.x CLI,
# DBeaver's and BI tools' drivers). DuckDB 2.0 writes its own newest format unless told, which
# clients of 1.x refuse ("version number 69"). DuckDB tags a file with the format's first version.
STORAGE_VERSION = "v1.0.0"
STORAGE_TAG = f"{STORAGE_VERSION}+"
# Loading streams Parquet into tables: keeping insertion order and DuckDB's default buffer
# pool (80% of RAM) buy nothing but resident memory, which would grow with the lake.
BUILD_CONFIG = {
    "memory_limit": "256MB",
    "preserve_insertion_order": False,
    "storage_compatibility_version": STORAGE_VERSION,
}
# A checkpoint writes every row group a build changed to free blocks before it frees the old
# ones, and gives the file system back only free blocks at the end of the file: a build that
# rewrites most of the file (a rebuild; a small warehouse, whose tables are one row group each)
# leaves it twice its data. Past this share of unused bytes the file is copied afresh.
UNUSED_SHARE = 0.25


def _schema_changes(con: duckdb.DuckDBPyConnection, log: SchemaLog) -> None:
    """The log of columns the service added or widened, as a table analysts can query."""
    con.execute("DROP TABLE IF EXISTS schema_changes")
    con.execute(SCHEMA_CHANGES_DDL)
    con.execute(f"COMMENT ON TABLE schema_changes IS {sql_string(SCHEMA_CHANGES_COMMENT)}")
    rows = [
        (
            c.table_name,
            c.column_name,
            c.column_type,
            c.change,
            c.previous_type,
            c.source_field,
            c.first_date,
            c.run_id,
            c.recorded_at,
        )
        for c in log.changes()
    ]
    if rows:
        con.executemany("INSERT INTO schema_changes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)


SCHEMA_CHANGES_DDL = """
CREATE TABLE schema_changes (
    table_name VARCHAR, column_name VARCHAR, column_type VARCHAR, change VARCHAR,
    previous_type VARCHAR, source_field VARCHAR, first_date DATE, run_id VARCHAR,
    recorded_at TIMESTAMP
)"""
SCHEMA_CHANGES_COMMENT = (
    "Every column the service added to a table (a field the registry does not know), or "
    "widened (a later value that did not fit its type: BIGINT -> DECIMAL -> VARCHAR): the "
    "table, the column and its type, the service's field, the first date holding a value and "
    "the run that found it. Rows written before a column existed read it as NULL."
)


FUNCTIONS = Path(__file__).parent / "sql" / "functions.sql"


def functions_sql() -> str:
    """The macros the marts call, `currency_digits` and the economics statuses written from
    the spec, and money from the registry's type."""
    # 0.0001 as an exact decimal: the money type's last digit
    last_digit = (
        f"CAST({Decimal(1).scaleb(-MONEY_SCALE)} AS DECIMAL({MONEY_SCALE + 1}, {MONEY_SCALE}))"
    )
    digits = "\n".join(
        f"        WHEN '{code}' THEN {n}" for code, n in sorted(CURRENCY_DIGITS.items())
    )
    return (
        FUNCTIONS.read_text()
        .replace("{currency_digits}", digits)
        .replace("{default_digits}", str(DEFAULT_CURRENCY_DIGITS))
        .replace("{money_type}", DUCKDB_TYPES[Kind.MONEY])
        .replace("{money_scale}", str(MONEY_SCALE))
        .replace("{money_unit}", str(10**MONEY_SCALE))
        .replace("{money_last_digit}", last_digit)
        .replace("{economics_available}", ECONOMICS_AVAILABLE)
        .replace("{economics_pending}", ECONOMICS_PENDING)
        .replace("{economics_missing}", ECONOMICS_MISSING)
    )


@dataclass(frozen=True)
class Built:
    """What a build did: each table's load, its models' and tests' results (a model dbt did
    not need to build is `kept`), whether dbt ran, and what its housekeeping did to the lake."""

    loaded: list[Loaded]
    results: list[NodeResult]
    by_dbt: bool
    tended: Tended = field(default_factory=Tended)
    # Each table's and model's columns with their DuckDB types, in order.
    columns: dict[str, list[tuple[str, str]]] = field(default_factory=dict)


def build_warehouse(
    home: Path,
    lake: Lake,
    tables: Iterable[TableSchema],
    run_id: str = "build",
    tidy: bool = False,
    models: Collection[str] | None = None,
) -> Built:
    """Bring `warehouse.duckdb` in `home` up to `lake` with its marts, and swap it in; with
    `tidy`, the lake is tended first (its crowded partitions clustered, then vacuumed:
    `Lake.snapshots`). When a model or test fails, the old warehouse stays as it was and
    MartError names the failure; when dbt ran, its artifacts stay in `home/dbt/<run_id>` for
    a look. `models`: a selection of some models, the others kept as the file holds them
    (`narrowed`); none: every model the lake's changes need.

    One build at a time per home (a lock file): two would each start from the same old file,
    and the second swap would drop what the first loaded."""
    with FileLock(home / ".warehouse.lock"):  # hidden, like the CLI's `.adwh.lock`
        return _build(home, lake, list(tables), run_id, tidy, models)


def _build(
    home: Path,
    lake: Lake,
    tables: list[TableSchema],
    run_id: str,
    tidy: bool,
    models: Collection[str] | None,
) -> Built:
    target = home / WAREHOUSE_FILE
    for stale in home.glob(f"{WAREHOUSE_FILE}.building-*"):
        stale.unlink()
    building = home / f"{WAREHOUSE_FILE}.building-{uuid.uuid4().hex}"
    artifacts = home / "dbt" / run_id
    try:
        _start_from_a_generation(home, target, building)
        log = SchemaLog(home)
        schemas = with_snapshots([log.schema(schema) for schema in tables])  # columns added since
        with duckdb.connect(str(building), config=BUILD_CONFIG) as con:
            names = lake_tables(lake, schemas)
            changes, tended = lake.snapshots(names, tidy, held_versions(con))
            loaded = refresh(con, lake, schemas, changes)
            _schema_changes(con, log)
            con.execute(functions_sql())
            digest = project_digest()
            planned = plan(con, [table.table for table in loaded if table.whole], digest)
        if models is not None:
            planned = narrowed(planned, models, models_in_order(digest))
        built = [] if planned is None else build_marts(building, artifacts, planned)
        results = in_order(built, models_in_order(digest))
        with duckdb.connect(str(building), config=BUILD_CONFIG) as con:
            columns = _columns(con)
            wasteful = _wasteful(con, building)
        if wasteful:
            _compact(building)
        _swap_in(home, target, building)
        shutil.rmtree(artifacts, ignore_errors=True)
        with contextlib.suppress(OSError):  # kept while another build's artifacts are there
            artifacts.parent.rmdir()
        return Built(loaded, results, planned is not None, tended, columns)
    finally:
        building.unlink(missing_ok=True)
        Path(f"{building}.wal").unlink(missing_ok=True)


def in_order(built: list[NodeResult], models: Iterable[str]) -> list[NodeResult]:
    """Every one of `models` (each after the models it reads), as dbt built it or kept, then
    the tests dbt ran."""
    by_name = {r.name: r for r in built if r.resource_type == "model"}
    return [
        *(by_name.get(name) or NodeResult.kept(name) for name in models),
        *(r for r in built if r.resource_type != "model"),
    ]


def with_snapshots(tables: list[TableSchema]) -> list[TableSchema]:
    """`tables`, then the dated snapshots of each current-state one (`snapshots_of`), which
    the entity history models read."""
    return [*tables, *(snapshots_of(t) for t in tables if t.layout is Layout.SNAPSHOT)]


def lake_tables(lake: Lake, tables: list[TableSchema]) -> list[str]:
    """The lake tables a build reads (`loaded_from`), each once; the current rows seeded first
    where a lake has none yet."""
    for table in tables:
        if table.layout is Layout.SNAPSHOT:
            lake.seed_current(table)
    return list(dict.fromkeys(loaded_from(table) for table in tables))


def _wasteful(con: duckdb.DuckDBPyConnection, building: Path) -> bool:
    """Whether more than UNUSED_SHARE of the file's bytes are in blocks it no longer uses,
    once checkpointed (the checkpoint its connection's close would write)."""
    con.execute("CHECKPOINT")
    used, block_size = con.execute(
        "SELECT used_blocks, block_size FROM pragma_database_size() "
        "WHERE database_name = current_database()"
    ).fetchone()
    return used * block_size < (1 - UNUSED_SHARE) * building.stat().st_size


def _compact(building: Path) -> None:
    """`building` copied into a new file, which holds only its data (DuckDB's way to reclaim
    space: COPY FROM DATABASE), and renamed over it. In insertion order: the rows of a day stay
    together, which DuckDB compresses better (and skips by its zone maps) than the interleaved
    order of a parallel copy."""
    compact = building.with_name(f"{building.name}.compact")
    try:
        config = {**BUILD_CONFIG, "preserve_insertion_order": True}
        with duckdb.connect(config=config) as con:
            con.execute(f"ATTACH {sql_string(str(building))} AS built (READ_ONLY)")
            con.execute(
                f"ATTACH {sql_string(str(compact))} AS compact "
                f"(STORAGE_VERSION '{STORAGE_VERSION}')"
            )
            con.execute("COPY FROM DATABASE built TO compact")
        os.replace(compact, building)
    finally:
        compact.unlink(missing_ok=True)
        Path(f"{compact}.wal").unlink(missing_ok=True)


def _columns(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[str, str]]]:
    """What the UI shows of each mart beside dbt's descriptions: every column and its type,
    documented or not."""
    rows = con.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_catalog = current_database() ORDER BY table_name, ordinal_position"
    ).fetchall()
    columns: dict[str, list[tuple[str, str]]] = {}
    for table, column, data_type in rows:
        columns.setdefault(table, []).append((column, data_type))
    return columns


def _start_from_a_generation(home: Path, target: Path, building: Path) -> None:
    """Put at `building` the previous generation of the warehouse when no one holds it, else a
    copy of the current one, or nothing: the first build, or a file in another storage format
    (written by an earlier version of the project), which the build then writes anew."""
    previous = home / PREVIOUS_FILE
    if previous.exists():
        # The same file as the current one: a build stopped between its link and its swap.
        if target.exists() and os.path.samefile(previous, target):
            previous.unlink()
        else:
            os.replace(previous, building)
            stored = _storage(building)
            if stored is not None:  # nobody holds it
                if stored != STORAGE_TAG:
                    building.unlink()  # another format: written anew
                return
            building.unlink()  # its reader keeps it
    if target.exists():
        shutil.copyfile(target, building)
        if _storage(building) != STORAGE_TAG:
            building.unlink()


def _storage(path: Path) -> str | None:
    """The storage format of the DuckDB file `path` (its tag, e.g. "v1.0.0+"), or None when a
    process holds it (a reader's lock): DuckDB opens it for writing only when no one does."""
    try:
        with duckdb.connect(str(path)) as con:
            query = "SELECT tags['storage_version'] FROM duckdb_databases() WHERE NOT internal"
            return con.execute(query + " AND database_name = current_database()").fetchone()[0]
    except duckdb.IOException:
        return None


def _swap_in(home: Path, target: Path, building: Path) -> None:
    """Rename `building` over the current file, which stays as the previous generation (a hard
    link: open sessions keep it; the next build writes it if they are gone)."""
    previous = home / PREVIOUS_FILE
    previous.unlink(missing_ok=True)
    if target.exists():
        with contextlib.suppress(OSError):  # a file system without hard links: copies, then
            os.link(target, previous)
    os.replace(building, target)
