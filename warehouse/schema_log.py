"""The record of every column the service added to a table, or widened (schema evolution).

One JSON line per change under `$ADWH_HOME/schema/changes.jsonl`, appended under a file lock so
runs side by side both land theirs. The log is what makes an evolved table's schema survive the
run that found it: each run starts from the registry plus the log, and the warehouse build turns
the log into the `schema_changes` table analysts query.
"""

from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

import orjson
from filelock import FileLock

from warehouse.schemas import DUCKDB_TYPES, Column, ColumnChange, Kind, TableSchema

LOG_FILE = Path("schema") / "changes.jsonl"


@dataclass(frozen=True)
class SchemaChange:
    """One line of the log, as the `schema_changes` table shows it."""

    table_name: str
    column_name: str
    column_type: str  # the DuckDB type; NULL while the service has sent only nulls
    change: str  # "added", "widened", or "typed" (a column of nulls got its first value)
    previous_type: str | None
    source_field: str  # the service's field, dots for nesting
    first_date: date | None  # the first partition holding a value
    run_id: str
    recorded_at: datetime
    kind: Kind

    @property
    def column(self) -> Column:
        return Column(self.column_name, self.kind, tuple(self.source_field.split(".")))

    def describe(self) -> str:
        if self.change == "added":
            return f"new column {self.column_name} {self.column_type}"
        return f"column {self.column_name} {self.change} {self.previous_type} -> {self.column_type}"


class SchemaLog:
    def __init__(self, home: Path) -> None:
        self.path = home / LOG_FILE
        self._read_as: tuple[int, int] | None = None
        self._changes: list[SchemaChange] = []

    def changes(self) -> list[SchemaChange]:
        """Every change recorded, oldest first (re-read only when the file changed)."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return []
        if self._read_as != (stat.st_mtime_ns, stat.st_size):
            lines = self.path.read_bytes().splitlines()
            self._changes = [_parse(orjson.loads(line)) for line in lines if line.strip()]
            self._read_as = (stat.st_mtime_ns, stat.st_size)
        return self._changes

    def schema(self, base: TableSchema) -> TableSchema:
        """`base` with the columns the service added to it, each at its widest type."""
        latest: dict[str, Column] = {}
        for change in self.changes():
            if change.table_name == base.name:
                latest[change.column_name] = change.column
        return base.extended(tuple(latest.values()))

    def record(
        self, table: str, changes: list[ColumnChange], first_date: date | None, run_id: str
    ) -> list[SchemaChange]:
        now = datetime.now(UTC).replace(tzinfo=None)
        recorded = [
            SchemaChange(
                table_name=table,
                column_name=c.column.name,
                column_type=type_name(c.column.kind),
                change=_change(c.previous),
                previous_type=None if c.previous is None else type_name(c.previous),
                source_field=".".join(c.column.source),
                first_date=first_date,
                run_id=run_id,
                recorded_at=now,
                kind=c.column.kind,
            )
            for c in changes
        ]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lines = b"".join(orjson.dumps(_line(r)) + b"\n" for r in recorded)
        with FileLock(self.path.with_suffix(".lock")), self.path.open("ab") as log:
            log.write(lines)
        return recorded


def type_name(kind: Kind) -> str:
    return "NULL" if kind is Kind.NULL else DUCKDB_TYPES[kind]


def _change(previous: Kind | None) -> str:
    if previous is None:
        return "added"
    return "typed" if previous is Kind.NULL else "widened"


def _line(change: SchemaChange) -> dict:
    return {**change.__dict__, "kind": change.kind.value}


def _parse(line: dict) -> SchemaChange:
    return SchemaChange(
        **{
            **line,
            "first_date": date.fromisoformat(line["first_date"]) if line["first_date"] else None,
            "recorded_at": datetime.fromisoformat(line["recorded_at"]),
            "kind": Kind(line["kind"]),
        }
    )
