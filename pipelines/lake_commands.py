"""`adwh history` and `adwh lake …`: the lake's housekeeping, history and migration by hand.

The daily run already vacuums what it replaced (`Lake.tidy`); these are for the rest: a
compaction after many small runs, a vacuum with another retention, a look at a table's
versions, a version read back as Parquet, and the one-time move from the Hive lake.
"""

import shutil
import textwrap
from pathlib import Path

from pipelines.destination import Destination
from pipelines.settings import Settings
from warehouse.lake import Lake, Version, current_table
from warehouse.schemas import TABLES, Layout


class LakeCommandError(ValueError):
    """A lake command cannot do what was asked; the message is the line the user sees."""


def known_tables(lake: Lake, names: list[str]) -> list[str]:
    """The tables named (every one the lake holds when none, the current rows of current
    state included: `current/<table>`), each one checked."""
    current = {current_table(n) for n, schema in TABLES.items() if schema.layout is Layout.SNAPSHOT}
    unknown = sorted(set(names) - set(TABLES) - current)
    if unknown:
        raise LakeCommandError(f"unknown tables: {', '.join(unknown)}")
    return names or lake.every_table()


def command_history(settings: Settings, table: str, limit: int | None) -> int:
    lake = Destination.of(settings).lake
    (name,) = known_tables(lake, [table])
    versions = lake.history(name, limit)
    if not versions:
        raise LakeCommandError(f"{name}: the lake holds no such table yet ({lake.uri(name)})")
    width = shutil.get_terminal_size((80, 24)).columns
    print("\n".join(history_lines(versions, width)))
    return 0


HISTORY_HEADER = ("version", "at (UTC)", "operation", "rows", "+files", "-files")
# Which columns hold figures, aligned to the right.
FIGURES = (True, False, False, True, True, True)


def history_lines(versions: list[Version], width: int) -> list[str]:
    """A line per version and, under it, the rows the commit replaced or removed (its
    predicate, which names accounts and days and may be long), wrapped to `width`: the table
    fits the terminal, 80 columns in a log, and no predicate is cut."""
    rows = [
        (
            str(v.version),
            v.timestamp.strftime("%Y-%m-%d %H:%M:%S"),
            v.operation,
            _number(v.rows_written),
            _number(v.files_added),
            _number(v.files_removed),
        )
        for v in versions
    ]
    widths = [max(map(len, column)) for column in zip(HISTORY_HEADER, *rows, strict=True)]

    def line(cells: tuple[str, ...]) -> str:
        aligned = zip(cells, widths, FIGURES, strict=True)
        return "  ".join(c.rjust(w) if right else c.ljust(w) for c, w, right in aligned).rstrip()

    indent = " " * (widths[0] + 2)
    lines = [line(HISTORY_HEADER)]
    for version, cells in zip(versions, rows, strict=True):
        lines.append(line(cells))
        if version.predicate:
            lines += textwrap.wrap(
                f"where {version.predicate}",
                max(width, len(indent) + 20),
                initial_indent=indent,
                subsequent_indent=indent + "  ",
                break_on_hyphens=False,
            )
    return lines


def command_optimize(settings: Settings, tables: list[str]) -> int:
    lake = Destination.of(settings).lake
    for name in known_tables(lake, tables):
        before = lake.file_stats(name)
        lake.optimize(name)
        after = lake.file_stats(name)
        print(
            f"{name}: {before.files} files (median {before.median_bytes:,} B) -> "
            f"{after.files} files (median {after.median_bytes:,} B)"
        )
    if lake.keep_hours == 0:
        print("the compacted files replace the others at the next vacuum (adwh lake vacuum)")
    return 0


def command_vacuum(settings: Settings, tables: list[str], keep_hours: int | None) -> int:
    lake = Destination.of(settings).lake
    hours = lake.keep_hours if keep_hours is None else keep_hours
    if hours < 0:
        raise LakeCommandError(f"--keep-hours must be 0 or more, got {hours}")
    for name in known_tables(lake, tables):
        print(f"{name}: {lake.vacuum(name, hours)} files removed")
    return 0


def command_export(settings: Settings, table: str, version: int, output: Path) -> int:
    """Time travel: write the table as of `version` to one Parquet file."""
    lake = Destination.of(settings).lake
    (name,) = known_tables(lake, [table])
    try:
        rows = lake.dataset(name, version)
    except Exception as error:
        raise LakeCommandError(f"{name} version {version}: {error}") from None
    if rows is None:
        raise LakeCommandError(f"{name}: the lake holds no such table yet ({lake.uri(name)})")
    import pyarrow.parquet as pq

    try:
        pq.write_table(rows.to_table(), output)
    except FileNotFoundError:
        raise LakeCommandError(
            f"{name} version {version}: its files were vacuumed; set ADWH_LAKE_KEEP_HOURS to "
            "keep versions for time travel"
        ) from None
    print(f"{name} as of version {version}: {rows.count_rows()} rows -> {output}")
    return 0


def command_migrate(settings: Settings, source: Path | None) -> int:
    from warehouse.migrate import BACKUP, migrate
    from warehouse.schema_log import SchemaLog

    destination = Destination.of(settings)
    log = SchemaLog(settings.home)
    schemas = {name: log.schema(schema) for name, schema in TABLES.items()}
    done = migrate(settings.home, destination.lake, schemas, source or settings.home / "lake")
    for table in done:
        print(f"{table.table}: {table.rows} rows, {table.files} files")
    print(f"{len(done)} tables migrated to Delta Lake at {destination.lake.url}")
    backup = settings.home / BACKUP
    if done and backup.exists():
        print(f"the Hive tables are kept in {backup}: remove it once you have checked")
    return 0


def _number(value: int | None) -> str:
    return "" if value is None else f"{value:,}"
