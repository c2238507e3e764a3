"""From the Hive Parquet lake of earlier versions to Delta tables, with one command.

Earlier versions published plain Parquet in `lake/<table>/date=…/` folders with no log. Each
such table is moved aside to `$ADWH_HOME/hive-lake-backup/<table>` first, then written into the
lake as a Delta table in one commit, and its rows counted on both sides. An interrupted
migration resumes from the backup, skipping the tables already written; the backup stays until
the user removes it.
"""

import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb

from warehouse.lake import Lake, hive_parquet
from warehouse.schemas import TableSchema

BACKUP = "hive-lake-backup"


class MigrationError(RuntimeError):
    """A table could not be migrated; the message names it and where its files are."""


@dataclass(frozen=True)
class Migrated:
    table: str
    rows: int
    files: int


def hive_tables(folder: Path) -> list[str]:
    """Tables of `folder` in the old layout: partition folders and no Delta log."""
    return sorted(
        p.name
        for p in folder.glob("*")
        if p.is_dir() and not (p / "_delta_log").exists() and any(p.glob("date=*"))
    )


def migrate(
    home: Path, lake: Lake, schemas: dict[str, TableSchema], source: Path
) -> list[Migrated]:
    """Migrate every old-layout table of `source` (by default the lake itself) into `lake`."""
    unknown = sorted(set(hive_tables(source)) - set(schemas))
    if unknown:
        raise MigrationError(f"{source}: not tables of this warehouse: {', '.join(unknown)}")
    backup = home / BACKUP
    if not lake.remote and Path(lake.url).resolve() == source.resolve():
        backup.mkdir(parents=True, exist_ok=True)
        for name in hive_tables(source):
            if (backup / name).exists():
                raise MigrationError(f"{name}: both {source / name} and {backup / name} exist")
            shutil.move(source / name, backup / name)
        source = backup
    # A table the lake already holds is never overwritten: it was migrated by an earlier,
    # interrupted call (runs may have written to it since), or written by this version.
    pending = [name for name in hive_tables(source) if lake.table(name) is None]
    return [_migrate_table(lake, schemas[name], source / name) for name in pending]


def _migrate_table(lake: Lake, schema: TableSchema, folder: Path) -> Migrated:
    rows = hive_parquet([f"{folder}/date=*/**/*.parquet"], schema)
    with duckdb.connect() as con:
        expected = con.sql(f"SELECT count(*) FROM {rows}").fetchall()[0][0]
        try:
            files = lake.replace(schema, con.sql(f"SELECT * FROM {rows}").arrow())
        except Exception as error:
            raise MigrationError(f"{schema.name}: {error} (its files stay in {folder})") from error
    held = lake.dataset(schema.name).count_rows()
    if held != expected:
        raise MigrationError(
            f"{schema.name}: {expected} rows in {folder}, {held} in the Delta table"
        )
    return Migrated(schema.name, held, files)
